"""Around the resolver: finding uv, pip's index configuration, the target's platform (the
resolver itself: test_uvproject.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envcheck.model.plan import Target
from envcheck.plan.resolve import (
    UvMissing,
    find_uv,
    pip_index_config,
    python_platform,
    redact_url,
)


@pytest.mark.parametrize(
    ("arch", "glibc", "platform"),
    [
        ("x86_64", "2.35", "x86_64-manylinux_2_35"),
        ("x86_64", "2.17", "x86_64-manylinux_2_17"),
        ("x86_64", "2.24", "x86_64-manylinux_2_17"),
        ("aarch64", "2.31", "aarch64-manylinux_2_31"),
        ("x86_64", None, "x86_64-unknown-linux-gnu"),
        ("x86_64", "2.12", "x86_64-unknown-linux-gnu"),
    ],
)
def test_python_platform(arch: str, glibc: str | None, platform: str) -> None:
    assert python_platform(Target(python="3.11", arch=arch, glibc=glibc)) == platform


def test_pip_config_env_and_command_line(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = https://mirror.example/simple\n"
        "extra-index-url = https://a.example/simple\n  https://b.example/simple\n"
        "[install]\nfind-links = /srv/wheels\n",
        encoding="utf-8",
    )
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_DIRS": str(tmp_path / "none"),
        "PIP_CONFIG_FILE": str(conf),
    }
    got = pip_index_config(env)
    assert got.index_url == "https://mirror.example/simple"
    assert got.extra_index_urls == ("https://a.example/simple", "https://b.example/simple")
    assert got.find_links == ("/srv/wheels",) and str(conf) in got.source
    env["PIP_INDEX_URL"] = "https://env.example/simple"
    assert pip_index_config(env).index_url == "https://env.example/simple"
    cli = pip_index_config(env, index_url="https://cli.example/simple")
    assert (cli.index_url, cli.extra_index_urls, cli.source) == (
        "https://cli.example/simple",
        (),
        "the command line",
    )
    env["PIP_EXTRA_INDEX_URL"] = "file:///does/not/exist"
    assert pip_index_config(env).dropped == ("file:///does/not/exist",)


def test_redact_url() -> None:
    assert (
        redact_url("https://user:secret@idx.example:8443/simple")
        == "https://***@idx.example:8443/simple"
    )
    assert redact_url("https://idx.example/simple") == "https://idx.example/simple"


def test_uv_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uv", None)
    with pytest.raises(UvMissing, match=r"pip install 'envcheck-gpu\[lock\]'"):
        find_uv({"PATH": ""})
    with pytest.raises(UvMissing, match="ENVCHECK_UV"):
        find_uv({"PATH": "", "ENVCHECK_UV": "/nonexistent/uv"})


def test_an_index_on_the_command_line_is_a_url_or_an_existing_path(tmp_path: Path) -> None:
    """`fix --index-url 'not a url'` reached uv as a relative path and came back as a conflict
    ('the index has no torch==2.4.0'); now it is a usage error naming the option."""
    from envcheck.errors import UsageError
    from tests.conftest import run_cli

    for option, kwargs in (
        ("--index-url", {"index_url": "not a url"}),
        ("--extra-index-url", {"extra_index_urls": ("u:pw@mirror.example/simple",)}),
        ("--find-links", {"find_links": (str(tmp_path / "no-such-wheels"),)}),
    ):
        with pytest.raises(UsageError, match=f"^{option}: .* is neither a URL"):
            pip_index_config({}, **kwargs)  # type: ignore[arg-type]
    ok = pip_index_config({}, index_url="http://127.0.0.1:9/simple", find_links=(str(tmp_path),))
    assert ok.find_links == (str(tmp_path),)
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[python]\nversion = "3.10.12"\n[packages]\nvllm = "0.6.3"\ntorch = "2.5.1"\n',
        encoding="utf-8",
    )
    result = run_cli("fix", "--spec", str(spec), "--index-url", "not a url")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "envcheck: error: --index-url: 'not a url' is neither a URL (http://, https://, file://)"
        " nor an existing path\n"
    )
