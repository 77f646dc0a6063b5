"""``envcheck triage``: scan a log for known signatures and check their causes on a node.

Exit codes: 0 when no signature matched, or only noise did ("no known signature"); 1 when the
log shows at least one known failure (a non-noise signature), whether or not a cause could be
confirmed; 2 for bad input; 3 for an internal error.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO

from envcheck.errors import InputError
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Severity
from envcheck.model.report import NodeReport
from envcheck.rules.base import INFORMATIONAL, LogLine, Rule
from envcheck.triage import environment
from envcheck.triage.encoding import SNIFF, transcoded
from envcheck.triage.extract import LogFact, dedupe, extract
from envcheck.triage.forms import plain_text
from envcheck.triage.grep_engine import GrepScanner, gnu_grep
from envcheck.triage.hardwrap import CUT_LINES, WRAPPED_AT, cut_joined
from envcheck.triage.prefixes import line_host, nccl_host, unprefixed_text
from envcheck.triage.scan import (
    MAX_MATCHED,
    UNWRAP_LIMIT,
    Engine,
    Occurrence,
    Scanner,
    ScanResult,
    Tally,
)
from envcheck.triage.verdict import CauseCheck, binary_causes, check_causes


@dataclass(frozen=True)
class Match:
    tally: Tally
    causes: tuple[CauseCheck, ...]

    @property
    def noise(self) -> bool:
        """Not a failure: a signature known as noise, or information the node rules out."""
        return self.tally.signature.noise or self.information_ruled_out

    @property
    def information_ruled_out(self) -> bool:
        """A line the program logged as information (NCCL's ``INFO NET/IB : No device found.``
        on a node without InfiniBand) whose every cause the node's facts rule out: what it
        names does not apply on this node, so it is no failure. A line logged as an error
        stays a failure whatever its causes' verdicts: something failed, for a reason
        still unknown."""
        return (
            self.tally.count > 0
            and bool(self.causes)
            and all(c.verdict == "ruled_out" for c in self.causes)
            and informational(self.tally.first.text)
            and informational(self.tally.last.text)
        )

    def to_json(self) -> dict[str, Any]:
        sig = self.tally.signature
        return {
            "id": sig.id,
            "noise": self.noise,
            "information_ruled_out": self.information_ruled_out,
            "meaning": sig.meaning,
            "note": sig.note,
            "source": sig.source,
            "verified": sig.verified,
            "count": self.tally.count,
            "first": {"line": self.tally.first.line, "text": self.tally.first.text},
            "last": {"line": self.tally.last.line, "text": self.tally.last.text},
            "causes": [c.to_json() for c in self.causes],
        }


@dataclass(frozen=True)
class TriageResult:
    log: str
    scan: ScanResult
    matches: tuple[Match, ...]
    node: NodeReport | None
    node_note: str  # where the node facts came from, or why there are none
    facts: tuple[LogFact, ...] = ()  # what the matched lines state about the node

    @property
    def failures(self) -> tuple[Match, ...]:
        return tuple(m for m in self.matches if not m.noise)

    @property
    def failed(self) -> bool:
        """A known failure line, or an error the given environment shows (its warnings alone
        are reported but do not fail the triage, as `check`'s default --severity)."""
        return any(
            m.tally.count or any(f.severity is Severity.ERROR for c in m.causes for f in c.findings)
            for m in self.failures
        )

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    @property
    def status(self) -> str:
        return "findings" if self.failed else "ok"

    def summary(self) -> dict[str, Any]:
        verdicts = [c.verdict for m in self.failures for c in m.causes]
        shown = [m for m in self.failures if m.tally.count == 0]  # triage/environment.py
        return {
            "signatures": len(self.failures) - len(shown),
            "environment": sum(len(m.causes) for m in shown),
            "noise": len(self.matches) - len(self.failures),
            "confirmed": verdicts.count("confirmed"),
            "ruled_out": verdicts.count("ruled_out"),
            "unknown": verdicts.count("unknown"),
            "unchecked": verdicts.count("unchecked"),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "log": self.log,
            "bytes": self.scan.bytes_read,
            "lines": self.scan.lines,
            "engine": self.scan.engine,
            "node": self.node.node if self.node is not None else None,
            "node_source": self.node_note,
            "facts": [f.to_json() for f in self.facts],
            "matches": [m.to_json() for m in self.matches],
            "summary": self.summary(),
            "reports": [self.node.to_dict()] if self.node is not None else [],
        }


GZIP_MAGIC = b"\x1f\x8b"


def open_log(path: str) -> tuple[BinaryIO, str]:
    """The log as a binary stream (``-``: standard input). Gzip is recognised by its magic
    bytes, not the name, and decompressed on the fly (`zcat`-free: ``envcheck triage - <
    job.log.1``, ``kubectl logs ... | gzip | ...``)."""
    if path == "-":
        stream, name = sys.stdin.buffer, "<stdin>"
    else:
        from envcheck.inputs import open_binary

        stream, name = open_binary(path), path
    if not _starts_with_gzip_magic(stream):
        return transcoded(stream, _head(stream)), name
    if stream is sys.stdin.buffer:
        unzipped: BinaryIO = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
    elif stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
        stream.close()
        unzipped = gzip.open(path, "rb")  # type: ignore[assignment]  # noqa: SIM115 (returned)
    else:
        unzipped = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
    return transcoded(unzipped, _head(unzipped)), name


def _head(stream: BinaryIO) -> bytes:
    """The first bytes of the log, without consuming them (a regular file: pread; a pipe or a
    .gz: what its buffer can peek), to tell its encoding and line ends (envcheck.triage.encoding)."""
    try:
        fd = stream.fileno()
        if stat.S_ISREG(os.fstat(fd).st_mode) and isinstance(stream, io.BufferedReader):
            return os.pread(fd, SNIFF, os.lseek(fd, 0, os.SEEK_CUR))
    except (OSError, ValueError):
        pass
    peek = getattr(stream, "peek", None)
    try:
        return bytes(peek(SNIFF)[:SNIFF]) if peek is not None else b""
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
        return b""


def _starts_with_gzip_magic(stream: BinaryIO) -> bool:
    """Look at the first two bytes without moving a regular file's offset (so grep can still
    read it directly); a pipe is peeked through its buffer."""
    try:
        fd = stream.fileno()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return os.pread(fd, 2, os.lseek(fd, 0, os.SEEK_CUR)) == GZIP_MAGIC
    except (OSError, ValueError):
        pass
    peek = getattr(stream, "peek", None)
    try:
        return peek is not None and bytes(peek(2)[:2]) == GZIP_MAGIC
    except OSError:
        return False


class _HeadKept(io.RawIOBase):
    """A stream read once (standard input) whose first ``limit`` bytes are kept as the scan
    reads them: the log's head, for what a file's head is read again for (an environment pasted
    in it, its hard-wrapped messages)."""

    def __init__(self, stream: BinaryIO, head: bytearray, limit: int) -> None:
        super().__init__()
        self._stream = stream
        self._head = head
        self._limit = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        read1 = getattr(self._stream, "read1", None)
        data = read1(len(buffer)) if read1 is not None else self._stream.read(len(buffer))
        size = len(data)
        buffer[:size] = data
        room = self._limit - len(self._head)
        if room > 0:
            self._head += data[:room]
        return size


def scan_log(
    path: str,
    matrix: Matrix,
    engine: Engine = "auto",
    head: bytearray | None = None,
    head_limit: int = 0,
) -> tuple[str, ScanResult]:
    """Scan the log at ``path`` ('-': standard input). For standard input, ``head`` (when given)
    receives its first ``head_limit`` bytes as they are read: stdin cannot be read twice."""
    if not matrix.signatures:
        raise InputError("the matrix has no [[signature]] entries to look for")
    stream, name = open_log(path)
    if path == "-" and head is not None:
        stream = io.BufferedReader(_HeadKept(stream, head, head_limit), buffer_size=65536)
    try:
        try:
            scanner = _scanner(matrix, engine, _bytes_left(stream))
        except (ValueError, RuntimeError, re.error) as exc:
            raise InputError(f"{exc} (see `envcheck matrix validate`)") from None
        try:
            result = scanner.scan(stream)
            if path != "-" and result.bytes_read <= UNWRAP_LIMIT:
                _unwrap(path, scanner, result)
            elif head is not None and result.bytes_read <= min(UNWRAP_LIMIT, len(head)):
                scanner.rejoin(bytes(head), result)
                scanner.unwrap(bytes(head), result)
            return name, result
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(f"cannot read: {exc}", where=name) from None
        finally:
            if isinstance(scanner, GrepScanner):
                scanner.close()
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _unwrap(path: str, scanner: Scanner, result: ScanResult) -> None:
    """A small log read again whole, for the messages it shows hard-wrapped (Scanner.unwrap)."""
    stream, _ = open_log(path)
    try:
        data = stream.read(UNWRAP_LIMIT + 1)
    finally:
        stream.close()
    if len(data) <= UNWRAP_LIMIT:
        scanner.rejoin(data, result)
        scanner.unwrap(data, result)


# a log up to this size is scanned in this process by `auto`: grep's start (it compiles every
# pattern into its DFA, ~0.1-0.2 s) costs more than Python's re reads in this many bytes
# (~50-80 MB/s with the literal prefilter; docs/performance.md)
SMALL_LOG = 4 * 1024 * 1024


def _bytes_left(stream: BinaryIO) -> int | None:
    """The bytes a regular, uncompressed file has left to read; None for anything else (a
    pipe, a terminal, a .gz, a transcoded stream): its size is not known before reading."""
    if not isinstance(stream, io.BufferedReader):
        return None
    try:
        fd = stream.fileno()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return max(0, info.st_size - os.lseek(fd, 0, os.SEEK_CUR))
    except (OSError, ValueError):
        return None


def _scanner(matrix: Matrix, engine: Engine, size: int | None = None) -> Scanner:
    """GNU grep when it is there and accepts every pattern (auto), else RE2, else re; a
    regular file of at most SMALL_LOG bytes (``size``) is read by re in this process (auto)."""
    if engine == "auto" and size is not None and size <= SMALL_LOG:
        return Scanner(matrix.signatures, "re")
    if engine in ("auto", "grep"):
        grep = gnu_grep()
        if grep is not None:
            scanner = GrepScanner(matrix.signatures, grep)
            try:
                usable = scanner.usable()
            except BaseException:  # a signal (Terminated) while grep reads the patterns
                scanner.close()
                raise
            if usable:
                return scanner
            scanner.close()
            if engine == "grep":
                raise RuntimeError(
                    "grep -E cannot read every signature pattern as Python does; use --engine re"
                )
        elif engine == "grep":
            raise RuntimeError("the grep engine needs GNU grep on PATH")
    return Scanner(matrix.signatures, "auto" if engine == "auto" else engine)


def log_facts(path: str, scan: ScanResult) -> tuple[LogFact, ...]:
    """What the matched lines say about the node: each signature's extractors on its first and
    last occurrence, and on the ``context`` lines after the first (re-read from the file, only
    for the signatures that matched and ask for context; not possible on standard input)."""
    facts: list[LogFact] = []
    wanted = {
        t.first.line: t.signature.context
        for t in scan.tallies.values()
        if t.signature.extract and t.signature.context > 0
    }
    context = read_context(path, wanted) if wanted and path != "-" else {}
    # a matched line is kept cut to its display length: extractors read it whole (pip's list of
    # the versions it found runs past it), up to the bytes a signature is matched against
    cut = {
        seen.line - 1: 1
        for t in scan.tallies.values()
        if t.signature.extract
        for seen in (t.first, t.last)
        if seen.text.endswith("…")
    }
    whole = read_context(path, cut, MAX_MATCHED) if cut and path != "-" else {}

    def text_of(seen: Occurrence) -> str:
        """The text extractors read for an occurrence: the whole line, in its plain form (a
        line a signature named as the log shows it, HTML-escaped, is read unescaped)."""
        if seen.whole is not None:  # lines a terminal cut, joined back
            return plain_text(seen.whole)
        # the line re-read whole, unless the shown one is longer (a cut joined to its rest)
        read = next((text for _, text in whole.get(seen.line - 1, ())), seen.text)
        return plain_text(read if len(read) >= len(seen.text) - 1 else seen.text)

    # the lines after a matched line that may be its rest, cut by a terminal or wrapped by an
    # editor (hardwrap.cut_joined): the facts they complete fill only what the line alone did
    # not state
    maybe_cut = {
        t.first.line - 1: CUT_LINES + 1  # the line as the file has it, and the lines after it
        for t in scan.tallies.values()
        if t.signature.extract and len(t.first.text) >= WRAPPED_AT
    }
    after_cut = read_context(path, maybe_cut, MAX_MATCHED) if maybe_cut and path != "-" else {}

    above = {
        t.first.line: t.signature.context_before
        for t in scan.tallies.values()
        if t.signature.extract and t.signature.context_before > 0
    }
    before = read_before(path, above) if above and path != "-" else {}
    for tally in scan.tallies.values():
        sig = tally.signature
        if not sig.extract:
            continue
        earlier = before.get(tally.first.line)
        if earlier:  # the lines above the first match, as one block ending just before it
            facts += extract(sig, earlier[0][0], "\n".join(text for _, text in earlier))
        facts += extract(sig, tally.first.line, text_of(tally.first))
        if tally.last.line != tally.first.line:
            facts += extract(sig, tally.last.line, text_of(tally.last))
        lines = context.get(tally.first.line)
        if lines:  # the line and its context as one block, for extractors that span lines
            block = "\n".join([tally.first.text, *(text for _, text in lines)])
            facts += extract(sig, tally.first.line, block)
        rest = after_cut.get(tally.first.line - 1)
        if rest and len(rest) > 1:  # a line a terminal may have cut at its width, joined
            known = {f.name for f in facts if f.signature == sig.id}
            joined = cut_joined(rest[0][1], rest[1:])
            facts += [f for f in extract(sig, tally.first.line, joined) if f.name not in known]
    facts += host_facts(scan)
    facts += nccl_host_facts(path, scan)
    return dedupe(facts)


def nccl_host_facts(path: str, scan: ScanResult) -> list[LogFact]:
    """Where the hosts of a multi-node log disagree, read from every host's NCCL start-up
    lines (triage/nccl_hosts.py): one more pass over the log, only where a matched line is one
    of NCCL's (or no line matched: NCCL INFO lines no signature names may be all there is) and
    the log can be read again (not standard input)."""
    if path == "-" or (
        scan.tallies
        and not any(
            "NCCL" in seen.text for t in scan.tallies.values() for seen in (t.first, t.last)
        )
    ):
        return []
    from envcheck.triage import nccl_hosts

    try:
        stream, _ = open_log(path)
    except InputError:
        return []
    try:
        return nccl_hosts.compare(nccl_hosts.read_hosts(stream))
    finally:
        stream.close()


def host_facts(scan: ScanResult) -> list[LogFact]:
    """The hosts that the matched lines' own prefixes name, whatever signature matched them:
    pdsh's host before each line it gathered (``launcher_line_host``) and NCCL's hostname
    before each of its INFO and WARN lines (``nccl_host``). Two hosts in one log say the job's
    ranks ran on several nodes."""
    found: list[LogFact] = []
    for tally in scan.tallies.values():
        for seen in (tally.first, tally.last):
            for name, host in (
                ("launcher_line_host", line_host(seen.text)),
                ("nccl_host", nccl_host(seen.text)),
            ):
                if host:
                    found.append(LogFact(name, host, seen.line, tally.signature.id))
    return found


def read_context(
    path: str, wanted: dict[int, int], limit: int | None = None
) -> dict[int, list[tuple[int, str]]]:
    """The ``wanted[line]`` lines after each wanted line (numbered), read in one pass that stops
    after the last one needed."""
    out: dict[int, list[tuple[int, str]]] = {}
    last = max(line + n for line, n in wanted.items())
    try:
        stream, _ = open_log(path)
    except InputError:
        return out
    try:
        for number, raw in enumerate(stream, 1):
            if number > last:
                break
            for line, n in wanted.items():
                if line < number <= line + n:
                    text = unprefixed_text(
                        plain_text(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
                    )
                    out.setdefault(line, []).append((number, text[: limit or SHOWN_CONTEXT]))
    except (OSError, EOFError, gzip.BadGzipFile):
        pass
    finally:
        stream.close()
    return out


SHOWN_CONTEXT = 1000


def read_before(path: str, wanted: dict[int, int]) -> dict[int, list[tuple[int, str]]]:
    """The ``wanted[line]`` lines before each wanted line (numbered, in file order), read in
    one pass that stops at the last wanted line."""
    out: dict[int, list[tuple[int, str]]] = {}
    last, keep = max(wanted), max(wanted.values())
    window: list[tuple[int, str]] = []
    try:
        stream, _ = open_log(path)
    except InputError:
        return out
    try:
        for number, raw in enumerate(stream, 1):
            if number > last:
                break
            if number in wanted:
                out[number] = window[len(window) - min(wanted[number], len(window)) :]
            text = unprefixed_text(plain_text(raw.decode("utf-8", errors="replace").rstrip("\r\n")))
            window = (
                [*window[1 - keep :], (number, text[:SHOWN_CONTEXT])]
                if keep > 1
                else [(number, text[:SHOWN_CONTEXT])]
            )
    except (OSError, EOFError, gzip.BadGzipFile):
        pass
    finally:
        stream.close()
    return out


def judge(
    name: str,
    scan: ScanResult,
    matrix: Matrix,
    rules: list[Rule],
    node: NodeReport | None,
    node_note: str,
    facts: tuple[LogFact, ...] = (),
    pasted: NodeReport | None = None,
) -> TriageResult:
    """Check each matched signature's causes on ``node`` (the log's own facts merged in, the
    log first: ``pasted``, an environment block pasted in the log, then the lines' facts) or,
    with no node, on the log's facts alone."""
    from envcheck.triage.extract import to_report

    tallies = scan.ordered()
    codes = [c for t in tallies for c in t.signature.causes]

    stated: dict[str, str] = {}
    for fact in facts:  # the earliest line's value of each fact
        stated.setdefault(fact.name, fact.value)
    # NCCL's lines from several hosts: the ranks ran on several nodes
    hosts = dict.fromkeys(f.value for f in facts if f.name == "nccl_host")
    if len(hosts) > 1:
        stated["nccl_hosts"] = ",".join(hosts)
    # lines pdsh gathered from several hosts (DeepSpeed's multi-node launcher)
    gathered = dict.fromkeys(f.value for f in facts if f.name == "launcher_line_host")
    if len(gathered) > 1:
        stated["launcher_line_hosts"] = ",".join(gathered)
    # nccl-tests' device table naming several hosts
    tested = dict.fromkeys(f.value for f in facts if f.name == "nccl_tests_host")
    if len(tested) > 1:
        stated["nccl_tests_hosts"] = ",".join(tested)
    # every address NCCL's INFO lines say this node's ranks use (a peer at none of them is a rank
    # on another node)
    addresses = dict.fromkeys(f.value for f in facts if f.name == "nccl_own_address")
    if addresses:
        stated["nccl_own_addresses"] = ",".join(addresses)
    confirmed: dict[str, int | LogLine] = {}
    for t in reversed(tallies):  # the earliest line wins
        seen = witness(t)
        # the facts of the witness line itself first, then the log's earliest of each other
        own = {f.name: f.value for f in reversed(facts) if f.line == seen.line}
        confirmed.update(
            {
                c: LogLine(t.signature.id, seen.line, seen.text, {**stated, **own})
                for c in t.signature.confirms
            }
        )
    # causes a line's stated facts may decide, where no line confirms them outright (the
    # earliest such line): NCCL's generic error in a log that says the ranks span nodes. A line
    # the program logged as information (NCCL's INFO that it uses docker0) confirms nothing
    # outright: a failure line that decides the same cause is read instead, with its facts
    outright = {
        c for t in tallies if not informational(witness(t).text) for c in t.signature.confirms
    }
    # a failure line that decides a cause is read before a line logged as information that
    # decides it too (NCCL's INFO 'Call to connect returned Connection refused, retrying' above
    # its WARN and the error it returns): the information line alone leaves the cause open
    by_failure = {
        c for t in tallies if not informational(witness(t).text) for c in t.signature.decides
    }
    for t in reversed(tallies):
        seen = witness(t)
        info = informational(seen.text)
        own = {f.name: f.value for f in reversed(facts) if f.line == seen.line}
        confirmed.update(
            {
                c: LogLine(t.signature.id, seen.line, seen.text, {**stated, **own})
                for c in t.signature.decides
                if c not in outright and not (info and c in by_failure)
            }
        )
    # causes some failure line (not only a line the program logged as information) establishes
    witnessed = {
        c
        for t in tallies
        if not informational(t.first.text)
        for c in (*t.signature.confirms, *t.signature.decides)
        if c in t.signature.confirms or _decided_by(confirmed.get(c), t)
    }
    from_log = to_report(facts, name)
    # what the log states first, then the node given; of the log, an environment pasted in it
    # first (it lists every GPU and package, where a line names one), then its lines' facts
    described = [r for r in (pasted, from_log) if r is not None]
    checked = node
    if described:
        said = "the facts the log states" + (
            f" (and the {pasted.origin.detail})"
            if pasted is not None and pasted.origin.detail
            else ""
        )
        if node is None and len(described) == 1:
            checked = described[0]
        else:
            from envcheck.ingest.merge import merge

            checked = merge([*described, *([node] if node is not None else [])])
        if node is None and node_note.startswith("not checked: no known signature"):
            node_note = f"checked against {said}"  # for what the environment shows
        elif node is None:
            node_note = f"checked against {said} ({node_note})"
        else:
            node_note += f" and {said} (the log wins where they differ)"
    checks = check_causes(codes, rules, matrix, checked, node_note, confirmed)
    matches = tuple(
        Match(
            t,
            likely_first(
                tuple(
                    _as_witnessed(checks[c], t, confirmed, witnessed, rules)
                    for c in t.signature.causes
                    if c in checks
                )
                + tuple(
                    b
                    for b in binary_causes(t.first.text, checked, matrix, rules)
                    if b.code not in t.signature.causes
                )
            ),
        )
        for t in tallies
    )
    across = nccl_hosts_match(facts, stated, rules, matrix, checked, node_note)
    if across is not None:
        matches += (across,)
    if checked is not None and environment.stated(node, pasted):
        named = {c.code for m in matches for c in m.causes}
        shown, causes = environment.environment_causes(checked, rules, matrix, node_note, named)
        if causes:
            given = [r.origin.detail or r.node for r in (node, pasted) if r is not None]
            where = " and ".join(given) or checked.origin.detail or checked.node
            besides = any(not m.noise for m in matches)
            matches += (Match(environment.tally(shown, where, besides), causes),)
    return TriageResult(name, scan, matches, checked, node_note, facts)


def nccl_hosts_match(
    facts: tuple[LogFact, ...],
    stated: dict[str, str],
    rules: list[Rule],
    matrix: Matrix,
    checked: NodeReport | None,
    note: str,
) -> Match | None:
    """One more match where the hosts' NCCL start-up lines disagree (nccl_hosts.compare's
    facts): its causes, confirmed by those facts, are NET121 (NCCL releases), NET171 (network
    transport or plugin) and NET172 (a bootstrap address that is no node's own)."""
    from envcheck.triage import nccl_hosts

    said = {f.name: f for f in facts if f.signature == nccl_hosts.SIGNATURE_ID}
    codes = tuple(
        code
        for code, names in (
            ("NET121", ("nccl_hosts_versions", "nccl_hosts_settings")),
            ("NET171", ("nccl_hosts_networks", "nccl_hosts_plugins")),
            ("NET172", ("nccl_hosts_bootstrap",)),
        )
        if any(n in said for n in names)
    )
    if not codes:
        return None
    line = min(f.line for f in said.values())
    text = nccl_hosts.summary({n: f.value for n, f in said.items()})
    known = {**stated, **{n: f.value for n, f in said.items()}}
    confirmed: dict[str, int | LogLine] = {
        c: LogLine(nccl_hosts.SIGNATURE_ID, line, text, known) for c in codes
    }
    checks = check_causes(codes, rules, matrix, checked, note, confirmed)
    tally = Tally(nccl_hosts.signature(codes), 1, Occurrence(line, text))
    return Match(tally, tuple(checks[c] for c in codes if c in checks))


_VERDICT_RANK = {"confirmed": 0, "unknown": 1, "unchecked": 1, "ruled_out": 2}


def likely_first(causes: tuple[CauseCheck, ...]) -> tuple[CauseCheck, ...]:
    """A line's causes as they are printed, "most likely first": those the facts confirm, then
    those they leave open, then those they rule out; within each, the signature's own order
    (a native crash lists its generic causes before the cuBLAS build the log's facts confirm)."""
    return tuple(sorted(causes, key=lambda c: _VERDICT_RANK.get(c.verdict, 1)))


def _decided_by(line: int | LogLine | None, tally: Tally) -> bool:
    """Whether ``tally``'s own line is the one that decides a cause (not another signature's)."""
    return isinstance(line, LogLine) and line.signature == tally.signature.id


def informational(text: str) -> bool:
    """Whether the program logged this line as information, not as a failure (``NCCL INFO
    Bootstrap : Using docker0:...``): it names a cause for itself, but is no witness of why
    another line failed."""
    return bool(INFORMATIONAL.search(text))


def _as_witnessed(
    check: CauseCheck,
    tally: Tally,
    confirmed: dict[str, int | LogLine],
    witnessed: set[str],
    rules: list[Rule],
) -> CauseCheck:
    """A cause of ``tally``'s line as that line shows it. A cause that only another line
    logged as information establishes (NCCL's INFO that it uses docker0, harmless on one node)
    stays open beside this failure's other causes instead of displacing them; the
    informational line's own match keeps it confirmed."""
    line = confirmed.get(check.code)
    if (
        check.verdict != "confirmed"
        or not isinstance(line, LogLine)
        or check.code in witnessed
        or check.code in tally.signature.confirms
        or check.evidence != f"confirmed from line {line.line}"
    ):
        return check
    from envcheck.triage.verdict import conditional_fix

    rule = next((r for r in rules if r.code == check.code), None)
    if rule is None:
        return check
    why = (
        f"line {line.line} ({line.signature}) names it, but the program logged that line as "
        "information; nothing in the log ties it to this failure"
    )
    return CauseCheck(check.code, check.title, "unknown", why, fix=conditional_fix(rule))


# a line that raised: Python's 'ImportError: ...', 'ray.exceptions.RayTaskError(ImportError): ...'
_RAISED = re.compile(
    r"(?:^|[\s:\]|])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)(?:\([\w.]*\))?: "
)


def witness(tally: Tally) -> Occurrence:
    """The occurrence of a signature's line that decides its causes: the first, unless only the
    last is an exception the program raised (the first a warning or a handled attempt before
    it: NCCL's WARN that it could not open libcuda.so, then the ImportError that stopped the
    program on another library)."""
    first, last = tally.first, tally.last
    if last.line != first.line and _RAISED.search(last.text) and not _RAISED.search(first.text):
        return last
    return first
