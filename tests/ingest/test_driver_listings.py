"""Driver listings that state no driver version, each read for what it establishes instead of
refused (exit 2): ``ls -l /dev/nvidia*``, ``mokutil --sb-state``, ``ldconfig -p``, ``lsmod``,
``python -m bitsandbytes``. The inputs are the tools' own output formats (coreutils' ls -l with
the device numbers of NVIDIA/nvidia-modprobe's modprobe-utils, lcp/mokutil's lines, glibc's
ldconfig -p rows, bitsandbytes' diagnostics/main.py and cuda.py) or pasted in public threads
(named at each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import NodeReport
from tests.conftest import run_cli

LS_NO_UVM = """\
$ ls -l /dev/nvidia*
crw-rw-rw- 1 root root 195,   0 Mar  4 10:12 /dev/nvidia0
crw-rw-rw- 1 root root 195,   1 Mar  4 10:12 /dev/nvidia1
crw-rw-rw- 1 root root 195, 255 Mar  4 10:12 /dev/nvidiactl
crw-rw-rw- 1 root root 195, 254 Mar  4 10:12 /dev/nvidia-modeset

/dev/nvidia-caps:
total 0
cr-------- 1 root root 236, 1 Mar  4 10:12 nvidia-cap1
cr--r--r-- 1 root root 236, 2 Mar  4 10:12 nvidia-cap2
"""

LS_WITH_UVM = """\
$ ls /dev/nvidia*
/dev/nvidia0  /dev/nvidia-modeset  /dev/nvidia-uvm  /dev/nvidia-uvm-tools  /dev/nvidiactl
"""

# cBio/cbio-cluster#389: 'ls /dev/nv' on a node whose docker run could not pass /dev/nvidia-uvm
LS_NV = """\
[zamparol@gpu-2-17 ~]$ ls /dev/nv
nvidia0    nvidia1    nvidia2    nvidia3    nvidia4    nvidia5    nvidia6    nvidia7    nvidiactl  nvram
"""

LDCONFIG_STUB = """\
$ ldconfig -p | grep -E 'libcuda|libnvidia-ml'
	libcuda.so (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so
	libnvidia-ml.so (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/stubs/libnvidia-ml.so
"""

LDCONFIG_HOST = """\
$ ldconfig -p | grep cuda
	libcudart.so.12 (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12
	libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1
	libcuda.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so
"""

LDCONFIG_COMPAT = """\
$ ldconfig -p | grep libcuda
	libcuda.so.1 (libc6,x86-64) => /usr/local/cuda/compat/libcuda.so.1
	libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1
"""

# filtered to cudart: where libcuda is, it does not say
LDCONFIG_CUDART = """\
$ ldconfig -p | grep cudart
	libcudart.so.12 (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12
"""

BITSANDBYTES = """\
$ python -m bitsandbytes
=================== bitsandbytes v0.45.0 ===================
Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35
  libc: glibc-2.35
Python: 3.10.12
PyTorch: 2.5.1+cu124
  CUDA: 12.4
  HIP: N/A
  XPU: N/A
Related packages:
  accelerate: 1.2.1
  diffusers: not found
  numpy: 1.26.4
  transformers: 4.47.1
  triton: 3.1.0
============================================================
PyTorch settings found: CUDA_VERSION=124, Highest Compute Capability: (8, 6).
No compatible CUDA library found (tried: libbitsandbytes_cuda124.so). You may need to compile from source:
https://huggingface.co/docs/bitsandbytes/main/en/installation#cuda-compile
Checking that the library is importable and callable...
"""

# 0.43-0.44: the BUG REPORT banner and CUDASpecs' repr
BITSANDBYTES_044 = """\
===================================BUG REPORT INFORMATION===================================
=========================================OTHER==========================================
CUDA specs: CUDASpecs(highest_compute_capability=(8, 0), cuda_version_string='121', cuda_version_tuple=(12, 1))
PyTorch settings found: CUDA_VERSION=121, Highest Compute Capability: (8, 0).
Checking that the library is importable and CUDA is callable...
SUCCESS!
Installation was successful!
"""

LSMOD_NO_UVM = """\
$ lsmod | grep nvidia
nvidia_drm             77824  4
nvidia_modeset       1294336  8 nvidia_drm
nvidia              56496128  270 nvidia_modeset
"""


def _read(text: str) -> NodeReport:
    return parse(Source(name="dump.txt", text=text))


def test_ls_dev_names_the_device_files_and_the_missing_uvm() -> None:
    report = _read(LS_NO_UVM)
    info = report.gpu.data
    assert info is not None and info.device_nodes is not None
    assert "/dev/nvidia1" in info.device_nodes
    assert "/dev/nvidia-caps/nvidia-cap2" in info.device_nodes
    assert "/dev/nvidia-uvm" not in info.device_nodes
    assert any("no /dev/nvidia-uvm" in n for n in report.gpu.notes)


def test_ls_dev_without_l_and_the_bare_names_after_ls_dev_nv() -> None:
    info = _read(LS_WITH_UVM).gpu.data
    assert info is not None and "/dev/nvidia-uvm" in (info.device_nodes or ())
    nodes = _read(LS_NV).gpu.data
    assert nodes is not None and nodes.device_nodes is not None
    assert "/dev/nvidia7" in nodes.device_nodes and "/dev/nvidia-uvm" not in nodes.device_nodes


def test_mokutil_states_secure_boot() -> None:
    report = _read("$ mokutil --sb-state\nSecureBoot enabled\n")
    assert report.system.data is not None and report.system.data.secure_boot == "enabled"
    assert any("signed" in n for n in report.system.notes)
    off = _read("$ mokutil --sb-state\nThis system doesn't support Secure Boot\n")
    assert off.system.data is not None and off.system.data.secure_boot == "unsupported"


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (LDCONFIG_STUB, "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"),
        (LDCONFIG_HOST, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
        (LDCONFIG_COMPAT, "/usr/local/cuda/compat/libcuda.so.1"),
    ],
)
def test_ldconfig_states_where_the_loader_finds_libcuda(text: str, first: str) -> None:
    report = _read(text)
    info = report.gpu.data
    assert info is not None and info.libcuda_cached is not None
    assert info.libcuda_cached[0] == first


def test_ldconfig_compat_first_is_said() -> None:
    report = _read(LDCONFIG_COMPAT)
    assert any("forward-compatibility" in n for n in report.gpu.notes)


def test_a_grep_that_filters_libcuda_out_states_nothing_of_it() -> None:
    gpu = _read(LDCONFIG_CUDART).gpu
    assert not gpu.is_ok and "filtered" in (gpu.reason or "")


def test_bitsandbytes_states_torch_python_and_the_library_it_lacks() -> None:
    report = _read(BITSANDBYTES)
    assert report.torch.data is not None and report.torch.data.version == "2.5.1+cu124"
    assert report.torch.data.cuda == "12.4"
    assert report.python.data is not None and report.python.data.version == "3.10.12"
    packages = report.packages.data
    assert packages is not None and packages.version("bitsandbytes") == "0.45.0"
    assert packages.version("accelerate") == "1.2.1" and packages.version("diffusers") is None
    assert any("libbitsandbytes_cuda124.so" in n for n in report.packages.notes)


def test_bitsandbytes_044_states_torch_cuda_and_its_check() -> None:
    report = _read(BITSANDBYTES_044)
    assert any("compute capability 8.0" in n for n in report.packages.notes)
    assert any("SUCCESS" in n for n in report.packages.notes)


def test_lsmod_states_the_modules_loaded() -> None:
    info = _read(LSMOD_NO_UVM).gpu.data
    assert info is not None and info.kernel_modules == ("nvidia_drm", "nvidia_modeset", "nvidia")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (LS_NO_UVM, "DRV229"),
        (LS_NV, "DRV229"),
        (LSMOD_NO_UVM, "DRV229"),
        (LDCONFIG_STUB, "SYS150"),
        ("$ mokutil --sb-state\nSecureBoot enabled\n", None),
        (LS_WITH_UVM, None),
        (LDCONFIG_HOST, None),
        (BITSANDBYTES, None),
    ],
)
def test_each_listing_alone_is_read_not_refused(
    tmp_path: Path, text: str, code: str | None
) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(text)
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode in (0, 1), result.stderr
    codes = {f["code"] for f in result.json()["data"]["findings"]}
    if code is not None:
        assert code in codes
    else:
        assert not codes & {"DRV229", "SYS150", "DRV225"}


def test_secure_boot_beside_a_module_not_loaded_is_drv225(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(
        "$ mokutil --sb-state\nSecureBoot enabled\n$ lsmod | grep nvidia\n$ nvidia-smi\n"
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.\n"
    )
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    assert "DRV225" in {f["code"] for f in result.json()["data"]["findings"]}


def test_the_summary_line_states_what_the_listings_establish(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(LS_NO_UVM + "$ mokutil --sb-state\nSecureBoot disabled\n" + LDCONFIG_HOST)
    result = run_cli("check", "--from", str(dump))
    assert result.returncode in (0, 1), result.stderr
    out = " ".join(result.stdout.split())
    assert "no nvidia-uvm" in out
    assert "Secure Boot disabled" in out
    assert "libcuda.so.1: /usr/lib/x86_64-linux-gnu/libcuda.so.1" in out


def test_ldconfig_row_of_the_versioned_file_states_the_driver() -> None:
    text = (
        "$ ldconfig -p | grep libcuda\n"
        "\tlibcuda.so.535.104.05 (libc6,x86-64) => "
        "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05\n"
        "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
    )
    info = _read(text).gpu.data
    assert info is not None and info.driver_version == "535.104.05"


def test_prime_select_intel_states_the_driver_absent() -> None:
    gpu = _read("$ prime-select query\nintel\n").gpu
    assert gpu.stated_absent and "prime-select nvidia" in (gpu.reason or "")
    on_demand = _read("$ prime-select query\non-demand\n").gpu
    assert not on_demand.is_ok and not on_demand.stated_absent


def test_prime_select_intel_is_the_driver_not_loaded(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text("$ prime-select query\nintel\n")
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    assert "DRV151" in {f["code"] for f in result.json()["data"]["findings"]}


def test_a_grep_of_nvidia_smi_q_states_the_driver_not_an_empty_gpu_list(tmp_path: Path) -> None:
    """'nvidia-smi -q | grep -i version' has no GPU block: the GPUs are unknown, not none (a
    CUDA torch beside it is not 'a driver that shows no GPUs', DRV103)."""
    text = (
        "$ nvidia-smi -q | grep -i version\n"
        "Driver Version                            : 535.104.05\n"
        "CUDA Version                              : 12.2\n"
        "    VBIOS Version                         : 94.02.5C.00.02\n"
    )
    info = _read(text).gpu.data
    assert info is not None and info.driver_version == "535.104.05" and info.gpus is None
    dump = tmp_path / "dump.txt"
    dump.write_text(text + "$ pip list | grep torch\ntorch        2.3.0+cu121\n")
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode in (0, 1), result.stderr
    assert "DRV103" not in {f["code"] for f in result.json()["data"]["findings"]}
