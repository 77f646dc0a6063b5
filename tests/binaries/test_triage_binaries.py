"""Triage checks a log's loader and kernel-image lines against the node's own binaries (the
report's ``binaries`` section): confirmed when the ELF files show that failure, ruled out when
they do not. Lines as the loader and CUDA print them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes

CASES = Path(__file__).parents[1] / "rules" / "cases"
UNDEFINED = (
    "ImportError: /opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-"
    "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
)


def _log(tmp_path: Path, text: str) -> Path:
    log = tmp_path / "job.log"
    log.write_text(text)
    return log


def test_undefined_symbol_confirmed_by_the_nodes_binaries(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    found = causes(cli, _log(tmp_path, UNDEFINED), "--report", str(CASES / "TOR162" / "bad.json"))
    tor162 = found["TOR162"]
    assert tor162["verdict"] == "confirmed"
    assert "c10::cuda::SetDevice(int)" in tor162["findings"][0]["message"]


def test_undefined_symbol_ruled_out_when_torch_defines_it(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    found = causes(cli, _log(tmp_path, UNDEFINED), "--report", str(CASES / "TOR162" / "good.json"))
    assert found["TOR162"]["verdict"] == "ruled_out"


def test_no_kernel_image_confirmed(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
    )
    found = causes(cli, log, "--report", str(CASES / "TOR160" / "bad.json"))
    assert found["TOR160"]["verdict"] == "confirmed"
    assert "sm_120" in found["TOR160"]["findings"][0]["message"]


def test_without_binaries_nothing_is_added(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    report = json.loads((CASES / "TOR162" / "bad.json").read_text())
    report["binaries"] = {"status": "unavailable", "reason": "not read"}
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(report))
    assert "TOR162" not in causes(cli, _log(tmp_path, UNDEFINED), "--report", str(saved))
