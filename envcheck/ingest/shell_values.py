"""Bare values people paste from a shell on the node, each read for the fact it states:

- ``echo $LD_LIBRARY_PATH``: a colon-separated list of directories (ld.so(8): searched before
  the loader's cache), told from ``$PATH`` by its library directories; the libraries section's
  ``ld_library_path`` and the variable itself;
- ``uname -r``: a kernel release alone on its line (``5.15.0-91-generic``,
  ``6.16.12-200.fc42.x86_64``, ``5.15.133.1-microsoft-standard-WSL2``);
- ``ulimit -a`` (bash's builtin: ``open files (-n) 1024``, ``max locked memory (kbytes, -l)
  64``; the soft limits): the system section's ``ulimits`` (``nofile``, ``memlock``,
  ``stack``, ``as``, in bytes as /proc/self/limits states them);
- ``df -h /dev/shm`` (or ``df -h | grep shm``): the ``dev_shm`` row of the storage section
  (``shm 64M 0 64M 0% /dev/shm`` is Docker's default);
- ``free -h``: the ``Mem:`` row's total and available memory;
- ``ldd <binary>`` (glibc's ldd: ``libcudart.so.11.0 => not found``): the libraries the
  loader could not find, the libraries section's ``missing``; an ldd whose every library
  resolved states no fact envcheck reads (said skipped);
- ``env | grep NCCL`` (also a script's ``export NCCL_SOCKET_IFNAME=eth0`` lines and bash's
  ``declare -x NCCL_IB_HCA="mlx5_0"``): the NCCL_*, GLOO_SOCKET_IFNAME and TP_SOCKET_IFNAME
  variables, one per line, as the environment section's variables (only those are stated: the
  listing says nothing of the others), read by the interface and NCCL rules (NET101 against a
  pasted ``ip addr``, NET120, NET123, NET125).

``ulimit -a`` states only the soft limits: the hard one is taken as equal and said so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank
from envcheck.ingest.sizes import size_bytes
from envcheck.model.report import (
    UNLIMITED,
    DiskUsage,
    EnvInfo,
    LibrariesInfo,
    Limit,
    NodeReport,
    StorageInfo,
    SystemInfo,
)
from envcheck.model.section import Section

LD_PATH = "echo $LD_LIBRARY_PATH"
UNAME_R = "uname -r"
ULIMIT = "ulimit -a"
DF = "df -h"
FREE = "free -h"
LDD = "ldd output"
ENV_LIST = "env | grep NCCL"

# -- echo $LD_LIBRARY_PATH ----------------------------------------------------------------------

_PATH_LIST = re.compile(
    r"^\s*(?:LD_LIBRARY_PATH=)?(?P<value>:?/[^\s:]{0,200}(?::(?:/[^\s:]{0,200})?){0,40})\s*$"
)
_LIB_DIR = re.compile(r"/lib(?:32|64|x32)?(?:/[\w.+-]{1,60}-linux-gnu)?/?$|/lib(?:32|64)?/")
_BIN_DIR = re.compile(r"/s?bin/?$")
_ASKED = re.compile(r"\b(?:echo|printenv)\b.{0,20}\bLD_LIBRARY_PATH\b")


def _entries(value: str) -> list[str]:
    return [p for p in value.split(":") if p]


def ld_path_value(line: str, asked: bool) -> str | None:
    """The list of directories the line is, when it reads as LD_LIBRARY_PATH's value."""
    found = _PATH_LIST.match(line)
    if found is None:
        return None
    value = found["value"]
    entries = _entries(value)
    if not entries or any(_BIN_DIR.search(p) for p in entries):
        return None  # $PATH, not the library path
    named = line.lstrip().startswith("LD_LIBRARY_PATH=")
    libs = sum(1 for p in entries if _LIB_DIR.search(p))
    if asked or named or (len(entries) >= 2 and libs >= 1):
        return value
    return None


def find_ld_path(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    asked = i > 0 and bool(_ASKED.search(lines[i - 1]))
    if lines[i].lstrip().startswith("LD_LIBRARY_PATH="):
        return None  # an assignment in prose is the prose reader's
    return (i, i + 1) if ld_path_value(lines[i], asked) is not None else None


def parse_ld_path(source: Source) -> NodeReport:
    value = next(
        (v for line in source.text.splitlines() if (v := ld_path_value(line, True)) is not None),
        None,
    )
    if value is None:
        raise FormatError(f"{LD_PATH}: no line of ':'-separated directories")
    entries = tuple(_entries(value))
    said = f"LD_LIBRARY_PATH searches {', '.join(entries)} first, in this order"
    return blank(source, LD_PATH).with_sections(
        libraries=Section.ok(LibrariesInfo(ld_library_path=entries), source=LD_PATH, notes=(said,)),
        env=Section.ok(
            EnvInfo(variables={"LD_LIBRARY_PATH": value}),
            source=LD_PATH,
            notes=("only LD_LIBRARY_PATH is stated",),
        ),
    )


# -- uname -r ------------------------------------------------------------------------------------

_KERNEL = re.compile(
    r"^\s*(?P<kernel>[2-7]\.[0-9]{1,3}(?:\.[0-9]{1,4}){0,2}-(?!(?:alpha|beta|rc|dev|post)[0-9]*\s*$)"
    r"[\w.+~-]{0,60}[A-Za-z][\w.+~-]{0,60})\s*$"
)


def find_uname_r(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    return (i, i + 1) if _KERNEL.match(lines[i]) else None


def parse_uname_r(source: Source) -> NodeReport:
    found = next((m for m in map(_KERNEL.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError(f"{UNAME_R}: no kernel release alone on a line")
    info = SystemInfo(kernel=found["kernel"])
    return blank(source, UNAME_R).with_sections(system=Section.ok(info, source=UNAME_R))


# -- ulimit -a -----------------------------------------------------------------------------------

_ULIMIT_LINE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z /-]{2,40}?)\s+\((?:(?P<unit>blocks|kbytes|bytes|seconds|512 bytes|"
    r"microseconds), )?-(?P<flag>[a-zA-Z])\)\s+(?P<value>unlimited|[0-9]{1,20})\s*$"
)
# bash's flags -> the keys /proc/self/limits gives them (probes/system.py), kbytes in bytes
_FLAGS = {"n": ("nofile", 1), "l": ("memlock", 1024), "s": ("stack", 1024), "v": ("as", 1024)}


def find_ulimit(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _ULIMIT_LINE.match(lines[i]):
        return None
    end = i + 1
    while end < min(len(lines), i + 40) and end not in stops and _ULIMIT_LINE.match(lines[end]):
        end += 1
    return (i, end) if end - i >= 3 else None


def parse_ulimit(source: Source) -> NodeReport:
    limits: dict[str, Limit] = {}
    for line in source.text.splitlines():
        found = _ULIMIT_LINE.match(line)
        if found is None or found["flag"] not in _FLAGS:
            continue
        key, scale = _FLAGS[found["flag"]]
        raw = found["value"]
        value = UNLIMITED if raw == "unlimited" else int(raw) * scale
        limits[key] = Limit(soft=value, hard=value)
    if not limits:
        raise FormatError(f"{ULIMIT}: none of the -n, -l, -s, -v lines")
    note = "ulimit -a prints the soft limits; the hard limits are not stated (taken as equal)"
    return blank(source, ULIMIT).with_sections(
        system=Section.ok(SystemInfo(ulimits=limits), source=ULIMIT, notes=(note,))
    )


# -- df -h ---------------------------------------------------------------------------------------

_DF_HEAD = re.compile(
    r"^\s*Filesystem\s+(?:Type\s+)?(?:Size|1K-blocks|1024-blocks|1M-blocks)\s+Used\s+Avail(?:able)?"
    r"\s+(?:Use|Capacity)%\s+Mounted on\s*$"
)
_DF_ROW = re.compile(
    r"^\s*(?P<fs>\S{1,200})\s+(?:(?P<type>[a-z0-9]{2,12})\s+)?(?P<size>[0-9.,]{1,12}[KMGTP]?i?)\s+"
    r"(?P<used>[0-9.,]{1,12}[KMGTP]?i?)\s+(?P<avail>[0-9.,]{1,12}[KMGTP]?i?)\s+(?:[0-9]{1,3}%|-)\s+"
    r"(?P<mount>/\S{0,200})\s*$"
)
_ROLES = {"/dev/shm": "dev_shm", "/tmp": "tmp"}


def find_df(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    head = bool(_DF_HEAD.match(lines[i]))
    row = _DF_ROW.match(lines[i])
    if not head and not (row and row["mount"] in _ROLES):
        return None
    end = i + 1
    while end < min(len(lines), i + 200) and end not in stops and _DF_ROW.match(lines[end]):
        end += 1
    return (i, end) if end > i + 1 or not head else None


def parse_df(source: Source) -> NodeReport:
    blocks = 1024  # df's default unit without -h: 1K blocks
    disks: list[DiskUsage] = []
    for line in source.text.splitlines():
        if _DF_HEAD.match(line) and "1M-blocks" in line:
            blocks = 1024**2
        found = _DF_ROW.match(line)
        if found is None or found["mount"] not in _ROLES:
            continue
        disks.append(
            DiskUsage(
                role=_ROLES[found["mount"]],
                path=found["mount"],
                total_bytes=size_bytes(found["size"], blocks),
                free_bytes=size_bytes(found["avail"], blocks),
                fs_type=found["type"] or ("tmpfs" if found["fs"] in ("shm", "tmpfs") else None),
            )
        )
    if not disks:
        raise FormatError(f"{DF}: no /dev/shm or /tmp row")
    shm = next((d for d in disks if d.role == "dev_shm"), None)
    notes: tuple[str, ...] = ()
    if shm is not None and shm.total_bytes is not None:
        notes = (f"/dev/shm is {shm.total_bytes / 1024**2:.0f} MiB",)
    return blank(source, DF).with_sections(
        storage=Section.ok(StorageInfo(disks=tuple(disks)), source=DF, notes=notes)
    )


# -- free -h -------------------------------------------------------------------------------------

_FREE_HEAD = re.compile(
    r"^\s*total\s+used\s+free\s+shared\s+(?:buff/cache|buffers\s+cached)(?:\s+available)?\s*$"
)
_FREE_ROW = re.compile(
    r"^\s*(?:Mem|Swap|Low|High|Total|-/\+ buffers/cache):(?:\s+[0-9.,]{1,14}[KMGTP]?i?B?){1,7}\s*$"
)
_MEM = re.compile(r"^\s*Mem:\s+(?P<values>.{1,200}?)\s*$", re.MULTILINE)
# below this many KiB a unitless total is free -m's or -g's, not free's default KiB
_KIB_FLOOR = 16 * 1024 * 1024


def find_free(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _FREE_HEAD.match(lines[i]):
        return None
    end = i + 1
    while end < min(len(lines), i + 6) and end not in stops and _FREE_ROW.match(lines[end]):
        end += 1
    return (i, end) if end > i + 1 else None


def parse_free(source: Source) -> NodeReport:
    head = next((line for line in source.text.splitlines() if _FREE_HEAD.match(line)), "")
    found = _MEM.search(source.text)
    if found is None:
        raise FormatError(f"{FREE}: no 'Mem:' row")
    values = found["values"].split()
    columns = head.split()
    total_text = values[0]
    if total_text.replace(".", "").isdigit() and float(total_text) < _KIB_FLOOR:
        raise FormatError(f"{FREE}: sizes without a unit (free -m or -g?); paste free -h")
    total = size_bytes(total_text, 1024)
    available = None
    if "available" in columns and len(values) >= columns.index("available") + 1:
        available = size_bytes(values[columns.index("available")], 1024)
    info = SystemInfo(memory_total_bytes=total, memory_available_bytes=available)
    return blank(source, FREE).with_sections(system=Section.ok(info, source=FREE))


# -- ldd -----------------------------------------------------------------------------------------

_LDD_MISSING = re.compile(
    r"^\s*(?P<name>[\w.+-]{1,120}\.so(?:\.[0-9]{1,6}){0,4})\s+=>\s+not found\s*$"
)


def parse_ldd(source: Source) -> NodeReport:
    missing = tuple(
        dict.fromkeys(m["name"] for m in map(_LDD_MISSING.match, source.text.splitlines()) if m)
    )
    if not missing:
        raise FormatError("every library resolved: states no node fact envcheck reads")
    said = f"ldd: the loader finds no {', '.join(missing)}"
    return blank(source, LDD).with_sections(
        libraries=Section.ok(LibrariesInfo(missing=missing), source=LDD, notes=(said,))
    )


# -- env | grep NCCL -----------------------------------------------------------------------------

# 'NCCL_SOCKET_IFNAME=eth0', 'export NCCL_IB_HCA=mlx5_0', 'declare -x NCCL_DEBUG="INFO"': one
# variable of the families NCCL, Gloo and TensorPipe read, alone on its line
_ENV_LINE = re.compile(
    r"^\s*(?:export\s+|declare -x\s+)?(?P<name>NCCL_[A-Z0-9_]{1,60}|GLOO_SOCKET_IFNAME|"
    r"TP_SOCKET_IFNAME)=(?P<quote>[\"']?)(?P<value>[^\s\"']{0,300})(?P=quote)\s*$"
)


def find_env_listing(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _ENV_LINE.match(lines[i]):
        return None
    j = i + 1
    while j < len(lines) and j not in stops and _ENV_LINE.match(lines[j]):
        j += 1
    return (i, j)


def parse_env_listing(source: Source) -> NodeReport:
    variables = {m["name"]: m["value"] for m in map(_ENV_LINE.match, source.text.splitlines()) if m}
    if not variables:
        raise FormatError(f"{ENV_LIST}: no NCCL_/GLOO_/TP_ variable alone on a line")
    said = "only the NCCL_*, GLOO_SOCKET_IFNAME and TP_SOCKET_IFNAME variables listed are stated"
    return blank(source, ENV_LIST).with_sections(
        env=Section.ok(EnvInfo(variables=variables), source=ENV_LIST, notes=(said,))
    )


PARSERS = {
    "ld-library-path": (LD_PATH, parse_ld_path),
    "uname-r": (UNAME_R, parse_uname_r),
    "ulimit": (ULIMIT, parse_ulimit),
    "df": (DF, parse_df),
    "free": (FREE, parse_free),
    "env-listing": (ENV_LIST, parse_env_listing),
}
FINDERS = (
    ("ld-library-path", find_ld_path),
    ("uname-r", find_uname_r),
    ("ulimit", find_ulimit),
    ("df", find_df),
    ("free", find_free),
    ("env-listing", find_env_listing),
)
