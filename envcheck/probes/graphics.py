"""Vulkan ICD and EGL vendor manifests and libEGL_nvidia: what headless simulators render with."""

from __future__ import annotations

import os

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
            found += sorted(f"{directory}/{p.name}" for p in staged.glob(pattern))
    return list(dict.fromkeys(found))


def _render_nodes(ctx: ProbeContext) -> tuple[list[str], list[str]]:
    """The DRM render nodes, and those this user cannot open read-write (EGL needs them)."""
    staged = ctx.path("/dev/dri")
    if not staged.is_dir():
        return [], []
    nodes = sorted(staged.glob("renderD*"))[:64]
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
