"""The binary scan's whole answer kept between runs: a warm run stats the files and directories
the last scan looked at instead of scanning again.

A scan's answer depends on its inputs (the interpreter's ``sys.path``, the distributions and
what they require, the CPU, ``LD_LIBRARY_PATH``, the staged root, the shared objects this
process has mapped) and on what it saw on disk: every shared object and RECORD it read, every
directory it listed (site-packages, ``nvidia/*/lib``, the loader's search directories), every
file the loader found, ``/etc/ld.so.cache``. The entry is keyed by a digest of the inputs and
of the scanning code, and holds the answer with the fingerprint of each path seen, (type,
inode, device, size, mtime_ns, ctime_ns) as ``stat`` gives it, following links. It answers
only when every fingerprint is unchanged: a library rebuilt, replaced, chmod'ed or touched, an
entry added to or removed from a directory (its mtime and ctime change), a link pointed
elsewhere (the path then stats as another inode) is a miss, and the scan runs as before.

Not kept: an answer that saw a path change while it was scanned (a ctime within a second of
the scan's start: the coarse file-system clock could hide a later change), a relative path
(it depends on the working directory), an editable install (its source tree is walked) or
two mapped copies of one soname. Stored as JSON (data only, never code) in
``<cache>/binaries/``, read only from a directory this user owns that no one else can write
to, only a regular file this user owns; a damaged, foreign or stale entry is a miss.
``ENVCHECK_NO_CACHE=1`` turns it off, with the per-file cache and the compiled matrix.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from envcheck.cachefiles import cache_root, fingerprint, read_own, safe_dir, sha256, write_own
from envcheck.model.binaries import BinariesInfo
from envcheck.patterns import lazy
from envcheck.probes.context import ProbeContext
from envcheck.version import __version__

FORMAT = 2  # the answer as lists of field values (model/record_lists.py)
KEEP = 16  # answers kept (one per interpreter and environment scanned)
RACY_NS = 1_000_000_000  # a path changed this close to the scan's start is not trusted
MAPS_CAP = 8 * 1024 * 1024
MAPPED_NAME = lazy(r"^(?P<soname>.+?\.so(?:\.\d+)?)(?:\.\d+)*$")


@lru_cache(maxsize=1)
def code_key() -> str:
    """A digest of the code that scans, by its files' names and stat (as the merged matrix
    keys the code that decodes it, matrix/merged.py): a changed scanner never answers from an
    old entry. Hashing the files' bytes (~200 KB) cost more than the lookup it keys."""
    digest = sha256(f"{__version__}|{sys.version}|scan{FORMAT}".encode())
    package = os.path.dirname(os.path.realpath(__file__))
    try:
        names = sorted(n for n in os.listdir(package) if n.endswith(".py"))
    except OSError:
        names = []
    sources = [os.path.join(package, n) for n in names]
    model = os.path.join(os.path.dirname(package), "model")
    sources += [os.path.join(model, n) for n in ("binaries.py", "record_lists.py")]
    for source in sources:
        mark = fingerprint(source)
        digest.update(json.dumps([os.path.basename(source), mark]).encode())
    return digest.hexdigest()


def scan_key(
    root: Path,
    sys_path: Iterable[str],
    arch: str | None,
    distributions: Iterable[tuple[str, Iterable[str]]] | None,
    ld_library_path: str,
    mapped: Iterable[str] | None,
) -> str:
    """The digest of a scan's inputs."""
    inputs = {
        "code": code_key(),
        "root": str(root),
        "sys_path": list(sys_path),
        "arch": arch,
        "distributions": None
        if distributions is None
        else [[name, list(requires)] for name, requires in distributions],
        "ld_library_path": ld_library_path,
        # as a set: the address order changes from run to run, and an answer is kept only
        # when no soname is mapped twice, so the order decided nothing
        "mapped": None if mapped is None else sorted(set(mapped)),
    }
    text = json.dumps(inputs, separators=(",", ":"), ensure_ascii=True)
    return sha256(text.encode("ascii")).hexdigest()


class WarmScan:
    """One scan's entry: ``load()`` the answer when nothing it saw changed, ``save()`` it."""

    def __init__(self, env: Mapping[str, str], key: str) -> None:
        root = cache_root(env)
        self.directory = None if root is None else root / "binaries"
        self.key = key

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else self.directory / f"s-{self.key[:48]}.json"

    def load(self) -> BinariesInfo | None:
        path = self.path
        if path is None or self.directory is None or not safe_dir(self.directory):
            return None
        raw = read_own(path)
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            if not (
                type(data) is dict
                and data.get("format") == FORMAT
                and data.get("key") == self.key
                and type(data.get("paths")) is dict
            ):
                return None
            for seen, mark in data["paths"].items():
                if fingerprint(seen) != mark:
                    return None
            info = _decoder()(data["info"])
        except Exception:  # a truncated or foreign entry is a miss, never an error
            return None
        return info if isinstance(info, BinariesInfo) else None

    def save(self, info: BinariesInfo, seen: Iterable[str], started_ns: int) -> None:
        """Keep ``info`` with the fingerprints of ``seen``, unless one of them changed while
        it was scanned (or could have, within the file system clock's reach)."""
        directory, path = self.directory, self.path
        if directory is None or path is None:
            return
        paths: dict[str, list[int] | None] = {}
        for name in sorted(set(seen)):
            if not os.path.isabs(name):
                return  # found relative to the working directory: not kept
            mark = fingerprint(name)
            if mark is not None and max(mark[4], mark[5]) >= started_ns - RACY_NS:
                return  # changed while scanned, or too recently to tell
            paths[name] = mark
        from envcheck.model.record_lists import _data

        text = json.dumps(
            {"format": FORMAT, "key": self.key, "paths": paths, "info": _data(info)},
            separators=(",", ":"),
        )
        try:
            if write_own(directory, path, text):
                _prune(directory)
        except Exception:  # a read-only or full disk only costs the next run a scan
            return


@lru_cache(maxsize=1)
def _decoder() -> Callable[[Any], Any]:
    """The answer's decoder, planned once (the records the scan builds, as their lists)."""
    from envcheck.model.record_lists import _plan

    return _plan(BinariesInfo, {})


def _prune(directory: Path) -> None:
    """The oldest answers past ``KEEP``; nothing but this cache's own entries is touched."""
    own = [p for p in directory.iterdir() if p.name.startswith("s-") and p.suffix == ".json"]
    own.sort(key=lambda p: p.stat().st_mtime_ns)
    for old in own[:-KEEP]:
        old.unlink(missing_ok=True)


class Pending(NamedTuple):
    """A scan the kept answers could not give: its inputs, and where its answer is kept."""

    warm: WarmScan
    sys_path: tuple[str, ...]
    distributions: list[tuple[str, tuple[str, ...]]] | None
    mapped: list[str] | None
    started: int


def lookup(
    ctx: ProbeContext,
    sys_path: Iterable[str],
    arch: str | None,
    distributions: Iterable[tuple[str, Iterable[str]]] | None,
) -> tuple[BinariesInfo | None, Pending]:
    """The kept answer of ``scan.scan(ctx, sys_path, arch, distributions)`` when nothing it
    looked at changed (without importing the scanner), else None and the scan to run."""
    started = time.time_ns()
    paths = tuple(sys_path)
    dists = None
    if distributions is not None:
        dists = [(name, tuple(requires)) for name, requires in distributions]
    mapped = mapped_paths(ctx)
    ld_path = ctx.env.get("LD_LIBRARY_PATH", "")
    warm = WarmScan(ctx.env, scan_key(ctx.root, paths, arch, dists, ld_path, mapped))
    info = warm.load()
    if info is not None:
        info = replace(info, from_cache=info.scanned)  # every file is as the cache has it
    return info, Pending(warm, paths, dists, mapped, started)


def mapped_paths(ctx: ProbeContext) -> list[str] | None:
    """The shared objects the inspected process has mapped (``/proc/self/maps``), each once,
    in address order; None for another interpreter (``--python``: not this process)."""
    if ctx.python is not None:
        return None
    try:
        with ctx.path("/proc/self/maps").open("rb") as handle:
            text = handle.read(MAPS_CAP).decode("utf-8", errors="replace")
    except OSError:
        return []
    paths: dict[str, None] = {}
    for line in text.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue
        path = fields[5]
        if path.endswith(" (deleted)") or not MAPPED_NAME.match(path.rsplit("/", 1)[-1]):
            continue
        paths.setdefault(path)
    return list(paths)
