"""torch's facts as an interactive session shows them (the question on one line, the repr of
the answer on the next) or a print states them, read for the arch causes
(matrices/signatures/device_torch_stated.toml: torch-repl-version, torch-repl-device-name,
torch-repl-capability)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_a_repl_session_states_the_gpu_and_the_build_without_the_nvidia_prefix(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        ">>> torch.cuda.get_device_name(0)",
        "'Tesla K80'",
        ">>> torch.__version__",
        "'2.3.0+cu121'",
        _NO_KERNEL,
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    assert "cu118" in fix_text(cause)  # the last CUDA whose builds keep sm_37


def test_a_printed_capability_tuple_decides_the_build(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "torch.cuda.get_device_capability() = (12, 0)",
        "torch.__version__ = 2.5.1+cu124",
        _NO_KERNEL,
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    assert "cu128" in fix_text(cause)


def test_the_question_alone_states_nothing(cli: Cli, tmp_path: Path) -> None:
    log = log_file(tmp_path, ">>> torch.cuda.get_device_capability()", _NO_KERNEL)
    assert causes(cli, log)["TOR101"]["verdict"] != "confirmed"
