"""``triage``: what a log's error lines mean, and which causes a node confirms or rules out."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from envcheck.errors import InputError
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.matrix.model import Matrix
    from envcheck.triage.run import TriageResult
    from envcheck.triage.scan import Engine, ScanResult

# the node to check causes on, asked for only when the log shows a known failure:
# (the node or None, a sentence saying where its facts come from or why there are none)
NodeProvider = Callable[[], "tuple[NodeReport | None, str]"]


@dataclass(frozen=True)
class TriageOptions:
    engine: Engine = "auto"
    matrix: tuple[str, ...] = ()  # overlay directories merged over the built-in one


def _finish(
    name: str,
    scan: ScanResult,
    matrix: Matrix,
    node: NodeProvider | None,
    log: str,
    text: str | None = None,
    stated: NodeProvider | None = None,
) -> TriageResult:
    """Judge the matched signatures: the node's facts (asked for only when the log shows a
    known failure), the log's own facts (``log``: the file to re-read context lines from,
    '-' when there is none) and an environment pasted in the log (read from ``text``, the log
    held in memory, or from the file's head). When no line is a known failure, ``stated`` gives
    the node the user's inputs describe (``--from``, ``--spec``, ``--report``; never this
    machine probed), whose facts the node rules then read (triage/environment.py)."""
    from envcheck.rules import all_rules
    from envcheck.triage.pasted import pasted_environment, read_head
    from envcheck.triage.run import judge, log_facts

    report: NodeReport | None = None
    note = "not checked: no known signature matched"
    if any(not t.signature.noise for t in scan.tallies.values()):
        report, note = node() if node is not None else (None, "not checked: no node given")
    elif stated is not None:  # no failure line: what the user's inputs describe, if anything
        given, said = stated()
        if given is not None:
            report, note = given, said
    facts = log_facts(log, scan)
    # an environment pasted in the log: for the causes of its failure lines, or (none matched)
    # for what it shows itself (triage/environment.py)
    head = text if text is not None else read_head(log)
    pasted = pasted_environment(head, name) if head else None
    return judge(name, scan, matrix, all_rules(matrix), report, note, facts, pasted)


def _matrix(options: TriageOptions) -> Matrix:
    from envcheck.matrix_validate import load
    from envcheck.settings import find_settings

    return load([*find_settings().matrix, *options.matrix])


def triage_log(
    log: str,
    options: TriageOptions | None = None,
    node: NodeProvider | None = None,
    stated: NodeProvider | None = None,
) -> TriageResult:
    """Scan the log file ``log`` ('-': standard input; gzip is decompressed)."""
    from envcheck.triage.run import scan_log

    options = options or TriageOptions()
    matrix = _matrix(options)
    from envcheck.triage.pasted import HEAD

    head = bytearray() if log == "-" else None  # stdin is read once: its head is kept
    name, scan = scan_log(log, matrix, options.engine, head, HEAD)
    text = head.decode("utf-8", errors="replace") if head else None
    return _finish(name, scan, matrix, node, log, text, stated)


def triage_text(
    text: str | bytes,
    options: TriageOptions | None = None,
    node: NodeProvider | None = None,
    name: str = "<text>",
    stated: NodeProvider | None = None,
) -> TriageResult:
    """Scan log text held in memory (the Python engines; grep reads files); UTF-16 and CRLF
    line ends are read as UTF-8 and LF (envcheck.triage.encoding)."""
    from envcheck.triage.pasted import HEAD
    from envcheck.triage.scan import UNWRAP_LIMIT, Scanner

    options = options or TriageOptions()
    matrix = _matrix(options)
    if not matrix.signatures:
        raise InputError("the matrix has no [[signature]] entries to look for")
    from envcheck.triage.encoding import normalize

    data = normalize(text.encode("utf-8") if isinstance(text, str) else text)
    engine = "auto" if options.engine in ("auto", "grep") else options.engine
    try:
        scanner = Scanner(matrix.signatures, engine)
    except (ValueError, RuntimeError) as exc:
        raise InputError(f"{exc} (see `envcheck matrix validate`)") from None
    # the text is not a file: each signature's extractors read its matched lines only
    head = data[:HEAD].decode("utf-8", errors="replace")
    scan = scanner.scan(io.BytesIO(data))
    if len(data) <= UNWRAP_LIMIT:
        scanner.unwrap(data, scan)
    return _finish(name, scan, matrix, node, "-", head, stated)
