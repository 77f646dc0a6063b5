"""The compiled form of the matrix: the merged matrix, and each parsed file, kept as pickles
keyed by their content.

Parsing a matrix file (TOML, then the strict typed decode) is most of the matrix's load time and
grows with the knowledge shipped. A parsed file is a tree of frozen dataclasses, so the loader
keeps it in the user's cache directory, keyed by the sha256 of the file's bytes and of the code
that decodes it (the modules of ``envcheck.matrix`` and ``envcheck.model``) plus the envcheck
and Python versions. The first run after an install, an upgrade or any edit of a matrix or an
overlay file parses that file again and rewrites its entry; every other run reads the pickle.

On top of the per-file entries, the whole merged matrix (every file merged in order, the
generated tables filled in) is kept as one entry keyed by the code key and every file's path and
content hash (:func:`compiled_matrix`), so a run whose files are all unchanged reads one pickle
instead of one per file and skips the merge. Any number of files (built-in, generated, overlays)
goes into that key; adding, removing, reordering or editing one is a miss, and the per-file
entries make that miss cost only the parse of the file that changed.

Safety: a pickle is only read from a directory owned by this user and not writable by others,
from a regular file owned by this user; anything else (and any error while reading) is treated
as a miss, and the file is parsed as if there were no cache. ``ENVCHECK_CACHE_DIR`` moves the
cache; ``ENVCHECK_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from packaging.specifiers import Specifier, SpecifierSet
from packaging.version import Version

from envcheck.cachefiles import cache_root, read_own, safe_dir
from envcheck.matrix.generated import Generated
from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import MatrixFile
from envcheck.model.versions import DriverVersion
from envcheck.version import __version__

_SUFFIX = ".pickle"
_KEEP = 256  # entries kept; older ones are pruned when a new one is written
_INTERNED = frozenset({Version, SpecifierSet, Specifier, DriverVersion})


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """Where compiled files live, or None when caching is off."""
    root = cache_root(env)
    return None if root is None else root / "matrix"


@lru_cache(maxsize=1)
def code_key() -> str:
    """A digest of the code that turns TOML into records: a change to it invalidates the cache."""
    digest = hashlib.sha256(f"{__version__}|{sys.version}|{pickle.HIGHEST_PROTOCOL}".encode())
    root = Path(__file__).resolve().parent.parent
    for package in ("matrix", "model"):
        for source in sorted((root / package).glob("*.py")):
            try:
                digest.update(source.name.encode())
                digest.update(source.read_bytes())
            except OSError:
                digest.update(b"?")
    return digest.hexdigest()


def _read(path: Path) -> object:
    data = read_own(path)
    if data is None:
        return None
    try:
        return pickle.loads(data)  # our own file, checked by read_own
    except Exception:  # a truncated or stale entry is a miss, never an error
        return None


def _same(value: object) -> object:
    """How a pickle written by ``_Interning`` gives back a value equal to one stored before."""
    return value


class _Interning(pickle.Pickler):
    """Stores each distinct version or specifier once: the matrix repeats a few hundred of them
    thousands of times (``>=2.4,<2.5`` in every generated wheel record), and restoring one is
    most of a load's time. "Distinct" means a different pickled form, so what is read back is
    exactly what was written; these values are immutable, so sharing one object is safe."""

    def __init__(self, file: BinaryIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._seen: dict[tuple[type, bytes], object] = {}

    def reducer_override(self, obj: object) -> Any:
        kind = type(obj)
        if kind not in _INTERNED:
            return NotImplemented
        first = self._seen.setdefault(
            (kind, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)), obj
        )
        return NotImplemented if first is obj else (_same, (first,))


def _write(directory: Path, path: Path, value: object) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not safe_dir(directory):
            return
        import tempfile  # here: only a cache miss writes

        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                _Interning(handle).dump(value)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(directory)
    except Exception:  # a read-only or full disk only costs the next run a parse
        return


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob(f"*{_SUFFIX}"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-_KEEP]:
        old.unlink(missing_ok=True)


def compiled(
    text: str, where: str, parse: Callable[[str, str], MatrixFile], env: Mapping[str, str]
) -> MatrixFile:
    """``parse(text, where)``, answered from the cache when this exact text was parsed before.

    The key holds ``where`` too: records carry no file name, but errors and provenance do,
    and a file moved elsewhere is cheap to parse once more.
    """
    directory = cache_dir(env)
    if directory is None:
        return parse(text, where)
    key = hashlib.sha256(f"{code_key()}|{where}|".encode() + text.encode("utf-8")).hexdigest()
    path = directory / f"{key[:48]}{_SUFFIX}"
    if safe_dir(directory):
        hit = _read(path)
        if isinstance(hit, MatrixFile):
            return hit
    value = parse(text, where)  # raises MatrixError on bad input: nothing is cached then
    _write(directory, path, value)
    return value


_MERGED = "merged-"
_NOT_RECORDS = ("files", "origins")


def _entries(matrix: Matrix) -> list[object]:
    """Every record the merged matrix holds (the ones ``Matrix.origin`` is asked about)."""
    found: list[object] = []
    values = [getattr(matrix, f.name) for f in fields(matrix) if f.name not in _NOT_RECORDS]
    values += [getattr(matrix.generated, f.name) for f in fields(matrix.generated)]
    for value in values:
        if isinstance(value, Generated):
            continue
        if isinstance(value, tuple):
            found.extend(value)
        elif isinstance(value, dict):
            found.extend(value.values())
        elif value is not None:
            found.append(value)
    return found


def _pack(matrix: Matrix) -> tuple[Matrix, list[tuple[object, tuple[str, str, int]]]]:
    """The matrix as it can be pickled: ``origins`` is keyed by ``id()``, which a pickle does
    not keep, so it travels as (record, origin) pairs (a pickle keeps the records' identity)."""
    origins = matrix.origins
    pairs = [(e, origins[id(e)]) for e in _entries(matrix) if id(e) in origins]
    return replace(matrix, origins={}), pairs


def _unpack(value: object) -> Matrix | None:
    """The matrix ``_pack`` stored, or None for anything else (a stale or foreign entry)."""
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Matrix)):
        return None
    matrix: Matrix = value[0]
    try:
        return replace(matrix, origins={id(entry): origin for entry, origin in value[1]})
    except (TypeError, ValueError):
        return None


def compiled_matrix(
    files: Sequence[tuple[str, str]],
    build: Callable[[], Matrix],
    env: Mapping[str, str],
) -> Matrix:
    """``build()``, answered from the cache when the same ``files`` ((path, text) pairs, in
    merge order) were merged before by the same code."""
    directory = cache_dir(env)
    if directory is None:
        return build()
    digest = hashlib.sha256(f"{code_key()}|merged|{len(files)}".encode())
    for where, text in files:
        digest.update(f"|{where}|".encode())
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    path = directory / f"{_MERGED}{digest.hexdigest()[:48]}{_SUFFIX}"
    if safe_dir(directory):
        hit = _unpack(_read(path))
        if hit is not None:
            with contextlib.suppress(OSError):  # recently used: the last entry pruned
                os.utime(path)
            return hit
    matrix = build()  # raises MatrixError on bad input: nothing is cached then
    _write(directory, path, _pack(matrix))
    return matrix
