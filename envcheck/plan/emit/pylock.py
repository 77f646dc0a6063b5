"""PEP 751 lock files (pylock.toml) as uv writes them, with envcheck's reasons on top."""

from __future__ import annotations

from envcheck.model.plan import Stack
from envcheck.plan.emit.text import stack_header
from envcheck.plan.resolve import Resolution


def lock_pylock(stack: Stack, resolution: Resolution, *, resolver: str) -> str:
    lines = stack_header(stack, command="envcheck lock --format pylock", resolver=resolver)
    lines.append("# Install with: uv pip sync <this file> (PEP 751)")
    return "\n".join(lines) + "\n" + resolution.text.lstrip("\n")
