"""Compare nodes: node rules on every report, the drift table, then the cluster rules. Pure: the
reports, the matrix and the rules are all it reads (``envcheck cluster`` and ``envcheck diff``
both end here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.utils import canonicalize_name

from envcheck.facts.node import Facts
from envcheck.matrix.model import Matrix
from envcheck.model.cluster import (
    CollectiveReport,
    DriftRow,
    DriftValue,
    Member,
    NodeFailure,
)
from envcheck.model.finding import CheckResult, Finding, Severity
from envcheck.model.report import NodeReport
from envcheck.rules.base import Rule
from envcheck.rules.cluster.model import (
    NOT_INSTALLED,
    ClusterFacts,
    NodeView,
    evaluate_cluster,
    merge_local_labels,
)
from envcheck.rules.cluster.values import CURATED_PACKAGES, DRIFT_FACTS

# distribution families the drift table shows as one row each (see cluster_values.DRIFT_FACTS)
_FAMILIES = ("nvidia-nccl", "nvidia-cublas", "nvidia-cudnn")


@dataclass(frozen=True)
class Comparison:
    members: tuple[Member, ...]
    reports: tuple[NodeReport, ...]
    failures: tuple[NodeFailure, ...]
    drift: tuple[DriftRow, ...]
    node_result: CheckResult
    cluster_result: CheckResult
    collective: CollectiveReport | None = None
    rules: tuple[Rule, ...] = ()  # node and cluster rules that ran (for JUnit and SARIF)

    @property
    def findings(self) -> tuple[Finding, ...]:
        merged = self.cluster_result.findings + self.node_result.findings
        return tuple(sorted(merged, key=lambda f: (-f.severity.rank, f.code, f.node)))

    @property
    def errors(self) -> tuple[str, ...]:
        return self.cluster_result.errors + self.node_result.errors


def drift_table(facts: ClusterFacts) -> tuple[DriftRow, ...]:
    """Every fact that differs (two or more known values), curated facts first, then every
    other distribution whose version differs, by name."""
    rows = []
    for spec in DRIFT_FACTS:
        row = facts.group(spec.fact, spec.label, spec.extract)
        if len(row.values) > 1:
            rows.append(row)
    rows.extend(_package_rows(facts.nodes))
    return tuple(rows)


def _package_rows(nodes: Sequence[NodeView]) -> list[DriftRow]:
    # nodes share parsed package sections (ReportReader), so group by the section object
    groups: dict[int, tuple[dict[str, str] | None, list[str]]] = {}
    for node in nodes:
        section = node.facts.report.packages
        entry = groups.get(id(section))
        if entry is None:
            versions: dict[str, str] | None = None
            if section.is_ok and section.data is not None:
                versions = {}
                for dist in section.data.distributions:
                    versions.setdefault(dist.key, dist.version)
            entry = groups[id(section)] = (versions, [])
        entry[1].append(node.label)
    known = [v for v, _ in groups.values() if v is not None]
    if len(known) < 2:
        return []
    names = set().union(*known)
    rows = []
    for name in sorted(names):
        if name in CURATED_PACKAGES or name.startswith(_FAMILIES):
            continue
        found = {v.get(name, NOT_INSTALLED) for v in known}
        if len(found) < 2:
            continue
        by_value: dict[str, list[str]] = {}
        unknown: list[str] = []
        for versions, labels in groups.values():
            if versions is None:
                unknown.extend(labels)
            else:
                by_value.setdefault(versions.get(name, NOT_INSTALLED), []).extend(labels)
        by_value = merge_local_labels(by_value)
        if len(by_value) < 2:
            continue
        ordered = sorted(by_value.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        rows.append(
            DriftRow(
                fact=f"package:{canonicalize_name(name)}",
                label=name,
                values=tuple(DriftValue(v, tuple(labels)) for v, labels in ordered),
                unknown=tuple(unknown),
            )
        )
    return rows


def compare(
    members: Sequence[Member],
    reports: Sequence[NodeReport],
    matrix: Matrix,
    rules: Sequence[Rule],
    *,
    failures: Sequence[NodeFailure] = (),
    collective: CollectiveReport | None = None,
    node_results: Sequence[CheckResult] | None = None,
) -> Comparison:
    """Node rules per report (unless already run: ``node_results``), the drift table, then the
    cluster rules. ``reports[i]`` belongs to ``members[i]`` and carries its label."""
    from envcheck.cluster.nodes import NodeRules, merge

    node_rules = [r for r in rules if r.scope == "node"]
    if node_results is None:
        evaluator = NodeRules(matrix, node_rules)
        node_results = [evaluator.evaluate(r) for r in reports]
    views = [
        NodeView(member, Facts(report, matrix))
        for member, report in zip(members, reports, strict=True)
    ]
    facts = ClusterFacts(views, matrix, failures=failures, collective=collective)
    return Comparison(
        members=tuple(members),
        reports=tuple(reports),
        failures=tuple(failures),
        drift=drift_table(facts),
        node_result=one_severity(merge(node_results, len(node_rules))),
        cluster_result=evaluate_cluster(facts, rules),
        collective=collective,
        rules=tuple(rules),
    )


def one_severity(result: CheckResult) -> CheckResult:
    """One severity per rule across the nodes of a cluster: a rule that fires on several nodes
    is as severe on each as on the worst. A node rule may soften a finding it cannot know to
    matter on one node alone (NET103: loopback is "harmless on a single node" unless the node
    shows multi-node settings); in a cluster of several nodes it does matter, on every one."""
    from dataclasses import replace

    worst: dict[str, Severity] = {}
    for f in result.findings:
        if f.code not in worst or f.severity.rank > worst[f.code].rank:
            worst[f.code] = f.severity
    nodes = {f.node for f in result.findings}
    if len(nodes) < 2:
        return result
    findings = tuple(
        f if f.severity is worst[f.code] else replace(f, severity=worst[f.code])
        for f in result.findings
    )
    return replace(result, findings=findings)


@dataclass(frozen=True)
class ClusterOutcome:
    """A comparison with the user's threshold: exit code, status and the JSON envelope."""

    command: str  # "cluster" or "diff"
    comparison: Comparison
    threshold: Severity
    context: dict[str, Any] = field(default_factory=dict)
    include_reports: bool = True

    def at_or_above(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.comparison.findings if f.severity.at_least(self.threshold))

    @property
    def exit_code(self) -> int:
        if self.at_or_above():
            return 1
        return 3 if self.comparison.errors else 0

    @property
    def status(self) -> str:
        if self.comparison.failures or self.comparison.errors:
            return "partial"
        collective = self.comparison.collective
        if collective is not None and collective.not_run:
            return "partial"
        return "findings" if self.at_or_above() else "ok"

    def counts(self) -> dict[str, Any]:
        counts = {s.value: 0 for s in Severity}
        for finding in self.comparison.findings:
            counts[finding.severity.value] += 1
        c = self.comparison
        return {
            **counts,
            "nodes": len(c.members) + len(c.failures),
            "answered": len(c.members),
            "unreachable": len(c.failures),
            "drift": len(c.drift),
            "rules_run": c.node_result.rules_run + c.cluster_result.rules_run,
            "skipped": len(c.node_result.skipped) + len(c.cluster_result.skipped),
            "threshold": self.threshold.value,
        }

    def envelope(self) -> dict[str, Any]:
        from envcheck.model.envelope import envelope

        c = self.comparison
        data: dict[str, Any] = {
            **self.context,
            "nodes": [m.to_json() for m in c.members],
            "unreachable": [f.to_json() for f in c.failures],
            "drift": [row.to_json() for row in c.drift],
            "findings": [f.to_json() for f in c.findings],
            "skipped": [s.to_json() for s in c.cluster_result.skipped + c.node_result.skipped],
            "collective": c.collective.to_json() if c.collective else None,
            "summary": self.counts(),
        }
        if self.include_reports:
            data["reports"] = [r.to_dict() for r in c.reports]
        errors = [{"message": e} for e in c.errors]
        return envelope(self.command, self.status, self.exit_code, data, errors)
