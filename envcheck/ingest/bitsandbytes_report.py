"""``python -m bitsandbytes``: bitsandbytes' own diagnostics (bitsandbytes-foundation/
bitsandbytes bitsandbytes/diagnostics/main.py and cuda.py, 0.43 on), read for the node facts it
prints and for what it found of its own CUDA library.

Since 0.45 it opens with ``==== bitsandbytes v0.45.0 ====`` and the environment (``Platform:``,
``  libc: glibc-2.35``, ``Python: 3.10.12``, ``PyTorch: 2.5.1+cu124`` with ``  CUDA: 12.4``,
``Related packages:`` and their versions); 0.43-0.44 open with ``BUG REPORT INFORMATION`` and
``CUDA specs: CUDASpecs(highest_compute_capability=(8, 6), cuda_version_string='121',
cuda_version_tuple=(12, 1))``. Both then print ``PyTorch settings found: CUDA_VERSION=124,
Highest Compute Capability: (8, 6).`` and, where no build of the library exists for torch's
CUDA, ``No compatible CUDA library found (tried: libbitsandbytes_cuda124.so)`` (0.45 on) or
``Library not found: <path>/libbitsandbytes_cuda121.so. Maybe you need to compile it from
source?`` (0.43-0.44); ``Torch says CUDA is not available`` (0.43-0.44) where torch sees no GPU,
``SUCCESS!`` where its check passed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import (
    FormatError,
    Source,
    blank,
    markers,
    torch_section,
    valid_version,
)
from envcheck.model.report import Distribution, NodeReport, PackagesInfo, PythonInfo, SystemInfo
from envcheck.model.section import Section

BITSANDBYTES = "python -m bitsandbytes"

_BANNER = re.compile(
    r"^\s*=+\s*(?:bitsandbytes v(?P<version>[0-9][\w.+-]*)|BUG REPORT INFORMATION)\s*=+\s*$"
)
_LINE = re.compile(
    r"^\s*(?:=+|Platform:|libc:|Python:|PyTorch:|PyTorch settings found:|CUDA:|HIP:|XPU:"
    r"|Related packages:|[\w.-]+: \S+|CUDA specs:|No compatible CUDA library|Library not found:"
    r"|You may need to compile|https?://|If you compiled|for example|WARNING|CUDA SETUP:"
    r"|Found duplicate|\* Found CUDA runtime|We select|bitsandbytes will use|the closest"
    r"|set BNB_CUDA_VERSION|export BNB_|Torch says CUDA|[0-9]\. |Checking that|SUCCESS!"
    r"|Installation was successful|To manually override|The directory listed|If you think"
    r"|8-bit optimizers|Above we output|Please provide|See above|No CUDA, ROCm"
    r"|CPU library|Only slow|If you run into|=+ OTHER|DEBUG INFO END|\s*$)"
)
_TORCH = re.compile(r"^\s*PyTorch:\s*(?P<version>[0-9][\w.+-]*)\s*$", re.MULTILINE)
_TORCH_CUDA = re.compile(r"^\s*PyTorch:.*\n\s+CUDA:\s*(?P<cuda>[0-9.]+|N/A)\s*$", re.MULTILINE)
_PYTHON = re.compile(r"^\s*Python:\s*(?P<version>3\.[0-9]+\.[0-9]+)\s*$", re.MULTILINE)
_LIBC = re.compile(r"^\s*libc:\s*glibc-(?P<version>[0-9.]+)\s*$", re.MULTILINE)
_SETTINGS = re.compile(
    r"PyTorch settings found: CUDA_VERSION=(?P<cuda>[0-9]+), Highest Compute Capability: "
    r"\(?(?P<major>[0-9]+)[,.]\s*(?P<minor>[0-9]+)\)?"
)
_SPECS = re.compile(
    r"CUDASpecs\(highest_compute_capability=\((?P<major>[0-9]+), (?P<minor>[0-9]+)\), "
    r"cuda_version_string='(?P<cuda>[0-9]+)'"
)
_NOT_FOUND = re.compile(
    r"No compatible CUDA library found \(tried: (?P<tried>\S+?)\)"
    r"|Library not found: (?P<path>\S*?libbitsandbytes_\w+\.\w+)"
)
_PACKAGE = re.compile(
    r"^\s{2,}(?P<name>[A-Za-z][\w.-]*):\s*(?P<version>[0-9][\w.+-]*|not found)\s*$"
)


# bitsandbytes prints its own version, torch's and a few related packages' only
_PARTIAL = "python -m bitsandbytes lists bitsandbytes, torch and a few related packages only"


def find(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """From its banner on, while its own lines go."""
    if not _BANNER.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _LINE.match(lines[end]):
        end += 1
    text = "\n".join(lines[i:end])
    if not (_TORCH.search(text) or _SETTINGS.search(text) or _SPECS.search(text)):
        return None
    return i, end


def _cuda_dotted(packed: str) -> str:
    """bitsandbytes' CUDA_VERSION=124 -> '12.4' (major, then one digit of minor)."""
    return f"{packed[:-1]}.{packed[-1]}"


def parse(source: Source) -> NodeReport:
    text = source.text
    banner = next((m for m in map(_BANNER.match, text.splitlines()) if m), None)
    if banner is None:
        raise FormatError(f"format not recognised as {BITSANDBYTES}: no banner")
    settings = _SETTINGS.search(text) or _SPECS.search(text)
    torch = _TORCH.search(text)
    notes: list[str] = []
    report = blank(source, BITSANDBYTES)
    dists: list[Distribution] = []
    if banner["version"]:
        dists.append(Distribution(name="bitsandbytes", version=banner["version"]))
    related = text.split("Related packages:", 1)[1] if "Related packages:" in text else ""
    for line in related.splitlines()[1:]:
        package = _PACKAGE.match(line)
        if package is None:
            break
        if package["version"] == "not found":
            continue
        dists.append(Distribution(name=package["name"], version=package["version"]))
    if torch:
        dists.append(Distribution(name="torch", version=torch["version"]))
    packages = PackagesInfo(distributions=tuple(dists), partial=_PARTIAL) if dists else None
    if packages is not None:
        report = report.with_sections(packages=Section.ok(packages, source=BITSANDBYTES))
    cuda_line = _TORCH_CUDA.search(text)
    torch_cuda = cuda_line["cuda"] if cuda_line else None
    if torch_cuda is None and settings is not None:
        torch_cuda = _cuda_dotted(settings["cuda"])
    if torch is not None:
        report = report.with_sections(
            torch=torch_section(
                packages,
                BITSANDBYTES,
                version=torch["version"],
                cuda=torch_cuda if torch_cuda not in (None, "N/A") else None,
                cuda_known=torch_cuda is not None,
            )
        )
    python = _PYTHON.search(text)
    if python is not None:
        version = python["version"]
        report = report.with_sections(
            python=Section.ok(
                PythonInfo(version=version, markers=markers(version, None)), source=BITSANDBYTES
            )
        )
    libc = _LIBC.search(text)
    if libc is not None:
        report = report.with_sections(
            system=Section.ok(SystemInfo(glibc=valid_version(libc["version"])), source=BITSANDBYTES)
        )
    if settings is not None:
        notes.append(
            f"bitsandbytes: torch's CUDA {_cuda_dotted(settings['cuda'])}, the GPUs' highest "
            f"compute capability {settings['major']}.{settings['minor']}"
        )
    missing = _NOT_FOUND.search(text)
    if missing is not None:
        tried = missing["tried"] or (missing["path"] or "").rsplit("/", 1)[-1]
        notes.append(
            f"bitsandbytes has no library for torch's CUDA (it tried {tried}): this "
            "bitsandbytes release ships no build for that CUDA (pip install -U bitsandbytes), "
            "or BNB_CUDA_VERSION names another"
        )
    if "Torch says CUDA is not available" in text or "No CUDA, ROCm, or XPU detected" in text:
        notes.append("bitsandbytes: torch sees no CUDA GPU")
    if re.search(r"^\s*SUCCESS!", text, re.MULTILINE):
        notes.append("bitsandbytes' own check passed (SUCCESS!)")
    if packages is None and torch is None and python is None and not notes:
        raise FormatError(f"{BITSANDBYTES}: no fact printed")
    if notes:  # what bitsandbytes found of itself: said beside its package list
        listed = packages or PackagesInfo(distributions=(), partial=_PARTIAL)
        report = report.with_sections(
            packages=Section.ok(listed, source=BITSANDBYTES, notes=tuple(notes))
        )
    return report
