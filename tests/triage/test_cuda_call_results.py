"""A CUDA call's result in a program's own words (cuda-call-result-stated): the number or
NVIDIA's message is looked up in matrices/cuda/errors.toml (DRV150), and the NVIDIA kernel
module's ENODEV (modprobe-nvidia-no-such-device) leaves the GPU causes open. Lines as the
threads quote them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("line", "name"),
    [
        # diku-dk/futhark#1117 (the call on the line above)
        ("failed with error code 999 (unknown error)_", "cudaErrorUnknown"),
        # spiriMirror/libuipc#41
        ("Run on ubuntu 22.04 with conda, `cudaGetDeviceCount` Error Code 999", "cudaErrorUnknown"),
        # NVlabs/instant-ngp#1361: the message alone
        (
            "multi_stream.h:44 cudaStreamCreate(&m_stream) failed with error unknown error",
            "cudaErrorUnknown",
        ),
        ("CUDA driver initialization failed, error code 3", "cudaErrorInitializationError"),
        ("cuInit returned 100", "cudaErrorNoDevice"),
    ],
)
def test_call_result_names_the_code_and_its_fix(
    cli: Cli, tmp_path: Path, line: str, name: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["DRV150"]
    assert cause["verdict"] == "confirmed"
    assert name in cause["findings"][0]["message"]
    if name == "cudaErrorUnknown":
        assert "sudo reboot" in fix_text(cause)


def test_modprobe_enodev_leaves_the_gpu_causes_open(cli: Cli, tmp_path: Path) -> None:
    found = causes(
        cli, log_file(tmp_path, "modprobe: ERROR: could not insert 'nvidia': No such device")
    )
    assert {"DRV222", "DRV110", "DRV227"} <= set(found)
    assert all(c["verdict"] != "confirmed" for c in found.values())


def test_torch_nvml_warning_leaves_nvml_open(cli: Cli, tmp_path: Path) -> None:
    """torch prints no return code: DRV151 stays open, never confirmed from the warning."""
    log = log_file(
        tmp_path,
        "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:546: "
        "UserWarning: Can't initialize NVML\n",
    )
    cause = causes(cli, log)["DRV151"]
    assert cause["verdict"] != "confirmed"


@pytest.mark.parametrize(
    ("line", "codes"),
    [
        (
            "(EE) NVIDIA(0): Failed to initialize the NVIDIA GPU at PCI:1:0:0.  Please",
            {"DRV228", "DRV222", "DRV110"},
        ),
        (
            "(EE) NVIDIA: Failed to load the NVIDIA kernel module. Please check your",
            {"DRV224", "DRV225", "DRV222"},
        ),
        ("[   719.532] (EE) No devices detected.", {"DRV222", "DRV110", "DRV227"}),
    ],
)
def test_xorg_nvidia_lines_name_the_kernel_module_causes(
    cli: Cli, tmp_path: Path, line: str, codes: set[str]
) -> None:
    found = causes(cli, log_file(tmp_path, line))
    assert codes <= set(found)
