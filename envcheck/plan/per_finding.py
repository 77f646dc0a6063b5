"""The planner's fix for each finding: what ``check`` and ``triage`` print beside a finding is
the step the ``fix`` planner emits for it, so one node has one fix.

A rule's own fix answers its finding alone (TOR101: the closest torch build with the GPU's
arch; VLM101: vLLM's pinned torch; TOR104: the companion built for the installed torch); the
planner merges them into one torch for the node, keeps the companions built for that torch,
and drops what another step makes moot. A finding the plan answers gets the plan's steps that
name its code; one it does not (a conflict naming its code, or steps that do not install what
its fix installs) keeps the rule's fix, and ``fix`` shows the conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from packaging.utils import canonicalize_name

from envcheck.matrix.model import Matrix
from envcheck.model.finding import Action, Applicability, CheckResult, Finding, Fix, Severity
from envcheck.model.plan import Step
from envcheck.model.report import NodeReport
from envcheck.plan.simulate import parse_requirement
from envcheck.rules.base import Rule

_RANK: dict[Applicability, int] = {"safe": 0, "unsafe": 1, "manual": 2}
_PIP = ("pip_install", "pip_uninstall")


def _installs(finding: Finding) -> bool:
    return finding.fix is not None and any(a.kind in _PIP for a in finding.fix.actions)


def _planned(finding: Finding) -> bool:
    """A fix the planner may word differently: package steps, or a manual one that another
    finding's may meet (one driver for every finding that needs a newer one)."""
    return finding.fix is not None and any(a.kind != "env" for a in finding.fix.actions)


def _kinds(steps: Sequence[Step]) -> set[str]:
    return {s.action.kind for s in steps}


def _kinds_of(finding: Finding) -> set[str]:
    actions = finding.fix.actions if finding.fix is not None else ()
    return {a.kind for a in actions}


def _pins(actions: Sequence[Action]) -> dict[str, str]:
    out: dict[str, str] = {}
    for action in actions:
        if action.kind == "pip_install":
            for text in action.packages:
                req = parse_requirement(text)
                if req is not None:
                    out[canonicalize_name(req.name)] = str(req.specifier)
    return out


def _same_pins(fix: Fix | None, steps: Sequence[Step]) -> bool:
    """The plan installs what the rule asked for, at the versions it asked for."""
    if fix is None:
        return False
    asked, planned = _pins(fix.actions), _pins([s.action for s in steps])
    return bool(asked) and all(planned.get(k) == v for k, v in asked.items())


def planned_fixes(
    report: NodeReport,
    matrix: Matrix,
    rules: Sequence[Rule],
    findings: Sequence[Finding],
    evaluated: CheckResult | None = None,
) -> tuple[Finding, ...]:
    """``findings`` with each package fix replaced by the planner's steps for its code (no
    resolver here: ``fix`` verifies with uv; the steps are the same). ``evaluated``: the
    rules' result on ``report`` when the caller has it (the planner does not run them again)."""
    if not any(_installs(f) for f in findings) and sum(map(_planned, findings)) < 2:
        return tuple(findings)
    from envcheck.plan.planner import build_plan, interpreter

    plan, _after = build_plan(report, matrix, rules, threshold=Severity.INFO, first=evaluated)
    python = interpreter(report)
    out = []
    for given in findings:
        finding = given
        if python is not None and given.fix is not None and _installs(given):
            # a rule's own command names the interpreter checked, as the plan's do
            actions = tuple(
                replace(a, python=python) if a.kind in _PIP else a for a in given.fix.actions
            )
            finding = replace(given, fix=replace(given.fix, actions=actions))
        steps = [s for s in plan.steps if finding.code in s.codes]
        torn = any(finding.code in c.codes for c in plan.conflicts)
        if not _planned(finding) or torn or not steps or not _kinds(steps) >= _kinds_of(finding):
            out.append(finding)
            continue
        applicability = max((s.applicability for s in steps), key=lambda a: _RANK[a])
        summary = "; ".join(dict.fromkeys(s.reason for s in steps))
        if finding.fix is not None and _same_pins(finding.fix, steps):
            summary = finding.fix.summary  # the rule's words still describe what is installed
        fix = Fix(summary, applicability, tuple(s.action for s in steps))
        out.append(replace(finding, fix=fix))
    return tuple(out)
