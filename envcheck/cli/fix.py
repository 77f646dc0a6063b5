"""``envcheck fix``: parse the arguments, call ``envcheck.commands.fix`` and render the plan
(printed, or written as sh, requirements or a conda file); ``--apply`` runs its safe steps
after writing a ``pip freeze`` snapshot.

Exit codes: 0 nothing to fix (or, with --apply, every step it ran succeeded), 1 a plan with
steps or conflicts (no resolution included), or findings that remain once it is applied (with
--apply: a step failed, or pins conflict), 2 usage or input error, 4 the index could not be
reached while resolving the plan (nothing written, nothing run).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from envcheck.cli import common
from envcheck.model.finding import Severity
from envcheck.model.plan import Plan
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.commands.fix import FixOptions, FixResult

FORMATS = ("text", "sh", "requirements", "conda")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "fix",
        help="the plan that fixes this node's findings (printed; --apply runs its safe steps)",
        description="Turn findings into an ordered, pinned plan. Nothing is changed without "
        "--apply; --apply runs only safe steps (--unsafe adds unsafe ones), after writing a "
        "`pip freeze` snapshot. Before it is shown, the plan is resolved with uv against the "
        "node's installed packages and re-checked on that resolution (--no-resolve skips it). "
        "Exit codes: 0 nothing to fix / all steps ran, 1 a plan, a conflict or a failed step, "
        "2 bad input or usage, 4 the index could not be reached.",
    )
    common.add_source_options(p)
    rules = p.add_argument_group("rules")
    rules.add_argument(
        "--severity",
        type=common.severity_arg,
        default=Severity.WARNING,
        metavar="LEVEL",
        help="plan for findings at or above LEVEL: warning (default), error, info",
    )
    rules.add_argument("--select", type=common.codes_arg, metavar="CODES", help="only these rules")
    rules.add_argument("--ignore", type=common.codes_arg, metavar="CODES", help="skip these rules")
    common.add_matrix_option(rules)
    res = p.add_argument_group("resolving (default: uv, the index pip is configured with)")
    res.add_argument(
        "--no-resolve",
        action="store_true",
        help="do not resolve the plan with uv (offline): the plan says it was not verified",
    )
    res.add_argument(
        "--index-url", type=common.url_arg, metavar="URL", help="resolve against this index"
    )
    res.add_argument(
        "--extra-index-url", type=common.url_arg, action="append", default=[], metavar="URL"
    )
    res.add_argument("--find-links", action="append", default=[], metavar="DIR|URL")
    res.add_argument("--no-index", action="store_true", help="resolve from --find-links only")
    out = p.add_argument_group("output")
    fmt = out.add_mutually_exclusive_group()
    fmt.add_argument(
        "--format", choices=FORMATS, default="text", help="text (default), sh, requirements, conda"
    )
    fmt.add_argument("--json", action="store_true", help="print the versioned JSON envelope")
    out.add_argument("-o", "--output", metavar="FILE", help="write the plan to FILE")
    out.add_argument("--force", action="store_true", help="overwrite existing files")
    run_group = p.add_argument_group("applying")
    run_group.add_argument(
        "--apply", action="store_true", help="run the safe steps in this environment"
    )
    run_group.add_argument(
        "--unsafe", action="store_true", help="also run (or emit) unsafe steps, e.g. a torch change"
    )
    run_group.add_argument(
        "--snapshot",
        metavar="FILE",
        help="where --apply writes the pre-change `pip freeze` (default: envcheck-freeze-<time>.txt)",
    )
    p.set_defaults(run=run)


def _options(args: argparse.Namespace, report: NodeReport) -> FixOptions:
    from envcheck.commands.fix import FixOptions

    return FixOptions(
        report=report,
        severity=args.severity,
        select=tuple(args.select or ()),
        ignore=tuple(args.ignore or ()),
        matrix=tuple(args.matrix),
        unsafe=args.unsafe,
        resolve=not args.no_resolve,
        index_url=args.index_url,
        extra_index_urls=tuple(args.extra_index_url),
        find_links=tuple(args.find_links),
        no_index=args.no_index,
    )


def run(args: argparse.Namespace) -> int:
    from envcheck.commands.fix import plan_fix, render_fix
    from envcheck.errors import UsageError

    if args.apply and (args.spec or args.report):
        raise UsageError(
            "--apply changes the environment of an interpreter; it cannot apply to --spec or --report"
        )
    if args.apply and args.output:
        raise UsageError("--apply runs the plan; write it with -o in a separate run")
    if args.snapshot and not args.apply:
        raise UsageError("--snapshot only applies with --apply")
    if args.snapshot:
        from envcheck.output import check_target

        # like -o: checked before any work, so a bad name is one line and no plan is printed
        check_target(args.snapshot, overwrite=args.force, option="--snapshot")
    if args.no_resolve and (
        args.index_url or args.extra_index_url or args.find_links or args.no_index
    ):
        raise UsageError("--no-resolve and an index option contradict each other")
    if args.no_index and args.index_url:
        raise UsageError("--no-index and --index-url contradict each other")
    report = common.obtain_report(args)
    options = _options(args, report)
    result = plan_fix(options)
    if result.message is not None:  # the index could not be reached: no plan, nothing written
        if args.json:
            _emit_json(result.plan, result.code, result.status, None, result.message)
        sys.stderr.write(f"envcheck: {result.message}; exit {result.code}\n")
        return result.code
    if args.apply:
        return _apply(result, options, args)
    text = render_fix(result, args.format, options)
    if args.output:
        from envcheck.output import write
        from envcheck.redact import redact_urls

        write(args.output, text, overwrite=args.force, redactor=redact_urls)
        sys.stderr.write(f"envcheck: wrote {args.output}\n")
    if args.json:
        _emit_json(result.plan, result.code, result.status, None)
    elif not args.output or args.format == "text":
        common.emit(text)
    _summary(result.plan, result.code)
    return result.code


def _apply(result: FixResult, options: FixOptions, args: argparse.Namespace) -> int:
    from envcheck.commands.fix import ApplyOptions, apply_fix, render_fix
    from envcheck.formats.plan_text import render_apply

    if not args.json:
        common.emit(render_fix(result, "text", options, applying=True))

    def echo(line: str) -> None:
        sys.stderr.write(f"envcheck: {line}\n")
        sys.stderr.flush()

    applied = apply_fix(
        result.plan,
        ApplyOptions(
            python=args.python,
            snapshot=args.snapshot,
            unsafe=args.unsafe,
            force=args.force,
            matrix=tuple(args.matrix),
        ),
        echo,
    )
    outcome = applied.outcome
    status = "conflict" if result.plan.conflicts else ("ok" if applied.code == 0 else "findings")
    if outcome.failed:
        status = "failed"
    if args.json:
        _emit_json(result.plan, applied.code, status, outcome.to_json())
    else:
        common.emit(render_apply(outcome))
    sys.stderr.write(
        f"envcheck: {sum(r.ok for r in outcome.ran)} step(s) ran"
        + (", one failed" if outcome.failed else "")
        + f"; snapshot {outcome.snapshot}; exit {applied.code}\n"
    )
    return applied.code


def _emit_json(
    plan: Plan,
    exit_code: int,
    status: str,
    applied: dict[str, object] | None,
    error: str | None = None,
) -> None:
    from envcheck.model.envelope import envelope

    data: dict[str, object] = {"plan": plan.to_json()}
    if applied is not None:
        data["apply"] = applied
    if error is not None:
        data["message"] = error
    common.emit(common.json_text(envelope("fix", status, exit_code, data)))


def _summary(plan: Plan, exit_code: int) -> None:
    kinds: dict[str, int] = {}
    for step in plan.steps:
        kinds[step.applicability] = kinds.get(step.applicability, 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "no steps"
    left = f", {len(plan.remaining)} finding(s) remain" if plan.remaining else ""
    sys.stderr.write(
        f"envcheck: plan of {len(plan.steps)} step(s) ({parts}), {len(plan.conflicts)} conflict(s)"
        f"{left}; exit {exit_code}\n"
    )
