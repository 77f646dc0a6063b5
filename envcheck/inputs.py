"""The one way envcheck reads what a user hands it: a file or ``-`` (standard input).

Every input (``--report``, ``--spec``, ``--from``, ``diff`` reports, ``triage --report``,
overlays, lock files) is read here:

- at most ``MAX_BYTES`` (64 MiB): an endless stream or ``/dev/zero`` is cut off and refused;
- a FIFO or character device is opened without blocking (a FIFO nobody writes to is empty,
  not a hang) and read with a deadline; a socket or block device is refused;
- decoded as UTF-8 (a UTF-8 byte order mark is dropped) with the offset of a bad byte named;
- JSON is parsed with a nesting bound, a type check of the top level, and lone surrogates
  (``"\\ud800"``, which no output could print) refused.

Every failure is one ``InputError`` (or the subclass the caller names) that says which file.
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import select
import stat
import sys
import time
from typing import Any, BinaryIO

from envcheck.errors import InputError
from envcheck.patterns import lazy

MAX_BYTES = 64 * 1024**2  # reports and specs are kilobytes; a bigger input is a mistake
STREAM_SECONDS = 60.0  # how long a named FIFO or device may take to deliver its bytes
STDIN = "-"
_CHUNK = 1024 * 1024


def display_name(path: str) -> str:
    return "<stdin>" if path == STDIN else path


def read_bytes(
    path: str,
    *,
    limit: int = MAX_BYTES,
    error: type[InputError] = InputError,
    too_big: str = "",
    deadline: float = STREAM_SECONDS,
) -> bytes:
    """The bytes of ``path`` (``-``: standard input), at most ``limit`` of them."""
    name = display_name(path)
    if path == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise error("standard input is closed", where=name)
        try:
            data: bytes = stream.read(limit + 1)
        except OSError as exc:
            raise error(f"cannot read: {exc.strerror or exc}", where=name) from None
    else:
        data = _read_path(path, limit, error, deadline)
    if len(data) > limit:
        raise error(f"over {_size(limit)}: too big{' ' + too_big if too_big else ''}", where=name)
    return data


def _size(limit: int) -> str:
    return f"{limit // 1024**2} MiB" if limit >= 1024**2 else f"{limit} bytes"


def _read_path(path: str, limit: int, error: type[InputError], deadline: float) -> bytes:
    fd = _open_nonblocking(path, error)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error("is a directory, not a file", where=path)
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            return _read_all(fd, limit, path, error)
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
            return _read_stream(fd, limit, path, error, deadline)
        raise error("not a regular file, pipe or character device", where=path)
    finally:
        os.close(fd)


def open_binary(path: str, *, error: type[InputError] = InputError) -> BinaryIO:
    """A file, FIFO or character device opened for streaming (a log): the open never blocks
    (a FIFO nobody writes to reads as empty), directories and sockets are refused."""
    fd = _open_nonblocking(path, error)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error("is a directory, not a file", where=path)
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise error("not a regular file, pipe or character device", where=path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _open_nonblocking(path: str, error: type[InputError]) -> int:
    if not path:
        raise error("empty file name", where="''")
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise error("no such file", where=path) from None
    except IsADirectoryError:
        raise error("is a directory, not a file", where=path) from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise error("a socket or device without a reader; not a file", where=path) from None
        raise error(f"cannot read: {exc.strerror or exc}", where=path) from None


def read_regular(path: str, *, limit: int = MAX_BYTES) -> bytes:
    """A regular file's bytes (at most ``limit``) for a probe: a FIFO, device or directory in
    its place (a hostile dist-info tree) is refused instead of blocking the probe."""
    fd = _open_nonblocking(path, InputError)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError("not a regular file", where=path)
        os.set_blocking(fd, True)
        data = _read_all(fd, limit, path, InputError)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InputError(f"over {_size(limit)}: too big", where=path)
    return data


def _read_all(fd: int, limit: int, path: str, error: type[InputError]) -> bytes:
    parts: list[bytes] = []
    got = 0
    try:
        while got <= limit:
            chunk = os.read(fd, min(_CHUNK * 8, limit + 1 - got))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", where=path) from None
    return b"".join(parts)


def _read_stream(fd: int, limit: int, path: str, error: type[InputError], deadline: float) -> bytes:
    """A FIFO or device opened without blocking: read until end of file, ``limit + 1`` bytes
    or the deadline, whichever comes first. A FIFO with no writer reads as empty."""
    parts: list[bytes] = []
    got = 0
    end = time.monotonic() + deadline
    while got <= limit:
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
        except BlockingIOError:  # a writer is there but has nothing yet
            left = end - time.monotonic()
            if left <= 0:
                raise error(
                    f"no end of input after {deadline:g} s (a pipe or device)", where=path
                ) from None
            try:
                select.select([fd], [], [], min(left, 1.0))
            except (OSError, ValueError) as exc:
                raise error(f"cannot read: {exc}", where=path) from None
            continue
        except OSError as exc:
            raise error(f"cannot read: {exc.strerror or exc}", where=path) from None
        if not chunk:  # end of file, or a FIFO with no writer
            break
        parts.append(chunk)
        got += len(chunk)
        if time.monotonic() > end:
            raise error(f"no end of input after {deadline:g} s (a pipe or device)", where=path)
    return b"".join(parts)


def decode_utf8(data: bytes, path: str, *, error: type[InputError] = InputError) -> str:
    """Strict UTF-8 (a leading byte order mark dropped); the bad byte's offset is named."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise error("UTF-16 text (byte order mark); save it as UTF-8", where=display_name(path))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(
            f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})",
            where=display_name(path),
        ) from None


def read_text(
    path: str,
    *,
    limit: int = MAX_BYTES,
    error: type[InputError] = InputError,
    too_big: str = "",
) -> str:
    """A file (or ``-``) as strict UTF-8 text, at most ``limit`` bytes; NUL bytes refused."""
    data = read_bytes(path, limit=limit, error=error, too_big=too_big)
    if b"\x00" in data and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise error("binary data (NUL bytes), not text", where=display_name(path))
    return decode_utf8(data, path, error=error)


# A \uD800-\uDBFF escape not followed by a \uDC00-\uDFFF one, or a low one without a high one.
_ESCAPED_SURROGATE = lazy(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = lazy("[\ud800-\udfff]")


def loads_json(
    text: str,
    where: str,
    *,
    expect: type | tuple[type, ...] = dict,
    what: str = "a JSON object",
    error: type[InputError] = InputError,
) -> Any:
    """Parse JSON text: syntax errors with their line, nesting bounded (the parser's recursion
    limit, about 1,000 levels), the top level checked against ``expect``, and lone surrogates
    refused."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise error("JSON nested too deeply", where=where) from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        message = exc.args[0] if exc.args else str(exc)
        if isinstance(exc, json.JSONDecodeError):
            message = exc.msg
        raise error(f"not JSON: {message}", where=f"{where}:{line}" if line else where) from None
    if not isinstance(data, expect) or (isinstance(data, bool) and bool not in _tuple(expect)):
        raise error(f"expected {what}, got {_kind(data)}", where=where)
    if _ESCAPED_SURROGATE.search(text):
        key = lone_surrogate(data)
        if key is not None:
            raise error(
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff) in a string",
                where=where,
                key=key or None,
            )
    return data


def has_surrogate_escape(text: str) -> bool:
    """Whether JSON text holds a ``\\ud800``-``\\udfff`` escape (then it needs the full check)."""
    return _ESCAPED_SURROGATE.search(text) is not None


def _tuple(expect: type | tuple[type, ...]) -> tuple[type, ...]:
    return expect if isinstance(expect, tuple) else (expect,)


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(data), type(data).__name__)


def lone_surrogate(data: Any, path: str = "") -> str | None:
    """The dotted key of the first string (or key) holding a lone surrogate, else None."""
    stack: list[tuple[Any, str]] = [(data, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if _LONE_SURROGATE.search(value):
                return where
        elif isinstance(value, dict):
            for k, v in value.items():
                child = f"{where}.{k}" if where else str(k)
                if _LONE_SURROGATE.search(k):
                    return where or "<key>"
                stack.append((v, child))
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
    return None


def load_json_file(
    path: str,
    *,
    expect: type | tuple[type, ...] = dict,
    what: str = "a JSON object",
    error: type[InputError] = InputError,
    limit: int = MAX_BYTES,
) -> Any:
    """``read_text`` + ``loads_json``."""
    text = read_text(path, limit=limit, error=error)
    return loads_json(text, display_name(path), expect=expect, what=what, error=error)


def check_schema(value: Any, supported: int, where: str | None, *, error: type[InputError]) -> None:
    """``schema`` must be the integer ``supported`` (``true`` is not 1)."""
    if type(value) is not int:
        raise error(
            f"unsupported report schema {value!r}: expected the integer {supported}",
            where=where,
            key="schema",
        )
    if value != supported:
        raise error(
            f"unsupported report schema {value} (this envcheck reads schema {supported})",
            where=where,
            key="schema",
        )


_UTF16_SAMPLE = 4096  # bytes the NUL-pattern test of BOM-less UTF-16 looks at


def utf16_codec(head: bytes) -> str | None:
    """The UTF-16 codec a log starting with ``head`` is written in, or None (UTF-8/ASCII).
    A byte order mark decides; without one, text whose every other byte is NUL (ASCII written
    as UTF-16) is UTF-16 of that byte order."""
    if head.startswith(b"\xff\xfe"):
        return "utf-16"  # the codec reads (and drops) the mark
    if head.startswith(b"\xfe\xff"):
        return "utf-16"
    sample = head[:_UTF16_SAMPLE]
    if len(sample) < 16:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None
