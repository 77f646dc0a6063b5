"""Standard output when the reader may leave early (``envcheck check --json | head``).

Once the pipe is gone the rest of the output is dropped, and the command still finishes and
exits with its own code: a failing node piped into ``head`` must not turn into exit 0 (or
rich's exit 1) in a CI step run with ``set -o pipefail``.
"""

from __future__ import annotations

import os
import sys


def silence() -> None:
    """Point file descriptor 1 at /dev/null, so later writes and the final flush succeed."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def emit(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence()


def flush() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence()
