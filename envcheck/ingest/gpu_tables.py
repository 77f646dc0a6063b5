"""Two GPU tables people paste about a multi-GPU node, which name the GPUs but not the driver:

- ``nvidia-smi topo -m``: a header row of ``GPU0  GPU1 ...`` (then ``NIC0 ...``, ``CPU
  Affinity``, ``NUMA Affinity``), one row per GPU (``GPU0   X  NV12  SYS ...``) and the
  ``Legend:`` below: how many GPUs, and how each pair is connected (``NV#`` NVLink, ``PIX``/
  ``PXB``/``PHB``/``NODE``/``SYS`` PCIe paths), kept in a note;
- DCGM's ``dcgmi discovery -l``: ``N GPUs found.`` then a box per GPU with ``Name: NVIDIA
  A100-SXM4-80GB``, ``PCI Bus ID:`` and ``Device UUID:``.

Sources: nvidia-smi's topology matrix (``nvidia-smi topo -m``, its legend: 'X = Self, SYS =
Connection traversing PCIe as well as the SMP interconnect between NUMA nodes, ... NV# =
Connection traversing a bonded set of # NVLinks'); NVIDIA/DCGM dcgmi/Query.cpp (``dcgmi
discovery -l``: '%d GPU(s) found.', 'Name: ', 'PCI Bus ID: ', 'Device UUID: ').
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import Section

TOPO = "nvidia-smi topo -m"
DCGMI = "dcgmi discovery -l"

_TOPO_HEAD = re.compile(r"^\s*GPU0(?:\s+\S+)*?\s+CPU Affinity\b")
# a row: its device (GPUn, NICn, an HCA such as mlx5_0) and a first cell of the matrix
_TOPO_ROW = re.compile(r"^\s*(?P<name>\S+)\s+(?:X|NV[0-9]+|PIX|PXB|PHB|NODE|SYS)(?:\s|$)")
_TOPO_TAIL = re.compile(
    r"^\s*(?:$|Legend:|NIC Legend:|X\s+=|SYS\s+=|NODE\s+=|PHB\s+=|PXB\s+=|PIX\s+=|NV#\s+=|NIC[0-9]+:)"
)
_LINK = re.compile(r"\bNV([0-9]+)\b")

_DCGMI_HEAD = re.compile(r"^\s*(?P<count>[0-9]+) GPUs? found\.")
_DCGMI_LINE = re.compile(r"^\s*(?:\+[-+]+\+|\|)")
_DCGMI_NAME = re.compile(
    r"^\|\s*(?P<index>[0-9]+)?\s*\|\s*Name:\s*(?P<name>.+?)\s*\|", re.MULTILINE
)


def find_topo(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _TOPO_HEAD.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _TOPO_ROW.match(lines[end]):
        end += 1
    if end == i + 1:
        return None
    while end < len(lines) and end not in stops and _TOPO_TAIL.match(lines[end]):
        end += 1
    return i, end


def parse_topo(source: Source) -> NodeReport:
    lines = source.text.splitlines()
    head = next((line for line in lines if _TOPO_HEAD.match(line)), None)
    if head is None:
        raise FormatError(f"format not recognised as {TOPO}: no 'GPU0 ... CPU Affinity' header")
    count = len(re.findall(r"\bGPU[0-9]+\b", head))
    rows = [line for line in lines if (m := _TOPO_ROW.match(line)) and m["name"].startswith("GPU")]
    links = sorted({int(n) for line in rows for n in _LINK.findall(line)})
    link_note = (
        f"GPU pairs joined by {', '.join(f'NV{n}' for n in links)} (NVLink)"
        if links
        else "no NVLink between the GPUs (PCIe paths only)"
    )
    info = GpuInfo(
        driver_source=None,
        gpus=tuple(Gpu(index=i) for i in range(count)),
    )
    notes = (f"{TOPO}: {count} GPU(s), names not stated; {link_note}",)
    return blank(source, TOPO).with_sections(gpu=Section.ok(info, source=TOPO, notes=notes))


def find_dcgmi(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _DCGMI_HEAD.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _DCGMI_LINE.match(lines[end]):
        end += 1
    return (i, end) if end > i + 1 else None


def parse_dcgmi(source: Source) -> NodeReport:
    names = [m["name"] for m in _DCGMI_NAME.finditer(source.text)]
    if not names:
        raise FormatError(f"format not recognised as {DCGMI}: no 'Name:' row")
    info = GpuInfo(gpus=tuple(Gpu(index=i, name=n) for i, n in enumerate(names)))
    notes = (f"{DCGMI}: the GPUs DCGM discovered",)
    return blank(source, DCGMI).with_sections(gpu=Section.ok(info, source=DCGMI, notes=notes))
