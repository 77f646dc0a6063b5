"""docs/recipes.md's Slurm prolog, run as Slurm runs it: no PATH, root's bare environment, and a
second run with the same job id (a requeued job). A node with findings must stop the job
(exit 1) every time; a clean node lets it start."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

RULE = textwrap.dedent(
    """\
    [[known_bad]]
    code = "SITE001"
    id = "site-prolog-test"
    title = "a test rule for the prolog"
    severity = "error"
    message = "the test says this node is broken"
    symptom = "none"
    cause = "the test"
    source = "tests/product/test_recipes.py"
    [known_bad.when]
    {when}
    """
)


def prolog_text() -> str:
    recipes = (REPO / "docs" / "recipes.md").read_text(encoding="utf-8")
    section = recipes[recipes.index("## Slurm prolog") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1)


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    prolog = tmp_path / "50-envcheck.sh"
    prolog.write_text(prolog_text(), encoding="utf-8")
    wrapper = tmp_path / "envcheck"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m envcheck "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)
    work = tmp_path / "cwd"
    work.mkdir()
    (work / "envcheck.toml").write_text('select = ["SITE"]\n')
    return {"prolog": prolog, "wrapper": wrapper, "cwd": work, "logs": tmp_path / "logs"}


def run_prolog(
    setup: dict[str, Path], when: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "site.toml").write_text(RULE.format(when=when))
    env = {  # what slurmd gives a prolog: no PATH, no HOME, the job's ids
        "SLURM_JOB_ID": "4242",
        "SLURMD_NODENAME": "gpu-07",
        "ENVCHECK": str(setup["wrapper"]),
        "ENVCHECK_PY": sys.executable,
        "ENVCHECK_LOGDIR": str(setup["logs"]),
        "ENVCHECK_MATRIX": str(site),
    }
    return subprocess.run(
        ["/bin/bash", str(setup["prolog"])],
        env=env,
        cwd=setup["cwd"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_broken_node_stops_the_job_and_again_when_it_is_requeued(setup, tmp_path) -> None:
    broken = 'absent = ["no-such-dist-xyz"]'
    first = run_prolog(setup, broken, tmp_path)
    assert first.returncode == 1, first.stderr
    assert "envcheck: findings on gpu-07" in first.stderr
    report = setup["logs"] / "4242-gpu-07.json"
    assert '"SITE001"' in report.read_text()
    again = run_prolog(setup, broken, tmp_path)  # the same job id: the report exists
    assert again.returncode == 1, again.stderr


def test_a_clean_node_lets_the_job_start(setup, tmp_path) -> None:
    clean = 'packages = { "no-such-dist-xyz" = "" }'
    result = run_prolog(setup, clean, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert (setup["logs"] / "4242-gpu-07.json").is_file()


def test_the_kubernetes_init_container_runs_as_written(tmp_path: Path) -> None:
    import yaml  # type: ignore[import-untyped]

    recipes = (REPO / "docs" / "recipes.md").read_text(encoding="utf-8")
    section = recipes[recipes.index("## Kubernetes") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    init = yaml.safe_load(block.group(1))["spec"]["initContainers"][0]
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in init["env"]}
    assert env == {"NODE_NAME": "spec.nodeName"}
    # what the kubelet runs: $(NODE_NAME) expanded from the container's env, /reports mounted
    reports = tmp_path / "reports"
    reports.mkdir()
    argv = [
        a.replace("$(NODE_NAME)", "gpu-node-3").replace("/reports", str(reports))
        for a in init["command"]
    ]
    assert argv[0] == "envcheck"
    for _ in range(2):  # a restarted pod runs it again: --force keeps that working
        result = subprocess.run(
            [sys.executable, "-m", "envcheck", *argv[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode in (0, 1), result.stderr
    assert (reports / "gpu-node-3.json").is_file()
