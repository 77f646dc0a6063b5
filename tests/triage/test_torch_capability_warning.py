"""torch 2.8+'s capability warning ('Found GPU0 <name> which is of compute capability (CC)
12.0.', its list of supported ranges and the CUDA versions whose builds have the GPU's kernels):
TOR101 for the GPU it names, read from the lines above the actionable one (signature
torch-gpu-cc-outside-build, matrices/signatures/arch_checks.toml); the cosmetic form a Jetson
Orin prints, where no build has its own kernels but sm_80's run, is no failure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


def test_an_rtx_50_on_a_build_up_to_sm_90_confirms_the_arch_missing(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "C:\\projects\\mlm\\.venv\\Lib\\site-packages\\torch\\cuda\\__init__.py:374: UserWarning: "
        "Found GPU0 NVIDIA GeForce RTX 5090 Laptop GPU which is of compute capability (CC) 12.0.",
        "The following list shows the CCs this version of PyTorch was built for and the hardware "
        "CCs it supports:",
        "- 8.6 which supports hardware CC >=8.6,<9.0 except {8.7}",
        "- 9.0 which supports hardware CC >=9.0,<10.0",
        "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a "
        "PyTorch release that supports one of these CUDA versions: 12.8",
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    assert "sm_120" in cause["findings"][0]["message"]
    assert "whl/cu128" in fix_text(cause)


def test_the_cosmetic_warning_of_a_gpu_no_build_lists_is_no_failure(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "UserWarning: Found GPU0 Orin which is of compute capability (CC) 8.7.",
        "The following list shows the CCs this version of PyTorch was built for and the hardware "
        "CCs it supports:",
        "- 8.0 which supports hardware CC >=8.0,<9.0 except {8.7}",
        "No published PyTorch CUDA builds for release 2.13.0+cu130 support this GPU.",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 0
    assert result.json()["data"]["matches"] == []
