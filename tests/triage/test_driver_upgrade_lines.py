"""Error 35 (the driver older than the program's CUDA runtime) in the words of programs other
than torch: DRV150 confirms it with the driver-upgrade commands; torch's own line stays DRV101's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


@pytest.mark.parametrize(
    "line",
    [
        # Caffe's glog CHECK of cudaGetErrorString
        "F0408 23:04:03.994313 2135417616 syncedmem.cpp:57] Check failed: error == cudaSuccess "
        "(35 vs. 0)  CUDA driver version is insufficient for CUDA runtime version",
        # a program's own message (gunrock)
        "[test_utils.cu, 61 @ gpu 10981] cudaSetDevice failed. (CUDA error 35: CUDA driver "
        "version is insufficient for CUDA runtime version)",
        # CUDA samples' helper_cuda.h
        'CUDA error at bandwidthTest.cu:255 code=35(cudaErrorInsufficientDriver) "cudaSetDevice(currentDevice)"',
    ],
)
def test_error_35_of_any_program_confirms_the_driver_upgrade(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    drv150 = _causes(cli, log_file(tmp_path, line))["DRV150"]
    assert drv150["verdict"] == "confirmed"
    text = _fix(drv150)
    assert text.startswith("Upgrade the NVIDIA driver")
    assert "sudo ubuntu-drivers autoinstall && sudo reboot" in text
    assert "sudo apt install nvidia-driver-<branch>" in text


def test_torch_own_error_35_is_left_to_drv101(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA "
        "runtime version at /pytorch/aten/src/THC/THCGeneral.cpp:74"
    )
    found = _causes(cli, log_file(tmp_path, line))
    assert found["DRV150"]["verdict"] != "confirmed"
    assert "DRV101" in found


def test_the_branch_comes_from_the_cuda_torch_was_built_with(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[packages]\ntorch = "2.1.0+cu121"\n')
    line = 'CUDA error at main.cu:42 code=35(cudaErrorInsufficientDriver) "cudaGetDeviceCount(&n)"'
    drv150 = _causes(cli, log_file(tmp_path, line), "--spec", str(spec))["DRV150"]
    text = _fix(drv150)
    assert "CUDA 12.1" in text
    assert "sudo apt install nvidia-driver-5" in text  # a 5xx branch from drivers.toml


def test_error_802_by_its_number_names_fabric_manager(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "cudaGetDeviceProperties returned 802"
    found = _causes(cli, log_file(tmp_path, line, "-> system not yet initialized"))
    assert "GPU101" in found


def test_no_driver_on_wsl_puts_the_wsl_steps_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[system]\nkernel = "5.15.133.1-microsoft-standard-WSL2"\n')
    line = (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
    )
    drv103 = _causes(cli, log_file(tmp_path, line), "--spec", str(spec))["DRV103"]
    (finding,) = drv103["findings"]
    assert "WSL 2" in finding["fix"]["summary"]
    assert "wsl --set-version" in finding["fix"]["commands"][0]


def test_no_driver_elsewhere_has_no_wsl_step(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[system]\nkernel = "5.15.0-91-generic"\n')
    line = "RuntimeError: Found no NVIDIA driver on your system."
    drv103 = _causes(cli, log_file(tmp_path, line), "--spec", str(spec))["DRV103"]
    assert "wsl" not in _fix(drv103).lower()
