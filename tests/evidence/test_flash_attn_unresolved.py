"""A flash-attn installed by `pip install flash-attn` has no build tag: TOR103 judges it when the
log shows its extension failing on a torch symbol (the line is the evidence), names a release
with wheels for the installed torch, and the C++11-ABI form of the symbol points at the
cxx11abiFALSE wheel."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

SPEC = '[python]\nversion = "3.10.14"\n[packages]\ntorch = "2.3.0"\nflash-attn = "2.5.7"\n'
# Dao-AILab/flash-attention#931 and #940 (the lines as pasted)
SETDEVICE = (
    "ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-"
    "gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
)
CXX11 = (
    "flash-attn error flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\n"
)


def _tor103(cli: Callable[..., CliResult], tmp_path: Path, line: str) -> dict[str, Any]:
    log, spec = tmp_path / "job.log", tmp_path / "stack.toml"
    log.write_text("Traceback (most recent call last):\n" + line)
    spec.write_text(SPEC)
    result = cli("triage", str(log), "--spec", str(spec), "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    found: dict[str, Any] = next(
        c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR103"
    )
    return found


def test_a_torch_symbol_confirms_tor103_with_a_release_built_for_this_torch(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    tor103 = _tor103(cli, tmp_path, SETDEVICE)
    assert tor103["verdict"] == "confirmed"
    assert "line 2" in tor103["evidence"]
    [finding] = tor103["findings"]
    assert "_ZN3c104cuda9SetDeviceEi" in finding["message"]
    assert "torch 2.3.0" in finding["message"]
    assert "prebuilt wheels for torch 2.3" in finding["fix"]["summary"]
    assert any(
        "flash-attn==" in c and "--no-build-isolation" in c for c in finding["fix"]["commands"]
    )
    assert "cxx11abiFALSE" not in finding["fix"]["summary"]


def test_the_cxx11_form_of_a_torch_symbol_names_the_cxx11abifalse_wheel(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    [finding] = _tor103(cli, tmp_path, CXX11)["findings"]
    assert "cxx11abiFALSE" in finding["fix"]["summary"]


@pytest.mark.parametrize("symbol", ["_Z3foov", "cudaGetDriverEntryPointByVersion"])
def test_a_symbol_that_is_not_torch_s_leaves_tor103_open(
    cli: Callable[..., CliResult], tmp_path: Path, symbol: str
) -> None:
    line = SETDEVICE.replace("_ZN3c104cuda9SetDeviceEi", symbol)
    tor103 = _tor103(cli, tmp_path, line)
    assert tor103["verdict"] == "unknown" and tor103["findings"] == []
    assert "no build tag" in tor103["reason"]
