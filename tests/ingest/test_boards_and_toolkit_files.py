"""More of what GPU issues paste about the driver and the CUDA stack, each read instead of refused
(exit 2): a Jetson's jetson_release / nv_tegra_release / tegrastats, the CUDA toolkit's
version.txt / version.json, cuDNN's header defines, torch's "driver too old (found version N)"
and "Found no NVIDIA driver" messages, ubuntu-drivers list, and nvidia-smi's other NVML
failures. The inputs are the tools' own output as pasted in public threads (named at each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.ingest.common import FormatError, Source
from envcheck.ingest.detect import parse
from envcheck.model.report import NodeReport
from tests.conftest import run_cli

# rbonghi/jetson_stats#603 (jetson-stats 4.3.0)
JETSON_RELEASE = """\
```sh
jetson_release

Software part of jetson-stats 4.3.0 - (c) 2024, Raffaello Bonghi
Jetpack missing!
 - Model: NVIDIA Jetson Orin NX Engineering Reference Developer Kit
 - L4T: 36.4.3
NV Power Mode[2]: 15W
Serial Number: [XXX Show with: jetson_release -s XXX]
Hardware:
 - P-Number: p3767-0001
 - Module: NVIDIA Jetson Orin NX (8GB ram)
Platform:
 - Distribution: Ubuntu 22.04 Jammy Jellyfish
 - Release: 5.15.148-tegra
jtop:
 - Version: 4.3.0
 - Service: Active
Libraries:
 - CUDA: 12.6.68
 - cuDNN: 9.3.0.75
 - TensorRT: 10.3.0.30
 - VPI: 3.2.4
 - Vulkan: 1.3.204
 - OpenCV: 4.8.0 - with CUDA: NO
```
"""

# jetson-stats 3.x layout (jetson_release of JetPack 4.4 on an AGX Xavier)
JETSON_RELEASE_3 = """\
 - NVIDIA Jetson AGX Xavier [16GB]
   * Jetpack 4.4 [L4T 32.4.3]
   * NV Power Mode: MAXN - Type: 0
   * jetson_stats.service: active
 - Libraries:
   * CUDA: 10.2.89
   * cuDNN: 8.0.0.180
   * TensorRT: 7.1.3.0
   * Visionworks: 1.6.0.501
   * OpenCV: 4.1.1 compiled CUDA: NO
   * VPI: 0.3.7
   * Vulkan: 1.2.70
"""

# JetPack 6.2's /etc/nv_tegra_release (L4T R36.4.3), as pasted with its command
TEGRA_RELEASE = """\
$ cat /etc/nv_tegra_release
# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025
# KERNEL_VARIANT: oot
TARGET_USERSPACE_LIB_DIR=nvidia
TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia
"""

# FindHao/tx-utils#3
TEGRASTATS = (
    "RAM 2020/7852MB (lfb 1164x4MB) CPU [9%@345,21%@345,25%@345,3%@345,1%@345,1%@345] "
    "EMC_FREQ 0% GR3D_FREQ 0% PLL@42.5C MCPU@42.5C PMIC@100C Tboard@40C GPU@41C BCPU@42.5C "
    "thermal@41.9C Tdiode@41.25C VDD_SYS_GPU 153/158 VDD_SYS_SOC 536/547 VDD_4V0_WIFI 633/527 "
    "VDD_IN 3140/3208 VDD_SYS_CPU 536/590 VDD_SYS_DDR 557/601\n"
)

# /usr/local/cuda/version.txt of CUDA 10.2 (the toolkits up to 11.0 write this one line)
VERSION_TXT = """\
$ cat /usr/local/cuda/version.txt
CUDA Version 10.2.89
"""

# /usr/local/cuda/version.json of CUDA 11.8 as pasted (trimmed by the user with '......');
# its nvidia_driver entry is the runfile's bundled driver, not the node's
VERSION_JSON = """\
$ cat /usr/local/cuda/version.json
{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "11.8.20220929"
   },
   "cuda_gdb" : {
      "name" : "CUDA GDB",
      "version" : "11.8.86"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "11.8.89"
   },
   "nvidia_driver" : {
      "name" : "NVIDIA Linux Driver",
      "version" : "520.61.05"
   },
   ......
}
"""

# `head /usr/local/cuda/version.json` pasted without the opening brace (a Stable Diffusion guide)
VERSION_JSON_HEAD = """\
    "cuda" : {
      "name" : "CUDA SDK",
      "version" : "11.6.1"
    },
"""

# what `cat /usr/include/cudnn_version.h | grep CUDNN_MAJOR -A 2` prints for cuDNN 8.9.2
CUDNN_HEADER = """\
$ cat /usr/include/cudnn_version.h | grep CUDNN_MAJOR -A 2
#define CUDNN_MAJOR 8
#define CUDNN_MINOR 9
#define CUDNN_PATCHLEVEL 2
--
#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)
"""

# serend1p1ty/SeqNet#36 (torch's RuntimeError), with the session around it
TORCH_TOO_OLD = """\
>>> import torch
>>> torch.__version__
'2.1.0+cu121'
>>> torch.zeros(1).cuda()
RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.
"""

# ai4d-iasc/trixie#9 (torch 1.x's AssertionError wording, over several lines)
TORCH_TOO_OLD_1X = """\
AssertionError: \nThe NVIDIA driver on your system is too old (found version 10010).
Please update your GPU driver by downloading and installing a new
version from the URL: http://www.nvidia.com/Download/index.aspx
Alternatively, go to: https://pytorch.org to install
a PyTorch version that has been compiled with your version
of the CUDA driver.
"""

# torch's own words (c10/cuda/CUDAFunctions.cpp) in a pasted session
TORCH_NO_DRIVER = """\
>>> import torch
>>> torch.__version__
'2.3.1+cu121'
>>> torch.cuda.current_device()
RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
"""

# `sudo ubuntu-drivers list` on Ubuntu 22.04 with an RTX 40-series GPU, as a setup guide shows it
UBUNTU_LIST = """\
$ sudo ubuntu-drivers list
nvidia-driver-545, (kernel modules provided by linux-modules-nvidia-545-generic-hwe-22.04)
nvidia-driver-535-open, (kernel modules provided by linux-modules-nvidia-535-open-generic-hwe-22.04)
nvidia-driver-545-open, (kernel modules provided by linux-modules-nvidia-545-open-generic-hwe-22.04)
nvidia-driver-525, (kernel modules provided by linux-modules-nvidia-525-generic-hwe-22.04)
"""


def _read(body: str) -> NodeReport:
    return parse(Source(name="paste.txt", text=body))


def test_jetson_release_names_the_module_the_toolkit_and_the_os() -> None:
    report = _read(JETSON_RELEASE)
    gpu = report.gpu.data
    assert gpu is not None and gpu.gpus is not None
    assert [g.name for g in gpu.gpus] == ["NVIDIA Jetson Orin NX"]
    assert gpu.driver_version is None  # a Jetson has no nvidia-smi driver version
    assert any("L4T 36.4.3" in n for n in report.gpu.notes)
    system = report.system.data
    assert system is not None and system.nvcc is not None
    assert system.nvcc.version == "12.6"
    assert (system.os_id, system.os_version, system.kernel) == ("ubuntu", "22.04", "5.15.148-tegra")
    assert "jetson_release" in report.origin.detail


def test_jetson_release_3x_layout() -> None:
    report = _read(JETSON_RELEASE_3)
    gpu = report.gpu.data
    assert gpu is not None and gpu.gpus is not None
    assert [g.name for g in gpu.gpus] == ["NVIDIA Jetson AGX Xavier"]
    assert any("L4T 32.4.3, JetPack 4.4" in n for n in report.gpu.notes)
    assert report.system.data is not None and report.system.data.nvcc is not None
    assert report.system.data.nvcc.version == "10.2"


def test_nv_tegra_release_states_the_l4t_release() -> None:
    report = _read(TEGRA_RELEASE)
    assert any("NVIDIA Jetson, L4T 36.4.3, board generic" in n for n in report.gpu.notes)
    assert report.system.data is not None and report.system.data.arch == "aarch64"


def test_tegrastats_is_a_jetson_with_shared_memory() -> None:
    report = _read(TEGRASTATS)
    assert any("GR3D is its GPU" in n for n in report.gpu.notes)
    assert report.system.data is not None
    assert report.system.data.memory_total_bytes == 7852 * 1024 * 1024


@pytest.mark.parametrize(
    ("body", "toolkit"),
    [(VERSION_TXT, "10.2"), (VERSION_JSON, "11.8"), (VERSION_JSON_HEAD, "11.6")],
)
def test_cuda_version_files_state_the_toolkit(body: str, toolkit: str) -> None:
    report = _read(body)
    system = report.system.data
    assert system is not None and system.nvcc is not None
    assert system.nvcc.version == toolkit
    assert report.gpu.data is None  # the runfile's bundled driver is not the node's


def test_cudnn_header_is_a_note_not_a_library_fact() -> None:
    report = _read(CUDNN_HEADER)
    assert any("cuDNN 8.9.2's headers" in n for n in report.system.notes)
    assert report.libraries.data is None


def test_torch_driver_too_old_states_the_driver_cuda_and_confirms_drv101(tmp_path: Path) -> None:
    report = _read(TORCH_TOO_OLD)
    assert report.gpu.data is not None
    assert report.gpu.data.cuda_driver_version == "11.4"
    dump = tmp_path / "session.txt"
    dump.write_text(TORCH_TOO_OLD)
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 1, result.stderr
    assert "DRV101" in result.stdout
    assert "supports CUDA <= 11.4" in result.stdout


def test_torch_1x_assertion_wording() -> None:
    report = _read(TORCH_TOO_OLD_1X)
    assert report.gpu.data is not None
    assert report.gpu.data.cuda_driver_version == "10.1"


def test_torch_found_no_driver_is_a_stated_absence(tmp_path: Path) -> None:
    report = _read(TORCH_NO_DRIVER)
    assert report.gpu.data is None
    assert "torch found no NVIDIA driver" in (report.gpu.reason or "")
    dump = tmp_path / "session.txt"
    dump.write_text(TORCH_NO_DRIVER)
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 1, result.stderr
    assert "DRV103" in result.stdout


def test_ubuntu_drivers_list_offers_are_notes() -> None:
    report = _read(UBUNTU_LIST)
    assert report.gpu.data is not None
    assert report.gpu.data.driver_version is None  # offered, not installed
    assert any("nvidia-driver-545, nvidia-driver-535-open" in n for n in report.gpu.notes)


def test_a_bare_driver_package_name_in_prose_is_not_an_offer_list() -> None:
    # one package name, not under ubuntu-drivers list / nvidia-detector and without its
    # "(kernel modules provided by" column: the prose reader's, not an offer list
    with pytest.raises(FormatError):
        _read("I then ran\nnvidia-driver-535\n")


@pytest.mark.parametrize(
    ("line", "absent"),
    [
        # xxd3vin/workspace#19
        ("Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error", False),
        # pdbear/syno_nvidia_gpu_driver#22 (no space before the bus id)
        ("Unable to determine the device handle for GPU0000:07:00.0: Unknown Error", False),
        (
            "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
            True,
        ),
        (
            "nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open "
            "shared object file: No such file or directory",
            True,
        ),
    ],
)
def test_more_nvml_failures_are_read(line: str, absent: bool) -> None:
    report = _read(f"$ nvidia-smi\n{line}\n")
    assert report.gpu.data is None
    assert "nvidia-smi" in (report.gpu.reason or "")
    assert ("found no usable NVIDIA driver" in (report.gpu.reason or "")) is absent


def test_device_handle_failure_confirms_drv151(tmp_path: Path) -> None:
    dump = tmp_path / "smi.txt"
    dump.write_text("Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n")
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 1, result.stderr
    assert "DRV151" in result.stdout


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            "$ cat /proc/driver/nvidia/version\n"
            "cat: /proc/driver/nvidia/version: No such file or directory\n",
            "the NVIDIA kernel module is not loaded",
        ),
        (
            "$ nvidia-settings\nERROR: NVIDIA driver is not loaded\n\n"
            "ERROR: Unable to load info from any available system\n",
            "the NVIDIA kernel module is not loaded",
        ),
        # Xorg.0.log, as the Arch wiki's NVIDIA troubleshooting page quotes it
        (
            "[     1.807] (EE) NVIDIA(0): Failed to initialize the NVIDIA kernel module. Please see the\n"
            "[     1.807] (EE) NVIDIA(0):     system's kernel log for additional error messages and\n"
            "[     1.808] (EE) NVIDIA(0):     consult the NVIDIA README for details.\n",
            "could not initialize the kernel module",
        ),
        (
            "$ ls /dev/nvidia*\nls: cannot access '/dev/nvidia*': No such file or directory\n",
            "no NVIDIA device nodes",
        ),
    ],
)
def test_more_no_driver_lines_state_the_absence(body: str, why: str) -> None:
    report = _read(body)
    assert report.gpu.data is None
    assert why in (report.gpu.reason or "")


def test_usr_src_lists_the_driver_source_dkms_builds() -> None:
    # the thread of tests/corpus/envs-4 ran `ls /usr/src | grep nvidia` for the installed driver
    report = _read("$ ls /usr/src | grep nvidia\nnvidia-470.82.00\n")
    assert report.gpu.data is not None
    assert report.gpu.data.driver_version == "470.82.00"
    assert any("DKMS builds the module" in n for n in report.gpu.notes)


def test_a_bare_nvidia_directory_name_without_ls_is_not_read() -> None:
    with pytest.raises(FormatError):
        _read("the folder was\nnvidia-470.82.00\n")


def test_nvcc_not_found_says_no_toolkit_on_path() -> None:
    report = _read(
        "$ nvcc --version\nCommand 'nvcc' not found, but can be installed with:\n"
        "sudo apt install nvidia-cuda-toolkit\n"
    )
    system = report.system.data
    assert system is not None
    assert system.nvcc is None and system.nvcc_searched


# NVIDIA/gpu-operator#1146 (a GPU the module could not bring up; no module version in the paste)
RM_INIT_FAILED = """\
Dec  2 11:49:53 worker4 kernel: [  885.242168] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)
Dec  2 11:49:53 worker4 kernel: [  885.242457] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5
"""

# mattshma/bigdata#133's dmesg (nouveau took the GPUs), with torch's version after it
PROBE_NOT_CALLED = """\
[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).
[188549.977053] NVRM: This can occur when a driver such as:
NVRM: nouveau, rivafb, nvidiafb or rivatv
NVRM: was loaded and obtained ownership of the NVIDIA device(s).
>>> torch.__version__
'2.3.1+cu121'
"""


def test_rm_init_adapter_failed_is_a_failed_gpu_not_an_unread_paste() -> None:
    report = _read(RM_INIT_FAILED)
    assert report.gpu.data is None
    assert "could not initialise GPU 0000:0a:00.0" in (report.gpu.reason or "")
    assert "(0x24:0x72:1568)" in (report.gpu.reason or "")
    assert not report.gpu.stated_absent  # the driver is loaded; the GPU is not usable


def test_probe_routine_not_called_is_a_stated_absence_with_the_host_fix(tmp_path: Path) -> None:
    report = _read(PROBE_NOT_CALLED)
    assert report.gpu.stated_absent
    assert "nouveau" in (report.gpu.reason or "")
    dump = tmp_path / "dmesg.txt"
    dump.write_text(PROBE_NOT_CALLED)
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    (drv103,) = [f for f in result.json()["data"]["findings"] if f["code"] == "DRV103"]
    commands = "\n".join(a.get("text") or "" for a in drv103["fix"]["actions"])
    # the host's fix (the errors table's NVML_ERROR_DRIVER_NOT_LOADED entry) comes first ...
    assert drv103["fix"]["actions"][0]["text"].startswith("sudo apt install linux-headers")
    assert "blacklist nouveau" in commands
    # ... the container's stays as the alternative
    assert "--gpus all" in commands
