"""The merged matrix kept whole between runs, each table decoded only when it is first used.

Loading the matrix reads every file (64 of them), looks each up in the compiled-file cache
(:mod:`envcheck.matrix.compiled`), decodes all of their records and merges and fills them, on
every run, although `check` on a node uses a few tables (no log: no signature, no CUDA error
message). This keeps the result of that whole load, the merged and filled matrix, as one entry:
each table's JSON a segment of its own, decoded on first use (:mod:`envcheck.matrix.lazy`) with
the same decoders the compiled files use, and the provenance of every record (``origins``)
rebuilt for the decoded records when it is asked for.

The entry is keyed by a digest of the envcheck and Python versions, the matrix directories in
order, and the path and ``stat`` (type, inode, device, size, mtime_ns, ctime_ns) of each of
their files and of each module that decodes them (``matrix/*.py``, ``model/*.py``: what
``compiled.code_key`` reads): an edited, touched, replaced, chmod'ed, added or removed file
is another key, and the load runs as before (each file through the compiled cache, then
merged). An entry is not written when a file changed within a second of the load's start (the file system's clock
is coarse: a later edit could keep the same times). A segment that does not decode (a damaged
or foreign entry) makes the load run as before and answers from that.

No code from data: JSON only, read only from ``<cache>/merged/``, a directory this user owns that
no one else can write to, a regular file this user owns (``cachefiles``); entries are named
``w-<48 hex>.json`` and pruning deletes only such names. ``ENVCHECK_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from envcheck.cachefiles import cache_root, fingerprint, read_own, safe_dir, sha256, write_own
from envcheck.matrix.generated import Generated
from envcheck.matrix.lazy import lazy_instance
from envcheck.matrix.model import Matrix
from envcheck.patterns import lazy
from envcheck.version import __version__

FORMAT = 1
KEEP = 16  # merged matrices kept (one per set of overlays and matrix code)
RACY_NS = 1_000_000_000  # a file changed this close to the load's start is not trusted
_NAME = lazy(r"w-[0-9a-f]{48}\.json")
# the fields an entry holds as such (not as a segment), and the one rebuilt from the others
_PLAIN = ("files", "python_names_files", "origins")
_GENERATED = "generated"
# tables whose records the entry also places by their first field (a package's name), for a
# rule that reads a few packages' records of a large table (PY140: the installed releases'
# Requires-Python among the 761 companion-metadata records) without decoding or parsing it all
GROUPED = ("generated.companion_metadata",)

Origin = tuple[str, str, int]


def cache_dir(env: Mapping[str, str]) -> Path | None:
    root = cache_root(env)
    return None if root is None else root / "merged"


class Key:
    """What a merged matrix was loaded from: the code, the directories and their files."""

    def __init__(self, digest: str, newest_ns: int) -> None:
        self.digest = digest
        self.newest_ns = newest_ns  # the latest mtime or ctime of a file read

    @property
    def name(self) -> str:
        return f"w-{self.digest[:48]}.json"


def key_of(dirs: Sequence[Path], files: Sequence[Sequence[Path]]) -> Key | None:
    """The key of a load of ``files`` (those of each of ``dirs``), or None when a file cannot
    be stat'ed (the load then reports it)."""
    from envcheck.matrix.compiled import _FORMAT as COMPILED_FORMAT

    digest = sha256(f"{__version__}|{sys.version}|json{COMPILED_FORMAT}|merged{FORMAT}".encode())
    newest = 0
    # the code that decodes the records (as compiled.code_key reads it), by its files' stat
    paths = [*_code_files()]
    for directory, listed in zip(dirs, files, strict=True):
        paths += [f"dir:{directory}", *(str(p) for p in listed)]
    for path in paths:
        if path.startswith("dir:"):
            digest.update(json.dumps([path]).encode())
            continue
        print_ = fingerprint(path)
        if print_ is None:
            return None
        newest = max(newest, print_[4], print_[5])
        digest.update(json.dumps([path, print_]).encode())
    return Key(digest.hexdigest(), newest)


def _code_files() -> list[str]:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found: list[str] = []
    for package in ("matrix", "model"):
        directory = os.path.join(root, package)
        try:
            names = sorted(n for n in os.listdir(directory) if n.endswith(".py"))
        except OSError:
            names = []
        found += [os.path.join(directory, name) for name in names]
    return found


# --- writing --------------------------------------------------------------------------------


def _segments(matrix: Matrix) -> list[tuple[str, Any, list[Any]]]:
    """(segment, value, the record values whose origins it keeps) for every decoded field."""
    out: list[tuple[str, Any, list[Any]]] = []
    for f in fields(Matrix):
        if f.name in _PLAIN:
            continue
        value = getattr(matrix, f.name)
        if f.name == _GENERATED:
            for g in fields(Generated):
                table = getattr(value, g.name)
                out.append((f"{_GENERATED}.{g.name}", table, list(table)))
        elif isinstance(value, dict):
            out.append((f.name, value, list(value.values())))
        elif isinstance(value, tuple):
            out.append((f.name, value, list(value)))
        else:  # torch_index: one record or None
            out.append((f.name, value, [value]))
    return out


def entry_text(matrix: Matrix, key: Key) -> str:
    """The entry for ``matrix`` (merged and filled, as ``load.merge`` returns it)."""
    from envcheck.model.record_lists import _data

    files = list(matrix.files)
    place = {name: index for index, name in enumerate(files)}

    def where(origin: Origin | None) -> list[Any] | None:
        return None if origin is None else [place[origin[0]], origin[1], origin[2]]

    parts: list[str] = []
    spans: dict[str, list[int]] = {}
    live: dict[str, list[Any]] = {}
    seen: set[int] = set()
    offset = 0
    groups: dict[str, dict[str, list[list[int]]]] = {}
    for name, value, records in _segments(matrix):
        if name in GROUPED:
            # the same text as the whole list's, each record's place kept by its first field
            items = [json.dumps(_data(r), separators=(",", ":")) for r in records]
            text = "[" + ",".join(items) + "]"
            at, placed = offset + 1, groups.setdefault(name, {})
            for record, item in zip(records, items, strict=True):
                size = len(item.encode("utf-8"))
                placed.setdefault(str(_data(record)[0]), []).append([at, at + size])
                at += size + 1
        else:
            text = json.dumps(_data(value), separators=(",", ":"))
        size = len(text.encode("utf-8"))
        spans[name] = [offset, offset + size]
        offset += size
        parts.append(text)
        live[name] = [where(matrix.origins.get(id(r))) for r in records]
        seen.update(id(r) for r in records)
    # provenance of entries an overlay replaced (no record of the matrix holds it any more):
    # `matrix validate` checks every file's places from it
    orphans = [where(o) for k, o in matrix.origins.items() if k not in seen]
    origins = json.dumps({"live": live, "orphans": orphans}, separators=(",", ":"))
    spans["origins"] = [offset, offset + len(origins.encode("utf-8"))]
    parts.append(origins)
    header = {
        "format": FORMAT,
        "key": key.digest,
        "files": files,
        "segments": spans,
        "groups": groups,
    }
    return json.dumps(header, separators=(",", ":")) + "\n" + "".join(parts)


def save(env: Mapping[str, str], key: Key, matrix: Matrix, started_ns: int) -> None:
    """Keep ``matrix`` under ``key``, unless a file changed too close to ``started_ns``."""
    directory = cache_dir(env)
    if directory is None or key.newest_ns >= started_ns - RACY_NS:
        return
    try:
        if write_own(directory, directory / key.name, entry_text(matrix, key)):
            _prune(directory)
    except Exception:  # a read-only or full disk only costs the next run the slower load
        return


def _prune(directory: Path) -> None:
    own = [p for p in directory.iterdir() if _NAME.fullmatch(p.name) and p.is_file()]
    own.sort(key=lambda p: p.stat().st_mtime)
    for old in own[:-KEEP]:
        old.unlink(missing_ok=True)


def started() -> int:
    return time.time_ns()


# --- reading --------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _hints() -> dict[str, Any]:
    from envcheck.model.codec import type_hints

    hints = {name: tp for name, tp in type_hints(Matrix).items() if name not in _PLAIN}
    for name, tp in type_hints(Generated).items():
        hints[f"{_GENERATED}.{name}"] = tp
    del hints[_GENERATED]
    return hints


_MEMO: dict[Any, Any] = {}  # the decoders planned so far (compiled._plan's memo)
_PLANNING = threading.Lock()  # a record's decoder is in the memo before it is complete


def _decoder(segment: str) -> Callable[[Any], Any]:
    from envcheck.model.record_lists import _plan

    with _PLANNING:
        return _plan(_hints()[segment], _MEMO)


class _Entry:
    """One entry's segments, decoded on first use; a segment that does not decode turns the
    whole matrix over to ``fresh`` (the load without this entry)."""

    def __init__(
        self,
        body: bytes,
        spans: Mapping[str, tuple[int, int]],
        fresh: Callable[[], Matrix],
        groups: Mapping[str, Any] | None = None,
    ) -> None:
        self._body = body
        self._spans = spans
        self._groups = dict(groups or {})
        self._fresh_load = fresh
        self._fresh: Matrix | None = None
        self._lock = threading.Lock()

    def fresh(self) -> Matrix:
        with self._lock:
            if self._fresh is None:
                self._fresh = self._fresh_load()
            return self._fresh

    def value(self, segment: str) -> Any:
        if self._fresh is None:
            start, end = self._spans[segment]
            try:
                return _decoder(segment)(json.loads(self._body[start:end]))
            except Exception:  # a damaged or foreign segment: load as before
                pass
        fresh = self.fresh()
        if segment.startswith(f"{_GENERATED}."):
            return getattr(fresh.generated, segment.split(".", 1)[1])
        return getattr(fresh, segment)

    def records_of(self, segment: str, names: Sequence[str]) -> list[Any] | None:
        """The records of ``segment`` whose first field is one of ``names``, in the table's
        order, as the entry holds them (each the JSON list of its field values, in field
        order), not decoded; None when the entry does not place them (or is not used)."""
        if self._fresh is not None:
            return None
        try:
            placed = self._groups[segment]
            start, end = self._spans[segment]
            spans = sorted(span for name in names for span in placed.get(name, ()))
            out = []
            for first, last in spans:
                if not (type(first) is int and type(last) is int and start < first < last < end):
                    return None
                out.append(json.loads(self._body[first:last]))
            return out
        except Exception:  # a damaged entry: the caller reads the decoded table
            return None

    def group_names(self, segment: str) -> list[str] | None:
        """The first fields of ``segment``'s records (see ``records_of``)."""
        placed = self._groups.get(segment) if self._fresh is None else None
        if type(placed) is not dict or not all(type(n) is str for n in placed):
            return None
        return list(placed)

    def origins(self, matrix: Matrix) -> dict[int, Origin]:
        """``matrix.origins`` for the records this matrix holds (all decoded now)."""
        records = {name: recs for name, _, recs in _segments(matrix)}  # decodes each segment
        if self._fresh is None:
            try:
                data = json.loads(self._body[slice(*self._spans["origins"])])
                files = matrix.files
                out: dict[int, Origin] = {}
                for name, recs in records.items():
                    for record, at in zip(recs, data["live"][name], strict=True):
                        if at is not None:
                            out[id(record)] = (files[at[0]], str(at[1]), int(at[2]))
                for index, at in enumerate(data["orphans"], start=1):
                    out[-index] = (files[at[0]], str(at[1]), int(at[2]))
                return out
            except Exception:  # a damaged entry: the provenance of a load without it
                pass
        # each table in the same order as a load without the entry: its records' provenance
        fresh = self.fresh()
        out = dict(fresh.origins)
        theirs = {name: recs for name, _, recs in _segments(fresh)}
        for name, recs in records.items():
            for mine, same in zip(recs, theirs[name], strict=False):
                origin = fresh.origins.get(id(same))
                if origin is not None:
                    out[id(mine)] = origin
        return out


def load(
    env: Mapping[str, str], key: Key, python_names: tuple[str, ...], fresh: Callable[[], Matrix]
) -> Matrix | None:
    """The matrix kept under ``key``, or None (no entry, or not one this code wrote)."""
    directory = cache_dir(env)
    if directory is None or not safe_dir(directory):
        return None
    data = read_own(directory / key.name)
    if data is None:
        return None
    try:
        newline = data.index(b"\n")
        header = json.loads(data[:newline])
        if not (
            type(header) is dict
            and header.get("format") == FORMAT
            and header.get("key") == key.digest
        ):
            return None
        files = header["files"]
        body = data[newline + 1 :]
        spans: dict[str, tuple[int, int]] = {}
        for name, span in header["segments"].items():
            start, end = span
            if not (type(start) is int and type(end) is int and 0 <= start <= end <= len(body)):
                return None
            spans[name] = (start, end)
        if type(files) is not list or not all(type(f) is str for f in files):
            return None
        if set(spans) != {*_hints(), "origins"}:
            return None
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    _touch(directory / key.name)
    groups = header.get("groups")
    entry = _Entry(body, spans, fresh, groups if type(groups) is dict else None)
    generated = {
        name.split(".", 1)[1]: partial(entry.value, name)
        for name in spans
        if name.startswith(f"{_GENERATED}.")
    }
    makers: dict[str, Callable[[], Any]] = {
        name: partial(entry.value, name)
        for name in spans
        if name != "origins" and not name.startswith(f"{_GENERATED}.")
    }
    makers[_GENERATED] = partial(lazy_instance, Generated, {}, generated)
    ready = {"files": tuple(files), "python_names_files": python_names}
    matrix: Matrix | None = None

    def origins() -> dict[int, Origin]:
        assert matrix is not None
        return entry.origins(matrix)

    makers["origins"] = origins
    matrix = lazy_instance(Matrix, ready, makers)
    _ENTRIES[:] = [(matrix, entry)]
    return matrix


_ENTRIES: list[tuple[Matrix, _Entry]] = []  # the last matrix load() made, and its entry


def _touch(path: Path) -> None:
    """Mark the entry recently used (pruning removes the oldest)."""
    try:
        os.utime(path)
    except OSError:
        return


def grouped(matrix: Matrix, segment: str) -> Grouped | None:
    """The records of ``segment`` (one of ``GROUPED``) by their first field, as the kept
    entry holds them; None when ``matrix`` was not read from an entry (the caller reads the
    decoded table: the same records)."""
    for known, entry in _ENTRIES:
        if known is matrix:
            names = entry.group_names(segment)
            return None if names is None else Grouped(entry, segment, names)
    return None


class Grouped:
    """A table's records by their first field, read from the entry when asked for."""

    def __init__(self, entry: _Entry, segment: str, names: list[str]) -> None:
        self._entry = entry
        self._segment = segment
        self.names = names

    def records(self, names: Sequence[str]) -> list[Any] | None:
        """The records whose first field is one of ``names``, in the table's order, each the
        list of its field values in field order (not decoded); None on a damaged entry."""
        return self._entry.records_of(self._segment, names)
