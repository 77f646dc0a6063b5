"""``triage`` reads what the environment it was given shows (triage/environment.py): the node
rules on the facts an environment pasted in the log, ``--from`` or ``--spec`` states, as one
more match (``environment-shows``) after the log's own; never this machine probed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult
from tests.triage.from_log import log_file

# nvidia-smi as users paste it when a GPU's memory stays full after a job (a zombie holder)
SMI_FULL = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |                  N/A |
| 30%   45C    P2    70W / 350W |  23800MiB / 24576MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|=============================================================================|
|  No running processes found                                                 |
+-----------------------------------------------------------------------------+
"""

# a declared node: torch built for CUDA 12.1 on a 470 driver (CUDA 11.4): DRV101
OLD_DRIVER_SPEC = """\
[gpu]
driver = "470.182.03"
cuda = "11.4"
models = ["NVIDIA A100-SXM4-80GB"]

[packages]
torch = "2.3.1+cu121"
"""


def _triage(cli: Callable[..., CliResult], *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("triage", *args, "--json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, result.json()["data"]


def _environment(data: dict[str, Any]) -> dict[str, Any] | None:
    return next((m for m in data["matches"] if m["id"] == "environment-shows"), None)


def test_a_pasted_nvidia_smi_screen_shows_its_orphaned_memory(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"
    log.write_text("the GPU is busy before my job starts:\n" + SMI_FULL)
    code, data = _triage(cli, str(log), "--no-probe")
    shown = _environment(data)
    assert code == 0 and shown is not None  # a warning: reported, the triage does not fail
    assert data["summary"]["environment"] == len(shown["causes"])
    assert shown["count"] == 0 and shown["first"]["line"] == 0
    (cause,) = [c for c in shown["causes"] if c["code"] == "SYS191"]
    assert cause["verdict"] == "confirmed"
    assert "23800 MiB" in cause["findings"][0]["message"]
    assert not any(c["code"].startswith("COV") for c in shown["causes"])  # envcheck's own gap


def test_a_log_without_a_known_failure_reads_the_given_spec(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(OLD_DRIVER_SPEC)
    log = log_file(tmp_path, "Epoch 1/10", "Traceback (most recent call last):", "  ...")
    code, data = _triage(cli, str(log), "--spec", str(spec))
    shown = _environment(data)
    assert code == 1 and shown is not None
    drv101 = next(c for c in shown["causes"] if c["code"] == "DRV101")
    assert drv101["verdict"] == "confirmed" and drv101["findings"]
    assert "No line of the log is a failure envcheck knows" in shown["meaning"]


def test_beside_a_failure_line_it_names_only_what_no_line_named(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(OLD_DRIVER_SPEC)
    log = log_file(
        tmp_path,
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
    )
    code, data = _triage(cli, str(log), "--spec", str(spec))
    assert code == 1
    named = [
        c["code"] for m in data["matches"] if m["id"] != "environment-shows" for c in m["causes"]
    ]
    assert "DRV101" in named
    shown = _environment(data)
    assert shown is None or "DRV101" not in [c["code"] for c in shown["causes"]]
    assert shown is None or shown["meaning"].startswith("Besides what the log's lines name")


def test_a_clean_environment_adds_nothing(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[gpu]\ndriver = "550.54.15"\ncuda = "12.4"\n\n[packages]\ntorch = "2.5.1+cu124"\n'
    )
    log = log_file(tmp_path, "Epoch 1/10 loss=0.31", "Epoch 2/10 loss=0.29")
    code, data = _triage(cli, str(log), "--spec", str(spec))
    assert code == 0 and _environment(data) is None


def test_this_machine_probed_is_not_read(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """No input describes a node and the log names no failure: triage probes nothing and reads
    nothing of this machine (it need not be the node the log came from)."""
    log = log_file(tmp_path, "Epoch 1/10 loss=0.31")
    code, data = _triage(cli, str(log))
    assert code == 0 and _environment(data) is None and data["node"] is None


def test_the_terminal_view_names_the_environment(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"
    log.write_text(SMI_FULL)
    result = cli("triage", str(log), "--no-probe")
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "environment environment-shows" in out and "SYS191 CONFIRMED" in out
    assert "Traceback" not in result.stderr
