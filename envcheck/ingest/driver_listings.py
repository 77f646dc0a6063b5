"""Three listings people paste about the driver that state no version, each read for what it
does establish:

- ``ls -l /dev/nvidia*`` (or ``ls /dev/nvidia*``, ``ls /dev/nv``): the device files the driver's
  modules and nvidia-modprobe create (NVIDIA/nvidia-modprobe modprobe-utils/
  nvidia-modprobe-utils.[ch]: ``/dev/nvidiactl`` (minor 255), ``/dev/nvidia<N>`` one per GPU,
  ``/dev/nvidia-modeset`` (254), ``/dev/nvidia-uvm`` and ``/dev/nvidia-uvm-tools`` of the
  ``nvidia-uvm`` module, ``/dev/nvidia-caps/nvidia-cap<N>``). CUDA opens ``/dev/nvidia-uvm``:
  without it, cuInit fails (999 unknown error; 30 before CUDA 10.1) while nvidia-smi, which
  needs only nvidiactl and nvidia<N>, still works. The GPU section's ``device_nodes``.
  ``ls: cannot access '/dev/nvidia*'`` is the driver tools' no-driver reader's
  (``driver_tools``).
- ``mokutil --sb-state``: ``SecureBoot enabled`` / ``SecureBoot disabled`` / ``This system
  doesn't support Secure Boot`` / ``EFI variables are not supported on this system``
  (lcp/mokutil src/mokutil.c): the system section's ``secure_boot``. Alone it is context, not a
  failure: with Secure Boot on, the kernel loads only modules signed by a key it trusts (a DKMS
  or .run build needs its key enrolled).
- ``ldconfig -p`` (often ``| grep cuda``): where the loader's cache has ``libcuda.so.1`` (the
  driver's user-space library every CUDA program opens) and, without it, the unversioned
  ``libcuda.so`` (the CUDA toolkit's link-time stub under ``.../stubs/``, which fails every
  call with error 34): the GPU section's ``libcuda_cached``. A ``libcuda.so.1`` under
  ``.../compat/`` is the CUDA forward-compatibility package (datacenter GPUs only).
- ``prime-select query`` (Ubuntu's nvidia-prime on a laptop with two GPUs): ``intel``, ``nvidia``
  or ``on-demand``. The ``intel`` profile blacklists the nvidia modules
  (canonical/nvidia-prime prime-select: ``_disable_nvidia`` writes
  ``/lib/modprobe.d/blacklist-nvidia.conf``), so no NVIDIA driver runs: the GPU section stated
  absent; ``nvidia`` and ``on-demand`` keep the modules (context).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.ingest.driver_dumps import LIBRARY_LINE
from envcheck.model.report import GpuInfo, NodeReport, SystemInfo
from envcheck.model.section import STATED_ABSENT, Section, Status

DEVICE_FILES = "ls /dev/nvidia*"
PRIME = "prime-select query"
SB_STATE = "mokutil --sb-state"
LD_CACHE = "ldconfig -p"

# ls -l's row of a character device: mode, links, owner, group, 'major, minor', a date, the name
_LS_ROW = re.compile(
    r"^\s*c[rwxsStT-]{9}[.+@]?\s+[0-9]+\s+\S+\s+\S+\s+[0-9]+,\s*[0-9]+\s+.+?\s"
    r"(?P<name>(?:/dev/)?nvidia[\w-]*(?:/[\w-]+)?)\s*$"
)
# ls without -l: the names only, several to a line
_LS_NAMES = re.compile(r"^\s*(?:/dev/nvidia[\w-]*(?:/[\w-]+)?\s*)+$")
_LS_DIR = re.compile(r"^\s*(?P<dir>/dev/nvidia-caps(?:-imex-channels)?):\s*$")
_LS_TOTAL = re.compile(r"^\s*total [0-9]+\s*$")
# 'ls /dev/nv' (the shell's prompt, then the names without /dev/)
_LS_COMMAND = re.compile(r"\bls\b[^|]*\s/dev/nv")
_BARE_NAMES = re.compile(r"^\s*(?:nv[\w-]*\s*)+$")

_SB = re.compile(
    r"^\s*(?:SecureBoot (?P<state>enabled|disabled)|SecureBoot validation is disabled in shim"
    r"|Platform is in Setup Mode|(?P<none>This system doesn't support Secure Boot"
    r"|EFI variables are not supported on this system))\s*$"
)

_LDCONFIG_HEAD = re.compile(r"^\s*[0-9]+ libs found in cache [`'\"]?/etc/ld\.so\.cache")
_LDCONFIG_ROW = re.compile(
    r"^\s*(?P<name>lib[\w.+-]+\.so[0-9.]*)\s+\((?P<flags>[^)]*)\)\s+=>\s+(?P<path>\S+)\s*$"
)
# the libraries of the driver and of CUDA that make a listing worth reading
_LDCONFIG_OURS = re.compile(r"^lib(?:cuda|nvidia-\w+|cudart|cublas\w*|cudnn\w*|nvrtc|nccl)\.so")


def _in_run(lines: Sequence[str], i: int, stops: set[int], ok: re.Pattern[str]) -> int:
    """One past the last line from i on that ``ok`` matches (blank lines inside count when an
    ok line follows); a stop (fence, prompt) ends it."""
    while i < len(lines) and i not in stops:
        if ok.match(lines[i]) or (
            not lines[i].strip() and i + 1 < len(lines) and ok.match(lines[i + 1])
        ):
            i += 1
            continue
        break
    return i


# -- ls -l /dev/nvidia* ------------------------------------------------------------------------

_LS_ANY = re.compile(
    rf"{_LS_ROW.pattern}|{_LS_NAMES.pattern}|{_LS_DIR.pattern}|{_LS_TOTAL.pattern}"
    r"|^\s*c[rwxsStT-]{9}\S*\s+[0-9]+\s+\S+\s+\S+\s+[0-9]+,\s*[0-9]+\s+.+?\s[\w-]+\s*$"
    r"|^\s*(?:nvidia-cap[0-9]+\s*|channel[0-9]+\s*)+$"
)


def find_device_files(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """``ls -l /dev/nvidia*`` rows (or bare names) from a line naming /dev/nvidia*; ``ls
    /dev/nv`` output after its command line."""
    line = lines[i]
    previous = lines[i - 1] if i > 0 else ""
    if _BARE_NAMES.match(line) and _LS_COMMAND.search(previous) and "nvidia" in line:
        return i - 1, i + 1
    if not (_LS_ROW.match(line) and "/dev/nvidia" in line) and not _LS_NAMES.match(line):
        return None
    return i, _in_run(lines, i + 1, stops, _LS_ANY)


def device_files(text: str) -> tuple[str, ...]:
    """The /dev paths a listing names, in order, once each."""
    found: list[str] = []
    directory = "/dev"
    bare = False
    for line in text.splitlines():
        if _LS_COMMAND.search(line):
            bare = True
            continue
        head = _LS_DIR.match(line)
        if head:
            directory = head["dir"]
            continue
        row = _LS_ROW.match(line) or re.match(
            r"^\s*c[rwxsStT-]{9}\S*\s+[0-9]+\s+\S+\s+\S+\s+[0-9]+,\s*[0-9]+\s+.+?\s"
            r"(?P<name>[\w-]+)\s*$",
            line,
        )
        names = [row["name"]] if row else line.split()
        for name in names:
            if name.startswith("/dev/"):
                found.append(name)
            elif (row or bare or directory != "/dev") and re.fullmatch(
                r"nv[\w-]*|nvidia-cap[0-9]+|channel[0-9]+", name
            ):
                found.append(f"{directory}/{name}")
    return tuple(dict.fromkeys(n for n in found if n.startswith("/dev/nvidia")))


def device_files_said(nodes: Sequence[str]) -> str:
    """What the device files establish, in words: the GPUs' files, the control file, UVM."""
    names = {n.removeprefix("/dev/") for n in nodes}
    gpus = sorted(int(n[6:]) for n in names if n.startswith("nvidia") and n[6:].isdigit())
    parts = [
        f"{len(gpus)} GPU device file(s) (/dev/nvidia{gpus[0]}"
        + (f"-{gpus[-1]})" if len(gpus) > 1 else ")")
        if gpus
        else "no /dev/nvidia<N> (no GPU exposed here)"
    ]
    parts.append("/dev/nvidiactl" if "nvidiactl" in names else "no /dev/nvidiactl")
    if "nvidia-uvm" in names:
        parts.append("/dev/nvidia-uvm")
    else:
        parts.append(
            "no /dev/nvidia-uvm (CUDA cannot initialize without it: the nvidia-uvm module not "
            "loaded, or the device not passed to the container)"
        )
    return "the /dev/nvidia* device files: " + ", ".join(parts)


def parse_device_files(source: Source) -> NodeReport:
    nodes = device_files(source.text)
    if not nodes:
        raise FormatError(f"format not recognised as {DEVICE_FILES}: no /dev/nvidia* file named")
    info = GpuInfo(
        device_nodes=nodes,
        gpus_reason="a listing of /dev/nvidia* names no GPU model",
    )
    section = Section.ok(info, source=DEVICE_FILES, notes=(device_files_said(nodes),))
    return blank(source, DEVICE_FILES).with_sections(gpu=section)


# -- mokutil --sb-state ------------------------------------------------------------------------


def find_sb_state(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _SB.match(lines[i]):
        return None
    return i, _in_run(lines, i + 1, stops, _SB)


def parse_sb_state(source: Source) -> NodeReport:
    found = [m for m in map(_SB.match, source.text.splitlines()) if m]
    if not found:
        raise FormatError(f"format not recognised as {SB_STATE}: no 'SecureBoot' line")
    state = next((m["state"] for m in found if m["state"]), None)
    if state is None and any(m["none"] for m in found):
        state = "unsupported"
    if state is None:
        raise FormatError(f"{SB_STATE}: the lines say no Secure Boot state")
    said = {
        "enabled": (
            "Secure Boot is enabled (mokutil --sb-state): the kernel loads only modules signed "
            "by a key it trusts; a DKMS or .run-built NVIDIA module needs its signing key "
            "enrolled (mokutil --import) or it will not load"
        ),
        "disabled": (
            "Secure Boot is disabled (mokutil --sb-state): module signatures do not stop the "
            "NVIDIA module from loading"
        ),
        "unsupported": (
            "no Secure Boot on this system (legacy BIOS boot or no EFI variables): module "
            "signatures do not stop the NVIDIA module from loading"
        ),
    }[state]
    info = SystemInfo(secure_boot=state)
    section = Section.ok(info, source=SB_STATE, notes=(said,))
    return blank(source, SB_STATE).with_sections(system=section)


# -- ldconfig -p -------------------------------------------------------------------------------


def find_ld_cache(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """``ldconfig -p``'s header, or a run of its rows of which one names the driver's or
    CUDA's libraries (``ldconfig -p | grep cuda``)."""
    if not (_LDCONFIG_HEAD.match(lines[i]) or _LDCONFIG_ROW.match(lines[i])):
        return None
    end = _in_run(lines, i + 1, stops, _LDCONFIG_ROW)
    rows = [m for m in map(_LDCONFIG_ROW.match, lines[i:end]) if m]
    if not any(_LDCONFIG_OURS.match(m["name"]) for m in rows):
        return None
    start = i - 1 if i > 0 and _LDCONFIG_COMMAND.search(lines[i - 1]) else i
    return start, end


# the command line above the rows: 'ldconfig -p | grep -i cuda'; what grep kept decides whether
# a libcuda the rows lack is absent from the cache or only filtered out
_LDCONFIG_COMMAND = re.compile(r"ldconfig\s+(?:-\w+\s+)*-p\b(?:.*?\|\s*grep\s+(?P<grep>.+))?")


def _absence_stated(text: str) -> bool:
    """Whether the listing would show libcuda.so.1 if the cache had it: the whole cache (its
    header, or the command without grep), or a grep whose words libcuda.so.1 matches."""
    if _LDCONFIG_HEAD.search(text):
        return True
    command = next((m for m in map(_LDCONFIG_COMMAND.search, text.splitlines()) if m), None)
    if command is None:
        return False
    if command["grep"] is None:
        return True
    words = [w.strip("'\"") for w in command["grep"].split() if not w.startswith("-")]
    if not words:
        return False
    ignore_case = re.search(r"\s-\w*i", f" {command['grep']}") is not None
    target = "libcuda.so.1"
    alternatives = [a for a in re.split(r"\\?\|", words[0]) if a]
    # grep keeps a row that any alternative matches (taken as plain text)
    return any((a.lower() in target) if ignore_case else (a in target) for a in alternatives)


def libcuda_entries(text: str) -> tuple[str, ...]:
    """The paths the cache has for libcuda.so.1, in its order; with none, for libcuda.so."""
    rows = [m for m in map(_LDCONFIG_ROW.match, text.splitlines()) if m]
    versioned = [m["path"] for m in rows if m["name"] == "libcuda.so.1"]
    if versioned:
        return tuple(dict.fromkeys(versioned))
    return tuple(dict.fromkeys(m["path"] for m in rows if m["name"] == "libcuda.so"))


def ld_cache_said(entries: Sequence[str], nvml: bool) -> str:
    """What the cache's libcuda entries establish, in words."""
    if not entries:
        return (
            "the loader's cache (ldconfig -p) has no libcuda.so.1: the NVIDIA driver's "
            "user-space library is not installed here (or not in the cache: sudo ldconfig), or "
            "a container started without the NVIDIA runtime"
        )
    if not any(e.endswith("libcuda.so.1") for e in entries):
        return (
            f"the loader's cache (ldconfig -p) has only libcuda.so at {entries[0]}"
            + (" (the CUDA toolkit's stub: it links, every call fails with error 34)")
            * ("/stubs/" in entries[0])
            + " and no libcuda.so.1: the NVIDIA driver's user-space library is missing"
        )
    first = entries[0]
    said = f"the loader opens libcuda.so.1 from {first} (ldconfig -p's first entry)"
    if "/compat" in first:
        said += (
            ": the CUDA forward-compatibility package's libcuda (runs only on datacenter GPUs; "
            "elsewhere CUDA fails with 804)"
        )
    elif "/wsl/" in first:
        said += ": WSL's libcuda, which the Windows driver provides"
    elif "/stubs/" in first:
        said += ": a stub (it links, every call fails with error 34)"
    if not nvml:
        said += "; no libnvidia-ml.so.1 listed (NVML, nvidia-smi)"
    return said


def parse_ld_cache(source: Source) -> NodeReport:
    rows = [m for m in map(_LDCONFIG_ROW.match, source.text.splitlines()) if m]
    if not rows:
        raise FormatError(f"format not recognised as {LD_CACHE}: no '=> /path' row")
    entries = libcuda_entries(source.text)
    nvml = any(m["name"] == "libnvidia-ml.so.1" for m in rows)
    if not entries and not _absence_stated(source.text):
        # 'ldconfig -p | grep cudart': a libcuda the rows lack may be filtered out
        note = "ldconfig -p rows filtered by grep: they do not say where libcuda.so.1 is"
        unknown: Section[GpuInfo] = Section.unavailable(note, source=LD_CACHE)
        return blank(source, LD_CACHE).with_sections(gpu=unknown)
    # a row naming the driver's versioned file (libcuda.so.535.104.05): the user-space driver
    versions = sorted(
        {
            m["version"]
            for m in LIBRARY_LINE.finditer(source.text)
            if "/compat/" not in source.text[: m.end()].rsplit("\n", 1)[-1]
        },
        key=lambda v: tuple(int(p) for p in v.split(".")),
    )
    driver = valid_version(versions[-1]) if versions else None
    info = GpuInfo(
        libcuda_cached=entries,
        driver_version=driver,
        driver_source=LD_CACHE if driver else None,
    )
    section = Section.ok(info, source=LD_CACHE, notes=(ld_cache_said(entries, nvml),))
    return blank(source, LD_CACHE).with_sections(gpu=section)


# -- prime-select query ------------------------------------------------------------------------

_PRIME_COMMAND = re.compile(r"\bprime-select\s+query\b")
_PRIME_PROFILE = re.compile(r"^\s*(?P<profile>intel|nvidia|on-demand)\s*$")


def find_prime(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """The profile on the line under its command (a prompt's or the bare command)."""
    previous = lines[i - 1] if i > 0 else ""
    if not (_PRIME_COMMAND.search(previous) and _PRIME_PROFILE.match(lines[i])):
        return None
    return i - 1, i + 1


def parse_prime(source: Source) -> NodeReport:
    found = next((m for m in map(_PRIME_PROFILE.match, source.text.splitlines()) if m), None)
    if found is None or not _PRIME_COMMAND.search(source.text):
        raise FormatError(f"format not recognised as {PRIME}: no profile under the command")
    profile = found["profile"]
    if profile == "intel":
        section: Section[GpuInfo] = Section(
            Status.UNAVAILABLE,
            reason=(
                "no usable NVIDIA driver: the laptop's PRIME profile is intel (prime-select "
                "query), which blacklists the NVIDIA kernel module (nvidia-prime's "
                "/lib/modprobe.d/blacklist-nvidia.conf): sudo prime-select nvidia (or "
                "on-demand) and reboot"
            ),
            source=PRIME,
            notes=(STATED_ABSENT,),
        )
    else:
        section = Section.unavailable(
            f"prime-select query: {profile} (nvidia-prime keeps the NVIDIA modules loadable)",
            source=PRIME,
        )
    return blank(source, PRIME).with_sections(gpu=section)
