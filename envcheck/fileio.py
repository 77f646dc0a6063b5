"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Without ``overwrite`` the final name is claimed with ``link(2)`` of the finished temporary
file, which fails when the name exists: of two runs racing for one name exactly one wins, and
the other is told the file exists (a check followed by a rename would let both "write").
``create_exclusive`` makes a new file under a name nobody has (``O_CREAT | O_EXCL``), with the
mode asked for (the ``fix --apply`` snapshot: 0600).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from envcheck.errors import InputError


def _mode_for(target: Path) -> int:
    """The mode a plain ``open(target, "w")`` would give: the existing file's, or 0666 less the
    umask (mkstemp's temporary file is 0600, which would hide reports from other users)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _claim(tmp: str, target: Path) -> None:
    """Give the finished ``tmp`` the name ``target`` unless that name exists (atomically)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise InputError("file exists (use --force to overwrite)", where=str(target)) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # a file system without hard links: reserve the name with O_EXCL, then replace it
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.replace(tmp, target)


def create_exclusive(path: str | Path, text: str, *, mode: int = 0o600) -> Path:
    """Write ``text`` to a new file ``path`` (``FileExistsError`` when it exists)."""
    target = Path(path)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        os.fchmod(fd, mode)  # the umask cannot widen it, but a wider one is never asked for
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


def write_atomic(path: str | Path, text: str, *, overwrite: bool = True) -> Path:
    target = Path(path)
    directory = target.parent if str(target.parent) else Path()
    if not directory.is_dir():
        raise InputError(f"directory {directory} does not exist", where=str(target))
    if target.exists() and not overwrite:
        raise InputError("file exists (use --force to overwrite)", where=str(target))
    if target.is_dir():
        raise InputError("is a directory", where=str(target))
    if target.exists() and not target.is_file():
        raise InputError(
            "not a regular file (a device or a pipe is never replaced)", where=str(target)
        )
    mode = _mode_for(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if overwrite:
            os.replace(tmp, target)
        else:
            _claim(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target
