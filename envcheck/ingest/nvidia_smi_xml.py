"""``nvidia-smi -q -x``: the same facts as ``nvidia-smi -q`` as XML (``<nvidia_smi_log>``):
the driver, the newest CUDA it supports, and per ``<gpu id=...>`` its product name, persistence
mode and framebuffer memory. Read with patterns, not an XML parser: a paste is often cut short
(no closing tags), and a pattern cannot be made to expand entities."""

from __future__ import annotations

import re

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import Section

LABEL = "nvidia-smi -q -x"

_ROOT = re.compile(r"<nvidia_smi_log\b")
_GPU = re.compile(r"<gpu\s+id=\"[^\"]*\"\s*>")
_MEMORY = re.compile(
    r"<fb_memory_usage>\s*<total>\s*(?P<total>[0-9]+)\s*MiB\s*</total>"
    r"(?:\s*<reserved>[^<]*</reserved>)?\s*<used>\s*(?P<used>[0-9]+)\s*MiB\s*</used>"
)


def looks_like(text: str) -> bool:
    return _ROOT.search(text[:20_000]) is not None


def _tag(name: str, text: str) -> str | None:
    """The text of the first ``<name>...</name>`` in ``text``, stripped; None when absent or
    N/A."""
    found = re.search(rf"<{name}>\s*([^<]*?)\s*</{name}>", text)
    if found is None or found.group(1) in ("", "N/A"):
        return None
    return found.group(1)


def _gpu(index: int, block: str) -> Gpu:
    memory = _MEMORY.search(block)
    persistence = _tag("persistence_mode", block)
    return Gpu(
        index=index,
        name=_tag("product_name", block),
        memory_total_mib=int(memory.group("total")) if memory else None,
        memory_used_mib=int(memory.group("used")) if memory else None,
        persistence_mode={"Enabled": True, "Disabled": False}.get(persistence or ""),
    )


def parse(source: Source) -> NodeReport:
    """``<driver_version>``, ``<cuda_version>`` and the ``<gpu>`` elements; the GPU list is
    unknown when the paste holds no ``<gpu>`` element."""
    text = source.text
    if not looks_like(text):
        raise FormatError(f"format not recognised as {LABEL}: no <nvidia_smi_log> element")
    starts = [m.end() for m in _GPU.finditer(text)]
    blocks = [
        text[s : (starts[i + 1] if i + 1 < len(starts) else len(text))]
        for i, s in enumerate(starts)
    ]
    gpus = tuple(_gpu(i, b) for i, b in enumerate(blocks))
    head = text[: starts[0]] if starts else text
    driver = valid_version(_tag("driver_version", head))
    cuda = valid_version(_tag("cuda_version", head))
    if driver is None and cuda is None and not gpus:
        raise FormatError(
            f"{LABEL}: the <nvidia_smi_log> element states no driver_version, cuda_version or gpu"
        )
    info = GpuInfo(
        driver_version=driver,
        cuda_driver_version=cuda,
        driver_source=LABEL,
        gpus=gpus if gpus else None,
        gpus_reason=None if gpus else "the part of nvidia-smi -q -x pasted has no <gpu> element",
    )
    section = Section.ok(info, source=LABEL, notes=tuple(source.notes))
    return blank(source, LABEL).with_sections(gpu=section)
