"""A plan as a POSIX sh script: reviewable, `set -eu`, the target interpreter's pip."""

from __future__ import annotations

import shlex

from envcheck.model.finding import Action
from envcheck.model.plan import Plan
from envcheck.plan.emit.text import comment, plan_header, step_comment


def pip_argv(action: Action, python: str, constraints: str | None = None) -> list[str]:
    """The argv that runs an install or uninstall action with ``python -m pip``;
    ``constraints`` is the file that holds the action's constraints (``-c``)."""
    if action.kind == "pip_install":
        argv = [python, "-m", "pip", "install", *action.flags, *action.packages]
        if action.index_url:
            argv += ["--index-url", action.index_url]
        if action.constraints:
            if constraints is None:
                raise ValueError("the action's constraints need a file")
            argv += ["-c", constraints]
        return argv
    if action.kind == "pip_uninstall":
        return [python, "-m", "pip", "uninstall", "-y", *action.packages]
    raise ValueError(f"{action.kind} is not a pip action")


def _in_double_quotes(text: str) -> str:
    return "".join("\\" + c if c in '"$`\\' else c for c in text)


def _constraints_file(pins: tuple[str, ...]) -> list[str]:
    """Lines that write ``pins`` to "$CONSTRAINTS" (a file made once, removed on exit)."""
    if not pins:
        return []
    return ["cat > \"$CONSTRAINTS\" <<'ENVCHECK_CONSTRAINTS'", *pins, "ENVCHECK_CONSTRAINTS"]


def plan_to_sh(plan: Plan, *, include_unsafe: bool = False) -> str:
    lines = ["#!/bin/sh", *plan_header(plan, command="envcheck fix --format sh")]
    checked = {
        s.action.python for s in plan.steps if s.action.kind in ("pip_install", "pip_uninstall")
    }
    default = next(iter(checked)) if len(checked) == 1 and None not in checked else None
    lines += [
        f"# Runs with $PYTHON (default: {default or 'python3'}): the interpreter of the"
        " environment to fix" + (" (the one checked)." if default else "."),
        "set -eu",
        f'PYTHON="${{PYTHON:-{_in_double_quotes(default or "python3")}}}"',
    ]
    if any(s.action.constraints for s in plan.steps):
        lines += [
            "# later pip steps are held by constraints (-c: the resolved set, or unresolved, the",
            "# earlier steps' pins): pip stops with a conflict instead of moving torch or the rest",
            'CONSTRAINTS="$(mktemp)"',
            "trap 'rm -f \"$CONSTRAINTS\"' EXIT",
        ]
    lines.append("")
    for step in plan.steps:
        lines += step_comment(step)
        action = step.action
        if action.kind in ("pip_install", "pip_uninstall"):
            shown = action
            if action.index_url:
                from dataclasses import replace

                from envcheck.plan.resolve import redact_url

                shown = replace(action, index_url=redact_url(action.index_url))
            argv = pip_argv(shown, "PYTHON_PLACEHOLDER", "CONSTRAINTS_PLACEHOLDER")
            command = '"$PYTHON" ' + shlex.join(argv[1:])
            command = command.replace("CONSTRAINTS_PLACEHOLDER", '"$CONSTRAINTS"')
            held = _constraints_file(action.constraints)
            if step.applicability == "unsafe" and not include_unsafe:
                lines.append("# unsafe, left commented out (envcheck fix --unsafe emits it):")
                lines += [f"# {line}" for line in [*held, command]]
            else:
                lines += [*held, command]
        elif action.kind == "env":
            lines.append("# set in the job's environment (a script cannot set its caller's):")
            lines += [f"export {k}={shlex.quote(v)}" for k, v in action.env.items()]
        else:
            lines += comment(f"manual: {action.text}")
        lines.append("")
    if not plan.steps:
        lines.append("# nothing to do")
    return "\n".join(lines).rstrip() + "\n"
