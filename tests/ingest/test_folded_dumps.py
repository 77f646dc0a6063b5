"""Driver dumps whose line breaks the paste lost or whose sections follow each other without a
prompt: `nvidia-smi -q` rendered as one line (an unfenced paste in an issue), with or without
its banner and beside other text, and `nvcc --version` followed at once by `nvidia-smi`'s
header (the nvcc section ends at the first line that is not nvcc's)."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.ingest.nvidia_smi import unfolded_query
from envcheck.model.report import GpuInfo

Q_ONE_LINE = (
    " ==============NVSMI LOG============== Timestamp : Mon Jan 15 10:00:00 2024 Driver "
    "Version : 545.23.08 CUDA Version : 12.3 Attached GPUs : 1 GPU 00000000:01:00.0 Product "
    "Name : NVIDIA GeForce RTX 4090 Product Brand : GeForce\n"
)

Q_FRAGMENT = (
    "Driver Version : 535.129.03 CUDA Version : 12.2 Attached GPUs : 2 GPU 00000000:3B:00.0 "
    "Product Name : NVIDIA A100-PCIE-40GB Product Brand : NVIDIA GPU 00000000:D8:00.0 Product "
    "Name : NVIDIA A100-PCIE-40GB\n"
)

NVCC_THEN_SMI = """\
nvcc --version
nvcc: NVIDIA (R) Cuda compiler driver
Cuda compilation tools, release 11.8, V11.8.89
nvidia-smi
NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0
"""


def _gpu(text: str) -> GpuInfo:
    report = parse(Source(name="dump.txt", text=text))
    assert report.gpu.data is not None, report.gpu.reason
    return report.gpu.data


def test_query_on_one_line_is_read() -> None:
    gpu = _gpu(Q_ONE_LINE)
    assert str(gpu.driver_version) == "545.23.08"
    assert str(gpu.cuda_driver_version) == "12.3"
    assert [g.name for g in gpu.gpus or ()] == ["NVIDIA GeForce RTX 4090"]


def test_query_fragment_on_one_line_is_read() -> None:
    gpu = _gpu(Q_FRAGMENT)
    assert str(gpu.driver_version) == "535.129.03"
    assert len(gpu.gpus or ()) == 2


def test_query_on_one_line_beside_a_freeze() -> None:
    text = f"Here is my env:\n\n{Q_ONE_LINE}\ntorch==1.13.1\nnumpy==1.24.0\n"
    report = parse(Source(name="dump.txt", text=text))
    assert report.gpu.data is not None
    assert str(report.gpu.data.driver_version) == "545.23.08"
    assert report.packages.data is not None
    assert "torch" in {d.key for d in report.packages.data.distributions}


def test_unfolding_leaves_ordinary_lines() -> None:
    text = "Driver Version                            : 535.129.03\nsome : thing : else\n"
    assert unfolded_query(text) == text.rstrip("\n")


def test_nvcc_section_stops_before_nvidia_smi() -> None:
    gpu = _gpu(NVCC_THEN_SMI)
    assert str(gpu.driver_version) == "525.85.12"
    assert str(gpu.cuda_driver_version) == "12.0"


COLLECT_ENV_ONE_LINE = (
    "PyTorch version: 1.4.0 Is debug build: No CUDA used to build PyTorch: 10.1 OS: Ubuntu "
    "18.04.3 LTS GCC version: (Ubuntu 7.4.0-1ubuntu1~18.04.1) 7.4.0 CMake version: version "
    "3.10.2 Python version: 3.7 Is CUDA available: No CUDA runtime version: 10.1.243 GPU "
    "models and configuration: GPU 0: GeForce RTX 2080 Ti Nvidia driver version: 418.87.01 "
    "cuDNN version: /usr/lib/x86_64-linux-gnu/libcudnn.so.7.6.5 Versions of relevant "
    "libraries: [pip] numpy==1.18.1 [pip] torch==1.4.0\n"
)


def test_collect_env_on_one_line_keeps_the_driver_and_gpu() -> None:
    report = parse(Source(name="dump.txt", text=COLLECT_ENV_ONE_LINE))
    gpu = report.gpu.data
    assert gpu is not None
    assert str(gpu.driver_version) == "418.87.01"
    assert [g.name for g in gpu.gpus or ()] == ["GeForce RTX 2080 Ti"]
    assert report.torch.data is not None
    assert report.torch.data.cuda == "10.1"
