"""CUDA libraries reachable through LD_LIBRARY_PATH / LD_PRELOAD, which load before the wheels'."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from envcheck.model.report import LibrariesInfo, SharedLibrary
from envcheck.model.section import Section
from envcheck.patterns import lazy
from envcheck.probes.context import ProbeContext

CUDA_LIBRARIES = (
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libcudnn",
    "libnccl",
    "libnvJitLink",
    "libcusparse",
)
_SONAME = lazy(r"^(lib[A-Za-z]+)\.so(?:\.([0-9][0-9.]*))?$")


def library_version(path: str) -> tuple[str, str | None] | None:
    """(library name, version) from a file name, following symlinks to the versioned file."""
    names = [os.path.basename(path)]
    with contextlib.suppress(OSError):
        names.insert(0, os.path.basename(os.path.realpath(path)))
    best: tuple[str, str | None] | None = None
    for name in names:
        match = _SONAME.match(name)
        if match and match.group(1) in CUDA_LIBRARIES:
            version = match.group(2)
            if best is None or (version and (best[1] is None or len(version) > len(best[1]))):
                best = (match.group(1), version)
    return best


def _scan_dir(directory: str) -> list[SharedLibrary]:
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        return []
    found: dict[str, SharedLibrary] = {}
    for entry in entries:
        if not entry.startswith(CUDA_LIBRARIES):
            continue
        path = os.path.join(directory, entry)
        parsed = library_version(path)
        if parsed is None:
            continue
        name, version = parsed
        current = found.get(name)
        if current is None or (version and len(version) > len(current.version or "")):
            found[name] = SharedLibrary(name=name, path=path, version=version)
    return list(found.values())


def probe_libraries(ctx: ProbeContext) -> Section[LibrariesInfo]:
    ld_path = tuple(p for p in ctx.env.get("LD_LIBRARY_PATH", "").split(":") if p)
    preload = tuple(p for p in re.split(r"[:\s]+", ctx.env.get("LD_PRELOAD", "")) if p)
    libs: list[SharedLibrary] = []
    for entry in preload:
        parsed = library_version(entry)
        if parsed is not None:
            libs.append(
                SharedLibrary(name=parsed[0], path=entry, version=parsed[1], via="LD_PRELOAD")
            )
    for directory in ld_path:
        if Path(directory).is_dir():
            libs.extend(_scan_dir(directory))
    info = LibrariesInfo(ld_library_path=ld_path, ld_preload=preload, cuda_libraries=tuple(libs))
    return Section.ok(info, source="LD_LIBRARY_PATH, LD_PRELOAD")
