"""Rows people paste without the line that names their columns:

- ``nvidia-smi --query-gpu=... --format=csv,noheader`` without its command line
  (``NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB``): each cell's own shape names its column (a
  GPU's name, a driver-shaped version, a compute capability ``8.6``, an index); memory cells,
  which could be the total or the used, are left out;
- pip's legacy ``pip list`` rows (pip < 10, and ``--format=legacy``): ``torch (0.4.0)``;
- ``/etc/redhat-release`` (and CentOS' / Rocky's / Alma's ``/etc/system-release``):
  ``CentOS Linux release 7.9.2009 (Core)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest import nvidia_smi
from envcheck.ingest.common import (
    FormatError,
    Source,
    blank,
    parse_os,
    torch_section,
    valid_version,
)
from envcheck.ingest.pip import parse_freeze
from envcheck.model.report import GpuInfo, NodeReport, SystemInfo, Toolkit
from envcheck.model.section import Section

SMI_ROWS = "nvidia-smi --query-gpu rows (noheader, no command line)"
PIP_LEGACY = "pip list (legacy format)"
REDHAT_RELEASE = "/etc/redhat-release"

_GPU_NAME = re.compile(r"^(?:NVIDIA |Tesla |GeForce |Quadro |TITAN )\S.*$")
_DRIVER = re.compile(r"^[0-9]{3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?$")
_CAPABILITY = re.compile(r"^[0-9]{1,2}\.[0-9]$")
_INDEX = re.compile(r"^[0-9]{1,2}$")
_MEMORY = re.compile(r"^[0-9]+ ?MiB$")
_OTHER = re.compile(
    r"^(?:[0-9]+ ?%|Enabled|Disabled|Default|\[N/A\]|N/A|00000000:[0-9A-Fa-f:.]+|GPU-[0-9a-f-]+"
    r"|[0-9.]+ ?W|P[0-9]+)$"
)

_LEGACY_ROW = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*) \((?P<version>[0-9][^),\s]*)(?:, [^)]*)?\)\s*$"
)
_REDHAT = re.compile(
    r"^\s*(?P<name>(?:CentOS(?: Linux| Stream)?|Red Hat Enterprise Linux(?: Server| Workstation)?"
    r"|Rocky Linux|AlmaLinux|Fedora|Oracle Linux Server)) release (?P<version>[0-9][0-9.]*)"
    r"(?: \((?P<codename>[^)]*)\))?\s*$"
)
_REDHAT_ID = {
    "CentOS": "centos",
    "Red Hat": "rhel",
    "Rocky": "rocky",
    "AlmaLinux": "almalinux",
    "Fedora": "fedora",
    "Oracle": "ol",
}


def _column(cell: str) -> str | None:
    """The --query-gpu column a cell's shape names; '' for a cell read as no column."""
    if _GPU_NAME.match(cell):
        return "name"
    if _DRIVER.match(cell):
        return "driver_version"
    if _CAPABILITY.match(cell):
        return "compute_cap"
    if _INDEX.match(cell):
        return "index"
    if _MEMORY.match(cell) or _OTHER.match(cell):
        return ""
    return None


def _columns(line: str) -> list[str] | None:
    """The columns of a headerless row; None unless every cell has a shape and one is a GPU."""
    if "," not in line:
        return None
    cells = [c.strip() for c in line.split(",")]
    columns = [_column(c) for c in cells]
    if any(c is None for c in columns) or "name" not in columns:
        return None
    named = [c or f"skip{i}" for i, c in enumerate(columns) if c is not None]
    return named if len(set(named)) == len(named) else None


def find_smi_rows(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    columns = _columns(lines[i])
    if columns is None:
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _columns(lines[end]) == columns:
        end += 1
    return i, end


def parse_smi_rows(source: Source) -> NodeReport:
    rows = [line for line in source.text.splitlines() if line.strip()]
    columns = _columns(rows[0]) if rows else None
    if columns is None:
        raise FormatError(f"format not recognised as {SMI_ROWS}")
    header = ", ".join(columns)
    return nvidia_smi.parse_csv(Source(name=source.name, text="\n".join([header, *rows])))


def find_pip_legacy(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _LEGACY_ROW.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _LEGACY_ROW.match(lines[end]):
        end += 1
    return (i, end) if end - i >= 2 else None  # one 'name (1.0)' in prose is not a list


def parse_pip_legacy(source: Source) -> NodeReport:
    rows = [m for m in map(_LEGACY_ROW.match, source.text.splitlines()) if m]
    if len(rows) < 2:
        raise FormatError(f"format not recognised as {PIP_LEGACY}")
    freeze = "\n".join(f"{m['name']}=={m['version']}" for m in rows)
    return parse_freeze(Source(name=source.name, text=freeze), label=PIP_LEGACY)


def find_redhat(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    return (i, i + 1) if _REDHAT.match(lines[i]) else None


def parse_redhat(source: Source) -> NodeReport:
    found = next((m for m in map(_REDHAT.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError(f"format not recognised as {REDHAT_RELEASE}")
    pretty = found.group(0).strip()
    os_id, version = parse_os(pretty)
    named = next((v for k, v in _REDHAT_ID.items() if found["name"].startswith(k)), None)
    info = SystemInfo(
        os_id=os_id or named, os_version=version or found["version"], os_pretty=pretty
    )
    return blank(source, REDHAT_RELEASE).with_sections(
        system=Section.ok(info, source=REDHAT_RELEASE)
    )


# -- conda info: its virtual packages ----------------------------------------------------------

CONDA_INFO = "conda info (virtual packages)"
_VIRTUAL_HEAD = re.compile(r"^\s*virtual packages\s*:\s*(?P<first>__\S+)\s*$")
_VIRTUAL_MORE = re.compile(r"^\s+(?P<pkg>__[a-z0-9_]+=\S+)\s*$")
_VIRTUAL = re.compile(r"^__(?P<name>[a-z0-9_]+)=(?P<version>[0-9][0-9.]*)")


def find_conda_info(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _VIRTUAL_HEAD.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _VIRTUAL_MORE.match(lines[end]):
        end += 1
    return i, end


def parse_conda_info(source: Source) -> NodeReport:
    """conda's virtual packages: ``__cuda`` is the newest CUDA the driver supports (conda asks
    libcuda's cuDriverGetVersion), ``__glibc`` the C library's version."""
    found: dict[str, str] = {}
    for line in source.text.splitlines():
        head = _VIRTUAL_HEAD.match(line)
        more = _VIRTUAL_MORE.match(line)
        cell = head["first"] if head else more["pkg"] if more else None
        virtual = _VIRTUAL.match(cell) if cell else None
        if virtual:
            found.setdefault(virtual["name"], virtual["version"])
    if not found:
        raise FormatError(f"format not recognised as {CONDA_INFO}: no virtual package")
    report = blank(source, CONDA_INFO)
    if "cuda" in found:
        gpu = GpuInfo(cuda_driver_version=found["cuda"], driver_source=CONDA_INFO)
        note = "conda's __cuda: the newest CUDA the loaded driver supports"
        report = report.with_sections(gpu=Section.ok(gpu, source=CONDA_INFO, notes=(note,)))
    if "glibc" in found:
        system = SystemInfo(glibc=found["glibc"])
        report = report.with_sections(system=Section.ok(system, source=CONDA_INFO))
    if "cuda" not in found and "glibc" not in found:
        raise FormatError(f"format not recognised as {CONDA_INFO}: no __cuda or __glibc")
    return report


# -- torch.__config__.show() --------------------------------------------------------------------

TORCH_CONFIG = "torch.__config__.show()"
_CONFIG_HEAD = re.compile(r"^\s*PyTorch built with:\s*$")
_CONFIG_LINE = re.compile(r"^\s+- \S")
_SETTING = re.compile(r"\b(?P<key>TORCH_VERSION|CUDA_VERSION|USE_CUDA)=(?P<value>[^,\s]+)")
_RUNTIME = re.compile(r"^\s+- CUDA Runtime (?P<cuda>[0-9]+\.[0-9]+)\s*$", re.MULTILINE)


def find_torch_config(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _CONFIG_HEAD.match(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _CONFIG_LINE.match(lines[end]):
        end += 1
    return (i, end) if end > i + 1 else None


def parse_torch_config(source: Source) -> NodeReport:
    """torch's own build settings: TORCH_VERSION, and the CUDA it was built with
    (CUDA_VERSION, 'CUDA Runtime X.Y'; USE_CUDA=OFF: a CPU build)."""
    settings = {m["key"]: m["value"] for m in _SETTING.finditer(source.text)}
    runtime = _RUNTIME.search(source.text)
    version = valid_version(settings.get("TORCH_VERSION"))
    if version is None:
        raise FormatError(f"format not recognised as {TORCH_CONFIG}: no TORCH_VERSION")
    cuda = settings.get("CUDA_VERSION") or (runtime["cuda"] if runtime else None)
    cpu = settings.get("USE_CUDA", "").upper() in ("OFF", "0")
    known = cpu or cuda is not None
    section = torch_section(
        None, TORCH_CONFIG, version=version, cuda=None if cpu else cuda, cuda_known=known
    )
    return blank(source, TORCH_CONFIG).with_sections(torch=section)


# -- ls -l /usr/local | grep cuda: the toolkits installed, the one `cuda` links to ----------------

CUDA_DIRS = "ls /usr/local (CUDA toolkit directories)"
_CUDA_LINK = re.compile(r"\bcuda -> (?:/usr/local/)?cuda-(?P<version>[0-9]+\.[0-9]+)/?\s*$")
_CUDA_DIR = re.compile(
    r"^\s*(?:[dl][rwx-]{9}\S*\s.*\s)?(?:/usr/local/)?cuda-(?P<version>[0-9]+\.[0-9]+)/?\s*$"
)


def _cuda_dir_line(line: str) -> bool:
    return bool(_CUDA_LINK.search(line) or _CUDA_DIR.match(line))


def find_cuda_dirs(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _cuda_dir_line(lines[i]):
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _cuda_dir_line(lines[end]):
        end += 1
    return i, end


def parse_cuda_dirs(source: Source) -> NodeReport:
    """The toolkit /usr/local/cuda links to (the one a build finds first); the directories
    installed beside it go in a note."""
    lines = source.text.splitlines()
    linked = next((m["version"] for m in map(_CUDA_LINK.search, lines) if m), None)
    installed = [m["version"] for m in map(_CUDA_DIR.match, lines) if m]
    if linked is None and not installed:
        raise FormatError(f"format not recognised as {CUDA_DIRS}: no cuda-X.Y directory")
    listed = ", ".join(f"cuda-{v}" for v in dict.fromkeys(installed))
    note = f"CUDA toolkit directories in /usr/local: {listed or '-'}"
    if linked is None:
        report = blank(source, CUDA_DIRS)
        return report.with_sections(
            system=Section.ok(
                SystemInfo(), source=CUDA_DIRS, notes=(note + " (none linked as /usr/local/cuda)",)
            )
        )
    info = SystemInfo(nvcc=Toolkit(nvcc_path="/usr/local/cuda/bin/nvcc", version=linked))
    note += f"; /usr/local/cuda links to cuda-{linked}"
    return blank(source, CUDA_DIRS).with_sections(
        system=Section.ok(info, source=CUDA_DIRS, notes=(note,))
    )
