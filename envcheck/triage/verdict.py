"""A signature's candidate causes checked against a node: each cause is a rule, and running it
on the node's report confirms the cause (it fires), rules it out (it runs clean) or leaves it
unknown (it was skipped for a missing fact, whose reason is kept)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from envcheck.matrix.model import Matrix
from envcheck.model.finding import Finding
from envcheck.model.report import NodeReport
from envcheck.rules.base import Rule

Verdict = Literal["confirmed", "ruled_out", "unknown", "unchecked"]


@dataclass(frozen=True)
class CauseCheck:
    code: str
    title: str
    verdict: Verdict
    reason: str | None = None  # why unknown / unchecked
    findings: tuple[Finding, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "title": self.title,
            "verdict": self.verdict,
            "reason": self.reason,
            "findings": [f.to_json() for f in self.findings],
        }


def check_causes(
    codes: Iterable[str],
    rules: Sequence[Rule],
    matrix: Matrix,
    report: NodeReport | None,
    unchecked_reason: str,
) -> dict[str, CauseCheck]:
    """One CauseCheck per rule code; without a report every cause is 'unchecked'."""
    from envcheck.engine import evaluate

    by_code = {r.code: r for r in rules}
    wanted = [by_code[c] for c in dict.fromkeys(codes) if c in by_code]
    if report is None:
        return {r.code: CauseCheck(r.code, r.title, "unchecked", unchecked_reason) for r in wanted}
    # a cluster rule compares nodes: one node's facts neither confirm nor rule it out
    across = "it compares nodes: run `envcheck cluster` (or `envcheck diff` on saved reports)"
    cluster = {
        r.code: CauseCheck(r.code, r.title, "unknown", across) for r in wanted if r.scope != "node"
    }
    wanted = [r for r in wanted if r.scope == "node"]
    result = evaluate(report, matrix, wanted)
    skipped = {s.code: s.reason for s in result.skipped}
    failed = {e.split(" ", 1)[0]: e for e in result.errors}
    out: dict[str, CauseCheck] = dict(cluster)
    for rule in wanted:
        findings = tuple(f for f in result.findings if f.code == rule.code)
        if findings:
            out[rule.code] = CauseCheck(rule.code, rule.title, "confirmed", None, findings)
        elif rule.code in skipped:
            out[rule.code] = CauseCheck(rule.code, rule.title, "unknown", skipped[rule.code])
        elif rule.code in failed:
            out[rule.code] = CauseCheck(rule.code, rule.title, "unknown", failed[rule.code])
        else:
            out[rule.code] = CauseCheck(rule.code, rule.title, "ruled_out")
    return out
