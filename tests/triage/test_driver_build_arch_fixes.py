"""Driver, build and arch lines whose fix follows what threads establish, decided by the line's own
facts and the log's: torch's 'No CUDA GPUs are available' (CUDA_VISIBLE_DEVICES first) against
'Found no NVIDIA driver' (the driver first), error 46 in its older wording, the CUDA variants that
have a GPU's kernels, nvcc against torch's CUDA with no exact torch build, and the GPU and torch
build a log names in free text (signatures/device_torch_stated.toml). Lines as the tools print them,
from the threads tests/fix_threads.toml names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def _log(tmp_path: Path, text: str, name: str = "job.log") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _commands(cause: dict[str, object]) -> list[str]:
    (finding,) = cause["findings"]  # type: ignore[index]
    return list(finding["fix"]["commands"])  # type: ignore[index]


def test_no_cuda_gpus_available_leads_with_cuda_visible_devices(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    drv103 = _causes(cli, _log(tmp_path, "RuntimeError: No CUDA GPUs are available\n"))["DRV103"]
    assert drv103["verdict"] == "confirmed"
    first = _commands(drv103)[0]
    assert "export CUDA_VISIBLE_DEVICES=0" in first


def test_found_no_driver_leads_with_the_driver_not_cuda_visible_devices(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check "
        "that you have an NVIDIA GPU and installed a driver from "
        "http://www.nvidia.com/Download/index.aspx\n"
    )
    drv103 = _causes(cli, _log(tmp_path, line))["DRV103"]
    commands = _commands(drv103)
    assert "sudo ubuntu-drivers autoinstall" in commands[0]
    assert not any("CUDA_VISIBLE_DEVICES=0" in c for c in commands)


def test_error_46_in_its_older_wording_names_the_compute_mode(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=66 error=46 : "
        "all CUDA-capable devices are busy or unavailable\n"
    )
    drv150 = _causes(cli, _log(tmp_path, line))["DRV150"]
    assert drv150["verdict"] == "confirmed"
    assert "cudaErrorDevicesUnavailable 46" in drv150["findings"][0]["message"]
    assert "sudo nvidia-smi -c DEFAULT" in _fix(drv150)


def test_an_arch_warning_lists_every_cuda_variant_with_the_gpus_kernels(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "NVIDIA GeForce RTX 3080 Laptop GPU with CUDA capability sm_86 is not compatible with "
        "the current PyTorch installation.\nThe current PyTorch install supports CUDA "
        "capabilities sm_37 sm_50 sm_60 sm_70.\n"
    )
    tor101 = _causes(cli, _log(tmp_path, line))["TOR101"]
    fix = _fix(tor101)
    assert "other torch builds with sm_86 kernels" in fix
    for variant in ("+cu116", "+cu118", "+cu121", "+cu128"):
        assert variant in fix


def test_an_nvcc_with_no_exact_torch_build_gets_the_same_major_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "RuntimeError:\nThe detected CUDA version (12.2) mismatches the version that was used "
        "to compile\nPyTorch (11.3). Please make sure to use the same CUDA versions.\n"
    )
    cud110 = _causes(cli, _log(tmp_path, line))["CUD110"]
    fix = _fix(cud110)
    assert "--index-url https://download.pytorch.org/whl/cu121 (CUDA 12.1" in fix
    assert "no build for CUDA 12.2 that envcheck knows" not in fix


def test_the_gpu_and_torch_a_log_names_in_free_text_decide_no_kernel_image(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "Successfully installed numpy-1.26.4 torch-2.5.1 torchvision-0.20.1\n"
        "Using device: NVIDIA GeForce RTX 5090\n" + NO_KERNEL,
    )
    found = _causes(cli, log)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert found["CUD153"]["verdict"] == "ruled_out"
    assert "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128" in _fix(
        found["TOR101"]
    )


def test_a_torch_that_has_the_gpus_kernels_points_at_the_extension(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "torch                     2.5.1+cu124\nGPU: NVIDIA GeForce RTX 3090\n" + NO_KERNEL,
    )
    found = _causes(cli, log)
    assert found["TOR101"]["verdict"] == "ruled_out"
    assert found["CUD153"]["verdict"] == "confirmed"
    assert 'TORCH_CUDA_ARCH_LIST="8.6"' in _fix(found["CUD153"])


def test_no_gpu_named_leaves_no_kernel_image_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, _log(tmp_path, "Successfully installed torch-2.5.1\n" + NO_KERNEL))
    assert found["TOR101"]["verdict"] != "confirmed"
    assert found["CUD153"]["verdict"] != "confirmed"


def test_a_gpu_only_the_newest_toolkit_compiles_also_gets_the_nightly(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    new = (
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\n"
    )
    fix = _fix(_causes(cli, _log(tmp_path, new))["TOR101"])
    assert (
        "pip install --pre torch torchvision torchaudio --index-url "
        "https://download.pytorch.org/whl/nightly/cu128" in fix
    )
    old = (
        "NVIDIA GeForce RTX 3080 Laptop GPU with CUDA capability sm_86 is not compatible with "
        "the current PyTorch installation.\n"
    )
    assert "nightly" not in _fix(_causes(cli, _log(tmp_path, old, "old.log"))["TOR101"])


SMI_TRUNCATED = (
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 570.86.10    Driver Version: 570.86.10    CUDA Version: 12.8     |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |                  N/A |\n"
    "+-------------------------------+----------------------+----------------------+\n"
)


def test_a_print_of_torchs_facts_names_the_gpu_a_truncated_smi_row_does_not(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nvidia-smi's screen cuts a long name to 'NVIDIA GeForce ...'; the print of torch's facts
    below it names the model, which decides the arch causes."""
    log = _log(
        tmp_path,
        SMI_TRUNCATED
        + "Successfully installed torch-2.5.1\n"
        + "2.5.1+cu124 12.4 True NVIDIA GeForce RTX 5090\n"
        + NO_KERNEL,
    )
    found = _causes(cli, log)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert "whl/cu128" in _fix(found["TOR101"])


def test_a_truncated_smi_name_alone_leaves_the_arch_causes_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, SMI_TRUNCATED + "Successfully installed torch-2.5.1\n" + NO_KERNEL)
    found = _causes(cli, log)
    assert found["TOR101"]["verdict"] != "confirmed"
    assert found["CUD153"]["verdict"] != "confirmed"
