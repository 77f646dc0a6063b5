"""conda environment files: python (and pip) on the conda side, everything else under ``pip:``
with the index lines pip needs. Every scalar is quoted, so nothing here trips a YAML parser."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from envcheck.model.plan import Plan, Stack
from envcheck.plan.emit.text import comment, display_command, plan_header, stack_header
from envcheck.plan.resolve import Resolution, redact_url

_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _python_mm(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2])


def _document(
    header: list[str],
    name: str,
    python: str | None,
    pip_lines: list[str],
    variables: dict[str, str],
    *,
    exact_python: bool = False,
) -> str:
    lines = [
        *header,
        f"name: {_q(_NAME.sub('-', name) or 'envcheck')}",
        "channels:",
        "  - conda-forge",
    ]
    if exact_python:
        # a lock names its channel and nothing else (no channels from ~/.condarc)
        lines.append("  - nodefaults")
    lines.append("dependencies:")
    if python and exact_python:
        lines.append(f"  - {_q('conda-forge::python=' + python)}")
    elif python:
        lines.append(f"  - {_q('python=' + _python_mm(python))}")
    lines.append("  - 'pip'")
    if pip_lines:
        lines.append("  - pip:")
        lines += [f"      - {_q(line)}" for line in pip_lines]
    if variables:
        lines.append("variables:")
        lines += [f"  {_q(k)}: {_q(v)}" for k, v in variables.items()]
    return "\n".join(lines) + "\n"


def plan_to_conda(
    plan: Plan, *, python: str | None, name: str, include_unsafe: bool = False
) -> str:
    header = plan_header(plan, command="envcheck fix --format conda")
    header.append("# Apply with: conda env update --name <the environment> --file <this file>")
    pins: list[str] = []
    indexes: list[str] = []
    variables: dict[str, str] = {}
    for step in plan.steps:
        action = step.action
        codes = ", ".join(step.codes)
        if action.kind == "pip_install":
            if step.applicability == "unsafe" and not include_unsafe:
                header += comment(f"unsafe, not included ({codes}): {display_command(step)}")
                continue
            if action.index_url and action.index_url not in indexes:
                indexes.append(action.index_url)
            pins += list(action.packages)
            header += comment(
                f"{codes} ({step.applicability}): {' '.join(action.packages)}: {step.reason}"
            )
            if action.flags:
                header += comment(
                    f"{codes}: pip flags not expressible here: {' '.join(action.flags)}"
                )
        elif action.kind == "env":
            variables.update(action.env)
            header += comment(f"{codes}: variables set in the environment below")
        else:
            text = action.text if action.kind == "manual" else display_command(step)
            header += comment(f"{action.kind.replace('_', ' ')} ({codes}): {text}")
    pip_lines = [f"--extra-index-url {redact_url(u)}" for u in indexes] + pins
    return _document(header, name, python, pip_lines, variables)


def _hashed(resolution: Resolution) -> list[tuple[str, str]]:
    """(pin, its --hash options) for each package of a requirements-format resolution."""
    out: list[tuple[str, str]] = []
    for logical in re.sub(r"\\\n", " ", resolution.text).splitlines():
        line = logical.strip()
        if not line or line.startswith(("#", "--")):
            continue
        pin = line.split()[0]
        if "==" in pin:
            out.append((pin, " ".join(re.findall(r"--hash=\S+", line))))
    return out


def lock_conda(stack: Stack, resolution: Resolution, *, resolver: str, name: str) -> str:
    """A conda file from a resolved set: python pinned to the target's version on one named
    channel, every other package under ``pip:`` with its hashes (conda hands that section to
    pip as a requirements file, so pip checks them). Overrides of torch's pins cannot go there
    (pip would refuse them, and hash-checking needs every dependency listed): with overrides,
    the pins go without hashes and the overrides follow as a step."""
    header = stack_header(
        stack, command="envcheck lock --format conda", resolver=resolver, resolved=resolution.pins
    )
    header.append("# Create with: conda env create --file <this file>")
    header.append(
        "# A conda-side lock: conda-lock -f <this file> -p linux-64 (its pip support is "
        "experimental), or pixi init --import <this file>"
    )
    overridden = {
        canonicalize_name(re.split(r"[=<>!~ ;\[]", o, maxsplit=1)[0]) for o in stack.overrides
    }
    entries: list[str] = []
    after: list[str] = []
    pins = _hashed(resolution)
    hashed = not overridden and all(h for _, h in pins)
    for pin, hashes in pins:
        if canonicalize_name(re.split(r"[=\[]", pin, maxsplit=1)[0]) in overridden:
            after.append(pin)
        else:
            entries.append(f"{pin} {hashes}" if hashed else pin)
    if not hashed:
        header.append(
            "# Exact pins without hashes (overrides of torch's pins below): for a hashed lock "
            "use --format requirements or pylock."
        )
    if after:
        header += comment(
            "then, in the new environment (overrides of torch's own pins, which pip would refuse "
            f"to resolve): python -m pip install --no-deps {' '.join(after)}"
        )
    indexes = (
        [f"--extra-index-url {redact_url(stack.torch_index_url)}"] if stack.torch_index_url else []
    )
    return _document(
        header, name, stack.target.python, indexes + entries, dict(stack.env), exact_python=True
    )
