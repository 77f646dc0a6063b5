"""Emitters write what their consumers parse: sh (bash -n), requirements (pip's syntax),
conda (YAML that conda reads), pylock (TOML); every step keeps its rule codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Action
from envcheck.model.plan import Plan, Stack, Step, Target
from envcheck.plan.emit.conda import lock_conda, plan_to_conda
from envcheck.plan.emit.pip import plan_to_sh
from envcheck.plan.emit.pylock import lock_pylock
from envcheck.plan.emit.requirements import lock_requirements, plan_to_requirements
from envcheck.plan.planner import build_plan
from envcheck.plan.resolve import Resolution
from envcheck.rules.base import Rule
from tests.plan.conftest import TINYZERO_SPEC

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HOSTILE = Plan(
    node="n",
    steps=(
        Step(
            Action(kind="pip_uninstall", packages=("flash-attn",)), "safe", ("TOR103",), "rebuild"
        ),
        Step(
            Action(
                kind="pip_install",
                packages=("torch==2.5.1",),
                index_url="https://user:tok@idx.example/whl/cu121",
            ),
            "unsafe",
            ("DRV101",),
            "move torch: it's 'quoted' # and hashed",
        ),
        Step(
            Action(
                kind="pip_install",
                packages=("flash-attn==2.7.4.post1", "ray[default]>=2.41"),
                flags=("--no-build-isolation",),
            ),
            "safe",
            ("TOR103", "RAY101"),
            "reinstall",
        ),
        Step(
            Action(kind="env", env={"LD_LIBRARY_PATH": "", "X": "a b'c: d #e"}),
            "safe",
            ("CUD104",),
            "env",
        ),
        Step(
            Action(kind="manual", text="upgrade the driver: >= 550.54.14 'now'"),
            "manual",
            ("DRV101",),
            "driver",
        ),
    ),
)


def test_sh_is_valid_and_unsafe_steps_are_commented_out(tmp_path: Path) -> None:
    script = tmp_path / "plan.sh"
    script.write_text(plan_to_sh(HOSTILE), encoding="utf-8")
    subprocess.run(["sh", "-n", str(script)], check=True)
    text = script.read_text(encoding="utf-8")
    assert '"$PYTHON" -m pip uninstall -y flash-attn' in text
    assert '\n# "$PYTHON" -m pip install torch==2.5.1' in text  # unsafe: commented
    assert '\n"$PYTHON" -m pip install torch==2.5.1' in plan_to_sh(HOSTILE, include_unsafe=True)
    assert "export X='a b'\"'\"'c: d #e'" in text


def test_requirements_lines_parse(tmp_path: Path) -> None:
    text = plan_to_requirements(HOSTILE)
    pins = [
        line.split("  #", 1)[0]
        for line in text.splitlines()
        if line and not line.startswith(("#", "--"))
    ]
    assert [Requirement(p).name for p in pins] == ["flash-attn", "ray"]
    assert "torch" not in "\n".join(pins)  # unsafe, excluded by default
    assert "tok" not in text  # credentials never written


def test_conda_file_is_yaml_conda_reads() -> None:
    text = plan_to_conda(HOSTILE, python="3.10.12", name="my node!", include_unsafe=True)
    data = yaml.safe_load(text)
    assert data["name"] == "my-node-"
    deps = data["dependencies"]
    assert deps[0] == "python=3.10" and "pip" in deps
    pip_section = next(d for d in deps if isinstance(d, dict))["pip"]
    assert pip_section[0] == "--extra-index-url https://***@idx.example/whl/cu121"
    assert "torch==2.5.1" in pip_section and "ray[default]>=2.41" in pip_section
    assert data["variables"] == {"LD_LIBRARY_PATH": "", "X": "a b'c: d #e"}
    assert "tok" not in text


def test_tinyzero_plan_in_every_format_names_cud102(matrix: Matrix, rules: Sequence[Rule]) -> None:
    report = spec_to_report(parse_spec(TINYZERO_SPEC, "tz.toml"), "tz.toml")
    plan, _ = build_plan(report, matrix, rules)
    for text in (
        plan_to_sh(plan),
        plan_to_requirements(plan),
        plan_to_conda(plan, python="3.10.12", name="tz"),
    ):
        assert "nvidia-cublas-cu12==12.3.4.1" in text
        assert "CUD102" in text


RESOLVED = """\
numpy==1.26.4 \\
    --hash=sha256:aaaa
    # via torch
nvidia-cublas-cu12==12.3.4.1 \\
    --hash=sha256:bbbb
torch==2.4.0 \\
    --hash=sha256:cccc \\
    --hash=sha256:dddd
"""
STACK = Stack(
    target=Target(python="3.10.12", driver="535.104.05", gpus=("NVIDIA H20",)),
    requirements=("torch==2.4.0",),
    overrides=("nvidia-cublas-cu12==12.3.4.1",),
    torch="2.4.0",
    torch_variant="cu121",
    torch_index_url="https://idx.example/whl/cu121",
    env={"OMNIGIBSON_HEADLESS": "1"},
    manual=("install flash-attn",),
)


def test_lock_requirements_keeps_hashes_and_reasons() -> None:
    text = lock_requirements(
        STACK, Resolution(RESOLVED, {}, "requirements"), resolver="uv pip compile"
    )
    assert text.index("--extra-index-url https://idx.example/whl/cu121") < text.index("numpy==")
    assert "--hash=sha256:dddd" in text and "--no-deps" in text
    assert "#   install flash-attn" in text


def test_lock_conda_moves_overrides_out_of_pip() -> None:
    text = lock_conda(STACK, Resolution(RESOLVED, {}, "requirements"), resolver="uv", name="tz")
    data = yaml.safe_load(text)
    pip_section = next(d for d in data["dependencies"] if isinstance(d, dict))["pip"]
    assert pip_section == [
        "--extra-index-url https://idx.example/whl/cu121",
        "numpy==1.26.4",
        "torch==2.4.0",
    ]
    assert "pip install --no-deps nvidia-cublas-cu12==12.3.4.1" in text
    assert data["variables"] == {"OMNIGIBSON_HEADLESS": "1"}


def test_lock_pylock_stays_toml() -> None:
    body = 'lock-version = "1.0"\ncreated-by = "uv"\n\n[[packages]]\nname = "torch"\nversion = "2.4.0"\n'
    text = lock_pylock(STACK, Resolution(body, {}, "pylock"), resolver="uv")
    assert tomllib.loads(text)["packages"][0]["name"] == "torch"


@pytest.mark.parametrize("name", ["", "-", "x" * 3])
def test_conda_name_is_never_empty(name: str) -> None:
    data = yaml.safe_load(plan_to_conda(Plan(node="n"), python=None, name=name))
    assert data["name"]
