"""``check``: verdicts for one or more nodes, each finding with its reason, source and fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from envcheck.model.finding import (
    CheckResult,
    Fix,
    Severity,
    Skipped,
    skip_kinds,
    skip_matters,
)
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.matrix.model import Matrix
    from envcheck.rules.base import Rule


@dataclass(frozen=True)
class RuleOptions:
    """Which rules run and what counts: empty ``select``/``ignore`` and no ``severity`` fall back
    to the settings file (envcheck.toml or [tool.envcheck]), then to all rules and "error"."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Severity | None = None
    matrix: tuple[str, ...] = ()  # overlay directories merged over the built-in matrix
    # --strict: a skipped rule that matters for the node (its GPU, driver, Python, torch, vLLM
    # or CUDA wheels were unknown) counts as a finding for the exit code
    strict: bool = False
    # --expect: what the node must have ("8x H100, driver>=550", "no-gpu"); None: the
    # settings file's ``expect``, else nothing expected
    expect: str | None = None


@dataclass(frozen=True)
class CheckOutcome:
    """The result of ``check``: the reports, the verdicts and what makes them fail."""

    reports: tuple[NodeReport, ...]
    result: CheckResult
    threshold: Severity
    strict: bool = False
    rules: tuple[Rule, ...] = ()  # the rules that ran (for JUnit and SARIF)

    @property
    def gaps(self) -> tuple[Skipped, ...]:
        """Skipped rules that matter for the node (see ``skip_matters``)."""
        return tuple(s for s in self.result.skipped if skip_matters(s))

    @property
    def findings(self) -> tuple[Any, ...]:
        return self.result.findings

    @property
    def failing(self) -> tuple[Any, ...]:
        """The findings at or above the threshold: the ones that make the exit code 1."""
        return self.result.at_or_above(self.threshold)

    @property
    def exit_code(self) -> int:
        if self.result.at_or_above(self.threshold) or (self.strict and self.gaps):
            return 1
        return 3 if self.result.errors else 0

    @property
    def strict_gaps(self) -> tuple[Skipped, ...]:
        """With --strict, the skipped rules that fail the run; empty without it."""
        return self.gaps if self.strict else ()

    @property
    def status(self) -> str:
        if self.result.errors:
            return "partial"
        if self.result.at_or_above(self.threshold):
            return "findings"
        if self.strict_gaps:
            return "strict"  # no finding, but --strict and rules that matter were skipped
        return "ok"

    def envelope(self) -> dict[str, Any]:
        from envcheck.model.envelope import envelope

        data: dict[str, Any] = {
            "reports": [r.to_dict() for r in self.reports],
            "findings": [f.to_json() for f in self.result.findings],
            "skipped": [s.to_json() for s in self.result.skipped],
            "gaps": [s.to_json() for s in self.gaps],
            "summary": summary_counts(self.result, self.threshold),
        }
        if self.strict_gaps:
            from envcheck.formats.inventory import strict_line

            data["strict"] = strict_line(self.strict_gaps)
        errors = [{"message": e} for e in self.result.errors]
        return envelope("check", self.status, self.exit_code, data, errors)


def summary_counts(result: CheckResult, threshold: Severity) -> dict[str, Any]:
    counts = {s.value: 0 for s in Severity}
    for finding in result.findings:
        counts[finding.severity.value] += 1
    return {
        **counts,
        "rules_run": result.rules_run,
        "skipped": len(result.skipped),
        "skipped_by_fact": skip_kinds(result.skipped),
        "skipped_that_matter": sum(1 for s in result.skipped if skip_matters(s)),
        "threshold": threshold.value,
    }


def select_rules(
    options: RuleOptions, scope: Literal["node", "all"] = "node"
) -> tuple[Matrix, list[Rule], Severity]:
    """The matrix, the chosen rules (node rules only unless ``scope`` is "all") and the
    threshold."""
    from envcheck.matrix_validate import load
    from envcheck.rules import all_rules, node_rules, select
    from envcheck.settings import choose, find_settings

    settings = find_settings()
    matrix = load([*settings.matrix, *options.matrix])
    prefixes = choose(settings, options.select, options.ignore)
    if scope == "node":  # cluster rules run in `envcheck cluster` and `envcheck diff`
        chosen = node_rules(matrix, *prefixes)
    else:
        chosen = select(all_rules(matrix), *prefixes)
    threshold = options.severity or Severity(settings.severity or "error")
    return matrix, chosen, threshold


Selected = tuple["Matrix", list["Rule"], Severity]


class SelectAhead:
    """``select_rules(options)`` on a thread of its own, started before the node is probed:
    loading the matrix and importing the rules (CPU) overlaps the probes' waits (``nvcc
    --version``, reading files). The same call with the same options, so the same result, or
    the same exception, raised where ``check`` would have raised it."""

    def __init__(self, options: RuleOptions) -> None:
        import threading

        self._value: Selected | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._work, args=(options,), name="envcheck-select-rules", daemon=True
        )
        self._thread.start()

    def _work(self, options: RuleOptions) -> None:
        try:
            self._value = select_rules(options)
        except BaseException as exc:  # surfaced by result(), in the caller's thread
            self._error = exc

    def wait(self) -> None:
        """Let it finish (a cache file being written is not cut off at exit)."""
        self._thread.join()

    def result(self) -> Selected:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def with_expectation(report: NodeReport, text: str, where: str) -> NodeReport:
    """The report with the user's expectation as its ``expect`` section."""
    from envcheck.model.expect import parse_expect
    from envcheck.model.section import Section

    return report.with_sections(expect=Section.ok(parse_expect(text, where), source=where))


def expected(reports: Sequence[NodeReport], options: RuleOptions) -> list[NodeReport]:
    """The reports with the expectation of ``--expect``, else of the settings file, if any."""
    from envcheck.settings import find_settings

    expect, where = options.expect, "--expect"
    if expect is None:
        settings = find_settings()
        expect, where = settings.expect, settings.source or "settings"
    if expect is None:
        return list(reports)
    return [with_expectation(r, expect, where) for r in reports]


def check(
    reports: Sequence[NodeReport],
    options: RuleOptions | None = None,
    ahead: SelectAhead | None = None,
) -> CheckOutcome:
    """``ahead``: the rules selected already for these ``options`` (cli/check.py)."""
    from envcheck.engine import evaluate
    from envcheck.plan.per_finding import planned_fixes

    options = options or RuleOptions()
    matrix, chosen, threshold = ahead.result() if ahead is not None else select_rules(options)
    reports = expected(reports, options)
    results = [evaluate(report, matrix, chosen) for report in reports]
    # the fix printed beside each finding is the one `envcheck fix` plans for the node
    results = [
        replace(r, findings=planned_fixes(report, matrix, chosen, r.findings, r))
        for report, r in zip(reports, results, strict=True)
    ]
    merged = CheckResult(
        findings=tuple(f for r in results for f in r.findings),
        skipped=tuple(s for r in results for s in r.skipped),
        rules_run=len(chosen),
        errors=tuple(e for r in results for e in r.errors),
    )
    return CheckOutcome(tuple(reports), merged, threshold, options.strict, tuple(chosen))


def redacted_fix(
    fix: Fix | None, names: tuple[str, ...], versions: frozenset[str] = frozenset()
) -> Fix | None:
    """A fix as ``--redact`` shows it: its summary and commands with the same pseudonyms as the
    message (``export no_proxy=192.0.2.0/24`` must not print what the message hides)."""
    if fix is None:
        return None
    from dataclasses import replace

    from envcheck.redact import pseudonymize_text

    def clean(text: str) -> str:
        return pseudonymize_text(text, names, versions)

    actions = tuple(
        replace(
            a,
            env={k: clean(v) for k, v in a.env.items()},
            text=clean(a.text) if a.text else a.text,
            index_url=a.index_url,
        )
        for a in fix.actions
    )
    return replace(fix, summary=clean(fix.summary), actions=actions)


def matrix_versions(matrix: Matrix) -> frozenset[str]:
    """The dotted quads the matrix states as versions (``versions = ["12.3.4.1", ...]``, a pin
    ``==12.4.5.8``, a ``Version``): knowledge, not the node's, kept by ``--redact`` in the
    prose that names them bare ("12.4.5.8, torch 2.5's pin")."""
    import dataclasses

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from envcheck.redact import version_quads

    found: set[str] = set()

    def walk(value: object, name: str) -> None:
        if isinstance(value, str):
            if value.count(".") >= 3:
                found.update(version_quads(f"{name}={value}"))
        elif isinstance(value, Version | SpecifierSet):
            walk(str(value), "version")
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name), f.name)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list | tuple | set | frozenset):
            for v in value:
                walk(v, name)

    walk(matrix, "")
    return frozenset(found)


def redacted_view(outcome: CheckOutcome, known: frozenset[str] = frozenset()) -> CheckOutcome:
    """``--redact`` is a view: the verdicts were reached on the real report; the reports, messages,
    evidence and skip reasons shown carry pseudonyms for hostnames and addresses. Versions that
    look like addresses stay (``known``: the matrix's, see ``matrix_versions``)."""
    from envcheck.model.scrub import anonymize, hostnames_of, versions_of
    from envcheck.redact import pseudonymize_text, redact_value_tree, strings_in, version_quads

    names = tuple(n for r in outcome.reports for n in hostnames_of(r))
    result = outcome.result
    # the versions the reports state, and those the findings write as versions anywhere (a
    # fix's `nvidia-cublas-cu12==12.4.5.8`): kept in the prose that names them bare, too
    versions = known.union(*(versions_of(r) for r in outcome.reports))
    for f in result.findings:
        texts = [f.message, *strings_in(f.evidence)]
        if f.fix is not None:
            texts += [f.fix.summary, *f.fix.commands]
        versions |= version_quads("\n".join(texts))
    findings = tuple(
        replace(
            f,
            message=pseudonymize_text(f.message, names, versions),
            node=pseudonymize_text(f.node, names) if f.node else f.node,
            evidence=redact_value_tree(f.evidence, names, versions),
            fix=redacted_fix(f.fix, names, versions),
        )
        for f in result.findings
    )
    skipped = tuple(
        replace(
            s,
            reason=pseudonymize_text(s.reason, names, versions),
            node=pseudonymize_text(s.node, names) if s.node else s.node,
        )
        for s in result.skipped
    )
    return replace(
        outcome,
        reports=tuple(r if r.redacted else anonymize(r) for r in outcome.reports),
        result=replace(result, findings=findings, skipped=skipped),
    )
