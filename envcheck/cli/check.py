"""``envcheck check`` (the default command): verdicts for a node, each with its reason, source
and fix. Exit 0 when nothing at or above ``--severity`` is found, 1 when something is."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from envcheck.cli import common, from_opts
from envcheck.commands.check import (
    CheckOutcome,
    RuleOptions,
    SelectAhead,
    check,
    redacted_view,
    summary_counts,
)
from envcheck.model.report import NodeReport


def summary_units(counts: dict[str, Any], exit_code: int) -> list[str]:
    """The summary's phrases: '5 error(s), ... 186 rules, 46 skipped (unknown: env 12, packages 9;
    3 matter for the node); exit 1', each unit kept whole when the line wraps."""
    units = [
        f"{counts['error']} error(s),",
        f"{counts['warning']} warning(s),",
        f"{counts['info']} info;",
        f"{counts['rules_run']} rules,",
    ]
    end = f"exit {exit_code}"
    if not counts["skipped"]:
        return [*units, "0 skipped;", end]
    kinds = [f"{k} {n}," for k, n in counts["skipped_by_fact"].items()]
    kinds[-1] = kinds[-1][:-1] + ";"
    return [
        *units,
        f"{counts['skipped']} skipped (unknown:",
        *kinds,
        f"{counts['skipped_that_matter']} matter for the node); {end}",
    ]


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
        "on the node's hardware, and what pip checks before installing it (markers, "
        "Requires-Python, wheel tags, yanked releases, read from the index): nothing is "
        "installed (see docs/fix.md)",
    )
    p.add_argument(
        "--lock-offline",
        action="store_true",
        help="with --lock: read no index (check only what the lock itself states)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="with --lock: install the lock into a scratch venv with uv and import what it "
        "runs (torch, vLLM, triton, ...) on CPU, each import bounded; a failure is PKG172",
    )
    add_check_options(p)
    common.add_output_options(p)
    # a check builds the matrix, the report and the findings once and keeps them to the end,
    # and reference counting frees the rest: in the command's own process (entry()) the cyclic
    # collector stays off, which would only walk them (5% of the command's CPU); entry()
    # freezes what is left at the end rather than collect it
    p.set_defaults(run=run, collector_off=True)


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
    rules.add_argument(
        "--expect",
        metavar="SPEC",
        help="what the node must have, e.g. '8x H100, driver>=550' or 'no-gpu' (a node meant "
        "to have no GPU); a node short of it fails (exit 1)",
    )
    common.add_matrix_option(rules)


def rule_options(args: argparse.Namespace) -> RuleOptions:
    return RuleOptions(
        select=tuple(args.select or ()),
        ignore=tuple(args.ignore or ()),
        severity=args.severity,
        matrix=tuple(args.matrix),
        strict=bool(getattr(args, "strict", False)),
        expect=getattr(args, "expect", None),
    )


def evaluate(
    args: argparse.Namespace, reports: list[NodeReport], ahead: SelectAhead | None = None
) -> CheckOutcome:
    return check(reports, rule_options(args), ahead)


def checked_file(args: argparse.Namespace) -> str | None:
    """The file whose facts were checked (the location CI formats give a finding): the lock,
    else the first pasted dump, else the saved report or the spec; None for this node."""
    named = [getattr(args, "lock", None), *(getattr(args, "from_", None) or ())]
    named += [getattr(args, "report", None), getattr(args, "spec", None)]
    return next((f for f in named if f and f != "-"), None)


def ci_text(outcome: CheckOutcome, args: argparse.Namespace) -> str:
    from envcheck.formats.ci import from_findings
    from envcheck.formats.ci_output import render

    file = checked_file(args)
    run = from_findings(
        "check",
        outcome.rules,
        outcome.result.findings,
        outcome.result.skipped,
        threshold=outcome.threshold,
        exit_code=outcome.exit_code,
        errors=outcome.result.errors,
        files={r.node: file for r in outcome.reports} if file else None,
        strict_gaps=outcome.strict_gaps,
    )
    return render(args.output_format, run)


def render(outcome: CheckOutcome, args: argparse.Namespace) -> None:
    from envcheck.formats.ci_output import CI_FORMATS

    fmt = getattr(args, "output_format", "text")
    gaps = outcome.strict_gaps
    text = None
    if fmt in CI_FORMATS:
        text = ci_text(outcome, args)
        common.emit(text)
    elif args.json:
        common.emit(common.json_text(outcome.envelope()))
    elif args.markdown:
        from envcheck.formats.markdown import render_check

        common.emit(
            render_check(
                outcome.reports,
                outcome.result,
                outcome.threshold,
                verbose=args.verbose,
                gaps=gaps,
            )
        )
    else:
        from envcheck.formats.table import console, print_check

        print_check(
            outcome.reports,
            outcome.result,
            outcome.threshold,
            console(),
            verbose=args.verbose,
            gaps=gaps,
        )
    if args.output:
        if text is None and args.markdown:
            from envcheck.formats.markdown import render_check

            text = render_check(
                outcome.reports, outcome.result, outcome.threshold, verbose=True, gaps=gaps
            )
        elif text is None:
            text = common.json_text(outcome.envelope())
        common.write_output(args.output, text, overwrite=args.force)
    common.summary(
        summary_units(summary_counts(outcome.result, outcome.threshold), outcome.exit_code)
    )


def _node_and_lock(args: argparse.Namespace) -> tuple[NodeReport, list[Any]]:
    """The node's report (with ``--lock`` applied) and the lock gate's findings."""
    report = common.obtain_report(args, anonymized=False)
    lock = getattr(args, "lock", None)
    if getattr(args, "verify", False) and not lock:
        from envcheck.errors import UsageError

        raise UsageError("--verify needs --lock FILE (the lock to install into a scratch venv)")
    extra: list[Any] = []
    if lock:
        from envcheck.plan.lockfile import apply_lock, install_findings

        report = apply_lock(report, lock)
        # what pip checks before it installs anything: one verdict with the rules' findings
        extra = install_findings(report, lock, index=not getattr(args, "lock_offline", False))
        if getattr(args, "verify", False) and not any(f.code == "PKG170" for f in extra):
            from envcheck.commands.lock_verify import verify_lock
            from envcheck.formats.progress import status

            with status("installing the lock into a scratch venv (uv) and importing it"):
                verified = verify_lock(lock, _verify_options(report))
            extra += list(verified.findings)
            sys.stderr.write(verified.summary + "\n")
    return report, extra


def run(args: argparse.Namespace) -> int:
    # the matrix and the rules load while the node is probed
    ahead = SelectAhead(rule_options(args))
    try:
        report, extra = _node_and_lock(args)
    except BaseException:
        # a bad spec or lock ends the run: the loading thread finishes first, so the process
        # never exits under a thread inside a C extension (that can crash the interpreter)
        ahead.wait()
        raise
    outcome = evaluate(args, [report], ahead)
    extra = _selected(extra, tuple(args.select or ()), tuple(args.ignore or ()))
    if extra:
        from dataclasses import replace

        result = outcome.result
        outcome = replace(outcome, result=replace(result, findings=(*extra, *result.findings)))
    shown = outcome
    if getattr(args, "redact", False):
        from envcheck.commands.check import matrix_versions, select_rules

        shown = redacted_view(outcome, matrix_versions(select_rules(rule_options(args))[0]))
    render(shown, args)
    return outcome.exit_code


def _selected(findings: list[Any], select: tuple[str, ...], ignore: tuple[str, ...]) -> list[Any]:
    """The lock gate's findings (PKG170-173, catalogue rules of scope "lock") as --select and
    --ignore choose them, like the rules' own."""
    return [
        f
        for f in findings
        if (not select or any(f.code.startswith(p) for p in select))
        and not any(f.code.startswith(p) for p in ignore)
    ]


def _verify_options(report: NodeReport) -> Any:
    """The scratch venv's Python and CPU: the node's (a spec of another node is refused)."""
    from envcheck.commands.lock_verify import VerifyOptions

    data = report.python.data if report.python.is_ok else None
    if data is None:
        return VerifyOptions()
    return VerifyOptions(python=data.version, arch=data.markers.get("platform_machine"))
