"""The ``- Key: value`` environment reports the Hugging Face libraries print for bug reports,
found inside a log: ``transformers env`` (transformers/commands/env.py, ``format_dict``: one
``- {prop}: {val}`` line per fact, ``- `transformers` version: 4.41.2``, ``- Platform: ...``,
``- Python version: 3.10.12``, ``- PyTorch version (GPU?): 2.3.1+cu121 (True)``), ``accelerate
env`` (``- `Accelerate` version: 0.31.0``), ``diffusers-cli env`` (``- 🤗 Diffusers version``),
``trl env`` (``- TRL version:``) and ``llamafactory-cli env``. The issue templates of
transformers, accelerate, peft, trl, diffusers, LLaMA-Factory and the RL stacks built on them ask
for it, so a thread's log often carries it above or below the traceback.

``pip show`` blocks in a log are read the same way (``Name: torch`` followed by ``Version:
2.3.1``, pip's own order in pip/_internal/commands/show.py), and so is DeepSpeed's ``ds_report``
(deepspeed/env_report.py: ``torch version .................... 2.3.0+cu121``, a key padded with
dots to its value, three lines or more).

Only the blocks themselves are read (a run of ``- Key: value`` lines holding at least one ``...
version:`` item; a ``Name:`` line with ``Version:`` after it), by the prose reader (``loose``),
which knows these labels; the log's other lines are not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest import loose
from envcheck.ingest.common import Source
from envcheck.model.report import NodeReport

LABEL = "pasted env report"
# the strings triage looks for before it splits a log (triage/pasted.py's markers)
MARKERS = (
    "- Platform:",
    "Huggingface_hub version:",
    "` version:",
    "Diffusers version:",
    "Name: ",
    "..... ",
)

_ITEM = re.compile(r"^\s*[-*]\s+[^:\n]{1,80}:(?:\s|$)")
_NESTED = re.compile(r"^\s+[-*]\s+\S")  # accelerate's default config, indented under its item
_SHOW_NAME = re.compile(r"^Name: [A-Za-z0-9][A-Za-z0-9._-]*\s*$")
_SHOW_VERSION = re.compile(r"^Version: [0-9]\S*\s*$")
_SHOW_FIELD = re.compile(r"^[A-Z][A-Za-z-]{1,20}:(?:\s|$)")
_DOTTED = re.compile(r"^[A-Za-z][A-Za-z0-9 ()/._-]{1,60}? \.{3,} \S")
_VERSION_ITEM = re.compile(r"^\s*[-*]\s+[^:\n]{0,60}\b[Vv]ersion\b[^:\n]{0,20}:\s*[0-9]")


def find_block(lines: Sequence[str]) -> tuple[int, int] | None:
    """The first run of ``- Key: value`` lines with a version item: (start, end), end
    exclusive; None when the lines hold none."""
    i = 0
    while i < len(lines):
        if not _ITEM.match(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and (_ITEM.match(lines[i]) or _NESTED.match(lines[i])):
            i += 1
        items = lines[start:i]
        if i - start >= 2 and any(_VERSION_ITEM.match(line) for line in items):
            return start, i
    return None


def find_shows(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Each ``pip show`` block: (start, end), end exclusive."""
    blocks = []
    i = 0
    while i + 1 < len(lines):
        if _SHOW_NAME.match(lines[i]) and _SHOW_VERSION.match(lines[i + 1]):
            end = i + 2
            while end < len(lines) and _SHOW_FIELD.match(lines[end]):
                end += 1
            blocks.append((i, end))
            i = end
        else:
            i += 1
    return blocks


def find_dotted(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Each run of three or more ``key ..... value`` lines (ds_report's form)."""
    blocks = []
    i = 0
    while i < len(lines):
        if not _DOTTED.match(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and _DOTTED.match(lines[i]):
            i += 1
        if i - start >= 3:
            blocks.append((start, i))
    return blocks


def parse_in(text: str, name: str) -> NodeReport | None:
    """The node as the library env report and the ``pip show`` blocks in ``text`` state it;
    None when there are none, or they state no fact."""
    lines = text.splitlines()
    blocks = sorted(find_shows(lines) + find_dotted(lines))
    report = find_block(lines)
    if report is not None:
        blocks.insert(0, report)
    if not blocks:
        return None
    kept = "\n\n".join("\n".join(lines[start:end]) for start, end in blocks)
    if not loose.facts_stated(kept):
        return None
    where = ", ".join(f"{start + 1}-{end}" for start, end in blocks)
    return loose.parse(Source(name=f"{name} lines {where}", text=kept), label=LABEL)
