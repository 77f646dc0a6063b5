"""Wrapping text made of phrases that must stay whole (a count and what it counts, a package and
its version) at a terminal's width."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

_GLUE = "\xa0"  # textwrap breaks only at ASCII whitespace: a phrase glued with it stays whole


def wrap_units(
    units: Sequence[str], width: int, *, mark: str = "", indent: str = "", hanging: str = "  "
) -> list[str]:
    """The lines of ``units`` separated by spaces (after ``mark``, e.g. "·", on every unit but
    the last), each at most ``width`` columns unless one unit alone is longer. The first line
    starts with ``indent``, the others with ``indent + hanging``; a line breaks only between
    units."""
    tail = f" {mark}" if mark else ""
    glued = [
        (u + (tail if i < len(units) - 1 else "")).replace(" ", _GLUE) for i, u in enumerate(units)
    ]
    lines = textwrap.wrap(
        " ".join(glued),
        width=max(width, 20),
        initial_indent=indent,
        subsequent_indent=indent + hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(_GLUE, " ") for line in lines]
