"""Lock files as installers read them: PEP 751 names (`pylock.toml`, `pylock.<name>.toml`),
headers that name no local path, and `lock --verify` (installed into a scratch venv)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envcheck.cli.lock import check_pylock_name
from envcheck.commands.lock_resolve import header_without_local_paths
from envcheck.errors import UsageError
from tests.conftest import run_cli
from tests.plan.conftest import LocalIndex


@pytest.mark.parametrize("name", ["pylock.toml", "out/pylock.toml", "pylock.verl-h100.toml"])
def test_pep751_names_are_accepted(name: str) -> None:
    check_pylock_name(name)


@pytest.mark.parametrize(
    ("name", "better"),
    [
        ("x.pylock.toml", "pylock.x.toml"),
        ("locks/verl.toml", "locks/pylock.verl.toml"),
        ("pylock.a.b.toml", "pylock.a-b.toml"),
    ],
)
def test_other_names_are_refused_with_the_name_to_use(name: str, better: str) -> None:
    with pytest.raises(UsageError, match=rf"use -o {better}$"):
        check_pylock_name(name)


def test_the_cli_refuses_before_resolving_and_writes_nothing(tmp_path: Path) -> None:
    result = run_cli(
        "lock", "torch", "--python", "3.11", "--no-index", "--format", "pylock", "-o",
        "x.pylock.toml", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "envcheck: error: -o x.pylock.toml: a PEP 751 lock is named pylock.toml or "
        "pylock.<name>.toml (uv and pip refuse other names): use -o pylock.x.toml"
    ]
    assert list(tmp_path.iterdir()) == []


def test_headers_name_no_local_path() -> None:
    text = (
        "# Resolved by uv lock; default index from pip config (file:///opt/pypi/simple, "
        "/opt/wheels)\n# Profile: mine (source: /home/me/profiles/mine.toml)\n"
        "--find-links /opt/wheels\ntorch==2.5.1 \\\n    --hash=sha256:00\n"
    )
    out = header_without_local_paths(text)
    assert "file://" not in out and "/home/me" not in out
    assert "(<a local index of the machine that locked>, <a local path>)" in out
    assert out.endswith("--find-links /opt/wheels\ntorch==2.5.1 \\\n    --hash=sha256:00\n")


def test_lock_verify_installs_and_imports(local_index: LocalIndex, tmp_path: Path) -> None:
    """The loopback world's wheels import (they hold empty packages); its `ray` is a stub
    without `ray.init`, so the Ray task fails, and the lock is not written."""
    python = ".".join(map(str, sys.version_info[:3]))
    args = (
        "lock", "--index-url", local_index.url, "--matrix", str(local_index.overlay),
        "--python", python, "vllm==0.6.3", "--verify", "-o", "req.lock", "--json",
    )  # fmt: skip
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    verify = data["verify"]
    assert verify["installed"]["vllm"] == "0.6.3"
    steps = {s["name"]: s["ok"] for s in verify["steps"]}
    assert steps["install"] and steps["import vllm"] and steps["import torch"]
    assert steps["ray task"] is False
    (finding,) = [f for f in data["findings"] if f["code"] == "PKG172"]
    assert finding["message"].startswith("a Ray task importing ")
    assert "has no attribute 'init' (ray 2.40.0)" in finding["message"]
    assert "failed: ray task" in result.stderr and not (tmp_path / "req.lock").exists()
    forced = run_cli(*args, "--force", cwd=tmp_path)
    assert forced.returncode == 1 and (tmp_path / "req.lock").is_file()
