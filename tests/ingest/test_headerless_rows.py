"""Rows pasted without the line that names their columns: nvidia-smi's noheader CSV without its
command line, pip's legacy list, /etc/redhat-release."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import GpuInfo, PackagesInfo, SystemInfo


def test_noheader_csv_rows_without_their_command() -> None:
    report = parse(
        Source(
            name="paste.txt",
            text="NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB\n"
            "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB\n",
        )
    )
    gpu = report.gpu.data
    assert isinstance(gpu, GpuInfo)
    assert gpu.driver_version == "550.54.15"
    assert gpu.gpus is not None
    assert [g.name for g in gpu.gpus] == ["NVIDIA H100 80GB HBM3"] * 2
    assert all(g.memory_total_mib is None for g in gpu.gpus)  # total or used: not said


def test_noheader_rows_with_index_and_capability() -> None:
    report = parse(Source(name="p.txt", text="0, NVIDIA GeForce RTX 3090, 8.6, 535.129.03\n"))
    gpu = report.gpu.data
    assert isinstance(gpu, GpuInfo)
    assert gpu.gpus is not None
    assert gpu.gpus[0].compute_capability == "8.6"
    assert gpu.driver_version == "535.129.03"


def test_legacy_pip_list() -> None:
    report = parse(
        Source(name="p.txt", text="numpy (1.14.0)\ntorch (0.4.0)\ntorchvision (0.2.1)\n")
    )
    packages = report.packages.data
    assert isinstance(packages, PackagesInfo)
    versions = {d.name: d.version for d in packages.distributions}
    assert versions["torch"] == "0.4.0" and versions["torchvision"] == "0.2.1"


def test_redhat_release() -> None:
    report = parse(Source(name="p.txt", text="CentOS Linux release 7.9.2009 (Core)\n"))
    system = report.system.data
    assert isinstance(system, SystemInfo)
    assert system.os_id == "centos" and system.os_version == "7.9"


def test_a_sentence_with_commas_is_not_a_row() -> None:
    rows_read = parse(
        Source(
            name="p.txt",
            text="I use NVIDIA GeForce RTX 3090, driver 535.129.03, and it fails\n"
            "nvidia-smi: NVIDIA-SMI 535.129.03 Driver Version: 535.129.03 CUDA Version: 12.2\n",
        )
    )
    assert "noheader, no command line" not in str(rows_read.origin)


CONDA_INFO = """\
     active environment : base
    active env location : /opt/conda
          conda version : 23.7.4
         python version : 3.11.5.final.0
       virtual packages : __archspec=1=x86_64
                          __cuda=11.4=0
                          __glibc=2.31=0
                          __linux=5.4.0=0
                          __unix=0=0
               platform : linux-64
"""


def test_conda_info_virtual_packages_state_the_drivers_cuda_and_glibc() -> None:
    report = parse(Source(name="p.txt", text=CONDA_INFO))
    assert report.gpu.data is not None and report.gpu.data.cuda_driver_version == "11.4"
    assert report.system.data is not None and report.system.data.glibc == "2.31"


TORCH_CONFIG = """\
PyTorch built with:
  - GCC 9.3
  - C++ Version: 201703
  - CUDA Runtime 12.1
  - CuDNN 8.9.2
  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, CUDA_VERSION=12.1, CUDNN_VERSION=8.9.2, TORCH_VERSION=2.1.0, USE_CUDA=ON,
"""


def test_torch_config_show_states_torch_and_its_cuda() -> None:
    report = parse(Source(name="p.txt", text=TORCH_CONFIG))
    torch = report.torch.data
    assert torch is not None
    assert torch.version == "2.1.0" and torch.cuda == "12.1"


def test_torch_config_of_a_cpu_build() -> None:
    text = (
        "PyTorch built with:\n  - GCC 9.3\n  - Build settings: TORCH_VERSION=2.2.0, USE_CUDA=OFF,\n"
    )
    torch = parse(Source(name="p.txt", text=text)).torch.data
    assert torch is not None and torch.cuda is None


def test_the_toolkit_usr_local_cuda_links_to() -> None:
    text = (
        "lrwxrwxrwx  1 root root   21 Jan 10 12:00 cuda -> /usr/local/cuda-11.8/\n"
        "drwxr-xr-x 15 root root 4096 Jan 10 12:00 cuda-11.8\n"
        "drwxr-xr-x 15 root root 4096 Jan 10 12:00 cuda-12.1\n"
    )
    report = parse(Source(name="p.txt", text=text))
    system = report.system.data
    assert system is not None and system.nvcc is not None
    assert system.nvcc.version == "11.8"
    assert any("cuda-11.8, cuda-12.1" in note for note in report.system.notes)
