"""Whose code launched a kernel that failed: the package of a traceback's innermost frame at a
CUDA error ('no kernel image is available', 'invalid device function'), read by the arch
causes (TOR101 for torch's own frame, CUD153 for a compiled-ops package's).

A launch fails at once, so the innermost Python frame is the call that launched the kernel
without an image: torch's own code (torch/nn/..., torch's kernel) or a compiled-ops package's
(mmcv/ops/focal_loss.py calling ``ext_module.sigmoid_focal_loss_forward``). The frame is read
from an installed package (``site-packages/<module>/...``) or, for a source checkout
(``/root/mmcv/mmcv/ops/focal_loss.py``, ``pip install -e .``), from the innermost directory
that the matrix's ``[[extension]]`` table (or torch and its companions) names as a module."""

from __future__ import annotations

import re

from envcheck.facts.node import Facts
from envcheck.rules.base import LogLine

TORCH_OWN = frozenset({"torch", "torchvision", "torchaudio"})

_SITE = frozenset({"site-packages", "dist-packages"})


def frame_package(facts: Facts, line: LogLine) -> str | None:
    """The top-level module of the traceback's innermost frame at the error, read from its path
    (``ext_frame_path``: the frame next to the error line), else the installed package of the
    last frame above it (``ext_frame``); None when the frame is a project's own code that no
    table names."""
    path = line.stated.get("ext_frame_path")
    if not path:
        return line.stated.get("ext_frame") or None
    parts = [p for p in re.split(r"[/\\]", path.strip()) if p]
    if len(parts) < 2:
        return None
    for i, part in enumerate(parts[:-1]):
        if part in _SITE:
            top = parts[i + 1].split(".", 1)[0]
            return top if top.isidentifier() else None
    # a source checkout: the innermost directory named as a module the tables know (the
    # file's own name never counts, nor a directory above the checkout's package)
    for part in reversed(parts[:-1]):
        if part in TORCH_OWN or (part.isidentifier() and facts.matrix.extension(part)):
            return part
    return None
