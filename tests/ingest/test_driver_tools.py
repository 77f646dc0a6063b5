"""The driver tools' output users paste (deviceQuery, dkms status, apt's lines about the driver
package, ubuntu-drivers devices): each alone is read, not refused as an unknown format."""

from __future__ import annotations

from pathlib import Path

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import GpuInfo, NodeReport
from tests.conftest import CliResult, run_cli

DEVICE_QUERY = """\
./deviceQuery Starting...

 CUDA Device Query (Runtime API) version (CUDART static linking)

Detected 2 CUDA Capable device(s)

Device 0: "NVIDIA GeForce RTX 3090"
  CUDA Driver Version / Runtime Version          12.2 / 11.8
  CUDA Capability Major/Minor version number:    8.6
  Total amount of global memory:                 24260 MBytes (25438126080 bytes)

Device 1: "NVIDIA GeForce RTX 3090"
  CUDA Driver Version / Runtime Version          12.2 / 11.8
  CUDA Capability Major/Minor version number:    8.6
> Peer access from NVIDIA GeForce RTX 3090 (GPU0) -> NVIDIA GeForce RTX 3090 (GPU1) : Yes

deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 11.8, NumDevs = 2
Result = PASS
"""

DEVICE_QUERY_FAILED = """\
james@Workstation:~$ nvidia-docker run -ti gpu-base-image
./deviceQuery Starting...

 CUDA Device Query (Runtime API) version (CUDART static linking)

cudaGetDeviceCount returned 35
-> CUDA driver version is insufficient for CUDA runtime version
Result = FAIL
"""


def _gpu(body: str) -> tuple[GpuInfo, NodeReport]:
    report = parse(Source(name="paste.txt", text=body))
    assert report.gpu.data is not None, report.gpu.reason
    return report.gpu.data, report


def test_device_query_states_the_driver_cuda_and_the_gpus() -> None:
    gpu, report = _gpu(DEVICE_QUERY)
    assert gpu.cuda_driver_version == "12.2"
    assert gpu.gpus is not None
    assert [(g.name, g.compute_capability) for g in gpu.gpus] == [
        ("NVIDIA GeForce RTX 3090", "8.6"),
        ("NVIDIA GeForce RTX 3090", "8.6"),
    ]
    assert any("runtime is CUDA 11.8" in note for note in report.gpu.notes)


def test_a_failed_device_query_states_its_cuda_error(tmp_path: Path) -> None:
    gpu, _ = _gpu(DEVICE_QUERY_FAILED)
    assert gpu.cuda_errors == ("35",)
    assert gpu.gpus is None
    assert gpu.gpus_reason is not None and "driver version is insufficient" in gpu.gpus_reason
    dump = tmp_path / "dump.txt"
    dump.write_text(DEVICE_QUERY_FAILED)
    result: CliResult = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    codes = {f["code"] for f in result.json()["data"]["findings"]}
    assert "DRV150" in codes


def test_dkms_status_states_the_built_module() -> None:
    gpu, report = _gpu(
        "nvidia/535.104.05, 5.15.0-86-generic, x86_64: installed\n"
        "nvidia/525.125.06, 6.2.0-33-generic, x86_64: built\n"
    )
    assert gpu.driver_version == "535.104.05"
    assert any("525.125.06 for kernel 6.2.0-33-generic built" in n for n in report.gpu.notes)


def test_apt_states_the_driver_package_version() -> None:
    gpu, report = _gpu(
        "$ sudo apt install nvidia-driver-535\n"
        "Reading package lists... Done\n"
        "nvidia-driver-535 is already the newest version (535.129.03-0ubuntu0.22.04.1).\n"
        "0 upgraded, 0 newly installed, 0 to remove and 3 not upgraded.\n"
    )
    assert gpu.driver_version == "535.129.03"
    assert any("nvidia-driver-535" in n for n in report.gpu.notes)


def test_ubuntu_drivers_names_the_gpu_and_the_recommended_package() -> None:
    gpu, report = _gpu(
        "== /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0 ==\n"
        "modalias : pci:v000010DEd00002684sv00001043sd000088E2bc03sc00i00\n"
        "vendor   : NVIDIA Corporation\n"
        "model    : AD102 [GeForce RTX 4090]\n"
        "driver   : nvidia-driver-535 - distro non-free recommended\n"
        "driver   : nvidia-driver-525 - distro non-free\n"
        "driver   : xserver-xorg-video-nouveau - distro free builtin\n"
    )
    assert gpu.gpus is not None and gpu.gpus[0].name == "NVIDIA GeForce RTX 4090"
    assert "recommended: nvidia-driver-535" in report.gpu.notes


def test_text_without_a_driver_tool_is_still_refused(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text("lorem ipsum dolor\nsit amet\n")
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 2
    assert "format not recognised" in result.stderr


def test_the_shell_saying_nvidia_smi_is_missing_is_read_as_no_driver() -> None:
    report = parse(
        Source(
            name="paste.txt",
            text="$ nvidia-smi\nCommand 'nvidia-smi' not found, but can be installed with:\n"
            "sudo apt install nvidia-utils-535         # version 535.129.03-0ubuntu0.22.04.1, or\n"
            "sudo apt install nvidia-utils-535-server  # version 535.129.03-0ubuntu0.22.04.1\n",
        )
    )
    assert report.gpu.stated_absent
    assert report.gpu.reason is not None and "nvidia-smi is not installed" in report.gpu.reason
    assert "the shell offers: nvidia-utils-535, nvidia-utils-535-server" in report.gpu.notes


def test_modprobe_names_why_the_module_is_not_loaded() -> None:
    secure = parse(
        Source(
            name="paste.txt",
            text="modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n",
        )
    )
    assert secure.gpu.reason is not None and "Secure Boot" in secure.gpu.reason
    kernel = parse(
        Source(
            name="paste.txt",
            text="modprobe: FATAL: Module nvidia not found in directory "
            "/lib/modules/6.5.0-14-generic\n",
        )
    )
    assert kernel.gpu.reason is not None and "running kernel 6.5.0-14-generic" in kernel.gpu.reason
