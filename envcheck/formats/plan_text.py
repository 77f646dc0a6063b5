"""Plain-text rendering of fix plans, chosen stacks and apply runs (for a terminal or a log)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from envcheck.model.finding import Finding
from envcheck.model.plan import Plan, Stack
from envcheck.plan.apply import ApplyOutcome

_W = 100  # at most; narrower on a narrower terminal ($COLUMNS)


def _width() -> int:
    from envcheck.terminal import terminal_size

    return max(40, min(_W, terminal_size((_W, 24)).columns))


def _whole(text: str, first: str) -> list[str]:
    """A command on one line, never wrapped: pasted, it is whole."""
    return [first + text]


def _wrap(text: str, indent: int, first: str = "") -> list[str]:
    pad = " " * indent
    return textwrap.wrap(
        text,
        _width(),
        initial_indent=first or pad,
        subsequent_indent=pad,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _finding_line(f: Finding) -> list[str]:
    return _wrap(f.message, 20, f"  {f.severity.value.upper():<8}{f.code:<10}")


def render_plan(
    plan: Plan, *, source: str, threshold: str, include_unsafe: bool, applying: bool = False
) -> str:
    out = [f"envcheck fix · node {plan.node} · {source}"]
    if not plan.addressed and not plan.remaining and not plan.conflicts:
        out.append(f"  nothing at or above {threshold} to fix")
        return "\n".join(out) + "\n"
    out += _wrap(
        f"{len(plan.addressed)} finding(s) at or above {threshold} answered by"
        f" {len(plan.steps)} step(s)",
        4,
        "  ",
    )
    if plan.resolved:
        out += _wrap(f"verified: {plan.resolver}; the rules ran on the resolved set", 4, "  ")
    elif plan.resolved is False:
        out += _wrap(plan.resolver.replace("not verified", "NOT verified", 1), 4, "  ")
    out.append("")
    for number, step in enumerate(plan.steps, 1):
        head = f"  {number:>2}. [{step.applicability}] {' '.join(step.codes)}: "
        out += _wrap(step.reason, 7, head)
        if step.action.kind == "manual":
            out += _whole(step.action.text or "", "       by hand: ")
        else:
            out += _whole(step.command(), "       $ ")
    for conflict in plan.conflicts:
        out.append("")
        tail = (
            "the pip steps are withheld; change what is installed or the plan's pins"
            if conflict.subject == "resolution"
            else "neither is emitted; decide and pin one"
        )
        out += _wrap(
            f"{conflict.message} — {tail}",
            12,
            f"  CONFLICT  {', '.join(conflict.codes)} ",
        )
    if plan.notes:
        out.append("")
        out += [line for n in plan.notes for line in _wrap(n, 4, "  · ")]
    if plan.remaining:
        out.append("")
        out += _wrap(
            "still reported once the plan is applied (needs the manual steps, or has no"
            " automatic fix):",
            4,
            "  ",
        )
        for finding in plan.remaining:
            out += _finding_line(finding)
    if not plan.converged and not plan.conflicts:
        out.append("")
        out += _wrap(
            f"the plan did not settle after {plan.iterations} rounds of re-checking: review it",
            4,
            "  ",
        )
    out.append("")
    runnable = [
        i
        for i, s in enumerate(plan.steps, 1)
        if s.applicability == "safe" and s.action.kind in ("pip_install", "pip_uninstall")
    ]
    unsafe = [i for i, s in enumerate(plan.steps, 1) if s.applicability == "unsafe"]
    if applying:
        chosen = runnable + (unsafe if include_unsafe else [])
        hint = "Running now, after a `pip freeze` snapshot: step(s) "
        hint += ", ".join(map(str, sorted(chosen))) if chosen else "none"
        if unsafe and not include_unsafe:
            hint += f" (unsafe {', '.join(map(str, unsafe))} need --unsafe)"
        out += _wrap(hint + "; environment variables and manual steps are yours to do.", 2, "  ")
        return "\n".join(out) + "\n"
    hint = "Nothing was changed. `envcheck fix --apply` runs the safe pip steps"
    hint += f" ({', '.join(map(str, runnable))})" if runnable else " (none here)"
    if unsafe:
        hint += f"; --unsafe adds {', '.join(map(str, unsafe))}"
    out += _wrap(hint + "; environment variables and manual steps are yours to do.", 2, "  ")
    return "\n".join(out) + "\n"


def render_stack(stack: Stack) -> str:
    out = []
    for choice in stack.choices:
        out += _wrap(choice.value, 4, f"  {choice.subject:<9}")
        out += _wrap(choice.reason, 13)
    for conflict in stack.conflicts:
        out += _wrap(conflict.message, 12, "  CONFLICT  ")
    for note in stack.notes:
        out += _wrap(note, 4, "  · ")
    return "\n".join(out) + ("\n" if out else "")


def render_findings(findings: Sequence[Finding]) -> str:
    return "".join("\n".join(_finding_line(f)) + "\n" for f in findings)


def render_apply(outcome: ApplyOutcome) -> str:
    out = []
    failed = outcome.failed
    ok = [r for r in outcome.ran if r.ok]
    out.append(
        f"envcheck fix --apply · {outcome.python}: {len(ok)} step(s) ran"
        + (", then one FAILED" if failed else "")
    )
    if failed is not None:
        out += _whole(" ".join(failed.argv), "  failed: ")
        out += ["    " + line for line in failed.detail.splitlines()]
    for step, why in outcome.not_run:
        text = step.command() if step.action.kind != "manual" else step.action.text or ""
        out += _wrap(f"{text}  [{why}]", 6, f"  - {' '.join(step.codes)}: ")
    if outcome.state_error:
        out.append(f"  state unknown: {outcome.state_error}")
    elif outcome.changes:
        out.append("  the environment now differs from the snapshot:")
        out += [f"    {c}" for c in outcome.changes]
    else:
        out.append("  the environment is unchanged")
    out.append(f"  snapshot: {outcome.snapshot}")
    if outcome.rollback:
        out.append("  to roll back:")
        out += [f"    {c}" for c in outcome.rollback]
    return "\n".join(out) + "\n"
