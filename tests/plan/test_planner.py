"""Plans: every step traces to a finding, pins merge or conflict, and the plan reaches a fixed
point when applied to a copy of the report."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from envcheck.engine import evaluate
from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Action, Finding, Fix, Severity
from envcheck.model.report import NodeReport
from envcheck.plan.planner import build_plan, merge
from envcheck.plan.simulate import changes_something
from envcheck.rules.base import Rule
from tests.plan.conftest import TINYZERO_SPEC


def _report(text: str) -> NodeReport:
    return spec_to_report(parse_spec(text, "node.toml"), "node.toml")


def _fixable(report: NodeReport, matrix: Matrix, rules: Sequence[Rule]) -> list[Finding]:
    """Findings whose fix would still change something: what `check` must be clean of."""
    result = evaluate(report, matrix, rules)
    return [
        f
        for f in result.findings
        if f.fix is not None and any(changes_something(a, report, matrix) for a in f.fix.actions)
    ]


def test_tinyzero_plan_is_the_cublas_fix_and_nothing_unrelated(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    report = _report(TINYZERO_SPEC)
    findings = evaluate(report, matrix, rules).findings
    plan, after = build_plan(report, matrix, rules)
    installs = [s for s in plan.steps if s.action.kind == "pip_install"]
    assert [s.action.packages for s in installs] == [("nvidia-cublas-cu12==12.3.4.1",)]
    assert installs[0].codes == ("CUD102",)
    assert installs[0].applicability == "safe"
    # every step answers a finding the check reported; nothing else is in the plan
    found = {f.code for f in findings}
    for step in plan.steps:
        assert step.codes and set(step.codes) <= found
    assert not plan.conflicts and plan.converged
    # after applying the plan to the report, nothing fixable is left
    assert _fixable(after, matrix, rules) == []
    assert after.packages.data is not None
    assert after.packages.data.version("nvidia-cublas-cu12") == "12.3.4.1"
    assert after.env.data is not None
    assert after.env.data.variables["GLOO_SOCKET_IFNAME"] == "eth0"
    # what remains needs a person: /dev/shm, the full disk
    assert {"SYS101", "RAY103"} <= {f.code for f in plan.remaining}
    assert "CUD102" not in {f.code for f in plan.remaining}


def test_clean_node_gets_an_empty_plan(matrix: Matrix, rules: Sequence[Rule]) -> None:
    report = _report(
        '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA H100 80GB HBM3"]\n'
        '[python]\nversion = "3.11.9"\n[packages]\ntorch = "2.5.1"\n'
    )
    plan, _ = build_plan(report, matrix, rules)
    assert plan.steps == () and plan.conflicts == ()


def test_torch_move_rechecks_vllm_pin_and_reports_the_conflict(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    """RTX 5090 on torch 2.6.0+cu124: TOR101 asks for a build with sm_120, but vLLM 0.8.0 pins
    torch==2.6.0, built for CUDA 12.4, which has none: the torch chooser names that conflict
    with both sides (it used to surface only after a simulated move re-checked VLM101), and no
    torch pin is emitted."""
    report = _report(
        '[gpu]\ndriver = "570.86.15"\nmodels = ["NVIDIA GeForce RTX 5090"]\n'
        '[python]\nversion = "3.11.9"\n'
        '[packages]\ntorch = "2.6.0+cu124"\nvllm = "0.8.0"\n'
    )
    first = {f.code for f in evaluate(report, matrix, rules).findings}
    assert "TOR101" in first and "VLM101" not in first
    plan, _ = build_plan(report, matrix, rules)
    conflict = next(c for c in plan.conflicts if c.subject == "torch")
    assert "TOR101" in conflict.codes
    assert set(conflict.wanted) == {"vllm==0.8.0", "torch==2.6.0"}
    assert "no kernels for NVIDIA GeForce RTX 5090 (sm_120)" in conflict.message
    assert not [p for s in plan.steps for p in s.action.packages if p.startswith("torch")]


def test_torch_move_clears_the_driver_finding(matrix: Matrix, rules: Sequence[Rule]) -> None:
    """Driver 520 (CUDA <= 11.8) with torch 2.4.0+cu121: DRV101's fix moves to cu118 (unsafe);
    the re-check of the moved build finds the driver runs it, and its arch list covers the A100."""
    report = _report(
        '[gpu]\ndriver = "520.61.05"\nmodels = ["NVIDIA A100-SXM4-80GB"]\n'
        '[python]\nversion = "3.10.12"\n[packages]\ntorch = "2.4.0+cu121"\n'
    )
    plan, after = build_plan(report, matrix, rules)
    step = next(s for s in plan.steps if s.action.kind == "pip_install")
    assert step.codes == ("DRV101",) and step.applicability == "unsafe"
    assert step.action.index_url is not None and step.action.index_url.endswith("/cu118")
    assert after.torch.data is not None and after.torch.data.variant == "cu118"
    codes = {f.code for f in evaluate(after, matrix, rules).findings}
    assert not codes & {"DRV101", "TOR101"}


def _finding(code: str, *actions: Action, applicability: str = "safe") -> Finding:
    return Finding(
        code=code,
        severity=Severity.ERROR,
        title=code,
        message=f"{code} message",
        node="n",
        fix=Fix(summary=f"{code} fix", applicability=applicability, actions=actions),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("a", "b", "merged", "conflict"),
    [
        ("numpy==1.26.4", "numpy<2", "numpy==1.26.4", False),
        ("numpy<2", "numpy>=1.20", "numpy<2,>=1.20", False),
        ("torch==2.4.0", "torch==2.5.1", None, True),
        ("numpy>=2", "numpy<2", None, True),
        (
            "nvidia-cublas-cu12==12.3.4.1",
            "nvidia-cublas-cu12==12.3.4.1",
            "nvidia-cublas-cu12==12.3.4.1",
            False,
        ),
    ],
)
def test_pins_merge_or_conflict(a: str, b: str, merged: str | None, conflict: bool) -> None:
    steps, conflicts = merge(
        [
            _finding("AAA101", Action(kind="pip_install", packages=(a,))),
            _finding("BBB101", Action(kind="pip_install", packages=(b,))),
        ]
    )
    if conflict:
        assert len(conflicts) == 1 and set(conflicts[0].codes) == {"AAA101", "BBB101"}
        assert not steps
    else:
        assert not conflicts
        from packaging.requirements import Requirement

        assert [Requirement(p) for p in steps[0].action.packages] == [Requirement(merged or "")]
        assert steps[0].codes == ("AAA101", "BBB101")


def test_different_indexes_and_env_values_conflict() -> None:
    _, conflicts = merge(
        [
            _finding(
                "AAA101",
                Action(kind="pip_install", packages=("torch==2.4.0",), index_url="https://x/cu121"),
            ),
            _finding(
                "BBB101",
                Action(kind="pip_install", packages=("torch==2.4.0",), index_url="https://x/cu118"),
            ),
            _finding("CCC101", Action(kind="env", env={"GLOO_SOCKET_IFNAME": "eth0"})),
            _finding("DDD101", Action(kind="env", env={"GLOO_SOCKET_IFNAME": "ib0"})),
        ]
    )
    assert {c.subject for c in conflicts} == {"torch", "GLOO_SOCKET_IFNAME"}


def test_steps_are_ordered_uninstall_index_install_env_manual() -> None:
    steps, _ = merge(
        [
            _finding(
                "MMM101", Action(kind="manual", text="upgrade the driver"), applicability="manual"
            ),
            _finding("EEE101", Action(kind="env", env={"A": "1"})),
            _finding("PPP101", Action(kind="pip_install", packages=("numpy<2",))),
            _finding(
                "TTT101",
                Action(kind="pip_install", packages=("torch==2.4.0",), index_url="https://x/cu121"),
                applicability="unsafe",
            ),
            _finding("UUU101", Action(kind="pip_uninstall", packages=("flash-attn",))),
        ]
    )
    kinds = [(s.action.kind, s.action.index_url is not None) for s in steps]
    assert kinds == [
        ("pip_uninstall", False),
        ("pip_install", True),
        ("pip_install", False),
        ("env", False),
        ("manual", False),
    ]
    assert steps[1].applicability == "unsafe"
