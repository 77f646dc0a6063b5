"""Many reports at once: read them sharing identical sections, label them, run node rules once
per distinct input.

Nodes of one cluster mostly hold the same packages, Python and torch build. ``ReportReader``
keeps one parsed copy of each distinct section, so 1,000 reports of one image cost about one
report's memory plus the per-node sections (network, GPUs in use, disks). ``NodeRules`` runs the
node rules the way ``engine.evaluate`` does, but remembers which sections each rule read and
reuses its outcome for any later node whose sections are the very same objects.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from envcheck.engine import not_asked
from envcheck.errors import CodecError, ReportError
from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.codec import from_dict, type_hints
from envcheck.model.finding import CheckResult, Finding, Skipped
from envcheck.model.report import SCHEMA_VERSION, NodeReport, Origin
from envcheck.rules.base import Hit, Rule

# Every section is shared when equal: packages, Python and torch usually are across one image,
# GPUs, system and environment often are; network (addresses) never is.
SHARED_SECTIONS = NodeReport.SECTIONS
_BUCKET = 8  # distinct versions of a section compared before giving up on sharing


@dataclass(frozen=True)
class _Parsed:
    """A section whose JSON text was seen before: its parsed value, not data."""

    section: Any


class ReportReader:
    """Build NodeReports from JSON text or data, sharing equal sections between reports.

    ``loads`` walks a report's top-level object itself: a section whose text is byte-for-byte
    the text of one seen before (the packages of 999 nodes of one image) is not parsed again.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, Any], list[tuple[Any, Any]]] = {}
        self._heads: list[tuple[dict[str, Any], NodeReport]] = []
        self._texts: dict[str, list[tuple[str, Any]]] = {}
        self._decoder = json.JSONDecoder()
        self.shared = 0  # sections reused instead of parsed

    def loads(self, text: str, *, where: str | None = None) -> Any:
        """``json.loads(text)``, except that sections seen before come back already parsed;
        anything unusual goes to json.loads (and its error messages)."""
        from envcheck.inputs import has_surrogate_escape, loads_json

        data = None
        if not has_surrogate_escape(text):
            try:
                data = self._walk(text, where)
            except (ValueError, IndexError, RecursionError):
                data = None
        if data is None:
            data = loads_json(
                text, where or "<report>", expect=object, what="JSON", error=ReportError
            )
        return data

    def _walk(self, text: str, where: str | None) -> dict[str, Any] | None:
        i = _space(text, 0)
        if text[i : i + 1] != "{":
            return None
        out: dict[str, Any] = {}
        i = _space(text, i + 1)
        if text[i : i + 1] == "}":
            return out if _space(text, i + 1) == len(text) else None
        while True:
            if text[i : i + 1] != '"':
                return None
            key, i = self._decoder.raw_decode(text, i)
            i = _space(text, i)
            if text[i : i + 1] != ":":
                return None
            i = _space(text, i + 1)
            schema = out.get("schema")
            if key in SHARED_SECTIONS and type(schema) is int and schema == SCHEMA_VERSION:
                out[key], i = self._section_text(key, text, i, where)
            else:
                out[key], i = self._decoder.raw_decode(text, i)
            i = _space(text, i)
            if text[i : i + 1] == "}":
                return out if _space(text, i + 1) == len(text) else None
            if text[i : i + 1] != ",":
                return None
            i = _space(text, i + 1)

    def _section_text(self, name: str, text: str, i: int, where: str | None) -> tuple[Any, int]:
        known = self._texts.setdefault(name, [])
        for raw, section in known:
            if text.startswith(raw, i):
                self.shared += 1
                return _Parsed(section), i + len(raw)
        value, end = self._decoder.raw_decode(text, i)
        section = self._section(name, value, where)
        if len(known) < _BUCKET:
            known.append((text[i:end], section))
        return _Parsed(section), end

    def read(self, data: Any, *, where: str | None = None) -> NodeReport:
        if not isinstance(data, Mapping):
            raise ReportError("expected a JSON object (a NodeReport)", where=where)
        schema = data.get("schema")
        if type(schema) is not int or schema != SCHEMA_VERSION:
            # let the model say what is wrong, the same way `check --report` does
            return NodeReport.from_dict(data, where=where)
        head = self._head(data, where)
        sections = {
            name: self._section(name, data[name], where) for name in SHARED_SECTIONS if name in data
        }
        return replace(head, **sections)

    def _head(self, data: Mapping[str, Any], where: str | None) -> NodeReport:
        """The report without its sections. Reports differ here only in node and created_at
        (checked to be strings), so the rest is parsed once."""
        node, created = data.get("node"), data.get("created_at")
        rest = {k: v for k, v in data.items() if k not in SHARED_SECTIONS}
        if isinstance(node, str) and isinstance(created, str):
            common = {k: v for k, v in rest.items() if k not in ("node", "created_at")}
            for seen, head in self._heads:
                if seen == common:
                    return replace(head, node=node, created_at=created)
            head = NodeReport.from_dict(rest, where=where)
            if len(self._heads) < _BUCKET:
                self._heads.append((common, head))
            return head
        return NodeReport.from_dict(rest, where=where)

    def _section(self, name: str, value: Any, where: str | None) -> Any:
        if isinstance(value, _Parsed):
            return value.section
        key = (name, _fingerprint(value))
        bucket = self._seen.setdefault(key, [])
        for seen, section in bucket:
            if seen == value:
                self.shared += 1
                return section
        try:
            section = from_dict(_section_types()[name], value, path=name, strict=False)
        except CodecError as exc:
            raise ReportError(exc.message, where=where, key=exc.path) from None
        except RecursionError:
            raise ReportError("nested too deeply", where=where, key=name) from None
        if name == "env":
            from envcheck.model.scrub import scrub_env_section

            section = scrub_env_section(section)
        if len(bucket) < _BUCKET:
            bucket.append((value, section))
        return section


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _space(text: str, i: int) -> int:
    match = _WHITESPACE.match(text, i)
    return match.end() if match else i


@functools.cache
def _section_types() -> dict[str, Any]:
    hints = type_hints(NodeReport)
    return {name: hints[name] for name in NodeReport.SECTIONS}


def _fingerprint(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return None
    data = value.get("data")
    dists = data.get("distributions") if isinstance(data, Mapping) else None
    status = value.get("status")
    return (
        status if isinstance(status, str) else None,
        len(dists) if isinstance(dists, list) else 0,
    )


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
    skip_fact: str | None = None
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

    def _lookup(
        self, rule: Rule, keys: dict[tuple[str, ...], tuple[Any, ...]], report: NodeReport
    ) -> _Outcome | None:
        for shape, table in self._memo.get(rule.code, {}).items():
            key = keys.get(shape)
            if key is None:  # rules share shapes: build each report's key once
                key = keys[shape] = tuple(_token(getattr(report, name)) for name in shape)
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
            outcome = _Outcome(skip=skip.reason, skip_fact=skip.fact)
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
        keys: dict[tuple[str, ...], tuple[Any, ...]] = {}
        rules = [r for r in self.rules if not not_asked(report, r)]
        for rule in rules:
            outcome = self._lookup(rule, keys, report)
            if outcome is None:
                outcome = self._run(rule, report)
            else:
                self.reused += 1
            if outcome.skip is not None:
                skipped.append(Skipped(rule.code, outcome.skip, report.node, outcome.skip_fact))
            if outcome.error is not None:
                errors.append(outcome.error)
            findings.extend(rule.finding(hit, report.node) for hit in outcome.hits)
        findings.sort(key=lambda f: (-f.severity.rank, f.code))
        return CheckResult(
            findings=tuple(findings),
            skipped=tuple(skipped),
            rules_run=len(rules),
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
