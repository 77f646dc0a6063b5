"""Driver lines in another library's words: CUDA error 35 from a GPU library that ships its own
CUDA runtime (DRV220: the driver or that library's build, not a torch wheel), and XLA's warning
that its PTX compiler is newer than the driver (DRV221). Lines as the threads quote them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

# onnxruntime/mobius#316
ORT_35 = (
    "EP Error /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:122 "
    "std::conditional_t<THRW, void, onnxruntime::common::Status> onnxruntime::CudaCall(ERRTYPE, "
    "const char*, const char*, SUCCTYPE, const char*, const char*, int) [with ERRTYPE = "
    "cudaError; bool THRW = true; SUCCTYPE = cudaError; std::conditional_t<THRW, void, "
    "common::Status> = void] CUDA failure 35: CUDA driver version is insufficient for CUDA "
    "runtime version ; GPU=-1 ; hostname=c4327188c000000 ; "
    "file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_execution_provider.cc ; line=336 "
    "; expr=cudaSetDevice(info_.device_id); "
)
# jax-ml/jax#19821
XLA_PTXAS = (
    "2024-02-15 14:18:20.201828: W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The "
    "NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.3.107). "
    "Because the driver is older than the ptxas version, XLA is disabling parallel compilation, "
    "which may slow down compilation. You should update your NVIDIA driver or use the "
    "NVIDIA-provided CUDA forward compatibility packages."
)


def test_onnxruntime_error_35_names_the_driver_and_its_cuda_11_build(
    cli: Cli, tmp_path: Path
) -> None:
    found = causes(cli, log_file(tmp_path, ORT_35))
    cause = found["DRV220"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert text.index("ubuntu-drivers autoinstall") < text.index('"onnxruntime-gpu<1.19"')
    assert "ONNX Runtime" in cause["findings"][0]["message"]
    # torch's wheel is not the fix here: DRV101 stays open, saying why
    assert found["DRV101"]["verdict"] != "confirmed"
    assert "ONNX Runtime's CUDA runtime, not torch's" in found["DRV101"]["reason"]


def test_onnxruntime_error_35_with_the_driver_known(cli: Cli, tmp_path: Path) -> None:
    """With the node's driver stated (CUDA 11.4), the build for that CUDA is named."""
    spec = tmp_path / "spec.toml"
    spec.write_text('[gpu]\ndriver = "470.82.01"\nmodels = ["NVIDIA GeForce RTX 3090"]\n')
    cause = causes(cli, log_file(tmp_path, ORT_35), "--spec", str(spec))["DRV220"]
    assert cause["verdict"] == "confirmed"
    assert "it runs CUDA <= 11.4" in cause["findings"][0]["message"]
    assert '"onnxruntime-gpu<1.19"' in fix_text(cause)


def test_cupy_error_35_names_the_cupy_build_for_cuda_11(cli: Cli, tmp_path: Path) -> None:
    line = (
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA "
        "driver version is insufficient for CUDA runtime version"
    )
    cause = causes(cli, log_file(tmp_path, line))["DRV220"]
    assert cause["verdict"] == "confirmed"
    assert "pip install cupy-cuda11x" in fix_text(cause)


def test_torch_error_35_is_not_another_library_s(cli: Cli, tmp_path: Path) -> None:
    line = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
    assert causes(cli, log_file(tmp_path, line))["DRV220"]["verdict"] == "ruled_out"


def test_xla_ptxas_warning_names_the_driver_and_a_ptxas_of_the_driver_cuda(
    cli: Cli, tmp_path: Path
) -> None:
    cause = causes(cli, log_file(tmp_path, XLA_PTXAS))["DRV221"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "supports CUDA 12.3" in text
    assert 'pip install "nvidia-cuda-nvcc-cu12==12.2.*"' in text
    assert "nvidia-driver-545" in text  # the first branch that runs CUDA 12.3 (drivers.toml)


def test_the_shell_without_nvidia_smi_names_the_driver_first(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "$ nvidia-smi",
        "Command 'nvidia-smi' not found, but can be installed with:",
        "sudo apt install nvidia-utils-535         # version 535.129.03-0ubuntu0.22.04.1, or",
    )
    cause = causes(cli, log)["DRV103"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert text.index("ubuntu-drivers autoinstall") < text.index("docker run --gpus all")
