"""The ``- Key: value`` environment reports the Hugging Face libraries print for bug reports,
found inside a log: ``transformers env`` (transformers/commands/env.py, ``format_dict``: one
``- {prop}: {val}`` line per fact, ``- `transformers` version: 4.41.2``, ``- Platform: ...``,
``- Python version: 3.10.12``, ``- PyTorch version (GPU?): 2.3.1+cu121 (True)``), ``accelerate
env`` (``- `Accelerate` version: 0.31.0``), ``diffusers-cli env`` (``- 🤗 Diffusers version``),
``trl env`` (``- TRL version:``) and ``llamafactory-cli env``. The issue templates of
transformers, accelerate, peft, trl, diffusers, LLaMA-Factory and the RL stacks built on them ask
for it, so a thread's log often carries it above or below the traceback.

Only the block itself is read (a run of ``- Key: value`` lines holding at least one ``...
version:`` item), by the prose reader (``loose``), which knows these labels; the log's other
lines are not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest import loose
from envcheck.ingest.common import Source
from envcheck.model.report import NodeReport

LABEL = "library env report"
# the strings triage looks for before it splits a log (triage/pasted.py's markers)
MARKERS = ("- Platform:", "Huggingface_hub version:", "` version:", "Diffusers version:")

_ITEM = re.compile(r"^\s*[-*]\s+[^:\n]{1,80}:(?:\s|$)")
_NESTED = re.compile(r"^\s+[-*]\s+\S")  # accelerate's default config, indented under its item
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


def parse_in(text: str, name: str) -> NodeReport | None:
    """The node as the first library env report in ``text`` states it; None when there is
    none, or it states no fact."""
    lines = text.splitlines()
    block = find_block(lines)
    if block is None:
        return None
    start, end = block
    kept = "\n".join(lines[start:end])
    if not loose.facts_stated(kept):
        return None
    where = f"{name} ({LABEL}, lines {start + 1}-{end})"
    return loose.parse(Source(name=where, text=kept), label=LABEL)
