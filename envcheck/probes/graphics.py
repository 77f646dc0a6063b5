"""Vulkan ICD and EGL vendor manifests and libEGL_nvidia: what headless simulators render with."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from envcheck.model.report import GraphicsInfo
from envcheck.model.section import Section
from envcheck.probes.context import ProbeContext

ICD_DIRS = (
    "/usr/share/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/usr/local/nvidia/share/vulkan/icd.d",
)
EGL_VENDOR_DIRS = (
    "/usr/share/glvnd/egl_vendor.d",
    "/etc/glvnd/egl_vendor.d",
    "/usr/local/nvidia/share/glvnd/egl_vendor.d",
)
LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
)


def _matching(directory: Path, pattern: str) -> list[str]:
    """The names ``directory.glob(pattern)`` finds for a one-part pattern (``*.json``,
    ``libEGL_nvidia.so*``), in listing order: read with os.scandir and compared as strings,
    where pathlib makes a path object per match out of library directories of thousands."""
    try:
        with os.scandir(directory) as listing:
            names = [entry.name for entry in listing]
    except PermissionError:  # what pathlib's glob gives for such a directory
        return []
    if pattern.count("*") == 1 and not any(c in pattern for c in "?[]"):
        head, _, tail = pattern.partition("*")
        least = len(head) + len(tail)
        return [n for n in names if len(n) >= least and n.startswith(head) and n.endswith(tail)]
    return [n for n in names if fnmatch.fnmatchcase(n, pattern)]


def _listed(
    ctx: ProbeContext, dirs: tuple[str, ...], pattern: str, env_vars: tuple[str, ...]
) -> list[str]:
    found: list[str] = []
    for var in env_vars:
        for path in ctx.env.get(var, "").split(":"):
            if path and ctx.path(path).is_file():
                found.append(path)
    for directory in dirs:
        staged = ctx.path(directory)
        if staged.is_dir():
            found += sorted(f"{directory}/{name}" for name in _matching(staged, pattern))
    return list(dict.fromkeys(found))


def _render_nodes(ctx: ProbeContext) -> tuple[list[str], list[str]]:
    """The DRM render nodes, and those this user cannot open read-write (EGL needs them)."""
    staged = ctx.path("/dev/dri")
    if not staged.is_dir():
        return [], []
    nodes = [staged / name for name in sorted(_matching(staged, "renderD*"))][:64]
    denied = [p for p in nodes if not os.access(p, os.R_OK | os.W_OK)]
    return [f"/dev/dri/{p.name}" for p in nodes], [f"/dev/dri/{p.name}" for p in denied]


def probe_graphics(ctx: ProbeContext) -> Section[GraphicsInfo]:
    nodes, denied = _render_nodes(ctx)
    info = GraphicsInfo(
        vulkan_icds=tuple(
            _listed(ctx, ICD_DIRS, "*.json", ("VK_DRIVER_FILES", "VK_ICD_FILENAMES"))
        ),
        egl_vendors=tuple(
            _listed(ctx, EGL_VENDOR_DIRS, "*.json", ("__EGL_VENDOR_LIBRARY_FILENAMES",))
        ),
        egl_libraries=tuple(_listed(ctx, LIB_DIRS, "libEGL_nvidia.so*", ())),
        driver_capabilities=ctx.env.get("NVIDIA_DRIVER_CAPABILITIES"),
        render_nodes=tuple(nodes),
        render_nodes_denied=tuple(denied),
    )
    return Section.ok(info, source="ICD and vendor manifests")
