"""`fix --apply` for real: a throwaway venv installing from the tests' local wheels."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from envcheck.model.finding import Action
from envcheck.model.plan import Plan, Step
from envcheck.plan.apply import apply_plan
from tests.conftest import cli_env, new_venv, run_cli
from tests.plan.conftest import LocalIndex

pytestmark = pytest.mark.slow


@pytest.fixture
def venv(tmp_path: Path, local_index: LocalIndex) -> Iterator[tuple[Path, dict[str, str]]]:
    """A venv holding numpy 2.1.3 and vllm 0.6.3 (numpy<2), with pip offline on the local wheels."""
    folder = tmp_path / "venv"
    python = new_venv(folder)
    env = cli_env(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(local_index.wheels),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
    )
    env.pop("PIP_CONSTRAINT", None)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "numpy==2.1.3",
            "vllm==0.6.3",
        ],
        check=True,
        env=env,
        timeout=300,
    )
    yield python, env


def _freeze(python: Path, env: dict[str, str]) -> str:
    return subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, env=env, check=True
    ).stdout


def _step(*packages: str, applicability: str = "safe", code: str = "PKG104") -> Step:
    return Step(Action(kind="pip_install", packages=packages), applicability, (code,), "test")  # type: ignore[arg-type]


def test_apply_runs_safe_steps_after_a_snapshot(
    venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    python, env = venv
    before = _freeze(python, env)
    plan = Plan(
        node="n",
        steps=(
            _step("numpy<2"),
            _step("nvidia-cublas-cu12==12.3.4.1", applicability="unsafe", code="CUD102"),
            Step(Action(kind="env", env={"A": "1"}), "safe", ("NET102",), "env"),
            Step(Action(kind="manual", text="upgrade the driver"), "manual", ("DRV101",), "driver"),
        ),
    )
    shown: list[str] = []
    snapshot = tmp_path / "freeze.txt"
    outcome = apply_plan(plan, str(python), snapshot=snapshot, echo=shown.append, env=env)
    assert snapshot.read_text(encoding="utf-8") == before
    assert [r.ok for r in outcome.ran] == [True]
    assert any(line.startswith(f"$ {python} -m pip install") for line in shown)
    assert "numpy==1.26.4" in _freeze(python, env)
    assert "nvidia-cublas" not in _freeze(python, env)  # unsafe: not run
    assert {why.split(":")[0] for _, why in outcome.not_run} == {
        "unsafe",
        "set it in the job's environment (a child process cannot)",
        "manual",
    }
    assert outcome.changes == ("~ numpy 2.1.3 -> 1.26.4",)
    assert outcome.rollback[-1].endswith(f"-m pip install --no-deps -r {snapshot}")
    # the snapshot is never overwritten without being asked
    from envcheck.errors import InputError

    with pytest.raises(InputError, match="exists"):
        apply_plan(plan, str(python), snapshot=snapshot, env=env)


def test_apply_stops_at_the_first_failure_and_reports_the_state(
    venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    python, env = venv
    plan = Plan(
        node="n",
        steps=(
            _step("nvidia-cublas-cu12==12.3.4.1", code="CUD102"),
            _step("numpy==9.9.9"),  # not in the index: fails
            _step("filelock==3.16.1", code="PKG101"),
        ),
    )
    outcome = apply_plan(plan, str(python), snapshot=tmp_path / "s.txt", env=env)
    assert [r.ok for r in outcome.ran] == [True, False]
    assert outcome.failed is not None and "numpy==9.9.9" in " ".join(outcome.failed.argv)
    assert "9.9.9" in outcome.failed.detail
    assert [why for _, why in outcome.not_run] == ["not run: an earlier step failed"]
    assert outcome.changes == ("+ nvidia-cublas-cu12 12.3.4.1 (added)",)
    assert outcome.rollback[0].endswith("-m pip uninstall -y nvidia-cublas-cu12")
    assert "filelock" not in _freeze(python, env)


def test_cli_fix_apply_on_another_interpreter(
    venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The probed venv has numpy 2 under vLLM 0.6.3 (numpy<2): PKG104; --apply runs the safe pin
    with that venv's pip, never this process's."""
    python, env = venv
    shown = run_cli("fix", "--python", str(python), env=env, cwd=tmp_path)
    assert shown.returncode == 1, shown.stderr
    assert "PKG104" in shown.stdout and "numpy<2" in shown.stdout
    assert _freeze(python, env).count("numpy==2.1.3") == 1  # printing changed nothing
    result = run_cli(
        "fix",
        "--python",
        str(python),
        "--apply",
        "--select",
        "PKG104",
        "--snapshot",
        "snap.txt",
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert f"$ {python} -m pip install 'numpy<2'" in result.stderr
    assert "numpy==2.1.3" in (tmp_path / "snap.txt").read_text(encoding="utf-8")
    assert "numpy==1.26.4" in _freeze(python, env)
    assert "to roll back" in result.stdout
    # it says what it runs, never "Nothing was changed"
    assert "Nothing was changed" not in result.stdout
    assert "Running now, after a `pip freeze` snapshot: step(s) 1" in result.stdout
    # a failing step (nothing to install from): exit 1, state and snapshot reported
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "numpy==2.1.3"],
        check=True,
        env=env,
    )
    (tmp_path / "empty").mkdir()
    failed = run_cli(
        "fix",
        "--no-resolve",  # the failing pip step itself is under test, not the resolver's verdict
        "--python",
        str(python),
        "--apply",
        "--select",
        "PKG104",
        "--snapshot",
        "snap2.txt",
        "--json",
        env={**env, "PIP_FIND_LINKS": str(tmp_path / "empty")},
        cwd=tmp_path,
    )
    assert failed.returncode == 1
    data = failed.json()
    assert data["status"] == "failed" and data["data"]["apply"]["failed"]["ok"] is False
    assert data["data"]["apply"]["changes"] == []
    assert "numpy==2.1.3" in (tmp_path / "snap2.txt").read_text(encoding="utf-8")


def test_rollback_restores_a_variant_build(local_index: LocalIndex, tmp_path: Path) -> None:
    """A torch that only the variant index serves (+cu128): the snapshot records that index,
    so the printed rollback puts the same build back."""
    folder = tmp_path / "venv"
    python = new_venv(folder)
    variant = local_index.server.url("whl/cu128")
    env = cli_env(
        PIP_INDEX_URL=local_index.url,
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
    )
    for var in ("PIP_CONSTRAINT", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        env.pop(var, None)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run(
        [*pip, "--extra-index-url", variant, "torch==2.11.0+cu128"],
        check=True,
        env=env,
        timeout=300,
    )
    plan = Plan(node="n", steps=(_step("torch==2.5.1", applicability="unsafe", code="TOR101"),))
    snapshot = tmp_path / "snap.txt"
    outcome = apply_plan(
        plan,
        str(python),
        snapshot=snapshot,
        include_unsafe=True,
        env=env,
        index_for=lambda label: variant if label == "cu128" else None,
    )
    assert "torch==2.5.1" in _freeze(python, env)
    assert f"--extra-index-url {variant}" in snapshot.read_text(encoding="utf-8")
    for command in outcome.rollback:
        subprocess.run(command, shell=True, check=True, env=env, timeout=300)
    assert "torch==2.11.0+cu128" in _freeze(python, env)


def test_a_locks_after_step_keeps_the_override(local_index: LocalIndex, tmp_path: Path) -> None:
    """A lock's own "after" step (`pip install ...`) makes pip re-resolve torch's pin: without
    the constraint the header adds, pip silently re-installs cuBLAS 12.1.3.1; with it, pip stops
    and the override stays."""
    from envcheck.model.plan import Stack, Target
    from envcheck.plan.emit.text import stack_header

    folder = tmp_path / "venv"
    python = new_venv(folder)
    env = cli_env(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(local_index.wheels),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.pop("PIP_CONSTRAINT", None)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "torch==2.4.0"], check=True, env=env, timeout=300)
    subprocess.run([*pip, "--no-deps", "nvidia-cublas-cu12==12.3.4.1"], check=True, env=env)
    stack = Stack(
        Target(python="3.11"),
        ("torch==2.4.0",),
        overrides=("nvidia-cublas-cu12==12.3.4.1",),
        manual=("pip install vllm==0.6.3",),
    )
    line = next(
        h.removeprefix("#   ") for h in stack_header(stack, command="t") if "vllm==0.6.3" in h
    )
    command = line.replace("pip install", f"{python} -m pip install", 1)
    kept = subprocess.run(
        ["bash", "-c", command], env=env, capture_output=True, text=True, check=False
    )
    assert kept.returncode == 1 and "ResolutionImpossible" in kept.stderr
    assert "nvidia-cublas-cu12==12.3.4.1" in _freeze(python, env)
    plain = subprocess.run(
        [*pip, "vllm==0.6.3"], env=env, capture_output=True, text=True, check=False
    )
    assert plain.returncode == 0
    assert "nvidia-cublas-cu12==12.1.3.1" in _freeze(python, env)  # what the constraint prevents
