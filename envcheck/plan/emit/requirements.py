"""Requirements files: a plan's pins, or a full hashed lock with its reasons as comments."""

from __future__ import annotations

import shlex

from envcheck.model.plan import Plan, Stack
from envcheck.plan.emit.text import comment, display_command, index_lines, plan_header, stack_header
from envcheck.plan.resolve import Resolution


def plan_to_requirements(plan: Plan, *, include_unsafe: bool = False) -> str:
    lines = plan_header(plan, command="envcheck fix --format requirements")
    lines.append("# Install with: python -m pip install -r <this file>")
    pins: list[str] = []
    indexes: list[str | None] = []
    after: list[str] = []
    torch_step = False
    for step in plan.steps:
        action = step.action
        codes = ", ".join(step.codes)
        if action.kind == "pip_install":
            if step.applicability == "unsafe" and not include_unsafe:
                lines += comment(f"unsafe, not included ({codes}): {display_command(step)}")
                continue
            names = {p.split("=", 1)[0].split("[", 1)[0].strip().lower() for p in action.packages}
            if torch_step and any(n.startswith("nvidia-") for n in names):
                # an override of one of torch's own pins: one requirements set cannot hold both
                after += comment(
                    f"then ({codes}), after installing this file: {display_command(step)} "
                    "(it overrides a pin of torch's; resolved together they have no solution)"
                )
                continue
            torch_step = torch_step or bool(names & {"torch", "torchvision", "torchaudio"})
            indexes.append(action.index_url)
            if action.flags:
                lines += comment(f"{codes}: install with {' '.join(action.flags)}")
            pins += [f"{p}  # {codes}" for p in action.packages]
        elif action.kind == "pip_uninstall":
            lines += comment(f"first ({codes}): {display_command(step)}")
        elif action.kind == "env":
            lines += comment(
                f"set in the job's environment ({codes}): "
                + " ".join(f"{k}={shlex.quote(v)}" for k, v in action.env.items())
            )
        else:
            lines += comment(f"manual ({codes}): {action.text}")
    return "\n".join([*lines, *after, *index_lines(indexes), *pins]) + "\n"


def lock_requirements(stack: Stack, resolution: Resolution, *, resolver: str) -> str:
    lines = stack_header(
        stack, command="envcheck lock", resolver=resolver, resolved=resolution.pins
    )
    lines.append("# Install with: python -m pip install --no-deps --require-hashes -r <this file>")
    lines.append("#   (or: uv pip sync <this file>); --no-deps keeps the overrides above in force")
    lines += index_lines([stack.torch_index_url])
    return "\n".join(lines) + "\n" + resolution.text.lstrip("\n")
