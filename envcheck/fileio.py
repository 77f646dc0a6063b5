"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

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
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
