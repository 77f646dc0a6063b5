"""TOR120 from a log: sgl-kernel's common_ops failing on a torch symbol says it was built for
another torch, even for a release the matrix does not pair (sglang#5100: 0.1.2 under 2.7.0)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult

LINE = (
    "ImportError: /usr/local/lib/python3.11/dist-packages/sgl_kernel/common_ops.abi3.so: "
    "undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb\n"
)


def _tor120(cli: Callable[..., CliResult], tmp_path: Path, line: str, kernel: str) -> Any:
    log, spec = tmp_path / "job.log", tmp_path / "stack.toml"
    log.write_text(line)
    spec.write_text(
        f'[python]\nversion = "3.11"\n[packages]\ntorch = "2.7.0+cu128"\nsgl-kernel = "{kernel}"\n'
    )
    result = cli("triage", str(log), "--spec", str(spec), "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    assert [m["id"] for m in data["matches"]] == ["undefined-symbol-sgl-kernel"]
    return next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR120")


def test_a_torch_symbol_in_common_ops_confirms_tor120(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    tor120 = _tor120(cli, tmp_path, LINE, "0.1.2")
    assert tor120["verdict"] == "confirmed"
    [finding] = tor120["findings"]
    assert "_ZN5torch3jit17parseSchemaOrNameERKSsb" in finding["message"]
    assert "sgl-kernel release built for torch 2.7.0" in finding["fix"]["summary"]


def test_without_a_pair_or_a_torch_symbol_tor120_stays_open(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    line = LINE.replace("_ZN5torch3jit17parseSchemaOrNameERKSsb", "cuTensorMapEncodeTiled")
    tor120 = _tor120(cli, tmp_path, line, "0.1.2")
    assert tor120["verdict"] == "unknown"
    assert "not in the matrix" in tor120["reason"]
