"""What a CI system reads from a run (``--output-format github|junit|sarif``): the rules that
ran, the results with a level and a location, the rules skipped and why. Built from findings
(check, cluster, diff) or from a triage (a matched signature is a result at the log's line);
rendered by ``formats/github.py``, ``formats/junit.py`` and ``formats/sarif.py``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from envcheck.model.finding import Finding, Fix, Severity, Skipped
from envcheck.rules.base import FAMILIES, Rule

if TYPE_CHECKING:
    from envcheck.triage.run import TriageResult


@dataclass(frozen=True)
class CiRule:
    """A rule as a CI report describes it (SARIF's ``reportingDescriptor``)."""

    code: str
    name: str
    title: str
    severity: Severity
    family: str
    what: str = ""
    fix: str = ""
    references: tuple[str, ...] = ()

    @classmethod
    def from_rule(cls, rule: Rule) -> CiRule:
        return cls(
            code=rule.code,
            name=rule.name,
            title=rule.title,
            severity=rule.severity,
            family=FAMILIES.get(rule.family, rule.family),
            what=" ".join(rule.doc.what.split()),
            fix=" ".join(rule.doc.fix.split()),
            references=rule.doc.references,
        )


@dataclass(frozen=True)
class CiResult:
    """One finding: its rule, level, text, node and where it was found (a file and line when
    a file was checked, else only the node: a logical location)."""

    code: str
    severity: Severity
    title: str
    message: str
    node: str
    failing: bool  # at or above the threshold: it makes the exit code 1
    fix: Fix | None = None
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class CiRun:
    command: str  # "check", "cluster", "diff", "triage"
    rules: tuple[CiRule, ...]
    results: tuple[CiResult, ...]
    skipped: tuple[Skipped, ...] = ()
    errors: tuple[str, ...] = ()
    exit_code: int = 0
    # --strict: skipped rules that matter and count as failures (empty without --strict)
    strict_gaps: tuple[Skipped, ...] = ()

    def results_of(self, code: str) -> tuple[CiResult, ...]:
        return tuple(r for r in self.results if r.code == code)


def from_findings(
    command: str,
    rules: Iterable[Rule],
    findings: Sequence[Finding],
    skipped: Sequence[Skipped],
    *,
    threshold: Severity,
    exit_code: int,
    errors: Sequence[str] = (),
    files: Mapping[str, str] | None = None,
    strict_gaps: Sequence[Skipped] = (),
) -> CiRun:
    """``files``: node -> the file its facts were read from (a spec, a saved report, a pasted
    dump, a lock file), the location of its findings."""
    files = files or {}
    several = len({f.node for f in findings}) > 1
    results = tuple(
        CiResult(
            code=f.code,
            severity=f.severity,
            title=f.title,
            message=f"{f.message} (on {f.node})" if several or f.node not in files else f.message,
            node=f.node,
            failing=f.severity.at_least(threshold),
            fix=f.fix,
            file=files.get(f.node),
        )
        for f in findings
    )
    return CiRun(
        command=command,
        rules=tuple(CiRule.from_rule(r) for r in rules),
        results=results,
        skipped=tuple(skipped),
        errors=tuple(errors),
        exit_code=exit_code,
        strict_gaps=tuple(strict_gaps),
    )


def fix_lines(fix: Fix | None) -> list[str]:
    """A fix as lines of text: its summary, then its commands."""
    if fix is None:
        return []
    return [f"fix ({fix.applicability}): {fix.summary}", *(f"$ {c}" for c in fix.commands)]


LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def from_triage(result: TriageResult) -> CiRun:
    """A triage as a CI run: each known failure signature the log matched is a rule and a
    result at its first line (noise is left out); its causes, with their verdicts, are the
    result's text."""
    rules: dict[str, CiRule] = {}
    results = []
    log = None if result.log in ("-", "<stdin>") else result.log
    for match in result.failures:
        sig = match.tally.signature
        causes = "; ".join(
            f"{c.code} {c.verdict.replace('_', ' ')}: {c.title}" for c in match.causes
        )
        rules.setdefault(
            sig.id,
            CiRule(
                code=sig.id,
                name=sig.id,
                title=sig.meaning,
                severity=Severity.ERROR,
                family="triage signature",
                what=sig.meaning,
                fix=f"causes, most likely first: {causes}" if causes else "",
                references=(sig.source,) if sig.source else (),
            ),
        )
        confirmed = [c for c in match.causes if c.verdict == "confirmed"]
        at = match.tally.first.line or None  # 0: the environment's match, no line of the log
        where = f"line {at}" if at else "environment"
        lines = [sig.meaning, f"{where}: {match.tally.first.text.strip()}"]
        lines += [
            f"{c.code} {c.verdict.replace('_', ' ')}: {c.title}"
            + (f" (fix: {c.fix.summary})" if c.fix is not None and c.verdict != "ruled_out" else "")
            for c in match.causes
        ]
        fix = next((f.fix for c in confirmed for f in c.findings if f.fix is not None), None)
        # a log line's failure is an error; the environment's match is as severe as its findings
        severity = (
            Severity.ERROR
            if at
            else max(
                (f.severity for c in match.causes for f in c.findings),
                key=lambda s: s.rank,
                default=Severity.WARNING,
            )
        )
        results.append(
            CiResult(
                code=sig.id,
                severity=severity,
                title=sig.meaning,
                message="\n".join(lines),
                node=result.node.node if result.node is not None else "the node of the log",
                failing=severity is Severity.ERROR,
                fix=fix,
                file=log,
                line=at,
            )
        )
    return CiRun(
        command="triage",
        rules=tuple(rules.values()),
        results=tuple(results),
        exit_code=result.exit_code,
    )
