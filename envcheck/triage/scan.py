"""Stream a log once, in large chunks, and tally the lines that match a signature.

Memory stays bounded: the log is read CHUNK bytes at a time (a line cut by a chunk boundary is
carried to the next one), and per signature only a count and the first and last occurrence
are kept. Candidate lines are found per chunk by one compiled alternation of every pattern
(RE2, linear time, when google-re2 is installed) or, without it, by looking for the literal
each pattern must contain (``bytes.find``, C speed); each candidate line is then matched
against the signatures in file order and the first that matches names it. Offsets map back to
line numbers by counting newlines between candidates. Bytes are never decoded except for the
matched lines shown, so logs in any encoding (or with binary junk) scan the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, Literal

from envcheck.matrix.schema import Signature
from envcheck.triage.patterns import re2_module, required_literals

CHUNK = 4 * 1024 * 1024
MAX_CARRY = 4 * 1024 * 1024  # a "line" longer than this is scanned in pieces
SHOWN = 400  # characters of a matched line kept for display
_CACHE_LINES = 4096  # distinct candidate lines whose signature is remembered
MAX_MATCHED = 8 * 1024  # bytes of one line a signature is matched against (bounds re's work)
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
Engine = Literal["auto", "grep", "re2", "re"]


@dataclass(frozen=True)
class Occurrence:
    line: int
    text: str


@dataclass
class Tally:
    signature: Signature
    count: int
    first: Occurrence
    _last: Occurrence | None = None
    _last_raw: tuple[int, bytes] | None = None  # decoded only when asked for

    @property
    def last(self) -> Occurrence:
        if self._last_raw is not None:
            line, raw = self._last_raw
            self._last, self._last_raw = Occurrence(line, _text(raw)), None
        return self._last if self._last is not None else self.first

    @last.setter
    def last(self, value: Occurrence) -> None:
        self._last, self._last_raw = value, None


@dataclass
class ScanResult:
    bytes_read: int = 0
    lines: int = 0
    engine: str = "re"
    tallies: dict[str, Tally] = field(default_factory=dict)

    def ordered(self) -> list[Tally]:
        """Matches in the order the log first shows them."""
        return sorted(self.tallies.values(), key=lambda t: t.first.line)


def _text(line: bytes) -> str:
    text = _ANSI.sub(b"", line).decode("utf-8", errors="replace").strip()
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


class Scanner:
    def __init__(self, signatures: Sequence[Signature], engine: Engine = "auto") -> None:
        if not signatures:
            raise ValueError("no signatures to scan for")
        self.signatures = tuple(signatures)
        self._line_res = []
        for s in self.signatures:
            try:
                self._line_res.append(re.compile(s.pattern.encode()))
            except re.error as exc:
                raise ValueError(f"signature {s.id}: pattern does not compile: {exc}") from None
        re2 = re2_module() if engine in ("auto", "re2") else None
        if engine == "re2" and re2 is None:
            raise RuntimeError(
                "the re2 engine needs google-re2 (pip install 'envcheck-gpu[triage]')"
            )
        self._gate = None
        if re2 is not None:
            # (?m): the gate runs over a whole buffer of lines, where ^ and $ must mean a line's
            # start and end as they do for grep and for the per-line re match
            alternation = b"(?m)" + b"|".join(
                b"(?:" + s.pattern.encode() + b")" for s in self.signatures
            )
            try:
                self._gate = re2.compile(alternation)
            except Exception as exc:  # re2.error: a pattern RE2 does not accept
                raise ValueError(f"RE2 rejects a signature pattern: {exc}") from None
            self.engine = "re2"
        else:
            self.engine = "re"
        literals: list[bytes] = []
        for s in self.signatures:
            found = required_literals(s.pattern)
            if found is None:  # validated away for the built-in matrix; overlays may slip
                raise ValueError(f"signature {s.id}: pattern has no literal to prefilter on")
            literals += [lit.encode() for lit in found]
        self._literals = tuple(dict.fromkeys(literals))
        self._seen: dict[bytes, int | None] = {}

    # --- candidates -------------------------------------------------------------------------------

    def _candidates(self, data: bytes, end: int) -> list[int]:
        """Offsets in ``data[:end]`` where a signature may match (sorted, maybe several per
        line)."""
        if self._gate is not None:
            return [m.start() for m in self._gate.finditer(data, 0, end)]
        positions: list[int] = []
        for literal in self._literals:
            at = data.find(literal, 0, end)
            while at != -1:
                positions.append(at)
                at = data.find(literal, at + 1, end)
        positions.sort()
        return positions

    def _identify(self, line: bytes) -> int | None:
        """The first signature matching ``line`` (at most MAX_MATCHED bytes of it)."""
        if len(line) > MAX_MATCHED:
            line = line[:MAX_MATCHED]
        cache = self._seen
        if line in cache:  # a log where every line matches mostly repeats a few lines
            return cache[line]
        found = None
        for index, regex in enumerate(self._line_res):
            if regex.search(line):
                found = index
                break
        if len(cache) >= _CACHE_LINES:
            cache.clear()
        cache[line] = found
        return found

    # --- the scan ---------------------------------------------------------------------------------

    def scan(self, stream: BinaryIO) -> ScanResult:
        result = ScanResult(engine=self.engine)
        carry = b""
        line_base = 0
        while True:
            block = stream.read(CHUNK)
            result.bytes_read += len(block)
            if not block:
                if carry:  # the last line, without a newline
                    self._scan_chunk(carry, len(carry), line_base, result)
                    line_base += carry.count(b"\n") + 1
                break
            data = carry + block if carry else block
            del block
            end = data.rfind(b"\n") + 1
            if end == 0 and len(data) < MAX_CARRY:
                carry = data
                continue
            if end == 0:
                end = len(data)  # one very long line: scan it in pieces
            self._scan_chunk(data, end, line_base, result)
            line_base += data.count(b"\n", 0, end)
            carry = data[end:]
            del data
        result.lines = line_base
        return result

    def _scan_chunk(self, data: bytes, end: int, line_base: int, result: ScanResult) -> None:
        positions = self._candidates(data, end)
        if not positions:
            return
        counted_to = 0
        lineno = line_base + 1
        last_start = -1
        for pos in positions:
            start = data.rfind(b"\n", 0, pos) + 1
            if start == last_start:
                continue
            last_start = start
            lineno += data.count(b"\n", counted_to, start)
            counted_to = start
            stop = data.find(b"\n", pos, end)
            self._record(data[start : stop if stop != -1 else end], lineno, result)

    def _record(self, line: bytes, lineno: int, result: ScanResult) -> None:
        """Tally a candidate line under the first signature that matches it."""
        index = self._identify(line)
        if index is None:
            return
        signature = self.signatures[index]
        tally = result.tallies.get(signature.id)
        if tally is None:
            result.tallies[signature.id] = Tally(signature, 1, Occurrence(lineno, _text(line)))
        else:
            tally.count += 1
            tally._last_raw = (lineno, line)
