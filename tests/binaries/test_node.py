"""The driver as its files show it, and the default gate on a node with a CUDA stack and no
visible GPU: a staged /proc, /dev and driver library directory, the fake pynvml, a venv with a
CUDA build of torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envcheck.commands.check import RuleOptions, check
from envcheck.probes import collect
from envcheck.probes.driver_files import module_version, probe_driver_files
from tests.distfactory import make_fake_torch

PROC_VERSION = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
    "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n"
)
OPEN_MODULE = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build\n"


def test_module_version_of_both_module_flavours() -> None:
    assert module_version(PROC_VERSION) == "535.129.03"
    assert module_version(OPEN_MODULE) == "570.133.20"
    assert module_version("garbage") is None


def test_kernel_module_and_libraries_after_an_update_without_reboot(stage) -> None:
    stage.write("/proc/driver/nvidia/version", PROC_VERSION)
    lib = stage.mkdir("/usr/lib/x86_64-linux-gnu")
    (lib / "libcuda.so.550.54.15").write_bytes(b"\x7fELF")
    (lib / "libcuda.so.1").symlink_to("libcuda.so.550.54.15")
    (lib / "libnvidia-ml.so.550.54.15").write_bytes(b"\x7fELF")
    (lib / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.550.54.15")
    for node in ("nvidia0", "nvidiactl", "nvidia-uvm"):
        stage.write(f"/dev/{node}", "")
    files = probe_driver_files(stage.ctx())
    assert files.kernel_module == "535.129.03"
    assert files.libcuda == "550.54.15" and files.nvml_library == "550.54.15"
    assert files.libcuda_path == "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"
    assert files.device_nodes == ("/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl")


def _cuda_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "gpu-env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    make_fake_torch(site, "2.5.1", "12.4")
    return venv / "bin" / "python"


def test_no_visible_gpu_with_a_cuda_stack_fails_by_default(stage, fake_nvml, tmp_path) -> None:
    fake_nvml("none")  # the container was started without --gpus: no NVML library
    python = _cuda_venv(tmp_path)
    report = collect(stage.ctx(python=str(python)))
    assert report.torch.data.cuda == "12.4"
    outcome = check([report], RuleOptions(select=("DRV",)))
    assert outcome.exit_code == 1
    assert [f.code for f in outcome.failing] == ["DRV103"]
    assert "no /dev/nvidia<N> device nodes" in outcome.failing[0].message
    # a node meant to be GPU-less says so, and passes
    meant = check([report], RuleOptions(select=("DRV",), expect="no-gpu"))
    assert meant.exit_code == 0 and not meant.findings
    assert any(s.code == "DRV103" and "no-gpu" in s.reason for s in meant.result.skipped)


def test_expectation_fails_a_node_short_of_it(stage, fake_nvml, tmp_path) -> None:
    fake_nvml("h100x2")
    report = collect(stage.ctx())
    short = check([report], RuleOptions(select=("DRV171",), expect="8x H100, driver>=550"))
    assert short.exit_code == 1
    assert "expected 8x H100, found 2" in short.findings[0].message
    fine = check([report], RuleOptions(select=("DRV171",), expect="2x H100, driver>=550"))
    assert fine.exit_code == 0 and not fine.findings
    old = check([report], RuleOptions(select=("DRV171",), expect="gpus=2, driver>=555"))
    assert "expected driver >= 555, found 550.54.15" in old.findings[0].message


def test_probe_to_finding_end_to_end(stage, fake_nvml, tmp_path) -> None:
    """An interpreter whose site-packages holds gcc-built torch-like and extension libraries:
    the probe reads them into the report, the report survives JSON, the rules find the torch
    symbol the extension needs and the library it cannot load."""
    import json

    from envcheck.model.report import NodeReport
    from tests.binaries.test_loading import EXT, _node
    from tests.distfactory import TORCH_VERSION_PY_2X

    fake_nvml("h100x2")
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site, _ = _node(tmp_path, next((venv / "lib").glob("python3*/site-packages")))
    (site / "torch" / "version.py").write_text(
        TORCH_VERSION_PY_2X.format(version="2.5.1", cuda="12.4")
    )
    report = collect(stage.ctx(python=str(venv / "bin" / "python")))
    assert report.binaries.is_ok, report.binaries.describe()
    saved = NodeReport.from_dict(json.loads(json.dumps(report.to_dict())))
    outcome = check([saved], RuleOptions(select=("TOR162", "SYS170")))
    codes = {f.code: f for f in outcome.findings}
    assert "c10::cuda::SetDevice(int)" in codes["TOR162"].message
    assert EXT in codes["SYS170"].message and "libgone.so.3" in codes["SYS170"].message
    assert outcome.exit_code == 1
