"""The driver family's fixes take the form the log's own facts decide: the headers package of
the distribution a kernel release names (DRV223/DRV224: pacman's linux-zen-headers for
6.2.6-zen1-1-zen, dnf's kernel-devel for .el9), the branch and module flavour for a GPU newer
than the driver (DRV110: the next branch, -open on Blackwell), and R515's open module on a
GPU that is not a data-center one (DRV228: OpenRmEnableUnsupportedGpus)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.kernel_packages import headers_command, kernel_packages
from tests.conftest import CliResult


@pytest.mark.parametrize(
    ("release", "command"),
    [
        ("6.2.6-zen1-1-zen", "sudo pacman -S --needed linux-zen-headers"),
        ("6.8.9-arch1-1", "sudo pacman -S --needed linux-headers"),
        ("6.6.30-2-lts", "sudo pacman -S --needed linux-lts-headers"),
        ("6.8.9-hardened1-1-hardened", "sudo pacman -S --needed linux-hardened-headers"),
        ("5.14.0-362.8.1.el9_3.x86_64", "sudo dnf install kernel-devel-5.14.0-362.8.1.el9_3"),
        ("6.5.6-300.fc39.x86_64", "sudo dnf install kernel-devel-6.5.6-300.fc39.x86_64"),
        ("5.15.0-91-generic", "sudo apt install linux-headers-5.15.0-91-generic"),
        ("6.1.0-32-amd64", "sudo apt install linux-headers-6.1.0-32-amd64"),
        ("6.5.0-1015-aws", "sudo apt install linux-headers-6.5.0-1015-aws"),
        ("6.4.0-150600.23.25-default", "sudo zypper install kernel-default-devel"),
        ("5.6.15-1-MANJARO", "sudo pacman -S --needed linux56-headers"),
    ],
)
def test_headers_by_the_distribution_the_release_names(release: str, command: str) -> None:
    assert headers_command(release).startswith(command)


def test_a_release_that_names_no_distribution_keeps_apt_and_dnf() -> None:
    assert kernel_packages("6.9.0-custom") is None
    text = headers_command("6.9.0-custom")
    assert "apt install linux-headers-6.9.0-custom" in text
    assert "dnf install kernel-devel-6.9.0-custom" in text
    assert kernel_packages(None) is None
    assert kernel_packages("4.17.6-1.el7.elrepo.x86_64") is None


def test_dkms_headers_line_states_the_fedora_kernel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _triage(
        tmp_path,
        cli,
        "Error! echo\nYour kernel headers for kernel 5.3.7-301.fc31.x86_64 cannot be found at\n",
    )
    assert "sudo dnf install kernel-devel-5.3.7-301.fc31.x86_64" in _fix(data, "DRV223")


def _fix(data: dict[str, object], code: str) -> str:
    matches = data["matches"]
    assert isinstance(matches, list)
    cause = next(c for m in matches for c in m["causes"] if c["code"] == code)
    assert cause["verdict"] == "confirmed"
    return " ".join([cause["fix"]["summary"], *cause["fix"]["commands"]])


def _triage(tmp_path: Path, cli: Callable[..., CliResult], text: str) -> dict[str, object]:
    log = tmp_path / "log.txt"
    log.write_text(text)
    result = cli("triage", str(log), "--no-probe", "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    assert isinstance(data, dict)
    return data


def test_arch_dkms_build_names_pacman_headers_not_apt(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _triage(
        tmp_path,
        cli,
        "Error! Bad return status for module build on kernel: 6.2.6-zen1-1-zen (x86_64)\n"
        "Consult /var/lib/dkms/nvidia/525.89.02/build/make.log for more information.\n"
        "==> ERROR: Missing 6.2.1-zen1-1-zen kernel headers for module nvidia/525.89.02.\n",
    )
    for code in ("DRV223", "DRV224"):
        text = _fix(data, code)
        assert "linux-zen-headers" in text
        assert "apt install" not in text


def test_ubuntu_dkms_build_keeps_the_prebuilt_modules(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _triage(
        tmp_path,
        cli,
        "Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)\n"
        "Consult /var/lib/dkms/nvidia/535.161.07/build/make.log for more information.\n",
    )
    text = _fix(data, "DRV224")
    assert "sudo apt install linux-headers-6.8.0-31-generic" in text
    assert "linux-modules-nvidia-535-6.8.0-31-generic" in text


def test_gpu_newer_than_the_driver_gets_the_next_branch_open_on_blackwell(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _triage(
        tmp_path,
        cli,
        "Checking card:  NVIDIA Corporation GB207M [GeForce RTX 5050 Max-Q / Mobile] (rev a1)\n"
        "Uh oh. Your card is not supported by any driver version up to 580.119.02.\n",
    )
    text = _fix(data, "DRV110")
    assert "nvidia-driver-590-open" in text
    assert "<newer branch>" not in text


def test_gpu_newer_than_the_driver_before_blackwell_gets_the_proprietary_package(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _triage(
        tmp_path,
        cli,
        "Checking card:  NVIDIA Corporation AD102 [GeForce RTX 4090] (rev a1)\n"
        "Uh oh. Your card is not supported by any driver version up to 515.65.01.\n",
    )
    text = _fix(data, "DRV110")
    assert "sudo apt install nvidia-driver-520," in text
    assert "-open" not in text


def test_open_module_on_a_geforce_names_the_module_parameter(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data = _triage(
        tmp_path,
        cli,
        "NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.\n"
        "NVRM: GPU 0000:04:00.0: RmInitAdapter failed! (0x63:0x0:1905)\n",
    )
    assert "NVreg_OpenRmEnableUnsupportedGpus=1" in _fix(data, "DRV228")
