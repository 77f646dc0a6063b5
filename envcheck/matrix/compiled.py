"""The compiled form of matrix files: each parsed file kept as a pickle, keyed by its content.

Parsing a matrix file (TOML, then the strict typed decode) is most of the matrix's load time and
grows with the knowledge shipped. A parsed file is a tree of frozen dataclasses, so the loader
keeps it in the user's cache directory, keyed by the sha256 of the file's bytes and of the code
that decodes it (the modules of ``envcheck.matrix`` and ``envcheck.model``) plus the envcheck
and Python versions. The first run after an install, an upgrade or any edit of a matrix or an
overlay file parses that file again and rewrites its entry; every other run reads the pickle.

Safety: a pickle is only read from a directory owned by this user and not writable by others,
from a regular file owned by this user; anything else (and any error while reading) is treated
as a miss, and the file is parsed as if there were no cache. ``ENVCHECK_CACHE_DIR`` moves the
cache; ``ENVCHECK_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

from envcheck import __version__
from envcheck.matrix.schema import MatrixFile

_SUFFIX = ".pickle"
_KEEP = 256  # entries kept; older ones are pruned when a new one is written


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """Where compiled files live, or None when caching is off."""
    if env.get("ENVCHECK_NO_CACHE", "") not in ("", "0"):
        return None
    if env.get("ENVCHECK_CACHE_DIR"):
        return Path(env["ENVCHECK_CACHE_DIR"]) / "matrix"
    base = env.get("XDG_CACHE_HOME")
    if not base:
        home = env.get("HOME")
        if not home:
            return None
        base = str(Path(home) / ".cache")
    return Path(base) / "envcheck" / "matrix"


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


def _safe_dir(directory: Path) -> bool:
    try:
        info = directory.stat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def _read(path: Path) -> MatrixFile | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            value = pickle.load(handle)  # our own file, checked above
    except Exception:  # a truncated or stale entry is a miss, never an error
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return value if isinstance(value, MatrixFile) else None


def _write(directory: Path, path: Path, value: MatrixFile) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _safe_dir(directory):
            return
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
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
    if _safe_dir(directory):
        hit = _read(path)
        if hit is not None:
            return hit
    value = parse(text, where)  # raises MatrixError on bad input: nothing is cached then
    _write(directory, path, value)
    return value
