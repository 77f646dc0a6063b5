"""Driver lines whose own facts decide the cause: the versions printed beside CUDA's 'driver
version is insufficient' (deviceQuery's `CUDA Driver Version / Runtime Version`, TensorFlow's
`kernel reported version is:`) confirm DRV101; the module build, modprobe and installer lines
confirm DRV222/DRV224/DRV225/DRV226 with the kernel, module version and GCC they state."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

CASES = [
    (
        [
            "cudaGetDeviceCount returned 35",
            "-> CUDA driver version is insufficient for CUDA runtime version",
            "  CUDA Driver Version / Runtime Version          11.2 / 11.8",
        ],
        "DRV101",
        "supports CUDA 11.8",
    ),
    (
        [
            "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime "
            "version",
            "I tensorflow/compiler/xla/stream_executor/cuda/cuda_diagnostics.cc:180] kernel "
            "reported version is: 470.82.1",
        ],
        "DRV101",
        "Upgrade the NVIDIA driver",
    ),
    (
        [
            "  The kernel was built by: x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) "
            "12.3.0",
            "Error! Bad return status for module build on kernel: 6.5.0-14-generic (x86_64)",
            "Consult /var/lib/dkms/nvidia/535.129.03/build/make.log for more information.",
        ],
        "DRV224",
        "sudo apt install gcc-12",
    ),
    (
        ["modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-31-generic"],
        "DRV224",
        "linux-headers-6.8.0-31-generic",
    ),
    (
        ["modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"],
        "DRV225",
        "mokutil --import",
    ),
    (
        ["[    4.2] NVRM: The NVIDIA probe routine was not called for 1 device(s)."],
        "DRV222",
        "lspci -nnk -d 10de:",
    ),
]


@pytest.mark.parametrize(("lines", "code", "fragment"), CASES, ids=[c[1] for c in CASES])
def test_the_lines_confirm_the_cause(
    tmp_path: Path, lines: list[str], code: str, fragment: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text("\n".join(lines) + "\n")
    result = run_cli("triage", str(log), "--no-probe", "--json")
    assert result.returncode in (0, 1), result.stderr
    causes = [c for m in result.json()["data"]["matches"] for c in m["causes"]]
    confirmed = [c for c in causes if c["code"] == code and c["verdict"] == "confirmed"]
    assert confirmed, [(c["code"], c["verdict"]) for c in causes]
    fixes = " ".join(
        " ".join([c["fix"]["summary"], *c["fix"].get("commands", [])]) for c in confirmed
    )
    assert fragment in fixes


def test_an_ngc_banner_alone_confirms_nothing(tmp_path: Path) -> None:
    """The NGC entrypoint's warning is normal in an image build: the cause stays open."""
    log = tmp_path / "job.log"
    log.write_text(
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
    )
    result = run_cli("triage", str(log), "--no-probe", "--json")
    causes = [c for m in result.json()["data"]["matches"] for c in m["causes"]]
    assert causes and all(c["verdict"] != "confirmed" for c in causes)
