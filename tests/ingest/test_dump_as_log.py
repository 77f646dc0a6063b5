"""A `--from` text in none of the environment formats that holds lines triage's signatures
know (a docker or NVML error, a JAX/TensorFlow start-up failure, an Xid) is read as triage
reads a log, not refused: its facts (when the lines state any) become the node's, and the
report's origin names the lines and `envcheck triage`. Text that no signature knows is refused
as before (tests/cli/test_from_cli.py)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

DOCKER = (
    "$ docker run --rm --gpus all nvidia/cuda:11.8.0-base-ubuntu22.04 nvidia-smi\n"
    'docker: Error response from daemon: could not select device driver "" with '
    "capabilities: [[gpu]].\n"
)
NVRM_XID = (
    "[Mon Oct  2 10:00:00 2023] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off "
    "the bus.\n"
)
DRIVER_TOO_OLD_CONTAINER = (
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update "
    "your driver to a newer version, or use an earlier cuda container: unknown\n"
)


def _check(tmp_path: Path, text: str) -> dict[str, object]:
    dump = tmp_path / "dump.txt"
    dump.write_text(text)
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode in (0, 1), result.stderr
    report = result.json()["data"]["reports"][0]
    assert isinstance(report, dict)
    return report


def test_a_docker_error_pasted_as_the_environment_is_read_as_a_log(tmp_path: Path) -> None:
    report = _check(tmp_path, DOCKER)
    detail = report["origin"]["detail"]  # type: ignore[index]
    assert "line 2 (docker-no-gpu-runtime)" in detail
    assert "envcheck triage" in detail


def test_a_kernel_xid_line_alone_is_read_as_a_log(tmp_path: Path) -> None:
    report = _check(tmp_path, NVRM_XID)
    assert "nvrm-xid" in report["origin"]["detail"]  # type: ignore[index]


def test_the_facts_the_lines_state_become_the_node(tmp_path: Path) -> None:
    report = _check(tmp_path, "NVIDIA-SMI 470.82.01    Driver Version: 470.82.01\n" + DOCKER)
    gpu = report["gpu"]["data"]  # type: ignore[index]
    assert gpu is not None and gpu["driver_version"] == "470.82.01"


def test_triage_reads_the_log_with_a_dump_that_is_log_lines(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(DRIVER_TOO_OLD_CONTAINER)
    dump = tmp_path / "dump.txt"
    dump.write_text(DOCKER)
    result = run_cli("triage", str(log), "--from", str(dump), "--json")
    assert result.returncode in (0, 1), result.stderr
    data = result.json()["data"]
    assert "docker-no-gpu-runtime" in data["node_source"]
    verdicts = {c["code"]: c["verdict"] for m in data["matches"] for c in m["causes"]}
    assert verdicts.get("DRV101") == "confirmed"


def test_text_no_signature_knows_is_still_refused(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text("I ran the container and it did not work, please help\n")
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 2
    assert "format not recognised" in result.stderr
