"""Container runtimes' driver lines whose fix the log's facts decide: nvidia-container-cli's
CUDA requirement (the long-term branch NVIDIA's CUDA 12 images also accept), CUDA's
initialisation answering 500 under Docker Desktop (SYS135), and the runtime's missing
libnvidia-ml.so.1 in WSL 2 (the Windows build). Lines as the tools print them (sources in
matrices/signatures/driver*.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_REQUIREMENT = (
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>={cuda}, please "
    "update your driver to a newer version, or use an earlier cuda container: unknown\n"
)


def test_cuda_12_requirement_also_names_the_long_term_branch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _REQUIREMENT.format(cuda="12.5"))
    drv101 = _causes(cli, log)["DRV101"]
    assert drv101["verdict"] == "confirmed"
    text = _fix(drv101)
    assert "supports CUDA 12.5" in text
    assert "sudo apt install nvidia-driver-535" in text and "R535" in text


def test_requirement_the_long_term_branch_runs_natively_is_not_repeated(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # R535 runs CUDA 12.2 by itself: the branch for 12.2 is named once, as the upgrade
    log = log_file(tmp_path, _REQUIREMENT.format(cuda="12.2"))
    text = _fix(_causes(cli, log)["DRV101"])
    assert "R535" not in text and "nvidia-driver-535" in text


def test_requirement_of_another_major_names_no_long_term_branch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _REQUIREMENT.format(cuda="11.8"))
    assert "long-term branch" not in _fix(_causes(cli, log)["DRV101"])


def test_cuda_init_error_500_confirms_the_docker_desktop_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? "
        "Error 500: named symbol not found\n",
    )
    causes = _causes(cli, log)
    assert causes["SYS135"]["verdict"] == "confirmed"
    assert "Docker Desktop to 4.31" in _fix(causes["SYS135"])
    assert "DRV150" not in causes


_NO_NVML = (
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
    "cannot open shared object file: no such file or directory: unknown\n"
)


def test_wsl_container_runtime_without_nvml_names_the_windows_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        _NO_NVML + "I'm using WSL2 (latest Docker Desktop).\nWindows 10 Pro, 20H2, 19042.928\n",
    )
    sys150 = _causes(cli, log)["SYS150"]
    (finding,) = sys150["findings"]
    assert "Windows build 19042 is older than 21H2" in finding["message"]
    assert "Windows 10 21H2 (build 19044)" in _fix(sys150)


def test_wsl_container_runtime_without_a_stated_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _NO_NVML + "running under Docker Desktop\n")
    sys150 = _causes(cli, log)["SYS150"]
    (finding,) = sys150["findings"]
    assert "/usr/lib/wsl/lib" in finding["message"]
    assert "ubuntu-drivers" not in _fix(sys150)


def test_linux_container_runtime_without_nvml_keeps_the_host_driver_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _NO_NVML)
    assert "ubuntu-drivers install" in _fix(_causes(cli, log)["SYS150"])


_PTX = (
    "ERROR: CUDA error: the provided PTX was compiled with an unsupported toolchain., line 148, "
    "file /var/tmp/cuda_memtest/src/cuda_memtest/cuda_memtest.cu\n"
)


def test_ptx_toolchain_confirms_minor_compat_and_lists_newer_branches(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the driver from the kernel module's own version line (cuda_memtest prints it)
    log = log_file(
        tmp_path,
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  460.80  Fri May  7 06:55:54 UTC 2021\n"
        + _PTX,
    )
    drv102 = _causes(cli, log)["DRV102"]
    assert drv102["verdict"] == "confirmed"
    (finding,) = drv102["findings"]
    assert "supports CUDA <= 11.2" in finding["message"]
    assert "nvidia-driver-465 (CUDA 11.3)" in _fix(drv102)


def test_ptx_toolchain_with_torch_names_the_branch_for_its_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _PTX)
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\ndriver = "525.147.05"\n[packages]\ntorch = "2.4.0+cu124"\n')
    text = _fix(_causes(cli, log, "--spec", str(spec))["DRV102"])
    # the node rule runs on the spec: torch for the driver's CUDA, or the branch for torch's
    assert "torch==2.4.0" in text and "nvidia-driver-550" in text


def test_ptx_toolchain_without_facts_still_names_the_driver_upgrade(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = _fix(_causes(cli, log_file(tmp_path, _PTX))["DRV102"])
    assert "Upgrade the NVIDIA driver" in text and "ubuntu-drivers autoinstall" in text


def test_image_driver_file_names_the_file_to_remove(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
        "4f79/merged/usr/lib/x86_64-linux-gnu/libcuda.so.1: file exists: unknown.\n",
    )
    drv170 = _causes(cli, log)["DRV170"]
    assert drv170["verdict"] == "confirmed"
    text = _fix(drv170)
    assert (
        "rm -f /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
        in text
    )
    # each file once per rm command (the line's own first), then the package that ships it
    assert "libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1" not in text
    assert "dpkg -S /usr/lib/x86_64-linux-gnu/libcuda.so.1" in text


def test_no_driver_with_wsl_stated_on_another_line_names_wsl_2(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Running locally with Ubuntu1804/WSL2 on windows 10 21H2 (19044.1288).\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
    )
    text = _fix(_causes(cli, log)["DRV103"])
    assert "wsl --set-version" in text and "on WSL, WSL 2 with NVIDIA's Windows driver" in text


def test_container_unknown_device_names_a_device_the_host_has(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "nvidia-container-cli: device error: 1: unknown device: unknown\n")
    drv103 = _causes(cli, log)["DRV103"]
    (finding,) = drv103["findings"]
    assert "GPU '1'" in finding["message"]
    assert "nvidia-smi -L" in _fix(drv103) and "device=0" in _fix(drv103)


def test_container_missing_ldconfig_names_the_other_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "nvidia-container-cli: ldcache error: open failed: /sbin/ldconfig.real: no such file or "
        "directory: unknown\n",
    )
    text = _fix(_causes(cli, log)["DRV103"])
    assert 'ldconfig = "@/sbin/ldconfig"' in text and "config.toml" in text
