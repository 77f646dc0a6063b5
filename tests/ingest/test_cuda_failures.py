"""A pasted text that holds only a CUDA call's failure (torch's CUDA-initialisation warning, a
`CUDA error:` RuntimeError, a `CUDA_ERROR_X` name, TensorFlow's cuda_diagnostics lines) or a
part of `nvidia-smi -q`: `check --from` reads what it states instead of refusing the text."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import GpuInfo
from tests.conftest import run_cli

TORCH_804 = (
    "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:107: UserWarning: CUDA "
    "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 804: forward "
    "compatibility was attempted on non supported HW (Triggered internally at "
    "../c10/cuda/CUDAFunctions.cpp:109.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
)
TORCH_UNKNOWN = (
    ">>> import torch\n"
    ">>> torch.cuda.is_available()\n"
    "/home/u/.local/lib/python3.10/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA "
    "initialization: CUDA unknown error - this may be due to an incorrectly set up environment, "
    "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available "
    "devices to be zero. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"
    "False\n"
)
RUNTIME_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
)
TF_CUINIT = (
    "2023-10-02 10:00:00.000000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:268]"
    " failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display "
    "driver / cuda driver combination\n"
    "2023-10-02 10:00:00.000000: I tensorflow/compiler/xla/stream_executor/cuda/"
    "cuda_diagnostics.cc:176] libcuda reported version is: 535.129.3\n"
    "2023-10-02 10:00:00.000000: I tensorflow/compiler/xla/stream_executor/cuda/"
    "cuda_diagnostics.cc:180] kernel reported version is: 535.104.5\n"
)


def _gpu(text: str) -> GpuInfo:
    report = parse(Source(name="dump.txt", text=text))
    assert report.gpu.data is not None, report.gpu.reason
    return report.gpu.data


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        (TORCH_804, ("804",)),
        (RUNTIME_ERROR, ("CUDA driver version is insufficient for CUDA runtime version",)),
        (TF_CUINIT, ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",)),
    ],
    ids=["torch-init-number", "runtime-error-message", "cuinit-name"],
)
def test_the_error_a_cuda_failure_states(text: str, stated: tuple[str, ...]) -> None:
    assert _gpu(text).cuda_errors == stated


def test_tensorflow_states_the_loaded_kernel_module() -> None:
    gpu = _gpu(TF_CUINIT)
    assert gpu.driver_version == "535.104.5"


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        (TORCH_804, "cudaErrorCompatNotSupportedOnDevice 804"),
        (TORCH_UNKNOWN, "cudaErrorUnknown 999"),
        (RUNTIME_ERROR, "cudaErrorInsufficientDriver 35"),
        (TF_CUINIT, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH 803"),
    ],
    ids=["804", "unknown", "insufficient", "mismatch"],
)
def test_check_from_explains_the_stated_error(tmp_path: Path, text: str, entry: str) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(text)
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    messages = [f["message"] for f in result.json()["data"]["findings"] if f["code"] == "DRV150"]
    assert any(entry in m for m in messages), messages


def test_a_part_of_nvidia_smi_q_without_the_driver_line() -> None:
    gpu = _gpu(
        "Attached GPUs                             : 1\n"
        "GPU 00000000:01:00.0\n"
        "    Product Name                          : NVIDIA A100-SXM4-40GB\n"
        "    Persistence Mode                      : Enabled\n"
        "    FB Memory Usage\n"
        "        Total                             : 40960 MiB\n"
        "        Used                              : 0 MiB\n"
    )
    assert gpu.driver_version is None
    assert gpu.gpus is not None
    assert [(g.name, g.memory_total_mib) for g in gpu.gpus] == [("NVIDIA A100-SXM4-40GB", 40960)]


def test_a_part_of_one_gpus_block_of_nvidia_smi_q() -> None:
    gpu = _gpu(
        "    Product Name                          : Tesla V100-SXM2-16GB\n"
        "    Product Brand                         : Tesla\n"
        "    VBIOS Version                         : 88.00.4F.00.09\n"
        "    CUDA Version                          : 11.2\n"
    )
    assert gpu.cuda_driver_version == "11.2"
    assert gpu.gpus is not None and gpu.gpus[0].name == "Tesla V100-SXM2-16GB"


def test_a_benign_torch_line_is_not_a_cuda_failure(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text("CUDA available: True\nthe run finished without a CUDA error\n")
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 2
    assert "format not recognised" in result.stderr
