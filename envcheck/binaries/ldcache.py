"""The dynamic loader's view of the system: ``/etc/ld.so.cache`` (glibc's "new" format,
``glibc-ld.so.cache1.1``, the format ldconfig has written since glibc 2.32 and alongside the
old one before), the default directories, and how a needed name is found (``ld.so(8)``: RPATH
when there is no RUNPATH, LD_LIBRARY_PATH, RUNPATH, the cache, the default directories)."""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NEW_MAGIC = b"glibc-ld.so.cache1.1"
_NEW_HEADER = struct.Struct("<20sII")  # magic+version, nlibs, len_strings (then 28 bytes)
_NEW_HEADER_SIZE = 48
_NEW_ENTRY = struct.Struct("<iIIIQ")  # flags, key, value, osversion, hwcap
_FLAG_X8664_LIB64 = 0x0300
_FLAG_ELF_LIBC6 = 0x0003
MAX_CACHE_BYTES = 32 * 1024 * 1024

_SLASH = Path("/")
DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
MULTIARCH = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}


def parse_ld_cache(data: bytes) -> dict[str, list[str]]:
    """soname -> paths, in the cache's order (the loader takes the first that fits)."""
    start = data.find(NEW_MAGIC)
    if start < 0 or len(data) < start + _NEW_HEADER_SIZE:
        return {}
    _magic, nlibs, _strings = _NEW_HEADER.unpack_from(data, start)
    table: dict[str, list[str]] = {}
    base = start + _NEW_HEADER_SIZE
    for i in range(min(nlibs, (len(data) - base) // _NEW_ENTRY.size)):
        _flags, key, value, _os, _hwcap = _NEW_ENTRY.unpack_from(data, base + i * _NEW_ENTRY.size)
        # offsets are from the start of the new-format table
        name, path = _cstr(data, start + key), _cstr(data, start + value)
        if name and path:
            table.setdefault(name, []).append(path)
    return table


def _cstr(data: bytes, offset: int) -> str | None:
    if not 0 <= offset < len(data):
        return None
    end = data.find(b"\0", offset)
    return data[offset : end if end >= 0 else len(data)].decode("utf-8", "replace")


@dataclass(frozen=True)
class Found:
    path: str | None  # None: not found
    via: str | None  # "loaded", "RPATH", "LD_LIBRARY_PATH", "RUNPATH", "ld.so.cache", "default"


@dataclass(frozen=True)
class Loader:
    """What decides where a name is found, outside the object that needs it."""

    root: Path = Path("/")  # prefixes the system directories (tests stage a root)
    ld_library_path: tuple[str, ...] = ()
    cache: Mapping[str, Sequence[str]] = field(default_factory=dict)
    default_dirs: tuple[str, ...] = DEFAULT_DIRS
    # sonames already loaded by the time the object is (``import torch`` first loads torch's
    # libraries and the nvidia-* wheels' ones they find): the loader reuses those copies
    loaded: Mapping[str, str] = field(default_factory=dict)
    # directory -> the names in it (None: unreadable), listed once per run, and each
    # (directory, name) looked up once per run; shared by the views made with
    # dataclasses.replace: most lookups are misses, answered without a stat
    listings: dict[str, frozenset[str] | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    answers: dict[tuple[str, str], str | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def _listed(self, directory: str) -> frozenset[str] | None:
        if directory in self.listings:
            return self.listings[directory]
        try:
            names: frozenset[str] | None = frozenset(os.listdir(directory))
        except OSError:  # missing or not a directory; unreadable ones are stat'ed per name
            names = frozenset() if not os.path.isdir(directory) else None
        self.listings[directory] = names
        return names

    def _on_disk(self, directory: str, name: str) -> str | None:
        key = (directory, name)
        if key in self.answers:
            return self.answers[key]
        answer = self._look(directory, name)
        self.answers[key] = answer
        return answer

    def _look(self, directory: str, name: str) -> str | None:
        if name.rsplit("/", 1)[-1] in ("", "."):
            return self._stat(directory, name)  # pathlib drops a last '.' or '/': as before
        joined = os.path.join(directory, name)
        staged = (
            joined
            if not joined.startswith("/") or self.root == _SLASH
            else os.path.join(str(self.root), joined.lstrip("/"))
        )
        parent, base = os.path.split(staged)
        if base and base not in (".", ".."):
            listed = self._listed(parent or ".")
            if listed is not None and base not in listed:
                return None  # no such entry: is_file() would say no
        try:
            return str(Path(directory) / name) if os.path.isfile(staged) else None
        except OSError:
            return None

    def _stat(self, directory: str, name: str) -> str | None:
        candidate = Path(directory) / name
        staged = (
            candidate
            if self.root == _SLASH or not candidate.is_absolute()
            else (self.root / str(candidate).lstrip("/"))
        )
        try:
            return str(candidate) if staged.is_file() else None
        except OSError:
            return None

    def _staged_path(self, directory: str, name: str) -> str:
        joined = os.path.join(directory, name)
        if not joined.startswith("/") or self.root == _SLASH:
            return joined
        return os.path.join(str(self.root), joined.lstrip("/"))

    def observed(self) -> set[str]:
        """The paths whose state decided this run's answers: every directory listed, and
        every name looked up that its directory's listing did not answer alone (a hit, or a
        name in an unreadable directory). A lookup its directory's listing answered is decided
        by that directory (which changes when an entry is added or removed)."""
        paths = {d for d in self.listings}
        for directory, name in self.answers:
            if name.rsplit("/", 1)[-1] in ("", "."):
                paths.add(self._staged_path(directory, name))
                continue
            staged = self._staged_path(directory, name)
            parent, base = os.path.split(staged)
            listed = self.listings.get(parent or ".")
            if base and base not in (".", "..") and listed is not None and base not in listed:
                continue
            paths.add(staged)
        return paths

    def find(
        self,
        name: str,
        origin: str,
        rpath: Sequence[str] = (),
        runpath: Sequence[str] = (),
        use_loaded: bool = True,
    ) -> Found:
        if "/" in name:
            return Found(name if self._on_disk("/", name.lstrip("/")) else None, "path")
        if use_loaded and name in self.loaded:
            return Found(self.loaded[name], "loaded")
        steps: list[tuple[str, Sequence[str]]] = []
        if not runpath:
            steps.append(("RPATH", rpath))
        steps.append(("LD_LIBRARY_PATH", self.ld_library_path))
        steps.append(("RUNPATH", runpath))
        for via, dirs in steps:
            for entry in dirs:
                directory = expand_origin(entry, origin)
                if not directory:
                    continue
                hit = self._on_disk(directory, name)
                if hit:
                    return Found(hit, via)
        for path in self.cache.get(name, ()):
            hit = self._on_disk("/", path.lstrip("/"))
            if hit:
                return Found(path, "ld.so.cache")
        for directory in self.default_dirs:
            hit = self._on_disk(directory, name)
            if hit:
                return Found(hit, "default")
        return Found(None, None)


def expand_origin(directory: str, origin: str) -> str:
    for token in ("${ORIGIN}", "$ORIGIN"):
        directory = directory.replace(token, origin)
    return directory


def default_dirs(arch: str | None) -> tuple[str, ...]:
    multi = MULTIARCH.get(arch or "")
    extra = (f"/lib/{multi}", f"/usr/lib/{multi}") if multi else ()
    return (*extra, *DEFAULT_DIRS)
