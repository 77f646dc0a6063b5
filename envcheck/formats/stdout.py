"""Standard output and error as envcheck writes them: the one boundary every printed byte
crosses (rich included, which writes to ``sys.stdout`` at print time).

``guarded()`` wraps both streams for the length of a command. The wrapper

- takes terminal control sequences out of everything written (``terminal.strip_controls``:
  an OSC 52 clipboard write or a title change in a package's METADATA or a log line), except
  what rich writes through ``trusted()``: rich's own styling, whose data was stripped when it
  was rendered (``formats.table.SafeConsole``);
- redacts secrets in everything written (``redact.redact_text``: URL credentials, ``NAME=value``
  of secret-looking names), whole lines at a time so a secret split across writes is still seen;
- degrades text the stream's encoding cannot carry (``PYTHONIOENCODING=ascii``, the C locale):
  ``·`` becomes ``.``, anything else unprintable ``?``; never a UnicodeEncodeError;
- turns a reader leaving early (``envcheck check | head``) into silence: the command still
  finishes and exits with its own code (a failing node piped into ``head`` must not turn into
  exit 0 in a CI step run with ``set -o pipefail``);
- records any other failure to write (``>/dev/full``, a closed descriptor) so that the command
  exits 2 with one line instead of two tracebacks and exit 120.

After a failure the descriptor is pointed at /dev/null, so the interpreter's own final flush
succeeds too.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from envcheck.redact import redact_text
from envcheck.terminal import strip_controls

_HOLD = 64 * 1024  # a partial line held back for redaction at most this long
_PLAIN = str.maketrans(
    {
        "·": ".",
        "—": "-",
        "–": "-",
        "…": "...",
        "→": "->",
        "←": "<-",
        "≥": ">=",
        "≤": "<=",
        "×": "x",
        "•": "*",
        "✓": "ok",
        "✔": "ok",
        "✗": "x",
        "✘": "x",
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        "\u00a0": " ",
    }
)


def degrade(text: str, encoding: str) -> str:
    """``text`` as the nearest thing ``encoding`` can carry."""
    plain = text.translate(_PLAIN)
    return plain.encode(encoding, errors="replace").decode(encoding, errors="replace")


class GuardedStream:
    """A text stream wrapper; see the module's docstring."""

    def __init__(self, stream: TextIO | None, label: str) -> None:
        self._stream = stream
        self._label = label
        self._pending = ""
        self.gone = False  # the reader left (broken pipe): silence, not an error
        self.failure: str | None = None  # why output could not be written

    @property
    def wrapped(self) -> TextIO | None:
        return self._stream

    def write(self, text: str) -> int:
        """Write text from data: control sequences are taken out first."""
        if not text:
            return 0
        return self._write(strip_controls(text), len(text))

    def trusted(self) -> TrustedWriter:
        """A writer for rich's rendered output (its styling kept; its data already clean)."""
        return TrustedWriter(self)

    def _write(self, text: str, size: int) -> int:
        if not text:
            return size
        pending = self._pending + text
        cut = pending.rfind("\n") + 1
        if cut == 0 and len(pending) < _HOLD:
            self._pending = pending
            return size
        if cut == 0:
            cut = len(pending)
        self._pending = pending[cut:]
        self._emit(pending[:cut])
        return size

    def flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, ""
            self._emit(pending)
        if self._stream is None or self.gone or self.failure:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._leave()
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def _emit(self, text: str) -> None:
        if self.gone or self.failure:
            return
        if self._stream is None:
            self.failure = "it is closed"
            return
        safe = redact_text(text)
        try:
            try:
                self._stream.write(safe)
            except UnicodeEncodeError:
                self._stream.write(degrade(safe, self._stream.encoding or "ascii"))
        except BrokenPipeError:
            self._leave()
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        if isinstance(exc, OSError) and exc.strerror:
            self.failure = exc.strerror
        else:
            self.failure = str(exc) or type(exc).__name__
        self._to_devnull()

    def _leave(self) -> None:
        self.gone = True
        self._to_devnull()

    def _to_devnull(self) -> None:
        try:
            fd = self._stream.fileno() if self._stream is not None else -1
        except (OSError, ValueError, AttributeError):
            return
        if fd < 0:
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
        # whatever the stream still buffers now drains into /dev/null
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()  # type: ignore[union-attr]

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    @property
    def encoding(self) -> str:
        return (getattr(self._stream, "encoding", None) or "utf-8") if self._stream else "utf-8"

    def __getattr__(self, name: str) -> Any:  # fileno, errors, buffer, ... as the stream has
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


class TrustedWriter:
    """What rich writes to a guarded stream: redacted, but its escape sequences kept."""

    def __init__(self, stream: GuardedStream) -> None:
        self._guarded = stream

    def write(self, text: str) -> int:
        return self._guarded._write(text, len(text))

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding
        return getattr(self._guarded, name)


def _occupy(fd: int) -> None:
    """A closed standard descriptor is pointed at /dev/null, so that a file opened later does
    not become 'standard output' by accident."""
    try:
        os.fstat(fd)
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)


@contextlib.contextmanager
def guarded() -> Iterator[tuple[GuardedStream, GuardedStream]]:
    """Wrap sys.stdout and sys.stderr for the block (once: nested use reuses the wrappers)."""
    out, err = sys.stdout, sys.stderr
    if isinstance(out, GuardedStream) and isinstance(err, GuardedStream):
        yield out, err
        return
    closed = (out is None, err is None)
    for fd, was_closed in zip((1, 2), closed, strict=True):
        if was_closed:
            _occupy(fd)
    g_out = out if isinstance(out, GuardedStream) else GuardedStream(out, "standard output")
    g_err = err if isinstance(err, GuardedStream) else GuardedStream(err, "standard error")
    sys.stdout, sys.stderr = g_out, g_err
    try:
        yield g_out, g_err
    finally:
        g_out.flush()
        g_err.flush()
        sys.stdout, sys.stderr = out, err
