"""TOR103 on a tagged flash-attn wheel built for another torch release: beside the release for
the installed torch, the fix names the other way threads take, the torch the wheel's tag names
from its CUDA variant's index (flash-attention#1061: torch pinned back), and only a build whose
pip wheels have the tag's C++ ABI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult

LINE = (
    "ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-"
    "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
)


def _fix(cli: Callable[..., CliResult], tmp_path: Path, flash_attn: str) -> dict[str, Any]:
    log, spec = tmp_path / "job.log", tmp_path / "stack.toml"
    log.write_text(LINE)
    spec.write_text(
        f'[python]\nversion = "3.10"\n[packages]\ntorch = "2.4.0"\nflash-attn = "{flash_attn}"\n'
    )
    result = cli("triage", "--no-probe", str(log), "--spec", str(spec), "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    cause = next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR103")
    assert cause["verdict"] == "confirmed"
    fix: dict[str, Any] = cause["findings"][0]["fix"]
    return fix


def test_the_torch_the_tag_names_from_its_cuda_index(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    fix = _fix(cli, tmp_path, "2.6.3+cu123torch2.3cxx11abiFALSE")
    assert fix["summary"].startswith("Reinstall flash-attn ")  # the installed torch's first
    back = "pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cu121"
    assert f"install the torch its wheel was built for: {back}" in fix["summary"]
    assert any(back in c for c in fix["commands"])


def test_no_torch_back_where_no_pip_build_has_the_tags_abi(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # torch 2.3's pip wheels use the old ABI: a cxx11abiTRUE wheel was built for another torch
    fix = _fix(cli, tmp_path, "2.6.3+cu123torch2.3cxx11abiTRUE")
    assert "install the torch its wheel was built for" not in fix["summary"]
