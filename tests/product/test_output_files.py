"""One rule for -o FILE (checked before any work; no overwrite without --force; a directory is
refused) and per-node names expanded by envcheck itself (%N, {hostname}, %j, %t), since srun
expands them only in its own --output."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from envcheck.cli.output import expand
from envcheck.errors import UsageError
from tests.conftest import cli_env, run_cli
from tests.specs import TINYZERO

HOST = socket.gethostname().split(".", 1)[0]
SLURM = {"SLURMD_NODENAME": "gpu-07", "SLURM_JOB_ID": "4242", "SLURM_PROCID": "3"}


@pytest.mark.parametrize(
    ("pattern", "env", "expected"),
    [
        ("reports/%N.json", SLURM, "reports/gpu-07.json"),
        ("reports/{hostname}.json", SLURM, "reports/gpu-07.json"),
        ("r/%j/%N-%t.json", SLURM, "r/4242/gpu-07-3.json"),
        ("r/{jobid}-{rank}.json", {"SLURM_JOB_ID": "7", "RANK": "0"}, "r/7-0.json"),
        ("r/100%%.json", {}, "r/100%.json"),
        ("r/%N.json", {}, f"r/{HOST}.json"),
        ("plain.json", {}, "plain.json"),
    ],
)
def test_patterns(pattern: str, env: dict[str, str], expected: str) -> None:
    assert expand(pattern, env) == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("r/%x.json", "unknown pattern '%x'"),
        ("r/{user}.json", "unknown pattern '{user}'"),
        ("r/%j.json", "%j needs $SLURM_JOB_ID, which is not set"),
    ],
)
def test_bad_patterns_are_usage_errors(pattern: str, message: str) -> None:
    with pytest.raises(UsageError, match="-o r/"):
        expand(pattern, {})
    with pytest.raises(UsageError) as caught:
        expand(pattern, {})
    assert message in str(caught.value)


def test_srun_style_probe_writes_one_file_per_node(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    env = cli_env(SLURMD_NODENAME="gpu-07")
    result = run_cli("probe", "-o", str(reports / "%N.json"), env=env)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in reports.iterdir()] == ["gpu-07.json"]
    assert json.loads((reports / "gpu-07.json").read_text())["node"]
    assert f"wrote {reports / 'gpu-07.json'}" in result.stderr


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(TINYZERO, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--spec", "SPEC"],
        ["probe"],
        ["triage", "LOG", "--no-probe"],
        ["diff", "REPORT"],
    ],
)
def test_an_existing_file_is_kept_without_force(tmp_path: Path, spec: Path, command) -> None:
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: CUDA error: no kernel image is available\n")
    report = tmp_path / "saved.json"
    report.write_text(run_cli("probe", "--json").stdout)
    argv = [{"SPEC": str(spec), "LOG": str(log), "REPORT": str(report)}.get(a, a) for a in command]
    out = tmp_path / "out.json"
    out.write_text("keep me")
    refused = run_cli(*argv, "-o", str(out))
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"envcheck: error: {out}: file exists (use --force to overwrite)"
    )
    assert refused.stdout == ""  # refused before any work
    assert out.read_text() == "keep me"
    forced = run_cli(*argv, "-o", str(out), "--force")
    assert forced.returncode in (0, 1), forced.stderr
    assert json.loads(out.read_text())


@pytest.mark.parametrize("command", [["check", "--spec", "SPEC"], ["probe"]])
def test_a_directory_or_missing_parent_is_refused_up_front(
    tmp_path: Path, spec: Path, command
) -> None:
    argv = [str(spec) if a == "SPEC" else a for a in command]
    as_dir = run_cli(*argv, "-o", str(tmp_path))
    assert as_dir.returncode == 2 and as_dir.stdout == ""
    assert f"{tmp_path}: is a directory" in as_dir.stderr
    missing = run_cli(*argv, "-o", str(tmp_path / "nope" / "x.json"))
    assert missing.returncode == 2 and "directory" in missing.stderr
    assert "does not exist" in missing.stderr


def test_diff_warns_on_one_node_and_on_duplicate_names(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    saved = run_cli("probe", "--json").stdout
    (reports / "%N.json").write_text(saved)  # what srun left when envcheck did not expand %N
    one = run_cli("diff", str(reports))
    assert "envcheck: warning: only one node's report" in one.stderr
    assert "written with an unexpanded pattern" in one.stderr
    (reports / "copy.json").write_text(saved)
    two = run_cli("diff", str(reports), "--json")
    node = json.loads(saved)["node"]
    warning = f"2 reports name the same node {node} (%N.json, copy.json)"
    assert f"envcheck: warning: {warning}" in two.stderr
    assert any(w.startswith(warning) for w in two.json()["data"]["warnings"])


def test_diff_help_shows_the_pattern_as_typed() -> None:
    help_text = run_cli("diff", "--help").stdout
    assert "reports/%N.json" in " ".join(help_text.split())
    assert "%%N" not in help_text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["check", "--spec", "SPEC", "--python", "PY"],
            "--spec describes another node; --python inspects an interpreter on this one",
        ),
        (
            ["lock", "--profile", "verl", "--gpu", "H100", "--no-index", "--index-url", "URL"],
            "--no-index and --index-url contradict each other",
        ),
        (
            ["lock", "--profile", "verl", "--no-index", "--extra-index-url", "URL"],
            "--no-index and --extra-index-url contradict each other",
        ),
    ],
)
def test_contradicting_options_are_refused(spec: Path, argv, message) -> None:
    import sys

    filled = [
        {"SPEC": str(spec), "PY": sys.executable, "URL": "http://127.0.0.1:9/simple"}.get(a, a)
        for a in argv
    ]
    result = run_cli(*filled)
    assert result.returncode == 2
    assert message in result.stderr and result.stdout == ""
