"""The one way envcheck writes a file a user named (``-o FILE``).

``check_target`` runs before any work (the CLI calls it right after parsing), so a command that
cannot deliver its result fails in a moment with one line instead of after a minute of probing:
an empty name, a name longer than the file system allows, a missing or unwritable directory, a
directory, a device or pipe, anything under /proc or /sys, and an existing file without
``overwrite`` are all refused. ``write`` redacts secrets and writes atomically (a reader sees the
old file or the new one); a full disk or a vanished directory is one ``InputError``.
"""

from __future__ import annotations

import os
from pathlib import Path

from envcheck.errors import InputError, UsageError

_PSEUDO = ("/proc", "/sys", "/dev")


def check_target(path: str, *, overwrite: bool = True, option: str = "-o") -> Path:
    """Refuse a target that cannot be written; returns it as a Path."""
    if not path or not path.strip():
        raise UsageError(f"{option}: empty file name")
    if "\x00" in path:
        raise UsageError(f"{option}: the file name holds a NUL byte")
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        name_max = os.pathconf(directory if directory.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    if len(os.fsencode(target.name)) > name_max:
        raise InputError(f"file name longer than {name_max} bytes", where=path[:80] + "...")
    if (target.exists() or target.is_symlink()) and not target.is_file() and not target.is_dir():
        raise InputError("not a regular file (a device or a pipe is never replaced)", where=path)
    real = os.path.realpath(directory)
    if any(real == p or real.startswith(p + "/") for p in _PSEUDO):
        raise InputError(f"{real} is a kernel file system; write the file elsewhere", where=path)
    if not directory.is_dir():
        raise InputError(f"directory {directory} does not exist", where=path)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"directory {directory} is not writable", where=path)
    if target.is_dir():
        raise InputError("is a directory", where=path)
    if target.exists() or target.is_symlink():
        if not target.is_file():
            raise InputError(
                "not a regular file (a device or a pipe is never replaced)", where=path
            )
        if not overwrite:
            raise InputError("file exists (use --force to overwrite)", where=path)
    return target


def write(path: str | Path, text: str, *, overwrite: bool = True, redact: bool = True) -> Path:
    """Write ``text`` to ``path`` atomically, secrets redacted unless ``redact`` is False."""
    from envcheck.fileio import write_atomic

    target = check_target(str(path), overwrite=overwrite)
    if redact:
        from envcheck.redact import redact_text

        text = redact_text(text)
    try:
        return write_atomic(target, text, overwrite=overwrite)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", where=str(path)) from None
    except UnicodeEncodeError:
        raise InputError("cannot write: text is not encodable as UTF-8", where=str(path)) from None
