"""Standard output and error when the reader may leave early (``envcheck check | head``).

Once a pipe is gone the rest of what goes to it is dropped, and the command still finishes and
exits with its own code: a failing node piped into ``head`` must not turn into exit 0 (or
rich's exit 1) in a CI step run with ``set -o pipefail``. The console script wraps both
streams once (``envcheck.cli.entry``); every writer, rich included, goes through them.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class LeftEarly:
    """A text stream that turns a broken pipe into silence (the descriptor is pointed at
    /dev/null, so the interpreter's own final flush succeeds too)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self._gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... as the stream has
        return getattr(self._stream, name)


def guard() -> None:
    """Wrap sys.stdout and sys.stderr (once)."""
    if not isinstance(sys.stdout, LeftEarly):
        sys.stdout = LeftEarly(sys.stdout)
    if not isinstance(sys.stderr, LeftEarly):
        sys.stderr = LeftEarly(sys.stderr)
