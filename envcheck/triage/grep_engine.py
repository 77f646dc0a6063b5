"""The ``grep`` engine: GNU grep finds the candidate lines, Python names their signatures.

GNU grep compiles every signature pattern into one DFA and scans hundreds of MB/s; it is on
every Linux node, so triage needs no extra package to be fast. A regular file becomes grep's
stdin directly, and the lines after its last match are counted when it is done
(``_TailCount``); a pipe or a .gz is streamed in by a feeder thread that counts on the way. Only the lines grep prints are decoded and matched
in Python, at most 8 KiB of each (a 2 GB matching line is not held in memory). grep runs in a
process group of its own, recorded so that a signal to envcheck ends it
(``probes.run.terminate_children``), and the patterns file is removed by ``close()``. A
pattern outside the common subset of Python re and POSIX ERE (``(?:...)``, ``\\d``, ``\\s*$``)
is handed to grep rewritten (triage/ere.py) to match at least the lines Python's does; only
one that cannot be rewritten, and has no literal to look for instead, makes ``usable()``
false, and the caller falls back to another engine.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from typing import IO, BinaryIO

from envcheck.matrix.schema import Signature
from envcheck.probes.run import end_group, forget, spawn
from envcheck.triage.ere import grep_pattern
from envcheck.triage.forms import MARKER
from envcheck.triage.scan import CHUNK, MAX_MATCHED, Scanner, ScanResult

_TIMEOUT_S = 5.0
_KEPT = MAX_MATCHED + 32  # "<line number>:" and the part of a line a signature is matched on


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


# a process that triages many logs (the Python API in a loop, the test suite) rewrites the
# patterns for grep, and asks grep whether it accepts them, once per pattern set: grep's answer
# is kept by its path and the pattern file's text, for a few pattern sets (overlays)
_KEPT_ANSWERS = 4
_USABLE: dict[tuple[str, bytes], bool] = {}


@functools.lru_cache(maxsize=_KEPT_ANSWERS)
def _grep_lines(patterns: tuple[str, ...]) -> tuple[bytes | None, ...]:
    """Each pattern as grep -E reads it alike, or rewritten to match at least its lines."""
    return tuple(grep_pattern(p) for p in patterns)


class GrepScanner(Scanner):
    def __init__(self, signatures: Sequence[Signature], grep: str) -> None:
        super().__init__(signatures, "re")
        self.engine = "grep"
        self._grep = grep
        # each pattern as grep -E reads it alike, or rewritten to match at least its lines
        lines = _grep_lines(tuple(s.pattern for s in signatures))
        self._rewritable = all(line is not None for line in lines)
        fd, self._patterns = tempfile.mkstemp(prefix="envcheck-signatures-", suffix=".txt")
        # and the lines in another form (HTML-escaped, typographic quotes, JSON: forms.py)
        kept = [line for line in lines if line is not None] + [MARKER]
        self._text = b"\n".join(kept) + b"\n"
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(self._text)
        except BaseException:  # a full disk, or a signal while writing: no file left behind
            self.close()
            raise

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._patterns)

    def usable(self) -> bool:
        """Whether grep -E finds every line a pattern matches: each pattern is one grep
        reads as Python does, or its rewrite (triage/ere.py), and grep accepts them all (exit
        1 on empty input, 2 on a bad pattern)."""
        if not self._rewritable:
            return False
        key = (self._grep, self._text)
        known = _USABLE.get(key)
        if known is not None:
            return known
        answer = self._grep_accepts()
        if len(_USABLE) >= _KEPT_ANSWERS:
            _USABLE.pop(next(iter(_USABLE)))
        _USABLE[key] = answer
        return answer

    def _grep_accepts(self) -> bool:
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
        """A regular file is handed to grep as its stdin, and its bytes and the lines after
        grep's last match are counted with pread() when grep is done; anything else (a pipe, stdin from a terminal, a
        .gz being decompressed) is streamed into grep by a feeder thread that counts as it
        goes."""
        result = ScanResult(engine="grep")
        fd = _regular_file(stream)
        if fd is not None:
            return self._run(result, fd, _TailCount(fd, os.lseek(fd, 0, os.SEEK_CUR)))
        return self._run(result, subprocess.PIPE, None, stream)

    def _run(
        self,
        result: ScanResult,
        stdin: int,
        count: _TailCount | None,
        stream: BinaryIO | None = None,
    ) -> ScanResult:
        proc = spawn(
            # the line before and after each (-B1 -A1): half of a hard-wrapped message
            [self._grep, "-n", "-b", "-a", "-B1", "-A1", "-E", "-f", self._patterns],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        try:
            return self._collect(proc, result, count, stream)
        except BaseException:
            end_group(proc)  # an interrupt or a failed read: grep does not outlive us
            raise
        finally:
            forget(proc)

    def _collect(
        self,
        proc: subprocess.Popen[bytes],
        result: ScanResult,
        count: _TailCount | None,
        stream: BinaryIO | None,
    ) -> ScanResult:
        state: dict[str, BaseException] = {}

        def work() -> None:
            try:
                assert stream is not None and proc.stdin is not None
                _feed(stream, proc.stdin, result)
            except BaseException as exc:  # surfaced in the main thread
                state["error"] = exc

        helper = None
        if count is None:  # a pipe or a .gz: fed to grep, and counted, on the way
            helper = threading.Thread(target=work, name="envcheck-grep-feed", daemon=True)
            helper.start()
        assert proc.stdout is not None
        last = (0, 0)  # grep's last printed line: its number and the offset it starts at
        # a matching line is named once the line after it is read (or known absent)
        pending: tuple[int, bytes, bytes | None] | None = None
        before: tuple[int, bytes] | None = None  # the line printed last
        while raw := _bounded_line(proc.stdout):
            found = _PRINTED.match(raw)
            if found is None:  # "--" between groups of lines
                if pending is not None:
                    self._name_pending(pending, None, result)
                pending = before = None
                continue
            number, offset = int(found.group(1)), int(found.group(3))
            line = raw[found.end() :].rstrip(b"\n")
            last = (number, offset)
            if pending is not None:
                after = line if number == pending[0] + 1 else None
                self._name_pending(pending, after, result)
                pending = None
            if found.group(2) == b":":
                above = before[1] if before is not None and before[0] == number - 1 else None
                pending = (number, line, above)
            before = (number, line)
        if pending is not None:
            self._name_pending(pending, None, result)
        if helper is not None:
            helper.join()
        stderr = proc.stderr.read(_KEPT) if proc.stderr else b""
        code = proc.wait()
        if "error" in state:
            raise state["error"]
        if code not in (0, 1):
            raise OSError(f"grep failed ({code}): {stderr.decode(errors='replace').strip()}")
        if count is not None:
            count.finish(last[0], last[1], result)
        return result

    def _gated(self, lines: Sequence[bytes]) -> list[int]:
        """Indices of ``lines`` grep selects (the wrapped-line pass over a small log)."""
        try:
            done = subprocess.run(
                [self._grep, "-n", "-a", "-E", "-f", self._patterns],
                input=b"\n".join(lines) + b"\n",
                capture_output=True,
                env=_env(),
                timeout=_TIMEOUT_S * 6,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return super()._gated(lines)
        if done.returncode not in (0, 1):
            return super()._gated(lines)
        numbers = (raw.partition(b":")[0] for raw in done.stdout.splitlines())
        return [int(n) - 1 for n in numbers if n.isdigit()]

    def _name_pending(
        self, pending: tuple[int, bytes, bytes | None], after: bytes | None, result: ScanResult
    ) -> None:
        number, line, before = pending
        self._record(line, number, result, lambda: (before, after))


# grep's prefix of a line it prints: "NUMBER:OFFSET:" for a match, "NUMBER-OFFSET-" around one
_PRINTED = re.compile(rb"(\d+)([:-])(\d+)[:-]")


def _bounded_line(out: IO[bytes]) -> bytes:
    """The next line grep printed, at most ``_KEPT`` bytes of it (a 2 GB matching line is
    named from its first 8 KiB, as every engine does, and the rest is skipped unread into
    memory); b"" at the end."""
    raw = out.readline(_KEPT)
    if raw and not raw.endswith(b"\n"):
        while rest := out.readline(CHUNK):
            if rest.endswith(b"\n"):
                break
        raw += b"\n"
    return raw


def _regular_file(stream: BinaryIO) -> int | None:
    """The descriptor of a plain file opened for binary reading (not a .gz being decompressed,
    not a pipe or a terminal), positioned where the stream is."""
    if not isinstance(stream, io.BufferedReader):
        return None
    try:
        fd = stream.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (OSError, ValueError):
        return None
    return fd if regular and stream.tell() == os.lseek(fd, 0, os.SEEK_CUR) else None


class _TailCount:
    """The bytes and lines of a regular file grep reads, without reading all of it again: grep
    prints each matching line's number and the offset it starts at (``-n -b``), so only the
    newlines from its last matching line on are counted (``pread()``), once grep is done. A
    failed job's log ends near its error: little is read. (Counting the whole file beside grep,
    on the other core, cost a second of CPU per 2 GiB on a busy machine; a log with no match
    at all is still read once more, after grep.) A file that grew meanwhile is counted to its
    new end."""

    def __init__(self, fd: int, start: int) -> None:
        self.fd = fd
        self.start = start

    def finish(self, number: int, offset: int, result: ScanResult) -> None:
        """``number``/``offset``: grep's last matching line (0/0: none), from where grep
        started reading."""
        at = self.start + offset
        newlines = 0
        final = b"\n"
        while block := os.pread(self.fd, CHUNK, at):
            newlines += block.count(b"\n")
            at += len(block)
            final = block[-1:]
        if at == self.start + offset and at > self.start:
            final = os.pread(self.fd, 1, at - 1)  # nothing after the offset: the byte before it
        result.bytes_read = at - self.start
        result.lines = max(0, number - 1) + newlines + (0 if final == b"\n" else 1)


def _feed(stream: BinaryIO, sink: IO[bytes], result: ScanResult) -> None:
    lines = 0
    last = b"\n"
    try:
        while block := stream.read(CHUNK):
            result.bytes_read += len(block)
            lines += block.count(b"\n")
            last = block[-1:]
            sink.write(block)
    except BrokenPipeError:
        pass
    finally:
        with contextlib.suppress(BrokenPipeError, OSError):
            sink.close()
        result.lines = lines + (0 if last == b"\n" else 1)
