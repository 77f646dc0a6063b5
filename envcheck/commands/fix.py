"""``fix`` as functions: the plan for a node's findings (``plan_fix``), its text forms
(``render_fix``), and running its steps (``apply_fix``). Nothing here prints or exits.

Exit codes (``FixResult.code``): 0 nothing left at or above the threshold (with --apply: every
step it ran succeeded and nothing remains), 1 a plan with steps, conflicts (no resolution
included), or findings that remain once it is applied (with --apply: a step failed or pins
conflict), 4 the index could not be reached while resolving the plan (nothing was written).

Unless ``resolve`` is off, every round of the plan is resolved with uv against the node's
installed packages (``plan/resolved.py``) and the rules run on that resolution; the plan says
whether it was (``Plan.resolved``) and, when not, why.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from envcheck.model.finding import Severity
from envcheck.model.plan import Plan
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.matrix.model import Matrix
    from envcheck.plan.apply import ApplyOutcome
    from envcheck.plan.offline import OfflineResolver
    from envcheck.plan.resolved import PlanResolver

FixFormat = Literal["text", "sh", "requirements", "conda"]


@dataclass(frozen=True)
class FixOptions:
    report: NodeReport  # the node (probed, saved, declared or parsed: the caller obtains it)
    severity: Severity = Severity.WARNING
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    matrix: tuple[str, ...] = ()
    unsafe: bool = False
    resolve: bool = True  # resolve the plan with uv (False: --no-resolve)
    index_url: str | None = None  # the index (default: the one pip is configured with)
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False


EXIT_INDEX = 4


@dataclass(frozen=True)
class FixResult:
    plan: Plan
    report: NodeReport
    code: int
    message: str | None = None  # why there is no plan (an index that could not be reached)

    @property
    def status(self) -> str:
        if self.code == EXIT_INDEX:
            return "unreachable"
        if self.plan.conflicts:
            return "conflict"
        return "ok" if self.code == 0 else "findings"


def exit_code(plan: Plan) -> int:
    """1 while anything is left to do or still reported; 0 only for a node with nothing to fix."""
    return 1 if (plan.steps or plan.conflicts or plan.remaining) else 0


def plan_fix(options: FixOptions) -> FixResult:
    from envcheck.matrix_validate import load
    from envcheck.plan.planner import build_plan
    from envcheck.plan.uvproject import IndexUnreachable
    from envcheck.rules import all_rules, select
    from envcheck.settings import choose, find_settings

    settings = find_settings()
    matrix = load([*settings.matrix, *options.matrix])
    chosen = select(all_rules(matrix), *choose(settings, options.select, options.ignore))
    from envcheck.plan.offline import OfflineResolver

    resolver = _resolver(options, matrix)
    try:
        plan, _after = build_plan(
            options.report,
            matrix,
            chosen,
            threshold=options.severity,
            resolve=resolver,
            constrain=True,
        )
    except IndexUnreachable as exc:
        return FixResult(
            Plan(node=options.report.node, resolver=f"{exc}"),
            options.report,
            EXIT_INDEX,
            f"{exc}; nothing was written",
        )
    if plan.resolved and not isinstance(resolver, OfflineResolver):
        plan = replace(plan, resolver=f"{resolver.describe(options.report)}: {plan.resolver}")
    return FixResult(plan, options.report, exit_code(plan))


def _resolver(options: FixOptions, matrix: Matrix) -> PlanResolver | OfflineResolver:
    """The resolver for the plan: uv against the index, or (``--no-resolve``, no uv) the
    offline one, whose reason the plan prints."""
    from envcheck.plan.offline import OfflineResolver
    from envcheck.plan.resolve import UvMissing, find_uv, pip_index_config
    from envcheck.plan.resolved import PlanResolver

    if not options.resolve:
        return OfflineResolver(
            matrix, "not verified by the resolver (--no-resolve): versions are the simulator's"
        )
    try:
        uv = find_uv()
    except UvMissing as exc:
        return OfflineResolver(matrix, f"not verified by the resolver: {exc}")
    index = pip_index_config(
        index_url=options.index_url,
        extra_index_urls=options.extra_index_urls,
        find_links=options.find_links,
        no_index=options.no_index,
    )
    return PlanResolver(uv, index, matrix)


def render_fix(
    result: FixResult, fmt: FixFormat, options: FixOptions, *, applying: bool = False
) -> str:
    from envcheck.plan.emit import conda, pip, requirements

    plan, report = result.plan, result.report
    if fmt == "sh":
        return pip.plan_to_sh(plan, include_unsafe=options.unsafe)
    if fmt == "requirements":
        return requirements.plan_to_requirements(plan, include_unsafe=options.unsafe)
    if fmt == "conda":
        python = report.python.data.version if report.python.is_ok and report.python.data else None
        return conda.plan_to_conda(
            plan, python=python, name=f"{report.node}-fix", include_unsafe=options.unsafe
        )
    from envcheck.formats.plan_text import render_plan

    source = report.origin.kind + (f" {report.origin.detail}" if report.origin.detail else "")
    return render_plan(
        plan,
        source=source,
        threshold=options.severity.value,
        include_unsafe=options.unsafe,
        applying=applying,
    )


@dataclass(frozen=True)
class ApplyOptions:
    python: str | None = None  # the interpreter whose environment changes (default: this one)
    snapshot: str | None = None
    unsafe: bool = False
    force: bool = False
    matrix: tuple[str, ...] = ()  # overlays (the torch variant indexes the snapshot records)


@dataclass(frozen=True)
class ApplyResult:
    outcome: ApplyOutcome
    code: int


def apply_fix(
    plan: Plan, options: ApplyOptions, echo: Callable[[str], None] = lambda _line: None
) -> ApplyResult:
    from envcheck.matrix_validate import load
    from envcheck.plan.apply import apply_plan
    from envcheck.settings import find_settings

    matrix = load([*find_settings().matrix, *options.matrix])

    def index_for(label: str) -> str | None:
        known = re.fullmatch(r"cu\d{3,}|cpu|rocm[\d.]+", label)
        return matrix.torch_index_url(label) if known else None

    outcome = apply_plan(
        plan,
        options.python or sys.executable,
        snapshot=options.snapshot,  # None: a fresh name of the plan's own
        include_unsafe=options.unsafe,
        overwrite=options.force,
        echo=echo,
        index_for=index_for,
    )
    code = 1 if outcome.failed is not None or plan.conflicts else 0
    return ApplyResult(outcome, code)
