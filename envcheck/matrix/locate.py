"""Find the line of a dotted key such as ``torch[3].pins.nvidia-cublas-cu12`` in TOML text.

tomllib reports no positions for valid documents, so errors found after parsing are placed by
scanning the text for the table headers and keys the path names.
"""

from __future__ import annotations

import re

from envcheck.patterns import lazy

_SEGMENT = lazy(r"([^.\[\]]+)(?:\[(\d+)\])?")
_ARRAY_HEADER = lazy(r"^\s*\[\[\s*([A-Za-z0-9_\-]+)\s*\]\]")
_ANY_HEADER = lazy(r"^\s*\[")


def _segments(path: str) -> list[tuple[str, int | None]]:
    out = []
    for part in re.split(r"\.(?![^\[]*\])", path):
        for match in _SEGMENT.finditer(part):
            out.append((match.group(1), int(match.group(2)) if match.group(2) else None))
    return out


def _key_pattern(key: str) -> re.Pattern[str]:
    quoted = re.escape(key)
    return re.compile(rf'(^|[\s{{,.\[])("{quoted}"|\'{quoted}\'|{quoted})\s*(=|\])')


def line_of(text: str, path: str) -> int | None:
    """1-based line of the deepest part of ``path`` found in ``text``; None when not found."""
    lines = text.splitlines()
    segments = _segments(path)
    if not segments:
        return None
    first, index = segments[0]
    start, end = 0, len(lines)
    found: int | None = None
    if index is not None:
        count = -1
        for number, line in enumerate(lines):
            header = _ARRAY_HEADER.match(line)
            if header and header.group(1) == first:
                count += 1
                if count == index:
                    start, found = number, number + 1
                elif count == index + 1:
                    end = number
                    break
        if found is None:
            return None
    else:
        pattern = _key_pattern(first)
        for number, line in enumerate(lines):
            if pattern.search(line):
                start, found = number, number + 1
                break
        if found is None:
            return None
    for key, _ in segments[1:]:
        pattern = _key_pattern(key)
        for number in range(start, end):
            if pattern.search(lines[number]):
                found, start = number + 1, number
                break
    return found
