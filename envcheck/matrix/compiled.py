"""The compiled form of the matrix: each parsed file kept as data (JSON), keyed by its content.

Parsing a matrix file (TOML, then the strict typed decode) is most of the matrix's load time and
grows with the knowledge shipped. A parsed file is a tree of frozen dataclasses; the loader
keeps its JSON form (``codec.to_dict``'s, each record as the list of its field values) in the
user's cache directory, keyed by the sha256 of the
file's bytes and of the code that decodes it (the modules of ``envcheck.matrix`` and
``envcheck.model``) plus the envcheck and Python versions. The first run after an install, an
upgrade or any edit of a matrix or an overlay file parses that file again and rewrites its
entry; every other run reads the JSON and rebuilds the records with a decoder planned once per
record type (:func:`_plan`: no TOML, no per-value type dispatch, each distinct version or
specifier string parsed once).

No code from data: an entry is JSON, read with ``json.loads`` and turned into the matrix's own
record types only; a file that is not exactly that shape is a miss. Entries are read only from a
directory owned by this user and not writable by others, from a regular file owned by this user
(``cachefiles``); entries are named ``m-<48 hex digits>.json`` and pruning deletes only names of
that form (never another file in the directory). ``ENVCHECK_CACHE_DIR`` moves the cache;
``ENVCHECK_NO_CACHE=1`` turns it off, as does a relative ``HOME`` or ``XDG_CACHE_HOME``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

from envcheck.cachefiles import cache_root, read_own, safe_dir, sha256, write_own
from envcheck.matrix.schema import MatrixFile
from envcheck.model.record_lists import Decoder, _data, _Miss, _plan
from envcheck.patterns import lazy
from envcheck.version import __version__

_FORMAT = 2  # records as lists of field values
_NAME = lazy(r"m-[0-9a-f]{48}\.json")  # the only names this cache writes (and prunes)
_KEEP = 256  # entries kept; older ones are pruned when a new one is written


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """Where compiled files live, or None when caching is off."""
    root = cache_root(env)
    return None if root is None else root / "matrix"


@lru_cache(maxsize=1)
def code_key() -> str:
    """A digest of the code that turns TOML into records: a change to it invalidates the cache."""
    digest = sha256(f"{__version__}|{sys.version}|json{_FORMAT}".encode())
    root = Path(__file__).resolve().parent.parent
    for package in ("matrix", "model"):
        for source in sorted((root / package).glob("*.py")):
            try:
                digest.update(source.name.encode())
                digest.update(source.read_bytes())
            except OSError:
                digest.update(b"?")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _decoder() -> Decoder:
    return _plan(MatrixFile, {})


def _read(path: Path) -> MatrixFile | None:
    data = read_own(path)
    if data is None:
        return None
    try:
        value = json.loads(data)
        if not (type(value) is dict and value.get("format") == _FORMAT and "file" in value):
            return None
        record = _decoder()(value["file"])
    except (_Miss, ValueError, TypeError, RecursionError, KeyError):
        return None  # a truncated, stale or foreign entry is a miss, never an error
    return record if isinstance(record, MatrixFile) else None


def _write(directory: Path, path: Path, value: MatrixFile) -> None:
    try:
        text = json.dumps({"format": _FORMAT, "file": _data(value)}, separators=(",", ":"))
        if write_own(directory, path, text):
            _prune(directory)
    except Exception:  # a read-only or full disk only costs the next run a parse
        return


def _prune(directory: Path) -> None:
    """The oldest of this cache's own entries past ``_KEEP``; nothing else is touched."""
    own = [p for p in directory.iterdir() if _NAME.fullmatch(p.name) and p.is_file()]
    own.sort(key=lambda p: p.stat().st_mtime)
    for old in own[:-_KEEP]:
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
    key = sha256(f"{code_key()}|{where}|".encode() + text.encode("utf-8")).hexdigest()
    path = directory / f"m-{key[:48]}.json"
    if safe_dir(directory):
        hit = _read(path)
        if hit is not None:
            with contextlib.suppress(OSError):  # recently used: the last entry pruned
                os.utime(path)
            return hit
    value = parse(text, where)  # raises MatrixError on bad input: nothing is cached then
    _write(directory, path, value)
    return value
