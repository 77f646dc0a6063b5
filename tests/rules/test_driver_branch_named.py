"""DRV151's fix names the installed driver's package where a pasted text states it: nvidia-smi
cannot reach the driver, `dkms status` beside it says which branch is installed, so the
package to reinstall is that branch's (nvidia-driver-535), not `nvidia-driver-<branch>`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult

SMI = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
    "that the latest NVIDIA driver is installed and running.\n"
)


def _drv151_fix(data: dict[str, object]) -> str:
    matches = data["matches"]
    assert isinstance(matches, list)
    cause = next(c for m in matches for c in m["causes"] if c["code"] == "DRV151")
    assert cause["verdict"] == "confirmed"
    return " ".join([cause["fix"]["summary"], *cause["fix"]["commands"]])


def test_dkms_status_names_the_package_to_reinstall(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log, dump = tmp_path / "smi.log", tmp_path / "dkms.txt"
    log.write_text(SMI)
    dump.write_text("nvidia/535.129.03, 5.15.0-91-generic, x86_64: installed\n")
    result = cli("triage", str(log), "--from", str(dump), "--json")
    assert result.returncode == 1, result.stderr
    text = _drv151_fix(result.json()["data"])
    assert "sudo apt install --reinstall nvidia-driver-535" in text
    assert "<branch>" not in text


def test_without_a_driver_stated_the_package_stays_a_placeholder(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "smi.log"
    log.write_text(SMI)
    result = cli("triage", str(log), "--no-probe", "--json")
    assert result.returncode == 1, result.stderr
    assert "nvidia-driver-<branch>" in _drv151_fix(result.json()["data"])
