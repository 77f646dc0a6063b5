"""The PCIe tree above the GPUs, read from /sys: ACS control on each bridge, and the IOMMU mode.

NCCL's troubleshooting guide names both as causes of hangs and slow P2P: ACS request/completion
redirect on a switch port sends GPU-to-GPU traffic through the root complex (or drops it), and an
IOMMU in translated mode puts every P2P transfer through address translation.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from envcheck.model.deep import Bridge, PcieTopology
from envcheck.probes.context import ProbeContext

_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_NVIDIA = "0x10de"
ACS_CAP_ID = 0x000D
_EXT_START = 0x100


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def nvidia_devices(ctx: ProbeContext, classes: tuple[str, ...]) -> list[str]:
    """PCI addresses of NVIDIA devices whose class starts with one of ``classes``, in bus order."""
    base = ctx.path("/sys/bus/pci/devices")
    try:
        names = sorted(p.name for p in base.iterdir())
    except OSError:
        return []
    return [
        name
        for name in names
        if _read(base / name / "vendor") == _NVIDIA
        and (_read(base / name / "class") or "").startswith(classes)
    ]


def nvidia_gpus(ctx: ProbeContext) -> list[str]:
    """NVIDIA VGA and 3D controllers, in bus order (NVML's default order)."""
    return nvidia_devices(ctx, ("0x0300", "0x0302"))


def acs_control(config: bytes) -> int | None:
    """The ACS Control register from a device's config space; None when ACS is absent.

    Walks the PCIe extended capability list from 0x100 (header: id 16 bits, version 4, next
    offset 12); ACS control is the 16-bit word at capability + 6 (``ECAP_ACS+0x6.w``).
    """
    offset, seen = _EXT_START, set()
    while offset and offset + 8 <= len(config) and offset not in seen:
        seen.add(offset)
        (header,) = struct.unpack_from("<I", config, offset)
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == ACS_CAP_ID:
            (ctrl,) = struct.unpack_from("<H", config, offset + 6)
            return int(ctrl)
        offset = (header >> 20) & 0xFFC
        if offset < _EXT_START:
            return None
    return None


def _parents(ctx: ProbeContext, gpu: str) -> list[str]:
    link = ctx.path(f"/sys/bus/pci/devices/{gpu}")
    try:
        real = link.resolve(strict=True)
    except OSError:
        return []
    return [p for p in real.parts[:-1] if _BDF.match(p)]


def _bridge(ctx: ProbeContext, address: str, gpu: int) -> Bridge:
    path = ctx.path(f"/sys/bus/pci/devices/{address}/config")
    try:
        config = path.read_bytes()
    except OSError:
        return Bridge(address=address, gpu=gpu, acs_ctrl=None, readable=False)
    if len(config) <= _EXT_START:  # unprivileged reads stop at 64 bytes
        return Bridge(address=address, gpu=gpu, acs_ctrl=None, readable=False)
    return Bridge(address=address, gpu=gpu, acs_ctrl=acs_control(config))


def iommu_mode(ctx: ProbeContext, gpus: list[str]) -> tuple[str, str | None]:
    """("passthrough" | "translated" | "off" | "unknown", evidence)."""
    for gpu in gpus:
        kind = _read(ctx.path(f"/sys/bus/pci/devices/{gpu}/iommu_group/type"))
        if kind:
            mode = "passthrough" if kind == "identity" else "translated"
            return mode, f"/sys/bus/pci/devices/{gpu}/iommu_group/type = {kind}"
    cmdline = (ctx.read_text("/proc/cmdline") or "").split()
    for token in cmdline:
        if token in ("iommu=pt", "iommu.passthrough=1"):
            return "passthrough", f"/proc/cmdline: {token}"
    for token in cmdline:
        if token in ("iommu=off", "intel_iommu=off", "amd_iommu=off"):
            return "off", f"/proc/cmdline: {token}"
    try:
        units = sorted(p.name for p in ctx.path("/sys/class/iommu").iterdir())
    except OSError:
        units = []
    if units:
        return "translated", f"/sys/class/iommu: {', '.join(units)}; no iommu=pt on the cmdline"
    if cmdline:
        return "off", "no /sys/class/iommu entries"
    return "unknown", None


def probe_pcie(ctx: ProbeContext) -> PcieTopology:
    gpus = nvidia_gpus(ctx)
    bridges: list[Bridge] = []
    seen: set[str] = set()
    for index, gpu in enumerate(gpus):
        for parent in _parents(ctx, gpu):
            if parent not in seen:
                seen.add(parent)
                bridges.append(_bridge(ctx, parent, index))
    mode, evidence = iommu_mode(ctx, gpus)
    return PcieTopology(
        bridges=tuple(bridges),
        iommu=mode,
        iommu_evidence=evidence,
        unreadable=sum(1 for b in bridges if not b.readable),
    )
