"""Evaluate rules against a report. Pure: the report and the matrix are all it reads."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.finding import CheckResult, Finding, Skipped
from envcheck.model.report import DEEP_NOT_RUN, NodeReport
from envcheck.rules.base import Rule, family_of


@functools.cache
def _gpu_family(code: str) -> bool:
    return family_of(code) == "GPU"  # Rule.family, once per code


def not_asked(report: NodeReport, rule: Rule) -> bool:
    """A rule the node was not asked to answer: without --deep the GPU family has nothing to
    read, so it is neither run nor counted as skipped (it would crowd every summary line),
    unless a log stated a CUDA error (``triage``: GPU101 reads a logged 802) or a pasted
    nvidia-smi output states NVML's failure (GPU102 reads 'Driver/library version mismatch')."""
    if not _gpu_family(rule.code) or report.deep.is_ok or report.deep.reason != DEEP_NOT_RUN:
        return False
    said = [report.gpu.reason or ""] if not report.gpu.is_ok else list(report.gpu.notes)
    if any("nvidia-smi failed: " in text for text in said):
        return False
    gpu = report.gpu.data if report.gpu.is_ok else None
    return gpu is None or not gpu.cuda_errors


def evaluate(report: NodeReport, matrix: Matrix, rules: Sequence[Rule]) -> CheckResult:
    facts = Facts(report, matrix)
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    errors: list[str] = []
    for rule in rules:
        if rule.scope != "node":
            continue  # cluster rules compare nodes: cluster/diff.py runs them
        if not_asked(report, rule):
            continue
        try:
            hits = list(rule.check(facts))
        except Skip as skip:
            skipped.append(Skipped(rule.code, skip.reason, report.node, skip.fact))
            continue
        except Exception as exc:  # one broken rule must not hide the others
            errors.append(f"{rule.code} failed: {type(exc).__name__}: {exc}")
            continue
        for hit in hits:
            findings.append(rule.finding(hit, report.node))
    findings.sort(key=lambda f: (-f.severity.rank, f.code))
    return CheckResult(
        findings=tuple(findings),
        skipped=tuple(skipped),
        rules_run=len(rules) - sum(1 for r in rules if not_asked(report, r)),
        errors=tuple(errors),
    )
