from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from envcheck.errors import UsageError
from envcheck.index.config import choose_index, is_http, parse_pip_config


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("global.index-url='http://a/simple'", {"index-url": "http://a/simple"}),
        (
            "global.index-url='http://a/simple'\n:env:.index-url='http://b/simple'",
            {"index-url": "http://b/simple"},
        ),
        (
            ":env:.index-url='http://b/simple'\nglobal.index-url='http://a/simple'",
            {"index-url": "http://b/simple"},
        ),
        (
            "global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'\nglobal.cert='/x'",
            {"extra-index-url": "file:///opt/a/simple file:///opt/b/simple", "cert": "/x"},
        ),
        ("freeze.index-url='http://ignored'", {}),
        ("garbage line\nglobal.timeout='60'", {"timeout": "60"}),
    ],
)
def test_parse_pip_config_list_output(text, expected) -> None:
    assert parse_pip_config(text) == expected


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    env.update(extra)
    return env


def test_explicit_url_wins_and_must_be_http(tmp_path) -> None:
    choice = choose_index("http://127.0.0.1:1/simple", _env(tmp_path, PIP_INDEX_URL="http://x/"))
    assert choice.urls == ("http://127.0.0.1:1/simple",) and choice.origin == "--index-url"
    with pytest.raises(UsageError, match="HTTP"):
        choose_index("file:///opt/pypi/simple", _env(tmp_path))


def test_environment_variables_and_non_http_extras_are_skipped(tmp_path) -> None:
    env = _env(
        tmp_path,
        PIP_INDEX_URL="http://127.0.0.1:1/simple",
        PIP_EXTRA_INDEX_URL="file:///opt/pypi/simple http://127.0.0.1:2/simple /local/dir",
    )
    choice = choose_index(None, env)
    assert choice.urls == ("http://127.0.0.1:1/simple", "http://127.0.0.1:2/simple")
    assert choice.origin == "PIP_INDEX_URL"
    assert [url for url, _ in choice.skipped] == ["file:///opt/pypi/simple", "/local/dir"]
    assert all("HTTP" in why for _, why in choice.skipped)


def test_pip_config_file_is_read_through_pip(tmp_path) -> None:
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\nindex-url = http://127.0.0.1:3/simple\n"
        "extra-index-url = file:///opt/pypi/simple\n    http://127.0.0.1:4/simple\n"
    )
    choice = choose_index(None, _env(tmp_path, PIP_CONFIG_FILE=str(config)), python=sys.executable)
    assert choice.urls == ("http://127.0.0.1:3/simple", "http://127.0.0.1:4/simple")
    assert choice.origin == "pip config (index-url)"
    assert choice.skipped[0][0] == "file:///opt/pypi/simple"


def test_pips_own_default_is_read_from_pip(tmp_path) -> None:
    # no configuration at all: the default comes from pip itself, whatever it is
    choice = choose_index(None, _env(tmp_path, PIP_CONFIG_FILE=os.devnull), python=sys.executable)
    assert choice.origin == "pip's default index"
    assert len(choice.urls) == 1 and is_http(choice.urls[0]) and choice.urls[0].endswith("/simple")


def test_no_pip_and_no_url_is_a_usage_error(tmp_path) -> None:
    env = _env(tmp_path, PIP_CONFIG_FILE=os.devnull)
    with pytest.raises(UsageError, match="--index-url"):
        choose_index(None, env, python=str(tmp_path / "no-such-python"))
