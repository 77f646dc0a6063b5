"""The CUDA toolkit's and cuDNN's own version files, as people paste them with ``cat``:

- ``/usr/local/cuda/version.txt`` (CUDA <= 11.0): one line, ``CUDA Version 10.2.89``;
- ``/usr/local/cuda/version.json`` (CUDA >= 11.1): ``"cuda" : { "name" : "CUDA SDK",
  "version" : "12.2.20230823" }`` and one entry per component (``cuda_cudart``, ``cuda_nvcc``
  with ``"version" : "12.2.140"``);
- cuDNN's header (``cudnn_version.h`` since cuDNN 8, ``cudnn.h`` before): ``#define
  CUDNN_MAJOR 8``, ``#define CUDNN_MINOR 9``, ``#define CUDNN_PATCHLEVEL 2`` (what ``cat
  .../cudnn_version.h | grep CUDNN_MAJOR -A 2`` prints).

The toolkit's files say which toolkit is installed at that path (``system.nvcc``, as ``nvcc
--version`` does), not the CUDA torch was built with nor what the driver supports. The cuDNN
header says which cuDNN's headers are installed; the library torch loads may be another (pip
builds load the nvidia-cudnn wheel): it is a note, not a fact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, major_minor
from envcheck.model.report import NodeReport, SystemInfo, Toolkit
from envcheck.model.section import Section

VERSION_TXT = "CUDA version.txt"
VERSION_JSON = "CUDA version.json"
CUDNN_HEADER = "cuDNN header (CUDNN_MAJOR)"

_TXT = re.compile(r"^\s*CUDA Version (?P<version>[0-9]+\.[0-9]+(?:\.[0-9]+)?)\s*$")
_JSON_KEY = re.compile(r'^\s*"(?P<key>cuda|cuda_[a-z_]+|libcu[a-z_]+|nvidia_[a-z_]+)"\s*:\s*\{')
_JSON_LINE = re.compile(r'^\s*(?:[{}],?|"[\w ]+"\s*:\s*(?:\{|"[^"]*",?))\s*$')
_JSON_VERSION = re.compile(
    r'"(?P<key>cuda|cuda_nvcc|cuda_cudart)"\s*:\s*\{[^{}]*?"version"\s*:\s*"(?P<v>[0-9.]+)"',
    re.DOTALL,
)
_DEFINE = re.compile(
    r"^\s*#\s*define\s+CUDNN_(?P<part>MAJOR|MINOR|PATCHLEVEL)\s+(?P<n>[0-9]+)\b", re.MULTILINE
)
_HEADER_LINE = re.compile(r"^\s*(?:#\s*define\s+CUDNN_\w+|--\s*$|#\s*include\b|/\*|\*|//)")


def _system(source: Source, label: str, info: SystemInfo, notes: tuple[str, ...]) -> NodeReport:
    return blank(source, label).with_sections(system=Section.ok(info, source=label, notes=notes))


def _run(lines: Sequence[str], i: int, stops: set[int], ok: re.Pattern[str]) -> int:
    end = i + 1
    while end < len(lines) and end not in stops and ok.match(lines[end]):
        end += 1
    return end


# -- version.txt ---------------------------------------------------------------------------------


def find_version_txt(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    return (i, i + 1) if _TXT.match(lines[i]) else None


def parse_version_txt(source: Source) -> NodeReport:
    found = next((m for m in map(_TXT.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError(f"format not recognised as {VERSION_TXT}: no 'CUDA Version X.Y.Z'")
    version = found["version"]
    info = SystemInfo(
        nvcc=Toolkit(nvcc_path="the CUDA toolkit's version.txt", version=major_minor(version))
    )
    note = f"CUDA toolkit {version} (its version.txt): the toolkit installed, not torch's CUDA"
    return _system(source, VERSION_TXT, info, (note,))


# -- version.json --------------------------------------------------------------------------------


def find_version_json(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """From the object's opening brace (or its first key) to its last line."""
    start = i
    if _JSON_VERSION.search(lines[i]):  # '{ "cuda" : { "name" : "CUDA SDK", "version" : ... } }'
        return i, i + 1
    if lines[i].strip() == "{":
        if i + 1 >= len(lines) or not _JSON_KEY.match(lines[i + 1]):
            return None
    elif not _JSON_KEY.match(lines[i]):
        return None
    end = _run(lines, start, stops, _JSON_LINE)
    block = "\n".join(lines[start:end])
    return (start, end) if _JSON_VERSION.search(block) else None


def parse_version_json(source: Source) -> NodeReport:
    versions = {m["key"]: m["v"] for m in _JSON_VERSION.finditer(source.text)}
    version = versions.get("cuda_nvcc") or versions.get("cuda_cudart") or versions.get("cuda")
    if version is None:
        raise FormatError(f"format not recognised as {VERSION_JSON}: no cuda version")
    info = SystemInfo(
        nvcc=Toolkit(nvcc_path="the CUDA toolkit's version.json", version=major_minor(version))
    )
    what = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
    note = f"the CUDA toolkit installed (version.json: {what}), not torch's CUDA"
    return _system(source, VERSION_JSON, info, (note,))


# -- cuDNN's header --------------------------------------------------------------------------


def find_cudnn_header(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    found = _DEFINE.match(lines[i])
    if found is None or found["part"] != "MAJOR":
        return None
    return i, _run(lines, i, stops, _HEADER_LINE)


def cudnn_version(text: str) -> str | None:
    parts = {m["part"]: m["n"] for m in _DEFINE.finditer(text)}
    if "MAJOR" not in parts:
        return None
    return ".".join(parts[p] for p in ("MAJOR", "MINOR", "PATCHLEVEL") if p in parts)


def parse_cudnn_header(source: Source) -> NodeReport:
    version = cudnn_version(source.text)
    if version is None:
        raise FormatError(f"format not recognised as {CUDNN_HEADER}: no '#define CUDNN_MAJOR'")
    note = (
        f"cuDNN {version}'s headers are installed (cudnn_version.h / cudnn.h); the cuDNN a "
        "program loads may be another (pip builds of torch load the nvidia-cudnn wheel's)"
    )
    return _system(source, CUDNN_HEADER, SystemInfo(), (note,))


# -- no nvcc on PATH -------------------------------------------------------------------------------

NO_NVCC = "nvcc not found (shell)"
_NO_NVCC = re.compile(
    r"Command 'nvcc' not found|nvcc: command not found|'nvcc' is not recognized as an internal "
    r"or external command|nvcc: not found"
)


def find_no_nvcc(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """The shell's line that nvcc is missing, and the install hints it prints after it."""
    if not _NO_NVCC.search(lines[i]):
        return None
    end = i + 1
    while (
        end < len(lines) and end not in stops and re.match(r"^\s*(?:sudo apt install )", lines[end])
    ):
        end += 1
    return i, end


def parse_no_nvcc(source: Source) -> NodeReport:
    found = _NO_NVCC.search(source.text)
    if found is None:
        raise FormatError(f"format not recognised as {NO_NVCC}: no 'nvcc: command not found'")
    note = (
        f"as stated: {found.group(0)}: no CUDA toolkit's nvcc on PATH (a driver alone has none; "
        "torch's pip wheels do not need it, building CUDA extensions does)"
    )
    return _system(source, NO_NVCC, SystemInfo(nvcc_searched=True), (note,))
