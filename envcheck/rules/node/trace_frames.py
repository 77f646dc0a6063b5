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
    return path_package(facts, path)


def check_site_package(facts: Facts, line: LogLine) -> str | None:
    """The compiled-ops package whose own source holds the CUDA check that reported the error
    (``cuda_program``: xformers' ``CUDA error (/__w/xformers/xformers/third_party/flash-
    attention/hopper/flash_fwd_launch_template.h:175)``, detectron2's ``(ROIAlign_forward_cuda
    at .../detectron2/layers/csrc/ROIAlign/ROIAlign_cuda.cu:365)``): the kernel without an image
    is that package's. None for torch's own sources (aten, c10) or a path no table names."""
    source = line.stated.get("cuda_program")
    if not source:
        return None
    found = path_package(facts, source)
    return None if found is None or found in TORCH_OWN else found


def path_package(facts: Facts, path: str) -> str | None:
    """The module a source or frame path belongs to: the directory after site-packages, else the
    innermost directory the tables name (``[[extension]]`` modules, torch and its companions);
    the file's own name never counts. None for a project's own code."""
    parts = [p for p in re.split(r"[/\\]", path.strip()) if p]
    if len(parts) < 2:
        return None
    for i, part in enumerate(parts[:-1]):
        if part in _SITE:
            top = parts[i + 1].split(".", 1)[0]
            return top if top.isidentifier() else None
    for part in reversed(parts[:-1]):
        if part in _TORCH_TREE:
            return "torch"
        if part in TORCH_OWN or (part.isidentifier() and facts.matrix.extension(part)):
            return part
    return None


# torch's own source directories (a check site in aten/ or c10/ is torch's kernel)
_TORCH_TREE = frozenset({"aten", "c10", "THC", "THCUNN", "caffe2"})
