"""The fixes threads establish, in the spellings they use, printed beside confirmed causes:
the nvidia_uvm reload and `sudo reboot` for CUDA's unknown error, `sudo reboot` for NVML's
driver/library mismatch, `ubuntu-drivers autoinstall` for a driver nvidia-smi cannot reach,
and `pip install <package> --no-build-isolation` for a pip build whose summary line comes
first in the log. Lines as the tools print them (tests/fix_threads.toml tallies the threads)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def test_cuda_unknown_error_prints_the_uvm_reload_and_reboot_as_commands(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up "
        "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. "
        "Setting the available devices to be zero.",
    )
    drv150 = _causes(cli, log)["DRV150"]
    assert drv150["verdict"] == "confirmed"
    (finding,) = drv150["findings"]
    commands = finding["fix"]["commands"]
    # the quoted commands, each its own step, before the whole text
    assert commands[:4] == [
        "# sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm",
        "# sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm",
        "# sudo nvidia-modprobe -u -c 0",
        "# sudo reboot",
    ]
    # the summary is the first step whole, not cut inside its parentheses
    assert finding["fix"]["summary"].endswith("or `sudo reboot`")


def test_nvml_mismatch_prints_sudo_reboot_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "Failed to initialize NVML: Driver/library version mismatch")
    gpu102 = _causes(cli, log)["GPU102"]
    assert gpu102["verdict"] == "confirmed"
    (finding,) = gpu102["findings"]
    assert finding["fix"]["commands"][0] == "# sudo reboot"
    assert "rmmod nvidia_uvm" in finding["fix"]["commands"][1]


def test_nvidia_smi_without_a_driver_prints_the_driver_install(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.",
    )
    drv151 = _causes(cli, log)["DRV151"]
    assert drv151["verdict"] == "confirmed"
    fix = _fix(drv151)
    assert "# sudo dkms autoinstall" in fix.splitlines()
    assert "# sudo reboot" in fix.splitlines()
    assert "# sudo ubuntu-drivers autoinstall" in fix.splitlines()


PIP_BUILD = """\
      RuntimeError: Error compiling objects for extension
      [end of output]
  note: This error originates from a subprocess, and is likely not a problem with pip.
  ERROR: Failed building wheel for flash-attn
Failed to build flash-attn"""


def test_a_build_summary_above_the_pip_line_names_the_package_pip_built(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    result = cli("triage", str(log_file(tmp_path, PIP_BUILD)), "--json", "--no-probe")
    matches = result.json()["data"]["matches"]
    fixes = [
        _fix(c) for m in matches for c in m["causes"] if c["code"] == "SYS153" and c["findings"]
    ]
    assert len(fixes) == 2  # the ninja summary and pip's line: both name flash-attn
    for fix in fixes:
        assert "pip install flash-attn --no-build-isolation" in fix
        assert "pip install --no-build-isolation flash-attn" in fix.splitlines()
        assert "export MAX_JOBS=4" in fix.splitlines()
        assert "<the package>" not in fix


def test_a_jit_extension_name_is_never_pip_installed(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # DeepSpeed's JIT build: fused_adam is an extension, not a distribution
    log = log_file(tmp_path, "RuntimeError: Error building extension 'fused_adam'")
    sys153 = _causes(cli, log)["SYS153"]
    fix = _fix(sys153)
    assert "fused_adam" not in fix.replace("'fused_adam'", "")
    assert "pip install fused" not in fix
    assert "rm -rf ~/.cache/torch_extensions" in fix


def test_driver_too_old_prints_the_driver_install_and_a_torch_the_driver_runs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). "
        "Please update your GPU driver by downloading and installing a new version from the "
        "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
        "https://pytorch.org to install a PyTorch version that has been compiled with your "
        "version of the CUDA driver.",
    )
    drv101 = _causes(cli, log)["DRV101"]
    assert drv101["verdict"] == "confirmed"
    lines = _fix(drv101).splitlines()
    assert "# sudo ubuntu-drivers autoinstall && sudo reboot  (Ubuntu)" in lines
    # the driver runs CUDA 11.4: the torch offered is a CUDA 11 build
    (install,) = [c for c in lines if c.startswith("pip install torch==")]
    assert "--index-url https://download.pytorch.org/whl/cu11" in install


def test_an_unknown_cuda_library_gets_the_toolkit_directory_on_the_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "./build/tools/caffe: error while loading shared libraries: libcudnn.so.5: cannot open "
        "shared object file: No such file or directory",
    )
    lines = _fix(_causes(cli, log)["SYS150"]).splitlines()
    assert "# export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH" in lines
    assert any("sudo ldconfig" in c for c in lines)


def test_an_unknown_other_library_names_no_cuda_directory(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libopencv_core.so.409: cannot open shared object file: No such file or "
        "directory",
    )
    fix = _fix(_causes(cli, log)["SYS150"])
    assert "export LD_LIBRARY_PATH=<its directory>:$LD_LIBRARY_PATH" in fix
    assert "/usr/local/cuda/lib64" not in fix
