"""The loop that frees what uv's explanation names is bounded: each attempt frees something
new, a repeated explanation is a conflict at once, and giving up after MAX_ATTEMPTS runs is a
one-line "not verified" reason naming what was freed and uv's last explanation. uv is faked
at the edge: a script that answers ``uv lock`` as uv does when there is no solution."""

from __future__ import annotations

import json
import stat
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix_validate import load
from envcheck.model.finding import Action
from envcheck.model.plan import Step
from envcheck.model.report import NodeReport
from envcheck.plan.resolve import IndexConfig
from envcheck.plan.resolved import (
    MAX_ATTEMPTS,
    NotResolved,
    PlanResolver,
    ResolutionConflict,
    resolve_plan,
)

DEPS = [f"dep-{c}" for c in "abcdefghijkl"]  # more than MAX_ATTEMPTS installed dependencies

# uv's own wording (uv 0.13, `uv lock` with no solution); NAME is the first constraint left
FAKE_UV = """#!{python}
import re, sys
from pathlib import Path
args = sys.argv[1:]
project = Path(args[args.index("--directory") + 1])
text = (project / "pyproject.toml").read_text()
found = re.search(r"constraint-dependencies = \\[\\"([a-z-]+)==", text)
name = found.group(1) if found and {vary} else "dep-a"
sys.stderr.buffer.write((
    "  \\u00d7 No solution found when resolving dependencies for split (markers: x):\\n"
    f"  \\u2570\\u2500\\u25b6 Because {{name}}==1.0 depends on numpy==9.9 and your project depends on"
    f" numpy==1.26.4, we can conclude that your project and {{name}}==1.0 are incompatible.\\n"
    "      hint: While the active Python version is 3.11, the resolution failed for other"
    " Python versions supported by your project.\\n"
).encode("utf-8"))
sys.exit(1)
"""


def _uv(tmp_path: Path, *, vary: bool) -> str:
    script = tmp_path / ("uv-vary" if vary else "uv-same")
    script.write_text(FAKE_UV.format(python=sys.executable, vary=vary), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _node(gpu: str = "", stack: str = "") -> NodeReport:
    packages = "\n".join(f'"{d}" = "1.0"' for d in ["app", *DEPS])
    text = f'{gpu}[python]\nversion = "3.10.12"\n[packages]\nnumpy = "2.1.3"\n{stack}{packages}\n'
    report = spec_to_report(parse_spec(text, "node.toml"), "node.toml")
    data = report.packages.data
    assert data is not None
    # app requires every dep-*: they are dependencies (constraints), app is top-level
    dists = tuple(
        replace(d, requires=tuple(f"{x}==1.0" for x in DEPS)) if d.key == "app" else d
        for d in data.distributions
    )
    return report.with_sections(
        packages=replace(report.packages, data=replace(data, distributions=dists))
    )


STEPS = [Step(Action(kind="pip_install", packages=("numpy==1.26.4",)), "safe", ("PKG101",), "pin")]


def _resolver(uv: str) -> PlanResolver:
    return PlanResolver(uv, IndexConfig(index_url="http://127.0.0.1:9/simple"), load(), timeout=30)


def test_the_loop_gives_up_after_max_attempts_with_one_clear_line(tmp_path: Path) -> None:
    resolver = _resolver(_uv(tmp_path, vary=True))
    with pytest.raises(NotResolved) as caught:
        resolve_plan(_node(), STEPS, resolver)
    message = str(caught.value)
    assert resolver.runs == MAX_ATTEMPTS
    assert "\n" not in message
    assert message.startswith(f"uv found no resolution in {MAX_ATTEMPTS} attempts")
    # the eight dependencies it freed, one per attempt, in order
    assert "freed dep-a, dep-b, dep-c, dep-d, dep-e, dep-f, dep-g, dep-h)" in message
    last = message.split("; the last: ", 1)[1]
    assert "Because dep-h==1.0 depends on numpy==9.9" in last
    assert "hint" not in message and len(message) < 600


def test_an_explanation_naming_nothing_new_is_a_conflict_at_once(tmp_path: Path) -> None:
    """uv names dep-a again after it was freed: nothing is left to free, so the plan's own pin
    is let go (one more attempt: uv may pick a numpy the rest allows); uv still finds nothing,
    so it ends in a conflict naming both sides instead of running uv again."""
    resolver = _resolver(_uv(tmp_path, vary=False))
    with pytest.raises(ResolutionConflict) as caught:
        resolve_plan(_node(), STEPS, resolver)
    assert resolver.runs == 3
    conflict = caught.value.conflict
    assert conflict.wanted == ("plan: numpy==1.26.4 (PKG101)", "installed: dep-a==1.0")
    assert conflict.message.startswith(
        "the plan's numpy==1.26.4 (PKG101) cannot be installed with the installed dep-a==1.0: "
        "Because dep-a==1.0 depends on numpy==9.9"
    )


def test_the_fix_command_says_why_the_plan_was_not_verified(tmp_path: Path) -> None:
    """The same node saved as a report: `envcheck fix` prints the plan, marked not verified,
    with the resolver's reason on one line (exit 1: a plan)."""
    from tests.conftest import cli_env, run_cli

    saved = tmp_path / "node.json"
    # vLLM 0.6.3 pins torch 2.4.0 (VLM101): the plan installs torch==2.4.0
    node = _node(
        '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA H100 80GB HBM3"]\n',
        'vllm = "0.6.3"\ntorch = "2.5.1"\n',
    )
    saved.write_text(json.dumps(node.to_dict()), encoding="utf-8")
    args = ["fix", "--report", str(saved), "--index-url", "http://127.0.0.1:9/simple"]
    env = cli_env(ENVCHECK_UV=_uv(tmp_path, vary=True))
    result = run_cli(*args, "--json", env=env)
    plan = result.json()["data"]["plan"]
    assert result.returncode == 1
    assert plan["resolved"] is False and plan["steps"]
    assert plan["resolver"].startswith(
        f"not verified by the resolver: uv found no resolution in {MAX_ATTEMPTS} attempts"
    )
    text = run_cli(*args, env=env)
    assert text.returncode == 1 and "Traceback" not in text.stderr
    assert "uv found no resolution in 8 attempts" in " ".join(text.stdout.split())
