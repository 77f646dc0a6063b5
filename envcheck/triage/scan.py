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

import io
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

from envcheck.matrix.schema import Signature
from envcheck.triage.forms import MARKER_LITERALS, needs_reading, plain_lines
from envcheck.triage.hardwrap import (
    MESSAGE_START,
    continues,
    full,
    looks_cut,
    moved_down,
    rejoined,
    split_after_path,
)
from envcheck.triage.patterns import MIN_LITERAL, re2_module, required_literals
from envcheck.triage.prefixes import strip_prefixes

CHUNK = 4 * 1024 * 1024
MAX_CARRY = 4 * 1024 * 1024  # a "line" longer than this is scanned in pieces
SHOWN = 400  # characters of a matched line kept for display
_CACHE_LINES = 4096  # distinct candidate lines whose signature is remembered
GATE_DFA_MEMORY = 64 << 20  # bytes RE2 may use for the signatures' gate (its DFA cache)
MAX_MATCHED = 8 * 1024  # bytes of one line a signature is matched against (bounds re's work)
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
Engine = Literal["auto", "grep", "re2", "re"]
# the lines around a candidate line (None where there is none or it is unknown), asked for only
# when the line may be half of a hard-wrapped one
Neighbours = Callable[[], "tuple[bytes | None, bytes | None]"]
NAMED_KEPT = 65536
UNWRAP_LIMIT = 1024 * 1024  # a log up to this size (a paste) is also read with wrapped lines joined
_STARTS = re.compile(MESSAGE_START.encode())
# a byte no message text holds (C0 controls but BEL and backspace, which terminals' title and
# overstrike sequences carry, tab, CR and ESC; DEL): a line with one is binary data, never part
# of a hard-wrapped message (a core dump's 256-byte "lines" would otherwise each be joined to
# their neighbours, and the joins read against every literal: 20 s a MiB)
_BINARY = re.compile(rb"[\x00-\x06\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


@dataclass(frozen=True)
class Occurrence:
    line: int
    text: str  # as shown (cut to SHOWN characters)
    # the whole text when the file's line is not it (lines a terminal cut, joined back)
    whole: str | None = field(default=None, compare=False)


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
    # numbers of the lines a signature named (kept up to NAMED_KEPT: the wrapped-line pass
    # over a small log leaves them alone)
    named: set[int] = field(default_factory=set, repr=False)

    def ordered(self) -> list[Tally]:
        """Matches in the order the log first shows them."""
        return sorted(self.tallies.values(), key=lambda t: t.first.line)


def _text(line: bytes) -> str:
    text = _ANSI.sub(b"", line).decode("utf-8", errors="replace").strip()
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


@dataclass(frozen=True)
class _Compiled:
    """What a scanner compiles from its signatures' patterns: nothing of one scan."""

    line_res: tuple[re.Pattern[bytes], ...]
    gate: Any  # RE2's compiled alternation, or None
    engine: Literal["re", "re2"]
    literals: tuple[bytes, ...]
    # each literal's first three bytes -> (the literal, the signatures (indices) of which it
    # is a required literal)
    by_start: dict[bytes, tuple[tuple[bytes, tuple[int, ...]], ...]]


# the patterns compiled last, by their texts and the engine asked for: a process that triages
# many logs (the Python API in a loop, the test suite) compiles the ~600 patterns once, not at
# every scanner (about 80% of a one-line triage's time); a few kept, for overlays
_COMPILED: dict[tuple[tuple[str, ...], str, bool], _Compiled] = {}
_COMPILED_KEPT = 4


def _compiled(signatures: tuple[Signature, ...], engine: Engine) -> _Compiled:
    re2 = re2_module() if engine in ("auto", "re2") else None
    key = (tuple(s.pattern for s in signatures), engine, re2 is not None)
    found = _COMPILED.get(key)
    if found is not None:
        return found
    line_res = []
    for s in signatures:
        try:
            line_res.append(re.compile(s.pattern.encode()))
        except re.error as exc:
            raise ValueError(f"signature {s.id}: pattern does not compile: {exc}") from None
    if engine == "re2" and re2 is None:
        raise RuntimeError("the re2 engine needs google-re2 (pip install 'envcheck-gpu[triage]')")
    gate = None
    if re2 is not None:
        # (?m): the gate runs over a whole buffer of lines, where ^ and $ must mean a line's
        # start and end as they do for grep and for the per-line re match
        alternation = b"(?m)" + b"|".join(b"(?:" + s.pattern.encode() + b")" for s in signatures)
        # RE2's DFA for ~800 patterns outgrows the default 8 MiB budget on some logs ('DFA out
        # of memory') and RE2 falls back to its NFA, a hundred times slower (a Ray-prefixed log:
        # 35 KB in 2.6 s); GATE_DFA_MEMORY bounds the cache instead (google/re2 re2.h:
        # 'max_mem (8<<20) approx. max memory footprint of RE2')
        options = re2.Options()
        options.max_mem = GATE_DFA_MEMORY
        try:
            gate = re2.compile(alternation, options)
        except Exception as exc:  # re2.error: a pattern RE2 does not accept
            raise ValueError(f"RE2 rejects a signature pattern: {exc}") from None
    literals: list[bytes] = []
    owners: dict[bytes, list[int]] = {}
    for index, s in enumerate(signatures):
        found_literals = required_literals(s.pattern)
        if found_literals is None:  # validated away for the built-in matrix; overlays may slip
            raise ValueError(f"signature {s.id}: pattern has no literal to prefilter on")
        for lit in found_literals:
            literals.append(lit.encode())
            owners.setdefault(lit.encode(), []).append(index)
    value = _Compiled(
        tuple(line_res),
        gate,
        "re2" if gate is not None else "re",
        tuple(dict.fromkeys(literals)),
        _by_start(owners),
    )
    if len(_COMPILED) >= _COMPILED_KEPT:
        _COMPILED.pop(next(iter(_COMPILED)))
    _COMPILED[key] = value
    return value


def _by_start(
    owners: dict[bytes, list[int]],
) -> dict[bytes, tuple[tuple[bytes, tuple[int, ...]], ...]]:
    """The literals grouped by their first MIN_LITERAL bytes (each literal has at least as
    many), with the signatures that require each."""
    grouped: dict[bytes, list[tuple[bytes, tuple[int, ...]]]] = {}
    for literal, indices in owners.items():
        grouped.setdefault(literal[:MIN_LITERAL], []).append((literal, tuple(indices)))
    return {start: tuple(group) for start, group in grouped.items()}


class Scanner:
    def __init__(self, signatures: Sequence[Signature], engine: Engine = "auto") -> None:
        if not signatures:
            raise ValueError("no signatures to scan for")
        self.signatures = tuple(signatures)
        compiled = _compiled(self.signatures, engine)
        self._line_res = compiled.line_res
        self._gate = compiled.gate
        self.engine: str = compiled.engine
        self._literals: tuple[bytes, ...] = compiled.literals
        self._by_start = compiled.by_start
        self._starts = frozenset(compiled.by_start)
        # lines in another form (HTML-escaped, typographic quotes, JSON, ...: triage/forms.py)
        self._marker_literals: tuple[bytes, ...] = MARKER_LITERALS
        self._seen: dict[bytes, int | None] = {}

    # --- candidates -------------------------------------------------------------------------------

    def _candidates(self, data: bytes, end: int) -> list[int]:
        """Offsets in ``data[:end]`` where a signature may match (sorted, maybe several per
        line)."""
        positions: list[int] = []
        if self._gate is not None:
            positions = [m.start() for m in self._gate.finditer(data, 0, end)]
            literals = self._marker_literals
        else:
            literals = self._literals + self._marker_literals
        for literal in literals:
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
        # only a signature one of whose required literals the text holds can match it (the
        # prefilter's rule, patterns.required_literals): those are tried, in file order, not
        # all ~800 (a log whose every line carries a literal, Ray's ' pid=', is read at the
        # cost of a few patterns a line)
        owners: set[int] = set()
        starts = {line[i : i + MIN_LITERAL] for i in range(len(line) - MIN_LITERAL + 1)}
        for start in self._starts.intersection(starts):
            for literal, indices in self._by_start[start]:
                if literal in line:
                    owners.update(indices)
        found = None
        for index in sorted(owners):
            if self._line_res[index].search(line):
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
            stop = stop if stop != -1 else end

            self._record(data[start:stop], lineno, result, _neighbours(data, start, stop, end))

    def _record(
        self, line: bytes, lineno: int, result: ScanResult, around: Neighbours | None = None
    ) -> None:
        """Tally a candidate line under the first signature that matches it (the line read in
        its plain form where it shows another one, or joined to a neighbour it was wrapped
        from)."""
        for index, text, at in self._name(line, lineno, around):
            if len(result.named) < NAMED_KEPT:
                result.named.add(at)
            self._tally(index, text, at, result)

    def _name(
        self, line: bytes, lineno: int, around: Neighbours | None
    ) -> list[tuple[int, bytes, int]]:
        """(signature index, the text it matched, its line number) for each line ``line``
        holds: itself, the plain lines of another form of it, or it joined to a neighbour;
        a line a launcher prefixed (triage/prefixes.py) named by what follows the prefix
        where the whole line names nothing more specific; a line a terminal cut at its width
        (hardwrap.looks_cut) named joined to the rest of it."""
        if around is not None:
            # joined as cut mid-word, or at a space the cut fell on: the one a more specific
            # signature names (the first in file order); on a tie, mid-word unless the rest
            # starts with a capital (a new word: 'compile' / 'PyTorch (11.8)')
            joined = [
                found
                for sep in _cut_separators(around)
                if (cut := _cut_joined(line, lineno, around, sep)) is not None
                and (found := self._name(cut[0], cut[1], None))
            ]
            if joined:
                best = min(joined, key=lambda named: named[0][0])
                # a join never trades the line's own failure for a benign line's facts: an
                # 80-column 'cannot open shared object file' before 'ls /usr/lib/wsl/lib'
                if not all(self.signatures[i].noise for i, _, _ in best) or not self._fails(line):
                    return best
        named = self._name_form(line, lineno, around)
        rest = strip_prefixes(_ANSI.sub(b"", line[:MAX_MATCHED]))
        if rest is None:
            return named
        inner = self._name_form(rest, lineno, _stripped(around))
        if not inner:
            return named
        if named:
            first = self.signatures[named[0][0]]
            if named[0][0] == inner[0][0] or (
                not (first.noise or first.generic) and named[0][0] < inner[0][0]
            ):
                return named  # the line as the log shows it
            # a benign line's facts stay (Ray's prefix names the worker's node)
            kept = {i for i, _, _ in inner}
            inner += [n for n in named if self.signatures[n[0]].noise and n[0] not in kept]
        return inner

    def _fails(self, line: bytes) -> bool:
        """Whether ``line`` by itself is named by a failure signature (not a noise one)."""
        index = self._identify(line)
        return index is not None and not self.signatures[index].noise

    def _name_form(
        self, line: bytes, lineno: int, around: Neighbours | None
    ) -> list[tuple[int, bytes, int]]:
        """``_name`` for a line as it is (its launcher's prefix, if any, kept)."""
        index = self._identify(line)
        named = [(index, line, lineno)] if index is not None else []
        plain: bytes | None = line
        if needs_reading(line):
            pieces = [p for p in plain_lines(line[:MAX_MATCHED]) if p.strip()]
            found = [(i, p, lineno) for p in pieces if (i := self._identify(p)) is not None]
            best = min((i for i, _, _ in found), default=None)
            # the user's own text where it is named as well (a full-width colon in a
            # localized shell's line stays); the lines a JSON string or repr holds, each
            if best is not None and (index is None or best < index or len(pieces) > 1):
                named = found
            plain = pieces[0] if len(pieces) == 1 else None
        if around is None or plain is None:
            return named
        if named and not self.signatures[named[0][0]].generic:
            if len(named) == 1 and plain is not None:
                return [self._with_rest(self._with_start(named[0], around), around)]
            return named
        joined = self._unwrapped(plain, lineno, named[0][0] if named else None, around)
        if joined is not None:
            return [joined]
        return [self._with_start(named[0], around)] if len(named) == 1 else named

    def _gated(self, lines: Sequence[bytes]) -> list[int]:
        """Indices of ``lines`` a signature may match (the engine's prefilter)."""
        data = b"\n".join(lines)
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        import bisect

        return sorted(
            {bisect.bisect_right(starts, p) - 1 for p in self._candidates(data, len(data))}
        )

    def unwrap(self, data: bytes, result: ScanResult) -> None:
        """The messages a small log (``data``, all of it, as scanned) shows hard-wrapped over
        two or three lines none of which the scan named: each run of lines joined (with a
        space, and without one for a terminal's cut) and named when a signature matches the
        joined text and none of its lines (``_unwrapped``'s guards). Called after ``scan``,
        for a log of at most UNWRAP_LIMIT bytes."""
        lines = data.split(b"\n")
        # each line's plain form, read once (a line is in up to nine runs)
        plain = [_one_line(_unprefixed(p)) for p in lines]
        runs: list[tuple[bytes, list[bytes], int]] = []
        for i in range(len(lines) - 1):
            for size in (4, 3, 2):  # the longer run first: the rest of a cut path
                if i + size > len(lines) or any(
                    n in result.named for n in range(i + 1, i + size + 1)
                ):
                    continue
                kept = [p for p in plain[i : i + size] if p is not None]
                if len(kept) < size:
                    continue
                for sep in _separators(kept):
                    runs.append((_joined(kept, sep), kept, i + 1))
        if not runs:
            return
        done: set[int] = set()
        for k in self._gated([r[0] for r in runs]):
            whole, parts, at = runs[k]
            if at in done:
                continue
            found = self._identify(whole)
            if found is None:
                continue
            regex = self._line_res[found]
            if all(regex.search(p) is None for p in parts):
                done.update(range(at, at + len(parts)))  # a line is part of one message
                self._tally(found, whole, at, result)

    def rejoin(self, data: bytes, result: ScanResult) -> None:
        """A small log (``data``, all of it) that a terminal cut at its width (hardwrap.py)
        scanned again with its cut lines joined back: a signature the joined lines match is
        tallied from them (their first physical line's number), in place of what the cut
        lines showed. Called after ``scan``, for a log of at most UNWRAP_LIMIT bytes."""
        found = rejoined(data)
        if found is None:
            return
        joined, starts = found
        again = Scanner.scan(self, io.BytesIO(joined))
        logical = joined.split(b"\n")

        def moved(seen: Occurrence) -> Occurrence:
            if not 0 < seen.line <= len(starts):
                return seen
            at = starts[seen.line - 1]
            following = starts[seen.line] if seen.line < len(starts) else at + 2
            if following == at + 1:  # one line as the file has it: read from the file
                return Occurrence(at, seen.text)
            whole = logical[seen.line - 1][:MAX_MATCHED].decode("utf-8", errors="replace")
            return Occurrence(at, seen.text, whole)

        for sid, tally in again.tallies.items():
            last = tally.last
            tally.first = moved(tally.first)
            tally.last = moved(last)
            result.tallies[sid] = tally
        result.named |= {starts[n - 1] if 0 < n <= len(starts) else n for n in again.named}

    def _tally(self, index: int, text: bytes, at: int, result: ScanResult) -> None:
        signature = self.signatures[index]
        tally = result.tallies.get(signature.id)
        if tally is None:
            result.tallies[signature.id] = Tally(signature, 1, Occurrence(at, _text(text)))
        elif at < tally.first.line:
            if tally._last is None and tally._last_raw is None:
                tally.last = tally.first
            tally.count += 1
            tally.first = Occurrence(at, _text(text))
        else:
            tally.count += 1
            if at >= tally.last.line:
                tally._last_raw = (at, text)

    def _with_rest(
        self, named: tuple[int, bytes, int], around: Neighbours
    ) -> tuple[int, bytes, int]:
        """A named line with the rest of its sentence that an editor or a console's word wrap
        put on the next line (hardwrap.continues: the line ends mid-sentence, the next goes on
        in lower case), where the signature matches the joined text too: the versions a rule
        reads from the line ('compiled against 7102' / 'but linked against 7605')."""
        index, line, at = named
        after = _one_line(_unprefixed(around()[1]))
        if after is None or _BINARY.search(line):
            return named
        text, rest = (_unprefixed(line) or line).rstrip(b"\r"), after.rstrip(b"\r")
        if not continues(text.decode("utf-8", "replace"), rest.decode("utf-8", "replace")):
            return named
        whole = text + b" " + rest.strip()
        return (index, whole, at) if self._line_res[index].search(whole) else named

    def _with_start(
        self, named: tuple[int, bytes, int], around: Neighbours
    ) -> tuple[int, bytes, int]:
        """A named line with the start of its message that a word wrap left on the line above
        (hardwrap.moved_down), where the signature matches the joined text too: the library's
        path before 'undefined symbol: ...' that names the package. Named at the line above."""
        index, line, at = named
        before = _one_line(_unprefixed(around()[0]))
        if before is None or _BINARY.search(line) or self._identify(before) is not None:
            return named  # nothing above, or a message a signature names on its own
        # the line's own launcher prefix read off as the neighbour's is ('[rank3]:   undefined
        # symbol: ...' below '[rank3]: ImportError: /x/ext.so:')
        text, above = (_unprefixed(line) or line).rstrip(b"\r"), before.rstrip(b"\r")
        upper, lower = above.decode("utf-8", "replace"), text.decode("utf-8", "replace")
        if not (moved_down(upper, lower) or split_after_path(upper, lower)):
            return named
        whole = above.rstrip() + b" " + text.strip()
        return (index, whole, at - 1) if self._line_res[index].search(whole) else named

    def _unwrapped(
        self, line: bytes, lineno: int, index: int | None, around: Neighbours
    ) -> tuple[int, bytes, int] | None:
        """A more specific signature than ``index`` (None: none) that ``line`` joined to the
        line before or after it (or both) matches and none of the joined lines does alone: a
        message hard-wrapped by an editor, a mail client or a terminal's width (each line but
        the last full (``hardwrap.full``), none after the first a message of
        its own)."""
        if _BINARY.search(line):
            return None  # binary data is no half of a message
        before, after = (_one_line(n) for n in around())
        runs: list[tuple[list[bytes], int]] = []
        if after is not None:
            runs.append(([line, after], lineno))
        if before is not None:
            runs.append(([before, line], lineno - 1))
            if after is not None:
                runs.append(([before, line, after], lineno - 1))
        for parts, at in runs:
            for sep in _separators(parts):
                whole = _joined(parts, sep)
                found = self._identify(whole)
                if found is None or (index is not None and found >= index):
                    continue
                regex = self._line_res[found]
                if all(regex.search(p) is None for p in parts):
                    return found, whole, at
        return None


def _neighbours(data: bytes, start: int, stop: int, end: int) -> Neighbours:
    """The lines before and after ``data[start:stop]`` (None at the ends), sliced on the first
    call and kept: a candidate line's readers (a cut, a wrap, the rest of a sentence) each ask."""
    kept: list[tuple[bytes | None, bytes | None]] = []

    def around() -> tuple[bytes | None, bytes | None]:
        if not kept:
            before = after = None
            if start > 0:
                before = data[data.rfind(b"\n", 0, start - 1) + 1 : start - 1]
            if stop < end:
                after_end = data.find(b"\n", stop + 1, end)
                after = data[stop + 1 : after_end if after_end != -1 else end]
            kept.append((before, after))
        return kept[0]

    return around


def _cut_joined(
    line: bytes, lineno: int, around: Neighbours, sep: bytes
) -> tuple[bytes, int] | None:
    """``line`` joined (with ``sep``) to the line before it and the line after it where a
    terminal cut them at its width, and the number of the first line joined; None where it is
    no such cut."""
    before, after = around()
    text, at = line.rstrip(b"\r"), lineno
    if before is not None and _cut(before.rstrip(b"\r"), text):
        text, at = before.rstrip(b"\r") + sep + text, lineno - 1
    if after is not None and _cut(line.rstrip(b"\r"), after.rstrip(b"\r")):
        text += sep + after.rstrip(b"\r")
    return (text, at) if len(text) > len(line.rstrip(b"\r")) else None


def _cut_separators(around: Neighbours) -> tuple[bytes, bytes]:
    """The separators to join a cut line's pieces with, the likelier first."""
    after = around()[1]
    return (b" ", b"") if after is not None and after[:1].isupper() else (b"", b" ")


def _cut(line: bytes, after: bytes) -> bool:
    return looks_cut(line.decode("utf-8", "replace"), after.decode("utf-8", "replace"))


def _stripped(around: Neighbours | None) -> Neighbours | None:
    """``around`` with each neighbour's launcher prefixes read off."""
    if around is None:
        return None

    def neighbours() -> tuple[bytes | None, bytes | None]:
        before, after = around()
        return _unprefixed(before), _unprefixed(after)

    return neighbours


def _unprefixed(line: bytes | None) -> bytes | None:
    if line is None:
        return None
    rest = strip_prefixes(_ANSI.sub(b"", line[:MAX_MATCHED]))
    return line if rest is None else rest


def _wrapped(parts: Sequence[bytes]) -> bool:
    """Whether ``parts`` may be one message hard-wrapped: every line but the last full
    (``hardwrap.full``: WRAPPED_AT characters, or the next line's first word would not have
    fitted beside it), none after the first empty or a message of its own."""
    return all(full(a, b) for a, b in itertools.pairwise(parts)) and not any(
        not p.strip() or _STARTS.match(p) for p in parts[1:]
    )


def _separators(parts: Sequence[bytes]) -> tuple[bytes, ...]:
    """How ``parts`` may be joined back into one message: with a space or without (a hard
    wrap, ``_wrapped``), or only without (a terminal's cut at its width, hardwrap.looks_cut);
    none when they are neither."""
    if _wrapped(parts):
        return (b" ", b"")
    if all(_cut(a.rstrip(b"\r"), b.rstrip(b"\r")) for a, b in itertools.pairwise(parts)):
        return (b"",)
    return ()


def _joined(parts: Sequence[bytes], sep: bytes) -> bytes:
    return sep.join([parts[0].rstrip(), *(p.strip() for p in parts[1:])])


def _one_line(line: bytes | None) -> bytes | None:
    """A neighbour in its plain form, when it is one line of text (binary data is none)."""
    if line is None or _BINARY.search(line):
        return None
    if not needs_reading(line):
        return line
    pieces = plain_lines(line[:MAX_MATCHED])
    return pieces[0] if len(pieces) == 1 else None
