"""Many reports at once: read them sharing identical sections, label them, run node rules once
per distinct input.

Nodes of one cluster mostly hold the same packages, Python and torch build. ``ReportReader``
keeps one parsed copy of each distinct section, so 1,000 reports of one image cost about one
report's memory plus the per-node sections (network, GPUs in use, disks). ``NodeRules`` runs the
node rules the way ``engine.evaluate`` does, but remembers which sections each rule read and
reuses its outcome for any later node whose sections are the very same objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from envcheck.errors import ReportError
from envcheck.matrix.model import Matrix
from envcheck.model.finding import CheckResult, Finding, Skipped
from envcheck.model.report import SCHEMA_VERSION, NodeReport, Origin
from envcheck.rules.base import Hit, Rule, Skip
from envcheck.rules.facts import Facts

# Every section is shared when equal: packages, Python and torch usually are across one image,
# GPUs, system and environment often are; network (addresses) never is.
SHARED_SECTIONS = NodeReport.SECTIONS
_BUCKET = 8  # distinct versions of a section compared before giving up on sharing


class ReportReader:
    """Build NodeReports from JSON-shaped data, sharing equal sections between reports."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, Any], list[tuple[Any, Any]]] = {}
        self.shared = 0  # sections reused instead of parsed

    def read(self, data: Any, *, where: str | None = None) -> NodeReport:
        if not isinstance(data, Mapping):
            raise ReportError("expected a JSON object (a NodeReport)", where=where)
        if data.get("schema") != SCHEMA_VERSION:
            # let the model say what is wrong, the same way `check --report` does
            return NodeReport.from_dict(data, where=where)
        rest = {k: v for k, v in data.items() if k not in SHARED_SECTIONS}
        report = NodeReport.from_dict(rest, where=where)
        sections = {
            name: self._section(name, data[name], where) for name in SHARED_SECTIONS if name in data
        }
        return replace(report, **sections)

    def _section(self, name: str, value: Any, where: str | None) -> Any:
        key = (name, _fingerprint(value))
        bucket = self._seen.setdefault(key, [])
        for seen, section in bucket:
            if seen == value:
                self.shared += 1
                return section
        skeleton = {
            "schema": SCHEMA_VERSION,
            "node": "-",
            "envcheck_version": "-",
            "created_at": "-",
        }
        section = getattr(NodeReport.from_dict({**skeleton, name: value}, where=where), name)
        if len(bucket) < _BUCKET:
            bucket.append((value, section))
        return section


def _fingerprint(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return None
    data = value.get("data")
    size = len(data.get("distributions") or ()) if isinstance(data, Mapping) else 0
    return (value.get("status"), size)


def assign_labels(names: Sequence[str], qualifiers: Sequence[Sequence[str]]) -> list[str]:
    """Unique labels: each name, qualified by the first of its qualifiers that makes it unique
    (``vm (reports/a.json)``, ``vm@10.0.0.5``), numbered as a last resort."""
    labels = list(names)
    for round_ in range(max((len(q) for q in qualifiers), default=0)):
        counts: dict[str, int] = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        if all(c == 1 for c in counts.values()):
            return labels
        for i, label in enumerate(labels):
            if counts[label] > 1 and round_ < len(qualifiers[i]):
                labels[i] = f"{names[i]}{qualifiers[i][round_]}"
    counts = {}
    result = []
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
        result.append(label if counts[label] == 1 else f"{label}#{counts[label]}")
    return result


def relabel(report: NodeReport, label: str, origin: Origin | None = None) -> NodeReport:
    changes: dict[str, Any] = {"node": label}
    if origin is not None:
        changes["origin"] = origin
    return replace(report, **changes) if (label != report.node or origin) else report


class _Recorder:
    """A NodeReport stand-in that notes which attributes a rule reads."""

    def __init__(self, report: NodeReport) -> None:
        self._report = report
        self.read: list[str] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._report, name)
        if name not in self.read:
            self.read.append(name)
        return value


def _token(value: Any) -> Any:
    """Sections compare by identity (shared objects); plain values by value."""
    if value is None or isinstance(value, str | int | float | bool | Origin):
        return value
    return id(value)


@dataclass(frozen=True)
class _Outcome:
    hits: tuple[Hit, ...] = ()
    skip: str | None = None
    error: str | None = None


class NodeRules:
    """``engine.evaluate`` for many reports, running each rule once per distinct input."""

    def __init__(self, matrix: Matrix, rules: Sequence[Rule]) -> None:
        self.matrix = matrix
        self.rules = [r for r in rules if r.scope == "node"]
        # rule code -> shape (the attributes read, in order) -> key -> outcome
        self._memo: dict[str, dict[tuple[str, ...], dict[tuple[Any, ...], _Outcome]]] = {}
        self._keep: list[Any] = []  # objects whose id() is part of a key stay alive
        self.runs = 0
        self.reused = 0

    def _lookup(self, rule: Rule, report: NodeReport) -> _Outcome | None:
        for shape, table in self._memo.get(rule.code, {}).items():
            key = tuple(_token(getattr(report, name)) for name in shape)
            found = table.get(key)
            if found is not None:
                return found
        return None

    def _run(self, rule: Rule, report: NodeReport) -> _Outcome:
        recorder = _Recorder(report)
        facts = Facts(cast(NodeReport, recorder), self.matrix)
        try:
            outcome = _Outcome(hits=tuple(rule.check(facts)))
        except Skip as skip:
            outcome = _Outcome(skip=skip.reason)
        except Exception as exc:  # one broken rule must not hide the others
            outcome = _Outcome(error=f"{rule.code} failed: {type(exc).__name__}: {exc}")
        self.runs += 1
        shape = tuple(recorder.read)
        values = [getattr(report, name) for name in shape]
        self._keep.extend(v for v in values if _token(v) == id(v))
        key = tuple(_token(v) for v in values)
        self._memo.setdefault(rule.code, {}).setdefault(shape, {})[key] = outcome
        return outcome

    def evaluate(self, report: NodeReport) -> CheckResult:
        findings: list[Finding] = []
        skipped: list[Skipped] = []
        errors: list[str] = []
        for rule in self.rules:
            outcome = self._lookup(rule, report)
            if outcome is None:
                outcome = self._run(rule, report)
            else:
                self.reused += 1
            if outcome.skip is not None:
                skipped.append(Skipped(rule.code, outcome.skip, report.node))
            if outcome.error is not None:
                errors.append(outcome.error)
            findings.extend(
                Finding(
                    code=rule.code,
                    severity=hit.severity or rule.severity,
                    title=rule.title,
                    message=hit.message,
                    node=report.node,
                    evidence=hit.evidence,
                    fix=hit.fix,
                    references=rule.doc.references,
                )
                for hit in outcome.hits
            )
        findings.sort(key=lambda f: (-f.severity.rank, f.code))
        return CheckResult(
            findings=tuple(findings),
            skipped=tuple(skipped),
            rules_run=len(self.rules),
            errors=tuple(errors),
        )


def merge(results: Iterable[CheckResult], rules_run: int) -> CheckResult:
    results = list(results)
    return CheckResult(
        findings=tuple(f for r in results for f in r.findings),
        skipped=tuple(s for r in results for s in r.skipped),
        rules_run=rules_run,
        errors=tuple(dict.fromkeys(e for r in results for e in r.errors)),
    )
