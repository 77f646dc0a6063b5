"""The GPU node's state as a log states it (signatures/gpu_state.toml): the kernel driver's Xid
events, read by their number from matrices/hardware/xid.toml (DRV200 the node's faults, DRV201
the program's own, GPU110 uncorrectable ECC, GPU111 row remapping), and a program's own output
that CUDA is not usable (TOR110 for a CPU-only torch, DRV103 for a CUDA build that sees no GPU)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.matrix.load import load
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def _confirmed(cli: Callable[..., CliResult], tmp_path: Path, code: str, *lines: str) -> str:
    cause = _causes(cli, log_file(tmp_path, *lines))[code]
    assert cause["verdict"] == "confirmed", cause
    return _fix(cause)


KERNEL = "Nov 26 10:00:01 gpu-node-7 kernel: "


def test_xid_table_has_the_documented_numbers_with_a_class_and_source() -> None:
    matrix = load()
    for number in (13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 154):
        entry = matrix.xid(number)
        assert entry is not None, number
        assert entry.source.startswith("NVIDIA open-gpu-kernel-modules"), number
    assert matrix.xid(79).name == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"  # type: ignore[union-attr]
    assert {matrix.xid(n).fault for n in (13, 31, 43)} == {"application"}  # type: ignore[union-attr]
    assert matrix.xid(9999) is None


def test_fallen_off_the_bus_asks_for_a_reboot_and_the_power_and_seating_checks(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "DRV200",
        KERNEL + "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
    )
    assert "sudo reboot" in fix
    assert "reseat" in fix and "PSU" in fix
    assert "nvidia-smi -lgc" in fix


def test_fallen_off_the_bus_without_an_xid_is_xid_79(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(cli, log_file(tmp_path, "NVRM: GPU 0000:a1:00.0: GPU has fallen off the bus."))
    assert cause["DRV200"]["verdict"] == "confirmed"
    (finding,) = cause["DRV200"]["findings"]
    assert "Xid 79" in finding["message"]


def test_gsp_timeout_names_the_gpu_and_the_firmware_switch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "DRV200",
        "[Fri Mar  3 04:27:08 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, "
        "name=nvidia-smi, Timeout waiting for RPC from GSP! Expected function 103 "
        "(GSP_RM_ALLOC) (0x80 0x38).",
    )
    assert "sudo nvidia-smi -r -i 0000:61:00.0" in fix
    assert "NVreg_EnableGpuFirmware=0" in fix
    assert "update the NVIDIA driver" in fix
    assert "nvidia-smi -pm 1" in fix


@pytest.mark.parametrize("number", [13, 31, 43, 45])
def test_application_xids_are_the_programs_fault_not_the_nodes(
    tmp_path: Path, cli: Callable[..., CliResult], number: int
) -> None:
    line = (
        f"NVRM: Xid (PCI:0000:00:07): {number}, pid=2512125, name=python3.10, Ch 00000008, "
        "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_8 faulted @ 0x73ac_1c000000."
    )
    cause = _causes(cli, log_file(tmp_path, line))
    assert set(cause) == {"DRV201"}
    assert cause["DRV201"]["verdict"] == "confirmed"
    (finding,) = cause["DRV201"]["findings"]
    assert finding["severity"] == "info"
    assert "not a fault of the node" in finding["message"]
    assert "pid 2512125, python3.10" in finding["message"]
    assert "compute-sanitizer" in _fix(cause["DRV201"])


@pytest.mark.parametrize(("number", "code"), [(48, "GPU110"), (94, "GPU110"), (63, "GPU111")])
def test_ecc_xids_are_the_gpu_health_rules_causes(
    tmp_path: Path, cli: Callable[..., CliResult], number: int, code: str
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        code,
        f"NVRM: Xid (PCI:0000:07:00): {number}, pid='<unknown>', name=<unknown>, An "
        "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer",
    )
    assert "sudo nvidia-smi -r -i 0000:07:00.0" in fix
    assert "ROW_REMAPPER" in fix


def test_row_remap_failure_asks_for_replacement(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli, tmp_path, "GPU111", "NVRM: Xid (PCI:0000:10:1c): 64, pid=1896, Row Remapper: failed"
    )
    assert "RMA" in fix


def test_an_xid_the_table_does_not_know_is_named_with_the_catalog(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(cli, tmp_path, "DRV200", "NVRM: Xid (PCI:0000:dc:00): 149, pid=1, name=x")
    assert "analyzing-xid-catalog" in fix


def test_recovery_action_reboot_required(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "DRV200",
        "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
        "(Node Reboot Required)",
    )
    assert fix.splitlines()[1] == "# sudo reboot"


# --- CUDA not usable, by the program's own output ---------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "CUDA available: False",
        "torch.cuda.is_available() returns False",
        "torch.cuda.is_available(): False",
        "cuda available? False",
        "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
        "TypeError: type torch.cuda.BFloat16Tensor not available",
    ],
)
def test_cuda_unusable_with_a_cpu_build_is_tor110_with_the_cuda_wheel(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    cause = _causes(cli, log_file(tmp_path, "torch                     2.1.0+cpu", line))
    assert cause["TOR110"]["verdict"] == "confirmed", cause
    assert cause["DRV103"]["verdict"] == "ruled_out"
    fix = _fix(cause["TOR110"])
    assert "torch==2.1.0" in fix
    assert "--index-url https://download.pytorch.org/whl/cu1" in fix


def test_cuda_unusable_with_a_cuda_build_is_drv103(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(
        cli, log_file(tmp_path, "PyTorch version: 2.4.0+cu121", "CUDA available: False")
    )
    assert cause["DRV103"]["verdict"] == "confirmed"
    assert cause["TOR110"]["verdict"] == "ruled_out"
    assert "--gpus all" in _fix(cause["DRV103"])


def test_cuda_unusable_with_an_unknown_build_leaves_both_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(
        cli, log_file(tmp_path, ">>> torch.cuda.is_available()", "CUDA available: False")
    )
    assert cause["TOR110"]["verdict"] == "unknown"
    assert cause["DRV103"]["verdict"] == "unknown"


def test_half_op_on_cpu_with_a_cuda_build_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The program may simply not have moved the model to the GPU: a user-code fix."""
    cause = _causes(
        cli,
        log_file(
            tmp_path,
            "torch==2.0.1+cu118",
            "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'",
        ),
    )
    assert cause["TOR110"]["verdict"] == "ruled_out"
    assert cause["DRV103"]["verdict"] == "unknown"


def test_half_op_on_cpu_with_a_cpu_build_is_tor110(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "TOR110",
        "torch 2.0.1+cpu",
        "RuntimeError: \"slow_conv2d_cpu\" not implemented for 'Half'",
    )
    assert "torch==2.0.1" in fix


def test_collect_env_without_gpus_confirms_nothing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """collect_env prints 'Is CUDA available' on every machine, CPU-only ones included."""
    cause = _causes(
        cli, log_file(tmp_path, "PyTorch version: 2.4.0+cu121", "Is CUDA available: False")
    )
    assert cause["DRV103"]["verdict"] != "confirmed"


def test_a_clean_log_that_prints_cuda_available_true_has_no_finding(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "PyTorch version: 2.4.0+cu121",
        "CUDA available: True",
        "torch.cuda.is_available() returns True",
        "epoch 1 loss 0.53",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 0, result.stdout
    data = result.json()["data"]
    assert not [m for m in data["matches"] if m["causes"]]


def test_repl_false_on_the_next_line_reads_the_torch_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "TOR110",
        "torch                     2.0.1+cpu",
        ">>> import torch",
        ">>> torch.cuda.is_available()",
        "False",
    )
    assert "torch==2.0.1" in fix


def test_repl_true_rules_both_causes_out(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    cause = _causes(
        cli,
        log_file(tmp_path, "PyTorch version: 2.4.0+cu121", ">>> torch.cuda.is_available()", "True"),
    )
    assert cause["TOR110"]["verdict"] == "ruled_out"
    assert cause["DRV103"]["verdict"] == "ruled_out"
