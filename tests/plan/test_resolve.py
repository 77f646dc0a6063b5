"""Resolving with uv for the target's platform and Python, against a local index (offline)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Target
from envcheck.plan.resolve import (
    IndexConfig,
    UvMissing,
    find_uv,
    pip_index_config,
    python_platform,
    redact_url,
    resolve,
)
from envcheck.plan.stack import add_overrides, choose_stack
from envcheck.rules.base import Rule
from tests.plan.conftest import LocalIndex


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


def test_resolves_vllm_063_with_the_cublas_override(
    local_index: LocalIndex, matrix: Matrix, rules: Sequence[Rule]
) -> None:
    target = Target(python="3.11", glibc="2.35", driver="535.104.05", gpus=("NVIDIA H20",))
    stack = add_overrides(choose_stack(matrix, target, ["vllm==0.6.3"]), matrix, rules)
    index = IndexConfig(index_url=local_index.url)
    got = resolve(stack, index, uv=find_uv(), timeout=120)
    assert got.pins == {
        "filelock": "3.16.1",
        "numpy": "1.26.4",
        "nvidia-cublas-cu12": "12.3.4.1",
        "ray": "2.40.0",
        "torch": "2.4.0",
        "vllm": "0.6.3",
    }
    assert "--hash=sha256:" in got.text
    assert "envcheck-lock-" not in got.text  # no temp paths leak into the lock
    # deterministic: the same inputs give the same lock
    assert resolve(stack, index, uv=find_uv(), timeout=120).text == got.text


def test_resolves_from_the_variant_index_with_find_links(
    local_index: LocalIndex, rules: Sequence[Rule]
) -> None:
    matrix = local_index.matrix()
    target = Target(python="3.11", driver="570.86.15", gpus=("NVIDIA GeForce RTX 5090",))
    stack = choose_stack(matrix, target, ["torch"])
    assert stack.torch_index_url is not None and stack.torch_index_url.startswith("file://")
    index = IndexConfig(
        find_links=(str(local_index.wheels),), no_index=False, index_url=local_index.url
    )
    got = resolve(stack, index, uv=find_uv(), fmt="pylock", timeout=120)
    assert got.pins["torch"] == "2.11.0+cu128"
    assert got.pins["nvidia-cublas-cu12"] == "12.8.4.1"


def test_no_index_find_links_and_a_clear_failure(local_index: LocalIndex, matrix: Matrix) -> None:
    from envcheck.plan.resolve import ResolveFailed

    index = IndexConfig(find_links=(str(local_index.wheels),), no_index=True)
    stack = choose_stack(matrix, Target(python="3.11"), ["vllm==0.6.4"])
    got = resolve(stack, index, uv=find_uv(), timeout=120)
    assert got.pins["torch"] == "2.5.1" and got.pins["nvidia-cublas-cu12"] == "12.4.5.8"
    bad = choose_stack(matrix, Target(python="3.11"), ["vllm==0.6.4", "numpy>=2"])
    with pytest.raises(ResolveFailed) as info:
        resolve(bad, index, uv=find_uv(), timeout=120)
    assert "numpy" in info.value.detail


@pytest.mark.online
def test_online_vllm_063_for_linux_x86_64_py311_applies_the_cublas_override(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    """The real index: vLLM 0.6.3 for an H20 node resolves torch 2.4.0 with cuBLAS 12.3.4.1."""
    target = Target(python="3.11", glibc="2.35", driver="535.104.05", gpus=("NVIDIA H20",) * 8)
    stack = add_overrides(choose_stack(matrix, target, ["vllm==0.6.3"]), matrix, rules)
    got = resolve(stack, pip_index_config(), uv=find_uv(), timeout=600)
    assert got.pins["vllm"] == "0.6.3"
    assert got.pins["torch"] == "2.4.0"
    assert got.pins["nvidia-cublas-cu12"] == "12.3.4.1"
    assert "--override" in got.text
