"""``envcheck check`` (the default command): verdicts for a node, each with its reason, source
and fix. Exit 0 when nothing at or above ``--severity`` is found, 1 when something is."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from envcheck.cli import common, from_opts
from envcheck.model.finding import CheckResult, Severity, Skipped, skip_kinds, skip_matters
from envcheck.model.report import NodeReport


@dataclass(frozen=True)
class CheckOutcome:
    reports: tuple[NodeReport, ...]
    result: CheckResult
    threshold: Severity
    strict: bool = False

    @property
    def gaps(self) -> tuple[Skipped, ...]:
        """Skipped rules that matter for the node (see ``skip_matters``)."""
        return tuple(s for s in self.result.skipped if skip_matters(s))

    @property
    def exit_code(self) -> int:
        if self.result.at_or_above(self.threshold) or (self.strict and self.gaps):
            return 1
        return 3 if self.result.errors else 0

    @property
    def status(self) -> str:
        if self.result.errors:
            return "partial"
        if self.result.at_or_above(self.threshold) or (self.strict and self.gaps):
            return "findings"
        return "ok"

    def envelope(self) -> dict[str, Any]:
        from envcheck.formats.json import envelope

        data = {
            "reports": [r.to_dict() for r in self.reports],
            "findings": [f.to_json() for f in self.result.findings],
            "skipped": [s.to_json() for s in self.result.skipped],
            "summary": summary_counts(self.result, self.threshold),
        }
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


def skipped_text(counts: dict[str, Any]) -> str:
    """'46 skipped (unknown: env 12, packages 9; 3 matter)' for the summary line."""
    if not counts["skipped"]:
        return "0 skipped"
    kinds = ", ".join(f"{k} {n}" for k, n in counts["skipped_by_fact"].items())
    return (
        f"{counts['skipped']} skipped (unknown: {kinds}; "
        f"{counts['skipped_that_matter']} matter for the node)"
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check this node (or a spec / saved report) against the matrix (default command)",
        description="Check a node's stack against the compatibility matrix. Exit codes: 0 nothing "
        "at or above --severity, 1 findings, 2 bad input or usage, 3 internal error.",
    )
    common.add_source_options(p)
    from_opts.add_from_options(p)
    p.add_argument(
        "--lock",
        metavar="FILE",
        help="check the packages of a lock file (requirements, pylock.toml, environment.yml) "
        "on the node's hardware: nothing is installed (see docs/fix.md)",
    )
    add_check_options(p)
    common.add_output_options(p)
    p.set_defaults(run=run)


def add_check_options(p: argparse.ArgumentParser) -> None:
    rules = p.add_argument_group("rules")
    rules.add_argument(
        "--severity",
        type=common.severity_arg,
        metavar="LEVEL",
        help="exit 1 on findings at or above LEVEL: error (default), warning, info",
    )
    rules.add_argument(
        "--select",
        type=common.codes_arg,
        metavar="CODES",
        help="only rules whose code starts with these (comma-separated, e.g. TOR,CUD)",
    )
    rules.add_argument(
        "--ignore",
        type=common.codes_arg,
        metavar="CODES",
        help="skip rules whose code starts with these",
    )
    rules.add_argument(
        "-v", "--verbose", action="store_true", help="also list skipped rules and why"
    )
    rules.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a rule that matters for the node (its GPU, driver, Python, torch, "
        "vLLM or CUDA wheels) was skipped for an unknown fact",
    )
    common.add_matrix_option(rules)


def evaluate(args: argparse.Namespace, reports: list[NodeReport]) -> CheckOutcome:
    from envcheck.engine import evaluate as run_rules
    from envcheck.matrix.load import load
    from envcheck.rules import all_rules, select
    from envcheck.settings import find_settings

    settings = find_settings()
    matrix = load([*settings.matrix, *args.matrix])
    chosen = select(
        all_rules(matrix), args.select or settings.select, args.ignore or settings.ignore
    )
    chosen = [r for r in chosen if r.scope == "node"]  # cluster rules run in `envcheck cluster`
    threshold = args.severity or Severity(settings.severity or "error")
    results = [run_rules(report, matrix, chosen) for report in reports]
    merged = CheckResult(
        findings=tuple(f for r in results for f in r.findings),
        skipped=tuple(s for r in results for s in r.skipped),
        rules_run=len(chosen),
        errors=tuple(e for r in results for e in r.errors),
    )
    return CheckOutcome(tuple(reports), merged, threshold, bool(getattr(args, "strict", False)))


def render(outcome: CheckOutcome, args: argparse.Namespace) -> None:
    if args.json:
        common.emit(common.json_text(outcome.envelope()))
    elif args.markdown:
        from envcheck.formats.markdown import render_check

        common.emit(
            render_check(outcome.reports, outcome.result, outcome.threshold, verbose=args.verbose)
        )
    else:
        from envcheck.formats.table import console, print_check

        print_check(
            outcome.reports, outcome.result, outcome.threshold, console(), verbose=args.verbose
        )
    if args.output:
        if args.markdown:
            from envcheck.formats.markdown import render_check

            text = render_check(outcome.reports, outcome.result, outcome.threshold, verbose=True)
        else:
            text = common.json_text(outcome.envelope())
        common.write_output(args.output, text)
    counts = summary_counts(outcome.result, outcome.threshold)
    sys.stderr.write(
        f"envcheck: {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info; "
        f"{counts['rules_run']} rules, {skipped_text(counts)}; exit {outcome.exit_code}\n"
    )


def run(args: argparse.Namespace) -> int:
    report = common.obtain_report(args, anonymized=False)
    problem = None
    if getattr(args, "lock", None):
        from envcheck.plan.lockfile import apply_lock, lock_problem

        report = apply_lock(report, args.lock)
        problem = lock_problem(report, args.lock)
    outcome = evaluate(args, [report])
    shown = redacted_view(outcome) if getattr(args, "redact", False) else outcome
    if problem is None:
        render(shown, args)
        return outcome.exit_code
    # a lock that cannot install here fails the gate whatever the rules say
    if args.json:
        data = shown.envelope()
        data.update(status="findings", exit_code=1)
        data["errors"] = [*data["errors"], {"message": f"cannot install: {problem}"}]
        common.emit(common.json_text(data))
    else:
        render(shown, args)
        common.emit(f"cannot install: {problem}\n")
    sys.stderr.write(f"envcheck: the lock cannot install on this node: {problem}; exit 1\n")
    return 1


def redacted_view(outcome: CheckOutcome) -> CheckOutcome:
    """``--redact`` is a view: the verdicts were reached on the real report; the reports, messages,
    evidence and skip reasons shown carry pseudonyms for hostnames and addresses."""
    from dataclasses import replace

    from envcheck.redact import anonymize, hostnames_of, pseudonymize_text, redact_value_tree

    names = tuple(n for r in outcome.reports for n in hostnames_of(r))
    result = outcome.result
    findings = tuple(
        replace(
            f,
            message=pseudonymize_text(f.message, names),
            node=pseudonymize_text(f.node, names) if f.node else f.node,
            evidence=redact_value_tree(f.evidence, names),
        )
        for f in result.findings
    )
    skipped = tuple(
        replace(
            s,
            reason=pseudonymize_text(s.reason, names),
            node=pseudonymize_text(s.node, names) if s.node else s.node,
        )
        for s in result.skipped
    )
    return replace(
        outcome,
        reports=tuple(r if r.redacted else anonymize(r) for r in outcome.reports),
        result=replace(result, findings=findings, skipped=skipped),
    )
