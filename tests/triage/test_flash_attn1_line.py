"""FlashAttention 1.x's extension (flash_attn_cuda) failing on a torch symbol confirms TOR141 from
the line (not TOR103, whose fixes name 2.x releases that need Ampere); the fix rebuilds a 1.x
release against the installed torch (Dao-AILab/flash-attention#235)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

# Dao-AILab/flash-attention#235 (the lines as pasted)
LINE = (
    "E   ImportError: /home/dsuser/.local/lib/python3.8/site-packages/flash_attn_cuda.cpython-38-"
    "x86_64-linux-gnu.so: undefined symbol: {symbol}\n"
)


def _causes(cli: Callable[..., CliResult], tmp_path: Path, symbol: str, *extra: str) -> Any:
    log = tmp_path / "job.log"
    log.write_text("    import flash_attn_cuda\n" + LINE.format(symbol=symbol))
    result = cli("triage", str(log), "--json", "--no-probe", *extra)
    assert result.returncode == 1, result.stderr
    # the log's one match; what the --from environment shows besides comes after it
    [match] = [m for m in result.json()["data"]["matches"] if m["id"] != "environment-shows"]
    return match["causes"]


def test_a_torch_symbol_confirms_tor141_with_a_1x_rebuild(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    [cause] = _causes(cli, tmp_path, "_ZN3c104impl8GPUTrace13gpuTraceStateE")
    assert cause["code"] == "TOR141" and cause["verdict"] == "confirmed"
    [finding] = cause["findings"]
    assert "line 2" in cause["evidence"]
    assert (
        "pip install --no-build-isolation --no-cache-dir flash-attn==1.0.4"
        in finding["fix"]["commands"]
    )


def test_the_installed_1x_release_is_rebuilt_when_it_is_not_1_0_5(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==1.13.1\nflash-attn==1.0.9\n")
    [cause] = _causes(cli, tmp_path, "_ZN3c104impl8GPUTrace13gpuTraceStateE", "--from", str(freeze))
    [finding] = cause["findings"]
    assert "torch 1.13.1" in finding["message"]
    assert any(c.endswith("flash-attn==1.0.9") for c in finding["fix"]["commands"])


@pytest.mark.parametrize("symbol", ["_Z3foov", "cudaGetDriverEntryPointByVersion"])
def test_a_symbol_that_is_not_torch_s_leaves_it_open(
    cli: Callable[..., CliResult], tmp_path: Path, symbol: str
) -> None:
    [cause] = _causes(cli, tmp_path, symbol)
    assert cause["verdict"] != "confirmed" and cause["findings"] == []
