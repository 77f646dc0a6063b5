"""A Kubernetes node's GPU labels, as people paste them: ``kubectl describe node`` (``Labels:``
lines ``nvidia.com/cuda.driver.major=535``) or ``kubectl get node -o json`` / ``jq`` (``"nvidia.com/
cuda.driver-version.full": "535.129.03",``). NVIDIA's GPU Feature Discovery (GPU Operator,
k8s-device-plugin) writes them from NVML: the driver version (``cuda.driver-version.full``, or
the older ``cuda.driver.major`` / ``.minor`` / ``.rev``), the newest CUDA the driver supports
(``cuda.runtime-version.full``, or ``cuda.runtime.major`` / ``.minor``: cuDriverGetVersion's,
nvidia-smi's "CUDA Version"), the GPU model with its spaces written as dashes
(``gpu.product=NVIDIA-A100-SXM4-80GB``), how many (``gpu.count``) and their compute capability
(``gpu.compute.major`` / ``.minor``). Source: NVIDIA/k8s-device-plugin internal/lm/nvml.go
(newVersionLabeler) and internal/lm/resource.go.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import Section

LABELS = "Kubernetes node labels (GPU Feature Discovery)"

# one GFD label in either form: key=value (describe) or "key": "value" (JSON)
_LABEL = re.compile(
    r"\"?(?P<key>nvidia\.com/(?:cuda|gpu)\.[A-Za-z0-9._-]+)\"?\s*(?:=|:\s)\s*\"?(?P<value>[^\",\s]*)"
)
# any other label line of the same listing (a domain-qualified key), which a section spans
_OTHER = re.compile(r"^\s*(?:Labels:\s+)?\"?[a-z0-9.-]+\.[a-z]+/[A-Za-z0-9._/-]+\"?\s*(?:=|:\s)")


def _label_line(line: str) -> bool:
    return bool(_LABEL.search(line) or _OTHER.match(line))


def find(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """A run of label lines that holds at least one GFD label."""
    if not _label_line(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _label_line(lines[end]):
        end += 1
    if not any(_LABEL.search(line) for line in lines[i:end]):
        return None
    return i, end


def _version(labels: dict[str, str], full: str, parts: tuple[str, ...]) -> str | None:
    if labels.get(full):
        return valid_version(labels[full])
    values = [labels.get(p, "") for p in parts]
    if not values[0] or not values[1]:
        return None
    return valid_version(".".join(v for v in values if v))


def parse(source: Source) -> NodeReport:
    labels = {m["key"]: m["value"] for m in _LABEL.finditer(source.text) if m["value"]}
    driver = _version(
        labels,
        "nvidia.com/cuda.driver-version.full",
        (
            "nvidia.com/cuda.driver.major",
            "nvidia.com/cuda.driver.minor",
            "nvidia.com/cuda.driver.rev",
        ),
    )
    cuda = _version(
        labels,
        "nvidia.com/cuda.runtime-version.full",
        ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"),
    )
    product = labels.get("nvidia.com/gpu.product")
    if driver is None and product is None:
        raise FormatError(f"format not recognised as {LABELS}: no driver or GPU label")
    gpus: tuple[Gpu, ...] | None = None
    if product:
        count = labels.get("nvidia.com/gpu.count", "1")
        major, minor = (
            labels.get("nvidia.com/gpu.compute.major"),
            labels.get("nvidia.com/gpu.compute.minor"),
        )
        cc = f"{major}.{minor}" if major and minor else None
        name = product.replace("-", " ")
        gpus = tuple(
            Gpu(index=i, name=name, compute_capability=cc)
            for i in range(int(count) if count.isdigit() else 1)
        )
    info = GpuInfo(
        driver_version=driver,
        cuda_driver_version=cuda,
        driver_source=LABELS,
        gpus=gpus,
        gpus_reason=None if gpus else "the labels name no GPU model",
    )
    return blank(source, LABELS).with_sections(
        gpu=Section.ok(
            info,
            source=LABELS,
            notes=(
                "GPU Feature Discovery's labels: the driver, its CUDA, the GPU model and count",
            ),
        )
    )
