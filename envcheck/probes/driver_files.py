"""The NVIDIA driver as its files show it: the kernel module's version
(``/proc/driver/nvidia/version``), the user-space libraries the loader would open (libcuda,
NVML: the version is in the real file's name, ``libcuda.so.550.54.15``) and the device nodes
(``/dev/nvidia*``). After a driver update without a reboot the module and the libraries differ;
a container started without GPUs has the libraries' absence or no device nodes."""

from __future__ import annotations

import os
from pathlib import Path

from envcheck.model.binaries import DriverFiles
from envcheck.patterns import lazy
from envcheck.probes.context import ProbeContext

_MODULE = lazy(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")
_VERSIONED = lazy(r"\.so\.(\d+\.\d+(?:\.\d+)?)$")
LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/local/nvidia/lib64",  # where Kubernetes' device plugin mounts the driver
)


def module_version(text: str | None) -> str | None:
    match = _MODULE.search(text or "")
    return match.group(1) if match else None


def _library(ctx: ProbeContext, soname: str) -> tuple[str | None, str | None]:
    """(version, path) of the driver library ``soname`` links to in the first directory that
    holds it (LD_LIBRARY_PATH first, as the loader looks)."""
    dirs = [d for d in ctx.env.get("LD_LIBRARY_PATH", "").split(":") if d] + list(LIB_DIRS)
    for directory in dirs:
        link = ctx.path(directory) / soname
        try:
            if not link.exists():
                continue
            real = Path(os.path.realpath(link))
        except OSError:
            continue
        match = _VERSIONED.search(real.name)
        return (match.group(1) if match else None), str(Path(directory) / real.name)
    return None, None


def probe_driver_files(ctx: ProbeContext) -> DriverFiles:
    module = module_version(ctx.read_text("/proc/driver/nvidia/version"))
    libcuda, libcuda_path = _library(ctx, "libcuda.so.1")
    nvml, _ = _library(ctx, "libnvidia-ml.so.1")
    try:
        nodes = tuple(
            sorted(f"/dev/{n}" for n in os.listdir(ctx.path("/dev")) if n.startswith("nvidia"))
        )
    except OSError:
        nodes = ()
    return DriverFiles(
        kernel_module=module,
        libcuda=libcuda,
        libcuda_path=libcuda_path,
        nvml_library=nvml,
        device_nodes=nodes,
        visible_devices=ctx.env.get("NVIDIA_VISIBLE_DEVICES"),
    )
