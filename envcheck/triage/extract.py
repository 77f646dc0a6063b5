"""Facts a log states about the node it ran on, read by the signatures' extractors.

A signature in ``matrices/signatures.toml`` may carry ``extract``: Python regexes with named
groups, run only on the lines the signature matched (the first and last occurrence, plus the
``context`` lines after the first), so the scan's speed does not depend on them. Each group name
is a fact from ``FACTS``; ``to_report`` turns the facts into a NodeReport whose sections say
"read from LOG line N", which triage merges with the node it checks (the log first: it is the
more specific witness of the failed run).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from envcheck.ingest.common import markers, now
from envcheck.matrix.schema import Signature
from envcheck.model.report import (
    DiskUsage,
    Distribution,
    Gpu,
    GpuInfo,
    Interface,
    LibrariesInfo,
    NetworkInfo,
    NodeReport,
    Origin,
    PackagesInfo,
    PythonInfo,
    SharedLibrary,
    StorageInfo,
    SystemInfo,
    Toolkit,
    TorchBuild,
)
from envcheck.model.section import Section

# group name -> what it is (the catalogue `envcheck matrix validate` checks extractors against)
FACTS: dict[str, str] = {
    "gpu_name": "a GPU's name as the log prints it",
    "gpu_sm": "that GPU's architecture, sm_XY digits (120 -> compute capability 12.0)",
    "driver_cuda": "the newest CUDA the driver supports, as CUDA prints it (12080 -> 12.8)",
    "driver_version": "the NVIDIA driver version",
    "torch_version": "the torch version",
    "python_version": "the Python version (X.Y or X.Y.Z)",
    "site_python": "X.Y from a pythonX.Y/site-packages path",
    "ray_version": "the Ray version of the process that logged",
    "ray_cluster_version": "the Ray version the cluster was started with",
    "python_cluster_version": "the Python version the cluster was started with",
    "pkg_name": "an installed distribution's name (paired with pkg_version)",
    "pkg_version": "its version",
    "pkg2_name": "a second installed distribution's name (paired with pkg2_version)",
    "pkg2_version": "its version",
    "nccl_version": "the NCCL release loaded",
    "nccl_cuda": "the CUDA release that NCCL was built for",
    "mem_used_gb": "memory in use on the node (GB, Ray's memory monitor)",
    "mem_total_gb": "the node's memory (GB, Ray's memory monitor)",
    "mem_threshold": "Ray's memory usage threshold (fraction)",
    "shm_bytes": "bytes available in /dev/shm",
    "disk_path": "the directory whose disk is reported",
    "disk_free": "free bytes on it",
    "disk_total": "its capacity in bytes",
    "cuda_lib": "a CUDA shared library named on the line (libcudart.so.12)",
    "nvcc_version": "the CUDA toolkit release (nvcc) a build or JIT compiler found (10.1, 12.8)",
    "torch_cuda": "the CUDA release torch was built with (torch.version.cuda: 11.8)",
    "cuda_build": "what the line shows compiling CUDA code (an extension build, a JIT compiler)",
    "iface": "a network interface name",
    "address": "an IP address the process used",
}
_PAIRS = {"pkg_name": "pkg_version", "pkg2_name": "pkg2_version"}
_LOOPBACK = re.compile(r"^(127\.|::1$|localhost$)")


@dataclass(frozen=True)
class LogFact:
    name: str  # a key of FACTS
    value: str
    line: int
    signature: str

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.name,
            "value": self.value,
            "line": self.line,
            "signature": self.signature,
        }


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def extractor_problem(pattern: str) -> str | None:
    """Why an extractor is unusable, or None."""
    try:
        regex = _compiled(pattern)
    except re.error as exc:
        return f"does not compile: {exc}"
    if not regex.groupindex:
        return "has no named group (?P<fact>...)"
    unknown = sorted(set(regex.groupindex) - FACTS.keys())
    if unknown:
        return f"names unknown facts {unknown} (known: {', '.join(FACTS)})"
    return None


def extract(signature: Signature, line: int, text: str) -> list[LogFact]:
    """The facts ``signature``'s extractors read from one matched line (or its context)."""
    found: list[LogFact] = []
    for pattern in signature.extract:
        for match in _compiled(pattern).finditer(text):
            for name, value in match.groupdict().items():
                if value:
                    found.append(LogFact(name, value.strip(), line, signature.id))
    return found


def dedupe(facts: Iterable[LogFact]) -> tuple[LogFact, ...]:
    seen: dict[tuple[str, str], LogFact] = {}
    for fact in facts:
        seen.setdefault((fact.name, fact.value), fact)
    return tuple(sorted(seen.values(), key=lambda f: (f.line, f.name)))


# --- facts -> report ----------------------------------------------------------------------------


def _cc(sm: str) -> str | None:
    digits = sm.strip().lower().removeprefix("sm_")
    if not digits.isdigit() or len(digits) < 2:
        return None
    return f"{int(digits[:-1])}.{digits[-1]}"


def _cuda_number(value: str) -> str | None:
    """CUDA's integer version (12080, 11040) as major.minor."""
    if not value.isdigit():
        return value if re.fullmatch(r"\d+\.\d+", value) else None
    number = int(value)
    return f"{number // 1000}.{(number % 1000) // 10}"


def _major_minor(value: str) -> str | None:
    found = re.match(r"(\d+)\.(\d+)", value.strip())
    return f"{found.group(1)}.{found.group(2)}" if found else None


def _bytes_gb(value: str) -> int | None:
    try:
        return int(float(value) * 1024**3)
    except ValueError:
        return None


class _Builder:
    def __init__(self, facts: tuple[LogFact, ...], log: str) -> None:
        self.facts = facts
        self.log = log

    def first(self, name: str) -> LogFact | None:
        return next((f for f in self.facts if f.name == name), None)

    def where(self, *facts: LogFact | None) -> str:
        lines = sorted({f.line for f in facts if f is not None})
        return f"{self.log} line{'s' if len(lines) > 1 else ''} " + ", ".join(map(str, lines))

    def section(self, data: Any, *facts: LogFact | None) -> Section[Any]:
        return Section.ok(data, source=f"log ({self.where(*facts)})")

    def gpu(self) -> Section[GpuInfo] | None:
        name, sm = self.first("gpu_name"), self.first("gpu_sm")
        cuda, driver = self.first("driver_cuda"), self.first("driver_version")
        if not any((name, sm, cuda, driver)):
            return None
        gpus = None
        if name or sm:
            gpus = (
                Gpu(
                    index=0,
                    name=name.value if name else None,
                    compute_capability=_cc(sm.value) if sm else None,
                ),
            )
        info = GpuInfo(
            driver_version=driver.value if driver else None,
            cuda_driver_version=_cuda_number(cuda.value) if cuda else None,
            driver_source=f"the log ({self.where(cuda)})" if cuda else None,
            gpus=gpus,
            gpus_reason=None if gpus else "the log names no GPU",
        )
        return self.section(info, name, sm, cuda, driver)

    def packages(self) -> Section[PackagesInfo] | None:
        dists: list[Distribution] = []
        used: list[LogFact] = []
        for key, value in (("torch_version", "torch"), ("ray_version", "ray")):
            fact = self.first(key)
            if fact is not None:
                dists.append(Distribution(name=value, version=fact.value))
                used.append(fact)
        for name_key, version_key in _PAIRS.items():
            names = [f for f in self.facts if f.name == name_key]
            versions = [f for f in self.facts if f.name == version_key]
            for name, version in zip(names, versions, strict=False):
                dists.append(Distribution(name=name.value, version=version.value))
                used += [name, version]
        if not dists:
            return None
        unique: dict[str, Distribution] = {}
        for dist in dists:
            unique.setdefault(dist.key, dist)
        info = PackagesInfo(
            distributions=tuple(unique.values()),
            partial="a log names only the packages its lines mention",
        )
        return self.section(info, *used)

    def python(self) -> Section[PythonInfo] | None:
        fact = self.first("python_version") or self.first("site_python")
        if fact is None:
            return None
        return self.section(PythonInfo(version=fact.value, markers=markers(fact.value, None)), fact)

    def system(self) -> Section[SystemInfo] | None:
        total = self.first("mem_total_gb")
        used = self.first("mem_used_gb")
        nvcc, build = self.first("nvcc_version"), self.first("cuda_build")
        if total is None and nvcc is None and build is None:
            return None
        total_bytes = _bytes_gb(total.value) if total else None
        used_bytes = _bytes_gb(used.value) if used else None
        available = (
            total_bytes - used_bytes if total_bytes is not None and used_bytes is not None else None
        )
        toolkit = None
        if nvcc is not None or build is not None:
            toolkit = Toolkit(
                nvcc_path=f"nvcc (named in {self.where(nvcc or build)})",
                version=_major_minor(nvcc.value) if nvcc else None,
                in_use=f"{build.value} ({self.where(build)})" if build else None,
            )
        info = SystemInfo(
            memory_total_bytes=total_bytes, memory_available_bytes=available, nvcc=toolkit
        )
        return self.section(info, total, used, nvcc, build)

    def torch_cuda(self) -> LogFact | None:
        return self.first("torch_cuda")

    def storage(self) -> Section[StorageInfo] | None:
        disks: list[DiskUsage] = []
        used: list[LogFact] = []
        shm = self.first("shm_bytes")
        if shm is not None and shm.value.isdigit():
            free = int(shm.value)
            disks.append(
                DiskUsage(role="dev_shm", path="/dev/shm", total_bytes=free, free_bytes=free)
            )
            used.append(shm)
        path, free_f, total_f = (
            self.first("disk_path"),
            self.first("disk_free"),
            self.first("disk_total"),
        )
        if free_f is not None and total_f is not None:
            disks.append(
                DiskUsage(
                    role="ray_tmp",
                    path=path.value if path else "/tmp/ray",
                    total_bytes=int(total_f.value),
                    free_bytes=int(free_f.value),
                )
            )
            used += [f for f in (path, free_f, total_f) if f is not None]
        if not disks:
            return None
        return self.section(StorageInfo(disks=tuple(disks)), *used)

    def libraries(self) -> Section[LibrariesInfo] | None:
        libs = [f for f in self.facts if f.name == "cuda_lib"]
        nccl, nccl_cuda = self.first("nccl_version"), self.first("nccl_cuda")
        if not libs and nccl is None:
            return None
        found = tuple(
            SharedLibrary(name=f.value.split(".so", 1)[0], path=f.value, via="named in the log")
            for f in libs
        )
        info = LibrariesInfo(
            cuda_libraries=found,
            nccl_loaded=nccl.value if nccl else None,
            nccl_loaded_cuda=nccl_cuda.value if nccl and nccl_cuda else None,
        )
        return self.section(info, *libs, nccl, nccl_cuda)

    def network(self) -> Section[NetworkInfo] | None:
        ifaces = [f for f in self.facts if f.name == "iface"]
        addresses = [f for f in self.facts if f.name == "address"]
        if not ifaces and not addresses:
            return None
        interfaces = tuple(
            Interface(name=f.value, kind="loopback" if f.value == "lo" else None) for f in ifaces
        )
        info = NetworkInfo(
            interfaces=interfaces,
            hostname_addresses=tuple(
                dict.fromkeys(a.value for a in addresses if _LOOPBACK.match(a.value))
            ),
        )
        return self.section(info, *ifaces, *addresses)


def to_report(facts: tuple[LogFact, ...], log: str) -> NodeReport | None:
    """The node as the log describes it; None when the log states no fact."""
    if not facts:
        return None
    from envcheck import __version__

    build = _Builder(facts, log)
    sections: dict[str, Section[Any]] = {
        name: section
        for name, section in (
            ("gpu", build.gpu()),
            ("packages", build.packages()),
            ("python", build.python()),
            ("system", build.system()),
            ("storage", build.storage()),
            ("libraries", build.libraries()),
            ("network", build.network()),
        )
        if section is not None
    }
    if not sections and build.torch_cuda() is None:
        return None
    report = NodeReport(
        node=f"the node of {log}",
        envcheck_version=__version__,
        created_at=now(),
        origin=Origin(kind="ingested", detail=f"{log} (facts read from the log)"),
    )
    cuda = build.torch_cuda()
    cuda_version = _major_minor(cuda.value) if cuda else None
    if "packages" in sections:
        from envcheck.ingest.common import torch_section

        torch = torch_section(
            sections["packages"].data,
            sections["packages"].source or log,
            cuda=cuda_version,
            cuda_known=cuda_version is not None,
        )
        if torch.is_ok:
            sections["torch"] = torch
    if "torch" not in sections and cuda_version is not None:
        # the line states torch's CUDA but not its version: a build whose version is unknown
        sections["torch"] = build.section(TorchBuild(version="", cuda=cuda_version), cuda)
    return report.with_sections(**sections)
