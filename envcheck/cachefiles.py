"""envcheck's cache directory and how its files are read: only from a directory owned by this
user and not writable by others, and only a regular file owned by this user (not through a
link); anything else, and any error while reading, reads as nothing (a miss). Written only
into such a directory, atomically (a temporary file renamed over the entry). Shared by the
compiled matrix (matrix/compiled.py) and the binary scan's kept answer (binaries/warm.py). A
cache holds data only (JSON), never code."""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol


class Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


def sha256(data: bytes = b"") -> Hasher:
    """``hashlib.sha256(data)`` from the interpreter's own SHA-256 module when it has one:
    ``hashlib`` loads OpenSSL's libcrypto (about 2.5 ms of a run's CPU) for the few hundred
    kilobytes the cache keys and the dataclass method tables hash. The same digests."""
    return _SHA256(data)


def _sha256_type() -> Callable[[bytes], Hasher]:
    for name in ("_sha2", "_sha256"):  # CPython 3.12+, 3.11 and earlier
        try:
            found: Callable[[bytes], Hasher] = importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
        return found
    import hashlib

    return hashlib.sha256


_SHA256 = _sha256_type()


def cache_root(env: Mapping[str, str]) -> Path | None:
    """envcheck's cache directory (``compiled.cache_dir`` keeps the matrix under it), or None
    when caching is off."""
    if env.get("ENVCHECK_NO_CACHE", "") not in ("", "0"):
        return None
    # a relative location would be resolved against the working directory: a repository's
    # committed .cache/envcheck could then answer for it; no cache instead
    if env.get("ENVCHECK_CACHE_DIR"):
        given = env["ENVCHECK_CACHE_DIR"]
        return Path(given) if os.path.isabs(given) else None
    base = env.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "envcheck" if os.path.isabs(base) else None
    home = env.get("HOME")
    if not home or not os.path.isabs(home):
        return None
    return Path(home) / ".cache" / "envcheck"


def safe_dir(directory: Path) -> bool:
    try:
        info = directory.stat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def read_own(path: Path) -> bytes | None:
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
            return handle.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def write_own(directory: Path, path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` in ``directory`` (made 0700 when missing) when the directory
    is this user's and not writable by others: into a temporary file, renamed over ``path``.
    False when nothing was written; a write that fails part way leaves no temporary file."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not safe_dir(directory):
        return False
    import tempfile  # here: only a cache miss writes

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def fingerprint(path: str) -> list[int] | None:
    """What ``stat`` says of ``path`` (links followed): type, inode, device, size, mtime and
    ctime, the key a cached answer is trusted by; None when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [
        info.st_mode >> 12,
        info.st_ino,
        info.st_dev,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    ]
