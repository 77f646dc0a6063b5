"""Phrases wrapped at a terminal's width: a line breaks only between phrases, fits the width
unless one phrase alone is longer, and its continuation lines are indented."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from envcheck.formats.wrapping import wrap_units

_WORD = st.text(alphabet="abcdefghij0123456789().;:,", min_size=1, max_size=12)
_UNIT = st.lists(_WORD, min_size=1, max_size=4).map(" ".join)


def _phrases_per_line(units: list[str], lines: list[str], mark: str) -> list[list[str]]:
    """Which whole units each line holds, in order; fails when a line holds part of one."""
    sep = f" {mark} " if mark else " "
    held: list[list[str]] = []
    i = 0
    for n, line in enumerate(lines):
        piece = line.strip()
        if mark and n < len(lines) - 1:
            assert piece.endswith(f" {mark}"), line
            piece = piece[: -len(mark) - 1]
        j = next(j for j in range(i + 1, len(units) + 1) if sep.join(units[i:j]) == piece)
        held.append(units[i:j])
        i = j
    assert i == len(units)
    return held


@given(st.lists(_UNIT, min_size=1, max_size=30), st.integers(20, 120), st.sampled_from(["", "·"]))
def test_breaks_only_between_phrases(units: list[str], width: int, mark: str) -> None:
    lines = wrap_units(units, width, mark=mark, indent="  ")
    held = _phrases_per_line(units, lines, mark)
    assert lines[0].startswith("  ") and all(line.startswith("    ") for line in lines[1:])
    for line, phrases in zip(lines, held, strict=True):
        assert len(line) <= width or len(phrases) == 1, (line, width)


def test_the_check_summary_at_80_columns() -> None:
    units = ["envcheck:", "5 error(s),", "2 warning(s),", "0 info;", "186 rules,"]
    units += ["70 skipped (unknown:", *(f"kind{k} {k}," for k in range(12))]
    units += ["0 matter for the node); exit 1"]
    lines = wrap_units(units, 80)
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[-1].endswith("kind11 11, 0 matter for the node); exit 1")
