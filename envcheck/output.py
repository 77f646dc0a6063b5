"""The one way envcheck writes a file a user named (``-o FILE``).

``check_target`` runs before any work (the CLI calls it right after parsing), so a command that
cannot deliver its result fails in a moment with one line instead of after a minute of probing:
an empty name, a name longer than the file system allows, a missing or unwritable directory, a
directory, a device or pipe, anything under /proc or /sys, and an existing file without
``overwrite`` are all refused. ``write`` takes terminal control sequences out, redacts secrets
and writes atomically (a reader sees the old file or the new one; without ``overwrite`` the name
is claimed with link(2), so of two parallel runs one writes and the other is refused); a full
disk, a file size limit (``ulimit -f``) or a vanished directory is one ``InputError``.

A stream is a target too: ``-o /dev/stdout``, ``/dev/stderr``, ``/dev/null`` and ``/dev/fd/N``
(bash's process substitution, ``-o >(gzip > r.gz)``) are written in place, with no rename.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from envcheck.errors import InputError, UsageError

_PSEUDO = ("/proc", "/sys", "/dev")
_STREAM = re.compile(r"/dev/(?:stdout|stderr|null|fd/(\d+))|/proc/self/fd/(\d+)")


def stream_target(path: str | Path) -> bool:
    """Whether ``path`` names a stream written in place (/dev/stdout, /dev/fd/N, ...)."""
    return _STREAM.fullmatch(str(path)) is not None


def _check_stream(path: str) -> Path:
    match = _STREAM.fullmatch(path)
    assert match is not None
    number = match.group(1) or match.group(2)
    if number is not None:
        try:
            os.fstat(int(number))
        except (OSError, OverflowError):
            raise InputError(f"file descriptor {number} is not open", where=path) from None
    return Path(path)


def check_target(path: str, *, overwrite: bool = True, option: str = "-o") -> Path:
    """Refuse a target that cannot be written; returns it as a Path."""
    if not path or not path.strip():
        raise UsageError(f"{option}: empty file name")
    if "\x00" in path:
        raise UsageError(f"{option}: the file name holds a NUL byte")
    if stream_target(path):
        return _check_stream(path)
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


def write(
    path: str | Path,
    text: str,
    *,
    overwrite: bool = True,
    redact: bool = True,
    redactor: Callable[[str], str] | None = None,
) -> Path:
    """Write ``text`` to ``path`` atomically, control sequences taken out and secrets redacted
    (``redactor``, default ``redact_text``; a requirements file or a lock passes
    ``redact_urls``, which keeps ``keyring==24.1`` as it is) unless ``redact`` is False."""
    from envcheck.fileio import write_atomic
    from envcheck.terminal import strip_controls

    target = check_target(str(path), overwrite=overwrite)
    text = strip_controls(text)
    if redact:
        from envcheck.redact import redact_text

        text = (redactor or redact_text)(text)
    try:
        if stream_target(target):
            return _write_stream(target, text)
        return write_atomic(target, text, overwrite=overwrite)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", where=str(path)) from None
    except UnicodeEncodeError:
        raise InputError("cannot write: text is not encodable as UTF-8", where=str(path)) from None


def _write_stream(target: Path, text: str) -> Path:
    """A stream written in place: what envcheck printed so far goes first."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    return target
