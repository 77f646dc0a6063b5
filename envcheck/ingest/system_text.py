"""Short outputs people paste beside a report: ``cat /etc/os-release``, ``lsb_release -a``,
``uname -a`` and ``nvcc --version``. Each states a few system facts (the OS, the kernel and
machine, the CUDA toolkit on PATH); the rest of the report stays unknown.

- ``/etc/os-release``: ``PRETTY_NAME="Ubuntu 22.04.3 LTS"``, ``ID=ubuntu``, ``VERSION_ID="22.04"``
  (os-release(5)); ``lsb_release -a``: ``Description:`` and ``Release:``.
- ``uname -a``: ``Linux <host> <kernel release> #<build> ... <machine> GNU/Linux``; the kernel
  release is the third field (uname(1) prints -s -n -r -v -m -p -i -o in that order).
- ``nvcc --version``: ``Cuda compilation tools, release 12.1, V12.1.105``: the toolkit on PATH,
  not the CUDA torch was built with.
- ``cat /proc/version``: ``Linux version 5.15.0-91-generic (buildd@...) (gcc ...) #101-Ubuntu
  SMP ...`` (the kernel's linux_banner, init/version.c): the kernel release; ``uname -a`` under
  nvidia-bug-report.sh's ``uname:`` label is read as uname's.
- ``lscpu``: ``Architecture:  x86_64`` first, then ``CPU(s):  64``, ``Model name:`` ...
  (util-linux lscpu(1)): the machine and its CPU count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, parse_os
from envcheck.model.report import NodeReport, SystemInfo, Toolkit
from envcheck.model.section import Section

OS_RELEASE = "/etc/os-release"
LSB = "lsb_release -a"
UNAME = "uname -a"
NVCC = "nvcc --version"
PROC_VERSION = "/proc/version"
LSCPU = "lscpu"

OS_RELEASE_LINE = re.compile(
    r"^\s*(?:NAME|VERSION|ID|ID_LIKE|PRETTY_NAME|VERSION_ID|VERSION_CODENAME|UBUNTU_CODENAME"
    r"|HOME_URL|SUPPORT_URL|BUG_REPORT_URL|PRIVACY_POLICY_URL|LOGO|ANSI_COLOR|CPE_NAME"
    r"|PLATFORM_ID|BUILD_ID|VARIANT|VARIANT_ID|DOCUMENTATION_URL|REDHAT_[A-Z_]+|SUPPORT_END)="
)
LSB_LINE = re.compile(r"^\s*(?:Distributor ID|Description|Release|Codename|LSB Version):\s")
UNAME_LINE = re.compile(
    r"^\s*(?:uname:\s+)?Linux\s+\S+\s+(?P<kernel>[0-9]+\.[0-9]+[^\s]*)\s+#.*?\s"
    r"(?P<arch>x86_64|aarch64|ppc64le|s390x|armv7l|riscv64)\b"
)
NVCC_FIRST = re.compile(r"^\s*nvcc: NVIDIA \(R\) Cuda compiler driver")
# /proc/version (the kernel's linux_banner): 'Linux version <release> (<builder>) (<gcc>) #...'
PROC_VERSION_LINE = re.compile(r"^\s*Linux version (?P<kernel>[0-9]+\.[0-9]+[^\s(]*) \(")
_LSCPU_FIRST = re.compile(
    r"^\s*Architecture:\s+(?P<arch>x86_64|aarch64|ppc64le|s390x|armv7l|riscv64)\s*$"
)
_LSCPU_LINE = re.compile(
    r"^\s*(?:CPU op-mode\(s\)|Address sizes|Byte Order|CPU\(s\)|On-line CPU\(s\) list|Vendor ID"
    r"|Model name|CPU family|Model|Thread\(s\) per core|Core\(s\) per (?:socket|cluster)|Socket\(s\)"
    r"|Cluster\(s\)|Stepping|BogoMIPS|Flags|Virtualization(?: type)?|Hypervisor vendor|Frequency boost"
    r"|CPU (?:max |min |scaling )?MHz|Caches \(sum of all\)|L[123][a-z]?(?: cache)?|NUMA(?: node"
    r"[0-9]*(?: CPU\(s\))?)?|NUMA node\(s\)|Vulnerabilit(?:y|ies)(?: [^:]+)?|Stepping|Mhz"
    r"):\s*\S?"
)
_LSCPU_COUNT = re.compile(r"^\s*CPU\(s\):\s+(?P<count>[0-9]+)\s*$", re.MULTILINE)
_NVCC_RELEASE = re.compile(r"Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+(?:\.\d+)?)")


def _system(source: Source, label: str, info: SystemInfo, notes: tuple[str, ...]) -> NodeReport:
    return blank(source, label).with_sections(system=Section.ok(info, source=label, notes=notes))


def _unquote(value: str) -> str:
    return value.strip().strip("'\"")


def parse_os_release(source: Source) -> NodeReport:
    values: dict[str, str] = {}
    for line in source.text.splitlines():
        key, eq, value = line.strip().partition("=")
        if eq and key.isupper():
            values.setdefault(key, _unquote(value))
    pretty = values.get("PRETTY_NAME") or " ".join(
        v for v in (values.get("NAME"), values.get("VERSION")) if v
    )
    if not pretty and not values.get("ID"):
        raise FormatError("format not recognised as /etc/os-release: no PRETTY_NAME or ID")
    os_id, version = parse_os(pretty)
    info = SystemInfo(
        os_id=values.get("ID") or os_id,
        os_version=values.get("VERSION_ID") or version,
        os_pretty=pretty or None,
    )
    return _system(source, OS_RELEASE, info, ())


def parse_lsb(source: Source) -> NodeReport:
    values: dict[str, str] = {}
    for line in source.text.splitlines():
        key, colon, value = line.partition(":")
        if colon:
            values.setdefault(key.strip(), value.strip())
    pretty = values.get("Description")
    if not pretty:
        raise FormatError("format not recognised as lsb_release -a: no 'Description:' line")
    os_id, version = parse_os(pretty)
    info = SystemInfo(os_id=os_id, os_version=values.get("Release") or version, os_pretty=pretty)
    return _system(source, LSB, info, ())


def parse_uname(source: Source) -> NodeReport:
    found = next(
        (m for m in map(UNAME_LINE.match, source.text.splitlines()) if m is not None), None
    )
    if found is None:
        raise FormatError("format not recognised as uname -a: no 'Linux <host> <release> #' line")
    info = SystemInfo(kernel=found.group("kernel"), arch=found.group("arch"))
    return _system(source, UNAME, info, ())


def parse_nvcc(source: Source) -> NodeReport:
    found = _NVCC_RELEASE.search(source.text)
    if found is None:
        raise FormatError("format not recognised as nvcc --version: no 'release X.Y, VX.Y.Z'")
    info = SystemInfo(nvcc=Toolkit(nvcc_path="nvcc (per the pasted text)", version=found.group(1)))
    note = (f"nvcc {found.group(2)}: the CUDA toolkit on PATH, not the CUDA torch was built with",)
    return _system(source, NVCC, info, note)


def find_lscpu(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """lscpu's output: its first line, ``Architecture:``, then its own keys."""
    if not _LSCPU_FIRST.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _LSCPU_LINE.match(lines[end]):
        end += 1
    return (i, end) if end > i + 1 else None


def parse_lscpu(source: Source) -> NodeReport:
    found = next((m for m in map(_LSCPU_FIRST.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError("format not recognised as lscpu: no 'Architecture:' line")
    count = _LSCPU_COUNT.search(source.text)
    info = SystemInfo(arch=found["arch"], cpu_count=int(count["count"]) if count else None)
    return _system(source, LSCPU, info, ())


def parse_proc_version(source: Source) -> NodeReport:
    found = next((m for m in map(PROC_VERSION_LINE.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError("format not recognised as /proc/version: no 'Linux version X (' line")
    return _system(source, PROC_VERSION, SystemInfo(kernel=found["kernel"]), ())
