"""The ``grep`` engine: GNU grep finds the candidate lines, Python names their signatures.

GNU grep compiles every signature pattern into one DFA and scans hundreds of MB/s; it is on
every Linux node, so triage needs no extra package to be fast. A feeder thread streams the log
into grep's stdin (counting bytes and lines on the way, so stdin and files work alike); only the
lines grep prints are decoded and matched in Python. Patterns outside the common subset of
Python re and POSIX ERE (Python-only syntax in a site overlay) make ``usable()`` false and the caller falls back to another engine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from typing import BinaryIO

from envcheck.matrix.schema import Signature
from envcheck.triage.patterns import ere_problem
from envcheck.triage.scan import CHUNK, Scanner, ScanResult

_TIMEOUT_S = 5.0


def gnu_grep() -> str | None:
    """Path of GNU grep (busybox and BSD greps are not used: their -E and -f differ)."""
    path = shutil.which("grep")
    if path is None:
        return None
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if "GNU grep" in out.stdout else None


def _env() -> dict[str, str]:
    # byte semantics (fast, any encoding) and no colour or user options
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GREP_OPTIONS", "GREP_COLORS", "GREP_COLOR")
    }
    env["LC_ALL"] = "C"
    return env


class GrepScanner(Scanner):
    def __init__(self, signatures: Sequence[Signature], grep: str) -> None:
        super().__init__(signatures, "re")
        self.engine = "grep"
        self._grep = grep
        fd, self._patterns = tempfile.mkstemp(prefix="envcheck-signatures-", suffix=".txt")
        with os.fdopen(fd, "wb") as out:
            out.write(b"\n".join(s.pattern.encode() for s in signatures) + b"\n")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._patterns)

    def usable(self) -> bool:
        """Whether grep -E reads every pattern as Python does: each is inside the common
        subset (no Python-only syntax) and grep accepts it (exit 1 on empty input, 2 on a
        bad pattern)."""
        if any(ere_problem(s.pattern) is not None for s in self.signatures):
            return False
        try:
            done = subprocess.run(
                [self._grep, "-E", "-f", self._patterns],
                input=b"",
                capture_output=True,
                env=_env(),
                timeout=_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode in (0, 1)

    def scan(self, stream: BinaryIO) -> ScanResult:
        result = ScanResult(engine="grep")
        proc = subprocess.Popen(
            [self._grep, "-n", "-a", "-E", "-f", self._patterns],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        state: dict[str, object] = {}

        def feed() -> None:
            assert proc.stdin is not None
            lines = 0
            last = b"\n"
            try:
                while block := stream.read(CHUNK):
                    result.bytes_read += len(block)
                    lines += block.count(b"\n")
                    last = block[-1:]
                    proc.stdin.write(block)
            except BrokenPipeError:
                pass
            except BaseException as exc:  # surfaced in the main thread
                state["error"] = exc
            finally:
                with contextlib.suppress(BrokenPipeError, OSError):
                    proc.stdin.close()
                result.lines = lines + (0 if last == b"\n" else 1)

        feeder = threading.Thread(target=feed, name="envcheck-grep-feed", daemon=True)
        feeder.start()
        assert proc.stdout is not None
        for raw in proc.stdout:
            number, _, line = raw.rstrip(b"\n").partition(b":")
            if number.isdigit():
                self._record(line, int(number), result)
        feeder.join()
        stderr = proc.stderr.read() if proc.stderr else b""
        code = proc.wait()
        if "error" in state:
            raise state["error"]  # type: ignore[misc]
        if code not in (0, 1):
            raise OSError(f"grep failed ({code}): {stderr.decode(errors='replace').strip()}")
        return result
