"""What people paste about an NVIDIA Jetson (Tegra) board, which has no ``nvidia-smi`` driver:

- ``cat /etc/nv_tegra_release``: ``# R35 (release), REVISION: 3.1, GCID: ..., BOARD: t186ref,
  EABI: aarch64, DATE: ...`` (L4T 35.3.1; the GPU driver is part of L4T);
- ``jetson_release`` (jetson-stats): 4.x prints `` - Model: NVIDIA Jetson Orin NX ...``,
  `` - L4T: 36.4.3``, `` - Jetpack: 6.1`` (or ``Jetpack missing!``), `` - Module: NVIDIA Jetson
  Orin NX (8GB ram)``, `` - Distribution: Ubuntu 22.04 Jammy Jellyfish``, `` - Release:
  5.15.148-tegra`` and the libraries (`` - CUDA: 12.6.68``, `` - cuDNN: 9.3.0.75``); 3.x prints
  `` - NVIDIA Jetson AGX Xavier [16GB]``, ``   * Jetpack 4.4 [L4T 32.4.3]`` and ``   * CUDA:
  10.2.89`` rows;
- ``tegrastats``: ``RAM 2203/3964MB (lfb 116x4MB) SWAP ... GR3D_FREQ 0% ...`` (GR3D is the GPU;
  RAM is shared by the CPU and the GPU).

They fill the GPU (the board's module name, matched against the matrix's Jetson entries), the
L4T / JetPack release (a note), the CUDA toolkit jetson_release names (``system.nvcc``: the
toolkit installed, as ``nvcc --version``), the OS and kernel. A Jetson driver has no
nvidia-smi version: the driver version stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, major_minor, parse_os
from envcheck.model.report import Gpu, GpuInfo, NodeReport, SystemInfo, Toolkit
from envcheck.model.section import Section

TEGRA_RELEASE = "/etc/nv_tegra_release"
JETSON_RELEASE = "jetson_release"
TEGRASTATS = "tegrastats"

_TEGRA = re.compile(
    r"^\s*#\s*R(?P<major>[0-9]+)\s+\(release\),\s*REVISION:\s*(?P<rev>[0-9]+(?:\.[0-9]+)*)"
    r"(?:.*?\bBOARD:\s*(?P<board>[^,\s]+))?(?:.*?\bEABI:\s*(?P<eabi>[^,\s]+))?"
)
_JR_START = re.compile(
    r"^\s*(?:Software part of jetson-stats\b|-\s*Model:\s*NVIDIA Jetson\b|-\s*NVIDIA Jetson\b"
    r"|[-*]\s*Jetpack\b|-\s*L4T:\s*[0-9])"
)
_JR_LINE = re.compile(
    r"^\s*(?:[-*]\s+\S|[A-Za-z][\w .]*(?:\[[0-9]+\])?:(?:\s|$)|Jetpack missing!|"
    r"Software part of jetson-stats)"
)
_JR_KV = re.compile(r"^\s*[-*]\s*(?P<key>[A-Za-z][\w .-]*?)\s*:\s*(?P<value>\S.*?)\s*$")
_JR_OLD_MODEL = re.compile(r"^\s*-\s*(?P<name>NVIDIA Jetson [^\[\]]+?)\s*(?:\[[^\]]*\])?\s*$")
_JR_OLD_JETPACK = re.compile(
    r"^\s*\*\s*Jetpack\s+(?P<jetpack>[0-9.]+)(?:\s*\[\s*L4T\s+(?P<l4t>[0-9.]+)\s*\])?"
)
_TEGRASTATS = re.compile(
    r"^\s*(?:\S+\s+\S+\s+)?RAM\s+(?P<used>[0-9]+)/(?P<total>[0-9]+)MB\b.*\bGR3D_FREQ\b"
)
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)+")


def _report(
    source: Source,
    label: str,
    gpu: GpuInfo,
    notes: tuple[str, ...],
    system: SystemInfo | None = None,
) -> NodeReport:
    report = blank(source, label).with_sections(gpu=Section.ok(gpu, source=label, notes=notes))
    if system is not None:
        report = report.with_sections(system=Section.ok(system, source=label))
    return report


def _while(lines: Sequence[str], i: int, stops: set[int], ok: re.Pattern[str]) -> int:
    end = i + 1
    while end < len(lines) and end not in stops:
        blank_then_ok = not lines[end].strip() and end + 1 < len(lines) and ok.match(lines[end + 1])
        if not (ok.match(lines[end]) or blank_then_ok):
            break
        end += 1
    return end


_NO_DRIVER_VERSION = "a Jetson's GPU driver comes with L4T: it has no nvidia-smi driver version"


# -- /etc/nv_tegra_release -----------------------------------------------------------------------


def find_tegra_release(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    return (i, i + 1) if _TEGRA.match(lines[i]) else None


def parse_tegra_release(source: Source) -> NodeReport:
    found = next((m for m in map(_TEGRA.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError(f"format not recognised as {TEGRA_RELEASE}: no '# R<n> (release)'")
    l4t = f"{found['major']}.{found['rev']}"
    board = f", board {found['board']}" if found["board"] else ""
    gpu = GpuInfo(gpus_reason=f"{TEGRA_RELEASE} names the board, not the module")
    system = SystemInfo(arch=found["eabi"]) if found["eabi"] else None
    return _report(
        source, TEGRA_RELEASE, gpu, (f"NVIDIA Jetson, L4T {l4t}{board}", _NO_DRIVER_VERSION), system
    )


# -- jetson_release ------------------------------------------------------------------------------


def find_jetson_release(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _JR_START.match(lines[i]):
        return None
    return i, _while(lines, i, stops, _JR_LINE)


def _module_name(value: str) -> str:
    """'NVIDIA Jetson Orin NX (8GB ram)' -> 'NVIDIA Jetson Orin NX'."""
    name = re.sub(r"\s*[\[(][^\])]*[\])]\s*$", "", value).strip()
    return name if name.startswith("NVIDIA") else f"NVIDIA {name}"


def parse_jetson_release(source: Source) -> NodeReport:
    values: dict[str, str] = {}
    name: str | None = None
    for line in source.text.splitlines():
        old = _JR_OLD_MODEL.match(line)
        if old and name is None:
            name = old["name"]
            continue
        jetpack = _JR_OLD_JETPACK.match(line)
        if jetpack:
            values.setdefault("jetpack", jetpack["jetpack"])
            if jetpack["l4t"]:
                values.setdefault("l4t", jetpack["l4t"])
            continue
        kv = _JR_KV.match(line)
        if kv:
            values.setdefault(kv["key"].strip().lower(), kv["value"])
    module = values.get("module") or values.get("model") or name
    if module is None and "l4t" not in values:
        raise FormatError(f"format not recognised as {JETSON_RELEASE}: no Jetson model or L4T")
    gpus = (Gpu(index=0, name=_module_name(module)),) if module else None
    notes = [
        f"NVIDIA Jetson{', L4T ' + values['l4t'] if 'l4t' in values else ''}"
        f"{', JetPack ' + values['jetpack'] if 'jetpack' in values else ''}",
        _NO_DRIVER_VERSION,
    ]
    if "cudnn" in values:
        notes.append(f"cuDNN {values['cudnn']} (jetson_release's libraries)")
    cuda = _VERSION.match(values.get("cuda", ""))
    os_id, os_version = (
        parse_os(values["distribution"]) if "distribution" in values else (None, None)
    )
    kernel = values.get("release")
    system = SystemInfo(
        os_id=os_id,
        os_version=os_version,
        os_pretty=values.get("distribution"),
        kernel=kernel if kernel and re.match(r"[0-9]+\.[0-9]+", kernel) else None,
        arch="aarch64",
        nvcc=Toolkit(nvcc_path="jetson_release (CUDA)", version=major_minor(cuda.group()))
        if cuda
        else None,
    )
    gpu = GpuInfo(gpus=gpus, gpus_reason=None if gpus else "jetson_release names no module")
    return _report(source, JETSON_RELEASE, gpu, tuple(notes), system)


# -- tegrastats ----------------------------------------------------------------------------------


def find_tegrastats(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _TEGRASTATS.match(lines[i]):
        return None
    return i, _while(lines, i, stops, _TEGRASTATS)


def parse_tegrastats(source: Source) -> NodeReport:
    found = next((m for m in map(_TEGRASTATS.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError(f"format not recognised as {TEGRASTATS}: no 'RAM x/yMB ... GR3D_FREQ'")
    gpu = GpuInfo(gpus_reason="tegrastats names no module")
    system = SystemInfo(memory_total_bytes=int(found["total"]) * 1024 * 1024, arch="aarch64")
    notes = (
        "an NVIDIA Jetson (tegrastats: GR3D is its GPU; RAM is shared by the CPU and the GPU)",
        _NO_DRIVER_VERSION,
    )
    return _report(source, TEGRASTATS, gpu, notes, system)
