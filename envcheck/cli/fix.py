"""``envcheck fix``: the plan for a node's findings, printed (or written as sh, requirements or
a conda file); ``--apply`` runs its safe steps after writing a ``pip freeze`` snapshot.

Exit codes: 0 nothing to fix (or, with --apply, every step it ran succeeded), 1 a plan with
steps or conflicts (with --apply: a step failed, or pins conflict), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from typing import Any

from envcheck.cli import common
from envcheck.model.finding import Severity
from envcheck.model.plan import Plan
from envcheck.model.report import NodeReport

FORMATS = ("text", "sh", "requirements", "conda")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "fix",
        help="the plan that fixes this node's findings (printed; --apply runs its safe steps)",
        description="Turn findings into an ordered, pinned plan. Nothing is changed without "
        "--apply; --apply runs only safe steps (--unsafe adds unsafe ones), after writing a "
        "`pip freeze` snapshot. Exit codes: 0 nothing to fix / all steps ran, 1 a plan or a "
        "failed step, 2 bad input or usage.",
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


def _render(plan: Plan, report: NodeReport, args: argparse.Namespace) -> str:
    from envcheck.plan.emit import conda, pip, requirements

    if args.format == "sh":
        return pip.plan_to_sh(plan, include_unsafe=args.unsafe)
    if args.format == "requirements":
        return requirements.plan_to_requirements(plan, include_unsafe=args.unsafe)
    if args.format == "conda":
        python = report.python.data.version if report.python.is_ok and report.python.data else None
        return conda.plan_to_conda(
            plan, python=python, name=f"{report.node}-fix", include_unsafe=args.unsafe
        )
    from envcheck.formats.plan_text import render_plan

    source = report.origin.kind + (f" {report.origin.detail}" if report.origin.detail else "")
    return render_plan(
        plan, source=source, threshold=args.severity.value, include_unsafe=args.unsafe
    )


def build(args: argparse.Namespace, report: NodeReport) -> Plan:
    from envcheck.matrix.load import load
    from envcheck.plan.planner import build_plan
    from envcheck.rules import all_rules, select
    from envcheck.settings import find_settings

    settings = find_settings()
    matrix = load([*settings.matrix, *args.matrix])
    chosen = select(
        all_rules(matrix), args.select or settings.select, args.ignore or settings.ignore
    )
    plan, _after = build_plan(report, matrix, chosen, threshold=args.severity)
    return plan


def run(args: argparse.Namespace) -> int:
    from envcheck.errors import UsageError

    if args.apply and (args.spec or args.report):
        raise UsageError(
            "--apply changes the environment of an interpreter; it cannot apply to --spec or --report"
        )
    if args.apply and args.output:
        raise UsageError("--apply runs the plan; write it with -o in a separate run")
    if args.snapshot and not args.apply:
        raise UsageError("--snapshot only applies with --apply")
    report = common.obtain_report(args)
    plan = build(args, report)
    exit_code = 1 if (plan.steps or plan.conflicts) else 0
    if not args.apply:
        text = _render(plan, report, args)
        if args.output:
            from envcheck.fileio import write_atomic

            write_atomic(args.output, text, overwrite=args.force)
            sys.stderr.write(f"envcheck: wrote {args.output}\n")
        if args.json:
            _emit_json(plan, exit_code, None)
        elif not args.output or args.format == "text":
            common.emit(text)
        _summary(plan, exit_code)
        return exit_code
    return _apply(plan, args)


def _apply(plan: Plan, args: argparse.Namespace) -> int:
    from envcheck.formats.plan_text import render_apply
    from envcheck.plan.apply import apply_plan

    python = args.python or sys.executable
    snapshot = args.snapshot or (
        f"envcheck-freeze-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.txt"
    )
    if not args.json:
        from envcheck.formats.plan_text import render_plan

        common.emit(
            render_plan(
                plan,
                source=f"{python}",
                threshold=args.severity.value,
                include_unsafe=args.unsafe,
            )
        )

    def echo(line: str) -> None:
        sys.stderr.write(f"envcheck: {line}\n")
        sys.stderr.flush()

    outcome = apply_plan(
        plan,
        python,
        snapshot=snapshot,
        include_unsafe=args.unsafe,
        overwrite=args.force,
        echo=echo,
    )
    exit_code = 1 if outcome.failed is not None or plan.conflicts else 0
    if args.json:
        _emit_json(plan, exit_code, outcome.to_json())
    else:
        common.emit(render_apply(outcome))
    sys.stderr.write(
        f"envcheck: {sum(r.ok for r in outcome.ran)} step(s) ran"
        + (", one failed" if outcome.failed else "")
        + f"; snapshot {outcome.snapshot}; exit {exit_code}\n"
    )
    return exit_code


def _emit_json(plan: Plan, exit_code: int, applied: dict[str, object] | None) -> None:
    from envcheck.formats.json import envelope

    status = "ok" if exit_code == 0 else "findings"
    if plan.conflicts:
        status = "conflict"
    if applied is not None and applied.get("failed"):
        status = "failed"
    data: dict[str, object] = {"plan": plan.to_json()}
    if applied is not None:
        data["apply"] = applied
    common.emit(common.json_text(envelope("fix", status, exit_code, data)))


def _summary(plan: Plan, exit_code: int) -> None:
    kinds: dict[str, int] = {}
    for step in plan.steps:
        kinds[step.applicability] = kinds.get(step.applicability, 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "no steps"
    sys.stderr.write(
        f"envcheck: plan of {len(plan.steps)} step(s) ({parts}), {len(plan.conflicts)} conflict(s); "
        f"exit {exit_code}\n"
    )
