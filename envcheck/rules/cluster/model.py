"""Cluster rules: checks that compare nodes instead of looking at one.

A cluster rule is a function decorated with ``@cluster_rule``; like a node rule its docstring is
its title and docs, and it appears in ``envcheck rules`` / ``explain`` and docs/rules.md. It
receives a ``ClusterFacts`` (every node that answered, seen through ``Facts``, plus the nodes that
did not and the collective test's outcome) and yields ``ClusterHit``s. ``envcheck check`` never
runs these; ``envcheck cluster`` and ``envcheck diff`` do (see cluster/diff.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.cluster import CollectiveReport, DriftRow, DriftValue, Member, NodeFailure
from envcheck.model.finding import CheckResult, Finding, Severity, Skipped
from envcheck.rules.base import ClusterCheckFn, Hit, Rule, register_not_per_node

CLUSTER = "cluster"  # Finding.node of a finding about the cluster as a whole
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class ClusterHit(Hit):
    """One problem a cluster rule found. ``node`` names the node it is about, if only one."""

    node: str | None = None


@dataclass(frozen=True)
class NodeView:
    member: Member
    facts: Facts

    @property
    def label(self) -> str:
        return self.member.label


Extract = Callable[[NodeView], "str | None"]


@dataclass(frozen=True)
class Extractor:
    """An extract function and the report sections it reads: nodes sharing those section
    objects (cluster/nodes.py shares equal ones) share the value, computed once."""

    fn: Extract
    reads: tuple[str, ...] = ()

    def __call__(self, node: NodeView) -> str | None:
        return self.fn(node)


def reads(*sections: str) -> Callable[[Extract], Extractor]:
    def wrap(fn: Extract) -> Extractor:
        return Extractor(fn, sections)

    return wrap


class ClusterFacts:
    """The nodes of a cluster for cluster rules."""

    def __init__(
        self,
        nodes: Sequence[NodeView],
        matrix: Matrix,
        failures: Sequence[NodeFailure] = (),
        collective: CollectiveReport | None = None,
    ) -> None:
        self.nodes = tuple(nodes)
        self.matrix = matrix
        self.failures = tuple(failures)
        self.collective = collective
        self._values: dict[tuple[Any, ...], str | None] = {}

    def group(self, fact: str, label: str, extract: Extract) -> DriftRow:
        """Which nodes hold which value of a fact, majority first.

        ``extract`` returns the value as text, or raises Skip / returns None when the node's
        report does not say; such nodes are listed as unknown and never make a fact differ.
        """
        return group_values(fact, label, self.nodes, extract, self._values)


def _value(node: NodeView, extract: Extract) -> str | None:
    try:
        return extract(node)
    except Skip:
        return None


def group_values(
    fact: str,
    label: str,
    nodes: Iterable[NodeView],
    extract: Extract,
    cache: dict[tuple[Any, ...], str | None] | None = None,
) -> DriftRow:
    groups: dict[str, list[str]] = {}
    unknown: list[str] = []
    shared = cache is not None and isinstance(extract, Extractor) and extract.reads
    for node in nodes:
        if shared:
            assert cache is not None and isinstance(extract, Extractor)
            report = node.facts.report
            key = (fact, *(id(getattr(report, name)) for name in extract.reads))
            if key in cache:
                value = cache[key]
            else:
                value = cache[key] = _value(node, extract)
        else:
            value = _value(node, extract)
        if value is None:
            unknown.append(node.label)
        else:
            groups.setdefault(value, []).append(node.label)
    if fact.startswith("package:"):
        groups = merge_local_labels(groups)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    values = tuple(DriftValue(value, tuple(labels)) for value, labels in ordered)
    return DriftRow(fact=fact, label=label, values=values, unknown=tuple(unknown))


def merge_local_labels(groups: dict[str, list[str]]) -> dict[str, list[str]]:
    """A version without a local label (``2.4.0``, as pip freeze of some installers or a
    declared stack write it) is not drift from the one build of that release the other nodes
    have (``2.4.0+cu121``): its nodes join that group. With two builds (``+cu121`` and
    ``+cu124``) it stays apart: which one it is, is unknown."""
    from packaging.version import InvalidVersion, Version

    def parse(text: str) -> Version | None:
        try:
            return Version(text)
        except InvalidVersion:
            return None

    parsed = {value: parse(value) for value in groups}
    merged = {value: list(nodes) for value, nodes in groups.items()}
    for value, version in parsed.items():
        if version is None or version.local is not None:
            continue
        builds = [
            other
            for other, v in parsed.items()
            if v is not None and v.local is not None and v.public == version.public
        ]
        if len(builds) == 1:
            merged[builds[0]].extend(merged.pop(value))
    return merged


def name_nodes(nodes: Sequence[str], limit: int = 6) -> str:
    """``a, b, c`` or ``998 nodes (a, b, c, …)``."""
    if len(nodes) <= limit:
        return ", ".join(nodes)
    return f"{len(nodes)} nodes ({', '.join(nodes[:3])}, …)"


def describe_split(row: DriftRow) -> str:
    """``2.4.1+cu121 on node-17, node-42; 198 nodes have 2.4.0+cu121``."""
    majority = row.majority
    if not row.has_majority:  # no value is the cluster's: name every side
        return "; ".join(f"{v.value} on {name_nodes(v.nodes)}" for v in row.values)
    odd = "; ".join(f"{v.value} on {name_nodes(v.nodes)}" for v in row.values[1:])
    several = "s" if majority.count != 1 else ""
    verb = "have" if majority.count != 1 else "has"
    return f"{odd}; {majority.count} node{several} {verb} {majority.value}"


def cluster_rule(code: str, name: str, severity: Severity) -> Callable[[ClusterCheckFn], Any]:
    """Register a cluster rule; its docstring supplies the title and docs."""

    def register(fn: ClusterCheckFn) -> ClusterCheckFn:
        register_not_per_node(code, name, severity, fn.__doc__, "cluster", cluster_check=fn)
        return fn

    return register


def evaluate_cluster(facts: ClusterFacts, rules: Sequence[Rule]) -> CheckResult:
    """Run the cluster rules among ``rules`` (node rules are ignored here)."""
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    errors: list[str] = []
    chosen = [r for r in rules if r.scope == "cluster" and r.cluster_check is not None]
    for rule in chosen:
        assert rule.cluster_check is not None
        try:
            hits = list(rule.cluster_check(facts))
        except Skip as skip:
            skipped.append(Skipped(rule.code, skip.reason, CLUSTER, skip.fact))
            continue
        except Exception as exc:  # one broken rule must not hide the others
            errors.append(f"{rule.code} failed: {type(exc).__name__}: {exc}")
            continue
        findings.extend(rule.finding(hit, hit.node or CLUSTER) for hit in hits)
    findings.sort(key=lambda f: (-f.severity.rank, f.code))
    return CheckResult(
        findings=tuple(findings),
        skipped=tuple(skipped),
        rules_run=len(chosen),
        errors=tuple(errors),
    )


def evidence(row: DriftRow) -> dict[str, object]:
    return {
        "fact": row.fact,
        "values": {v.value: list(v.nodes) for v in row.values},
        "odd_nodes": list(row.odd_nodes()),
        "unknown": list(row.unknown),
    }


def need_two(facts: ClusterFacts) -> None:
    if len(facts.nodes) < 2:
        raise Skip(f"{len(facts.nodes)} node(s) answered; comparing needs two")
