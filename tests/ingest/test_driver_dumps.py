"""More driver and GPU reports users paste (glxinfo, vulkaninfo, inxi, lshw, gpustat, Numba's and
CuPy's reports, package listings, the driver's library files, nvidia-smi -q without its banner,
a --query-gpu CSV without its header): each alone is read, not refused as an unknown format.
The inputs are the tools' own output as pasted in public threads (named at each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import GpuInfo, NodeReport
from tests.conftest import run_cli

# nigels-com/glew#279
GLXINFO = """\
$ glxinfo | grep "OpenGL"
OpenGL vendor string: NVIDIA Corporation
OpenGL renderer string: GeForce GTX 1660 SUPER/PCIe/SSE2
OpenGL core profile version string: 4.6.0 NVIDIA 455.45.01
OpenGL core profile shading language version string: 4.60 NVIDIA
OpenGL core profile context flags: (none)
OpenGL core profile profile mask: core profile
OpenGL core profile extensions:
OpenGL version string: 4.6.0 NVIDIA 455.45.01
OpenGL shading language version string: 4.60 NVIDIA
OpenGL context flags: (none)
OpenGL profile mask: (none)
OpenGL extensions:
OpenGL ES profile version string: OpenGL ES 3.2 NVIDIA 455.45.01
OpenGL ES profile shading language version string: OpenGL ES GLSL ES 3.20
OpenGL ES profile extensions:
"""

# nix-community/nixGL#48 (Mesa): no NVIDIA driver stated
GLXINFO_MESA = """\
$ glxinfo | grep "OpenGL version string"
OpenGL version string: 4.6 (Compatibility Profile) Mesa 20.0.2
"""

# smxi/inxi#191
INXI = """\
$ inxi -Gx
Graphics:  Device-1: NVIDIA GP104 [GeForce GTX 1080] vendor: ASUSTeK driver: nvidia v: 430.40 bus ID: 01:00.0
           Display: server: X.Org 1.20.4 driver: nouveau,vesa FAILED: nvidia unloaded: fbdev,modesetting
           resolution: 3440x1440~75Hz
           OpenGL: renderer: GeForce GTX 1080/PCIe/SSE2 v: 4.6.0 NVIDIA 430.40 direct render: Yes
"""

# numba/numba#6804 (numba -s) and numba/numba#7221 (numba.cuda.detect())
NUMBA = """\
__CUDA Information__
CUDA Device Initialized                       : True
CUDA Driver Version                           : 11020
CUDA Runtime Version                          : 11000
CUDA Detect Output:
Found 2 CUDA devices
id 0      b'Quadro RTX 8000'                              [SUPPORTED]
                      Compute Capability: 7.5
                           PCI Device ID: 0
                              PCI Bus ID: 21
                                    UUID: GPU-e6489c45-5b68-3b03-bab7-0e7c8e809643
                                Watchdog: Enabled
             FP32/FP64 Performance Ratio: 32
id 1      b'Quadro RTX 8000'                              [SUPPORTED]
                      Compute Capability: 7.5
                           PCI Device ID: 0
                              PCI Bus ID: 45
Summary:
\t2/2 devices are supported
"""

# cupy/cupy#9723
CUPY = """\
OS                           : Linux-6.14.0-37-generic-x86_64-with-glibc2.35
Python Version               : 3.10.12
CuPy Version                 : 14.0.0
CuPy Platform                : NVIDIA CUDA
NumPy Version                : 2.2.6
SciPy Version                : None
Cython Build Version         : 3.1.4
Cython Runtime Version       : None
CUDA Root                    : /usr/local/cuda
NVCC PATH                    : /usr/local/cuda/bin/nvcc
CUDA Build Version           : 12090
CUDA Driver Version          : 13000
CUDA Runtime Version         : 12090 (linked to CuPy) / 12000 (locally installed)
CUDA Runtime Path            : /usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12 (locally installed)
CUDA Extra Include Dirs      : ['/usr/local/cuda/include']
Device 0 Name                : NVIDIA RTX A6000
Device 0 Compute Capability  : 86
Device 0 PCI Bus ID          : 0000:01:00.0
"""

# ublue-os/bluefin-lts#643
RPM_QA = """\
jill@bluefin:~$ rpm -qa | grep nvidia
nvidia-gpu-firmware-20250708-18.el10.noarch
libnvidia-ml-575.64.05-1.el10.x86_64
libnvidia-gpucomp-575.64.05-1.el10.x86_64
libnvidia-cfg-575.64.05-1.el10.x86_64
nvidia-driver-cuda-libs-575.64.05-1.el10.x86_64
nvidia-persistenced-575.64.05-1.el10.x86_64
nvidia-modprobe-575.64.05-1.el10.x86_64
nvidia-kmod-common-575.64.05-1.el10.noarch
dkms-nvidia-575.64.05-1.el10.x86_64
nvidia-driver-libs-575.64.05-1.el10.x86_64
nvidia-driver-cuda-575.64.05-1.el10.x86_64
nvidia-driver-575.64.05-1.el10.x86_64
jill@bluefin:~$ lspci | grep -i vga
"""

# cudagrad/cudagrad#2 (apt's unpacking lines)
APT_UNPACK = """\
Selecting previously unselected package libnvidia-common-535.
Preparing to unpack .../061-libnvidia-common-535_535.104.12-0ubuntu1_all.deb ...
Unpacking libnvidia-common-535 (535.104.12-0ubuntu1) ...
Selecting previously unselected package libnvidia-compute-535:amd64.
Preparing to unpack .../062-libnvidia-compute-535_535.104.12-0ubuntu1_amd64.deb ...
Unpacking libnvidia-compute-535:amd64 (535.104.12-0ubuntu1) ...
"""

APT_LIST = """\
$ apt list --installed | grep nvidia
libnvidia-compute-535/jammy-updates,jammy-security,now 535.129.03-0ubuntu0.22.04.1 amd64 [installed,automatic]
nvidia-driver-535/jammy-updates,jammy-security,now 535.129.03-0ubuntu0.22.04.1 amd64 [installed]
"""

# numba/numba#9439: the loader found only the forward-compatibility libcuda
NUMBA_LIBS_COMPAT = """\
Finding driver from candidates:
\tlibcuda.so
\tlibcuda.so.1
Using loader <class 'ctypes.CDLL'>
\tTrying to load driver...\tok
\t\tLoaded from libcuda.so
\tMapped libcuda.so paths:
\t\t/usr/local/cuda-11.8/compat/libcuda.so.520.61.05
"""

LS_LIBCUDA = """\
$ ls -l /usr/lib/x86_64-linux-gnu/libcuda*
lrwxrwxrwx 1 root root       12 Nov  1 10:00 /usr/lib/x86_64-linux-gnu/libcuda.so -> libcuda.so.1
lrwxrwxrwx 1 root root       20 Nov  1 10:00 /usr/lib/x86_64-linux-gnu/libcuda.so.1 -> libcuda.so.535.129.03
-rw-r--r-- 1 root root 29453200 Oct 19 18:42 /usr/lib/x86_64-linux-gnu/libcuda.so.535.129.03
-rw-r--r-- 1 root root 29401568 Aug 19 02:12 /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
"""

SMI_Q_PART = """\
Driver Version                            : 535.104.05
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:01:00.0
    Product Name                          : NVIDIA GeForce RTX 3090
    Product Brand                         : GeForce
"""

SMI_NOHEADER = """\
$ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
NVIDIA A100-SXM4-80GB, 535.129.03, 81920 MiB
NVIDIA A100-SXM4-80GB, 535.129.03, 81920 MiB
"""

VULKANINFO = """\
Devices:
========
GPU0:
\tapiVersion         = 1.3.260
\tdriverVersion      = 535.129.3.0
\tvendorID           = 0x10de
\tdeviceID           = 0x2484
\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
\tdeviceName         = NVIDIA GeForce RTX 3070
\tdriverID           = DRIVER_ID_NVIDIA_PROPRIETARY
\tdriverName         = NVIDIA
\tdriverInfo         = 535.129.03
GPU1:
\tapiVersion         = 1.3.255
\tvendorID           = 0x10005
\tdeviceType         = PHYSICAL_DEVICE_TYPE_CPU
\tdeviceName         = llvmpipe (LLVM 15.0.7, 256 bits)
\tdriverName         = llvmpipe
\tdriverInfo         = Mesa 23.2.1
"""

LSHW = """\
  *-display
       description: VGA compatible controller
       product: GA104 [GeForce RTX 3070]
       vendor: NVIDIA Corporation
       physical id: 0
       bus info: pci@0000:01:00.0
       configuration: driver=nouveau latency=0
"""

GPUSTAT = """\
gpu01                     Mon Mar  4 10:12:33 2024  535.129.03
[0] NVIDIA A100-SXM4-80GB | 34°C,   0 % |     4 / 81920 MB |
[1] NVIDIA A100-SXM4-80GB | 33°C,   0 % | 40211 / 81920 MB | alice(40207M)
"""

GPU_INFORMATION = """\
$ cat /proc/driver/nvidia/gpus/0000:01:00.0/information
Model: \t\t NVIDIA GeForce RTX 3070
IRQ:   \t\t 144
GPU UUID: \t GPU-1f7c3b5e-2a4d-4c1b-9e3f-6a7b8c9d0e1f
Video BIOS: \t 94.04.3a.00.a1
Bus Type: \t PCIe
Bus Location: \t 0000:01:00.0
Device Minor: \t 0
"""


def _read(body: str) -> tuple[GpuInfo, NodeReport]:
    report = parse(Source(name="paste.txt", text=body))
    assert report.gpu.data is not None, report.gpu.reason
    return report.gpu.data, report


def _names(gpu: GpuInfo) -> list[str | None]:
    assert gpu.gpus is not None, gpu.gpus_reason
    return [g.name for g in gpu.gpus]


def test_glxinfo_states_the_glx_driver_and_the_renderer() -> None:
    gpu, report = _read(GLXINFO)
    assert gpu.driver_version == "455.45.01"
    assert _names(gpu) == ["NVIDIA GeForce GTX 1660 SUPER"]
    assert "glxinfo" in report.origin.detail


def test_inxi_states_the_driver_bound_and_its_version() -> None:
    gpu, report = _read(INXI)
    assert gpu.driver_version == "430.40"
    assert _names(gpu) == ["NVIDIA GeForce GTX 1080"]
    assert any("bound to the GPUs is nvidia" in n for n in report.gpu.notes)


def test_numba_states_the_cuda_the_driver_supports_and_the_devices() -> None:
    gpu, _ = _read(NUMBA)
    assert gpu.cuda_driver_version == "11.2"  # cuDriverGetVersion's 11020
    assert gpu.driver_version is None  # numba does not state the driver's own version
    assert gpu.gpus is not None
    assert [(g.name, g.compute_capability) for g in gpu.gpus] == [
        ("Quadro RTX 8000", "7.5"),
        ("Quadro RTX 8000", "7.5"),
    ]


def test_numba_tuple_form_of_the_driver_version() -> None:
    gpu, _ = _read(
        "__CUDA Information__\nCUDA Device Initialized : True\n"
        "CUDA Driver Version : (12, 4)\nCUDA Runtime Version : (12, 1)\n"
    )
    assert gpu.cuda_driver_version == "12.4"


def test_cupy_states_the_driver_cuda_the_device_and_the_rest_is_still_read() -> None:
    gpu, report = _read(CUPY)
    assert gpu.cuda_driver_version == "13.0"
    assert gpu.gpus is not None
    assert [(g.name, g.compute_capability) for g in gpu.gpus] == [("NVIDIA RTX A6000", "8.6")]
    assert report.python.data is not None and report.python.data.version == "3.10.12"


@pytest.mark.parametrize(
    ("body", "driver"),
    [(RPM_QA, "575.64.05"), (APT_UNPACK, "535.104.12"), (APT_LIST, "535.129.03")],
    ids=["rpm-qa", "apt-unpacking", "apt-list-installed"],
)
def test_package_listings_state_the_installed_driver(body: str, driver: str) -> None:
    gpu, report = _read(body)
    assert gpu.driver_version == driver
    assert any("loaded kernel module may differ" in n for n in report.gpu.notes)


def test_library_files_state_the_newest_driver_and_note_the_leftover() -> None:
    gpu, report = _read(LS_LIBCUDA)
    assert gpu.driver_version == "535.129.03"
    assert any("several versions (535.104.05, 535.129.03)" in n for n in report.gpu.notes)


def test_a_compat_libcuda_is_not_taken_for_the_host_driver() -> None:
    gpu, report = _read(NUMBA_LIBS_COMPAT)
    assert gpu.driver_version is None
    assert any("forward-compatibility libcuda 520.61.05" in n for n in report.gpu.notes)


def test_nvidia_smi_q_without_its_banner() -> None:
    gpu, _ = _read(SMI_Q_PART)
    assert (gpu.driver_version, gpu.cuda_driver_version) == ("535.104.05", "12.2")
    assert _names(gpu) == ["NVIDIA GeForce RTX 3090"]


def test_query_gpu_csv_without_header_takes_the_command_columns() -> None:
    gpu, _ = _read(SMI_NOHEADER)
    assert gpu.driver_version == "535.129.03"
    assert gpu.gpus is not None
    assert [(g.name, g.memory_total_mib) for g in gpu.gpus] == [
        ("NVIDIA A100-SXM4-80GB", 81920),
        ("NVIDIA A100-SXM4-80GB", 81920),
    ]


def test_vulkaninfo_keeps_only_the_nvidia_device() -> None:
    gpu, _ = _read(VULKANINFO)
    assert gpu.driver_version == "535.129.03"
    assert _names(gpu) == ["NVIDIA GeForce RTX 3070"]


def test_lshw_names_the_gpu_and_the_module_bound_to_it() -> None:
    gpu, report = _read(LSHW)
    assert _names(gpu) == ["NVIDIA GeForce RTX 3070"]
    assert any("nouveau" in n and "not NVIDIA's" in n for n in report.gpu.notes)


def test_gpustat_states_driver_and_memory() -> None:
    gpu, _ = _read(GPUSTAT)
    assert gpu.driver_version == "535.129.03"
    assert gpu.gpus is not None
    assert [g.memory_used_mib for g in gpu.gpus] == [4, 40211]


def test_proc_gpu_information_names_the_gpu() -> None:
    gpu, _ = _read(GPU_INFORMATION)
    assert _names(gpu) == ["NVIDIA GeForce RTX 3070"]


def test_sys_module_version_after_its_command() -> None:
    gpu, _ = _read("$ cat /sys/module/nvidia/version\n550.54.14\n")
    assert gpu.driver_version == "550.54.14"


def test_a_mesa_glxinfo_alone_is_one_line_and_exit_2(tmp_path: Path) -> None:
    dump = tmp_path / "glx.txt"
    dump.write_text(GLXINFO_MESA)
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Mesa" in result.stderr and "not NVIDIA's driver" in result.stderr


def test_lsmod_alone_is_read_for_the_modules_loaded(tmp_path: Path) -> None:
    """lsmod states which NVIDIA modules are loaded (nvidia_uvm here: nothing wrong)."""
    dump = tmp_path / "lsmod.txt"
    dump.write_text(
        "$ lsmod | grep nvidia\nnvidia_uvm           1437696  0\n"
        "nvidia              56496128  270 nvidia_uvm,nvidia_modeset\n"
    )
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_a_pasted_glxinfo_drives_the_driver_rules(tmp_path: Path) -> None:
    """The driver glxinfo states reaches the rules: torch cu121 on driver 455 is DRV101."""
    dump = tmp_path / "dump.txt"
    dump.write_text(GLXINFO + "\n$ pip list | grep torch\ntorch        2.3.0+cu121\n")
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    codes = {f["code"] for f in result.json()["data"]["findings"]}
    assert "DRV101" in codes


# cuda-samples' bandwidthTest on an NVSwitch node without Fabric Manager (pytorch/pytorch#35710)
BANDWIDTH_TEST = """\
[CUDA Bandwidth Test] - Starting...
Running on...

 Device 0: NVIDIA A100-SXM4-80GB
 Quick Mode

CUDA error at bandwidthTest.cu:686 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"
"""

# cuda-samples' vectorAdd: 'Failed to allocate device vector A (error code %s)!'
VECTOR_ADD = """\
[Vector addition of 50000 elements]
Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!
"""


def test_a_cuda_sample_failure_states_its_error_and_check_reads_it(tmp_path: Path) -> None:
    gpu, _ = _read(BANDWIDTH_TEST)
    assert gpu.cuda_errors == ("802",)
    assert _names(gpu) == ["NVIDIA A100-SXM4-80GB"]
    dump = tmp_path / "dump.txt"
    dump.write_text(BANDWIDTH_TEST)
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    assert "GPU101" in {f["code"] for f in result.json()["data"]["findings"]}


def test_vector_add_failure_is_read_with_its_message() -> None:
    gpu, report = _read(VECTOR_ADD)
    assert gpu.gpus is None
    assert any("driver version is insufficient" in n for n in report.gpu.notes)


def test_python_print_under_its_command_line() -> None:
    report = parse(
        Source(
            name="paste.txt",
            text='$ python -c "import torch; print(torch.__version__, torch.version.cuda, '
            'torch.cuda.is_available())"\n2.1.0+cu121 12.1 False\n',
        )
    )
    assert report.torch.data is not None
    assert (report.torch.data.version, report.torch.data.cuda) == ("2.1.0+cu121", "12.1")


def test_python_print_with_the_device_name_last() -> None:
    report = parse(
        Source(
            name="paste.txt",
            text="$ python3 -c 'import torch; print(torch.__version__, "
            "torch.cuda.get_device_name(0))'\n2.5.1+cu124 NVIDIA GeForce RTX 5090\n",
        )
    )
    assert report.gpu.data is not None and report.gpu.data.gpus is not None
    assert report.gpu.data.gpus[0].name == "NVIDIA GeForce RTX 5090"


def test_device_properties_state_name_capability_and_memory() -> None:
    gpu, _ = _read(
        ">>> torch.cuda.get_device_properties(0)\n_CudaDeviceProperties(name='NVIDIA GeForce "
        "RTX 4090', major=8, minor=9, total_memory=24217MB, multi_processor_count=128)\n"
    )
    assert gpu.gpus is not None
    assert (gpu.gpus[0].name, gpu.gpus[0].compute_capability, gpu.gpus[0].memory_total_mib) == (
        "NVIDIA GeForce RTX 4090",
        "8.9",
        24217,
    )


def test_nvidia_settings_version() -> None:
    gpu, _ = _read("$ nvidia-settings --version\n\nnvidia-settings:  version 535.129.03\n")
    assert gpu.driver_version == "535.129.03"


@pytest.mark.parametrize(
    ("body", "driver", "name"),
    [
        (
            "C:\\> wmic path win32_VideoController get name,driverversion\n"
            "DriverVersion   Name\n31.0.15.3623    NVIDIA GeForce RTX 3060\n",
            "536.23",
            "NVIDIA GeForce RTX 3060",
        ),
        (
            "PS C:\\> Get-CimInstance Win32_VideoController | Select-Object Name, DriverVersion\n\n"
            "Name                    DriverVersion\n----                    -------------\n"
            "Intel(R) UHD Graphics 770 31.0.101.4502\n"
            "NVIDIA GeForce RTX 4070 32.0.15.6094\n",
            "560.94",
            "NVIDIA GeForce RTX 4070",
        ),
    ],
    ids=["wmic", "get-ciminstance"],
)
def test_windows_adapter_listing_gives_nvidia_s_driver_version(
    body: str, driver: str, name: str
) -> None:
    gpu, _ = _read(body)
    assert gpu.driver_version == driver  # Windows' number's last five digits
    assert _names(gpu) == [name]


def test_dxdiag_windows_driver_number_is_not_taken_as_is() -> None:
    gpu, _ = _read(
        "          Card name: NVIDIA GeForce RTX 3060\n       Manufacturer: NVIDIA\n"
        "     Driver Version: 31.0.15.3623\n"
    )
    assert gpu.driver_version == "536.23"


def test_a_declared_windows_driver_number_is_read_as_nvidia_s_version(tmp_path: Path) -> None:
    from envcheck.ingest.spec import load_spec

    spec = tmp_path / "hw.toml"
    spec.write_text('[gpu]\ndriver = "31.0.15.3623"\nmodels = ["NVIDIA GeForce RTX 3060"]\n')
    report = load_spec(str(spec))
    assert report.gpu.data is not None and report.gpu.data.driver_version == "536.23"
    assert any("Windows' number" in n for n in report.gpu.notes)


@pytest.mark.parametrize(
    ("body", "driver"),
    [
        (
            "$ apt-cache policy nvidia-driver-535\nnvidia-driver-535:\n"
            "  Installed: 535.129.03-0ubuntu0.22.04.1\n  Candidate: 535.129.03-0ubuntu0.22.04.1\n"
            "  Version table:\n *** 535.129.03-0ubuntu0.22.04.1 500\n"
            "        500 http://archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 Packages\n",
            "535.129.03",
        ),
        ("$ modinfo nvidia | grep ^version\nversion:        535.129.03\n", "535.129.03"),
        ("$ modinfo -F version nvidia\n550.54.14\n", "550.54.14"),
        (
            "$ nvidia-smi --query-gpu=driver_version --format=csv\ndriver_version\n535.129.03\n",
            "535.129.03",
        ),
    ],
    ids=["apt-cache-policy", "modinfo-grep-version", "modinfo-F-version", "query-driver-only"],
)
def test_one_line_driver_answers_are_read(body: str, driver: str) -> None:
    gpu, _ = _read(body)
    assert gpu.driver_version == driver


def test_apt_policy_of_a_package_not_installed_is_not_a_driver(tmp_path: Path) -> None:
    dump = tmp_path / "policy.txt"
    dump.write_text(
        "nvidia-driver-550:\n  Installed: (none)\n  Candidate: 550.54.14-0ubuntu1\n"
        "  Version table:\n     550.54.14-0ubuntu1 500\n"
    )
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


# https://github.com/mattshma/bigdata/issues/133's shapes: lsmod with nouveau bound and no
# nvidia module (driver_dumps.py), and ls finding no NVIDIA device node (driver_tools.py's
# no-driver lines): both state that no NVIDIA driver runs
LSMOD_NOUVEAU = (
    "$ lsmod | grep -i -e nvidia -e nouveau\n"
    "nouveau              2433024  1\n"
    "mxm_wmi                16384  1 nouveau\n"
    "drm_ttm_helper         16384  1 nouveau\n"
    "ttm                    86016  2 drm_ttm_helper,nouveau\n"
)
NO_DEVICE_NODES = (
    "$ ls -l /dev/nvidia*\nls: cannot access '/dev/nvidia*': No such file or directory\n"
)


# `lsmod | grep nvidia` that printed nothing before the next prompt (or the fence's end)
LSMOD_EMPTY = (
    "```\n$ lsmod | grep -i nvidia\n$ nvidia-smi -L\nbash: nvidia-smi: command not found\n```\n"
)
LSMOD_EMPTY_LAST = "I ran:\n\n    user@gpu1:~$ lsmod | grep nvidia\n    user@gpu1:~$\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (LSMOD_NOUVEAU, "lsmod lists nouveau"),
        (NO_DEVICE_NODES, "no NVIDIA device nodes"),
        (LSMOD_EMPTY, "kernel module is not loaded"),
        (LSMOD_EMPTY_LAST, "`lsmod | grep nvidia` printed nothing"),
        ("$ modinfo nvidia\nmodinfo: ERROR: Module nvidia not found.\n", "for the running kernel"),
        (
            "$ sudo modprobe nvidia\nmodprobe: FATAL: Module nvidia not found in directory "
            "/lib/modules/6.5.0-14-generic\n",
            "running kernel 6.5.0-14-generic",
        ),
    ],
)
def test_a_paste_that_says_no_nvidia_driver_runs_is_read(
    tmp_path: Path, text: str, said: str
) -> None:
    """Read, not refused: alone it is DRV151 (NVML_ERROR_DRIVER_NOT_LOADED, with the table's
    fix); beside a CUDA build of torch it is DRV103 (no driver visible), not both."""
    dump = tmp_path / "dump.txt"
    dump.write_text(text)
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.1.0+cu121\nnumpy==1.26.4\n")
    alone = run_cli("check", "--from", str(dump), "--json")
    assert alone.returncode == 1, alone.stderr
    (finding,) = alone.json()["data"]["findings"]
    assert finding["code"] == "DRV151" and said in finding["message"]
    assert "NVML_ERROR_DRIVER_NOT_LOADED" in finding["message"]
    assert "modprobe nvidia" in json.dumps(finding["fix"])
    result = run_cli("check", "--from", str(dump), "--from", str(freeze))
    assert "DRV103" in result.stdout and said in " ".join(result.stdout.split())
    assert "DRV151" not in result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "$ lsmod | grep nvidia\nnvidia              56496128  0\n$ nvidia-smi\n",
        "$ lsmod | grep nouveau\n$\n",
        "$ lsmod | grep nvidia\ntorch==2.1.0+cu121\nnumpy==1.26.4\n",
    ],
)
def test_an_lsmod_grep_with_output_or_for_another_module_states_no_absence(text: str) -> None:
    from envcheck.ingest import paste

    kinds = [part.kind for part in paste.split(text, paste.boundaries(text))]
    assert "lsmod-empty" not in kinds


def test_lsmod_with_nvidia_and_nouveau_is_not_read_as_nouveau_alone() -> None:
    from envcheck.ingest.common import FormatError
    from envcheck.ingest.driver_dumps import parse_lsmod_nouveau

    text = LSMOD_NOUVEAU + "nvidia              56496128  0\n"
    with pytest.raises(FormatError):
        parse_lsmod_nouveau(Source(name="lsmod", text=text))
