"""A log copied from a terminal that cut every line at its width (tmux or screen scrollback, a
Windows console's selection, a fixed-width CI viewer): the message a signature is written for,
and the versions and paths its extractors read, run on over the cut. Such a log is read again
with its cut lines joined back, for the whole messages (Scanner.unwrap joins a generic or
unnamed line to a neighbour; this joins every cut line, named or not, and only in a log that
shows the cut).

A log shows the cut when its longest lines all have one length, a terminal's width, and several
different lines have it: a log nobody cut has a single longest line or a few of about the same
length. Lengths are counted in characters (a wide CJK character takes two columns, so a line
holding one is not recognised as cut: it is left as it is).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import AnyStr

# the widths a terminal's line is cut at where the log shows no width of its own: the VT100's
# two (80 and 132 columns; xterm opens at 80) and the Windows console's default buffer (120)
TERMINAL_WIDTHS = frozenset((80, 120, 132))
# a line that starts a record of its own rather than going on with the one above: a
# traceback, an exception's name, a logger's level word, a 'host:pid:' or 'file:line:' prefix
# (NCCL's 'node08:27106:27302 [0] ...', a compiler's 'x.cu:12: error')
_RECORD = re.compile(
    r"\s*(?:Traceback \(|File \"|[\w.]*(?:Error|Exception|Warning)\b"
    r"|(?:DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b|[^\s:]+:[0-9]+[:\s])"
)
# a sentence's end, then a capital: the next line is a sentence of its own
_SENTENCE_END = re.compile(r"[.!?:;)\]]$")
_SAME = 8  # first characters two lines of one logger share (a host, a time, a level)
MIN_CUT = 3  # different lines of exactly the width, at least
NEAR = 3  # lines this much shorter than the width: a cut log has few of them


def terminal_width(lines: list[str]) -> int | None:
    """The width ``lines`` were cut at, or None when they show no cut."""
    if not lines:
        return None
    width = max(len(line) for line in lines)
    if width not in TERMINAL_WIDTHS:  # a table's rows (conda list) share a width of their own
        return None
    at_width = {line for i, line in enumerate(lines[:-1]) if len(line) == width and lines[i + 1]}
    if len(at_width) < MIN_CUT:
        return None
    near = Counter(len(line) for line in lines if width - NEAR <= len(line) < width)
    return width if sum(near.values()) * 2 < len(at_width) else None


def rejoined(data: bytes) -> tuple[bytes, list[int]] | None:
    """``data`` with the lines a terminal cut joined back, and the number (1-based) of the first
    physical line of each joined line; None when the log shows no cut."""
    text = data.decode("utf-8", errors="replace")
    lines = [line.rstrip("\r") for line in text.split("\n")]
    width = terminal_width(lines)
    if width is None:
        return None
    out: list[str] = []
    starts: list[int] = []
    current: list[str] = []
    for number, line in enumerate(lines, 1):
        if not current:
            starts.append(number)
        current.append(line)
        if len(line) != width:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return "\n".join(out).encode("utf-8"), starts


CUT_LINES = 2  # lines after a matched line read for the rest of a cut message


def looks_cut(line: str, after: str) -> bool:
    """Whether ``line`` may be a terminal's cut with ``after`` its rest: it is exactly as long
    as a terminal is wide, and ``after`` is not empty and starts no record of its own (a
    traceback, an exception's name, a logger's level, the same first characters as ``line``:
    the next line of one logger; a capital after a sentence's end)."""
    return (
        len(line) in TERMINAL_WIDTHS
        and bool(after.strip())
        and not _RECORD.match(after)
        and after[:_SAME] != line[:_SAME]
        and not (_SENTENCE_END.search(line) and after[:1].isupper())
    )


def cut_joined(line: str, after: list[tuple[int, str]]) -> str:
    """``line`` joined to the lines ``after`` it that continue it: where a terminal cut it
    (``looks_cut``: joined as it was), or where an editor wrapped it (``wrapped``: joined with
    a space); the lines after those kept as lines (a message the program itself spread over
    lines)."""
    out = line
    previous = line
    rest = [text for _, text in after]
    while rest:
        if looks_cut(previous, rest[0]):
            sep = ""
        elif wrapped(previous, rest[0]):
            sep = " "
        else:
            break
        previous = rest.pop(0)
        out += sep + previous.strip()
    return "\n".join([out, *rest])


WRAPPED_AT = 30  # characters a line cut by a hard wrap has at least (editors wrap at 72-80)
# the narrowest wrap width taken for an editor's (72: Emacs' and git's; 80 and 76 elsewhere): a
# shorter line was wrapped too where the next line's first word would not have fitted beside
# it (an exception's name alone above a long path or a mangled symbol)
WRAP_WIDTH = 72
# a line that starts a message of its own, not the rest of the line above (the scanner reads
# it over bytes)
MESSAGE_START = r"^\s*(?:Traceback|File \"|[\w.]*(?:Error|Exception|Warning)\b|\[|\(|\d)"
_STARTS = re.compile(MESSAGE_START)


def full(line: AnyStr, after: AnyStr) -> bool:
    """Whether a word wrap may have ended ``line`` before ``after``: ``line`` is at least
    WRAPPED_AT characters long, or ``after``'s first word would not have fitted beside it in
    WRAP_WIDTH columns."""
    if len(line.strip()) >= WRAPPED_AT:
        return True
    first = after.split(maxsplit=1)
    return bool(first) and len(line.rstrip()) + 1 + len(first[0]) > WRAP_WIDTH


def wrapped(line: str, after: str) -> bool:
    """Whether ``after`` may be the rest of ``line`` that an editor, a mail client or a
    console's word wrap put on the next line: ``line`` is full (``full``), ``after`` neither
    empty, nor indented as code, nor a message of its own."""
    return (
        full(line, after)
        and bool(after.strip())
        and not after.startswith(("  ", "\t"))
        and not _STARTS.match(after)
        and not _RECORD.match(after)
    )


def continues(line: str, after: str) -> bool:
    """Whether ``after`` goes on with the sentence ``line`` left unfinished (``wrapped``, the
    line ending in no sentence's end and the next going on in lower case or with a number)."""
    return (
        wrapped(line, after)
        and not _SENTENCE_END.search(line.rstrip())
        and (after[:1].islower() or after[:1].isdigit())
    )


def moved_down(above: str, line: str) -> bool:
    """Whether ``line`` may be the end of ``above``'s message that a word wrap moved down:
    ``line`` goes on in lower case (no record, no indentation of its own) and its first word
    would not have fitted beside ``above`` in WRAP_WIDTH columns (a library's path above
    'undefined symbol: ...')."""
    first = line.split(maxsplit=1)
    return (
        bool(first)
        and bool(above.strip())
        and line[:1].islower()
        and not _RECORD.match(line)
        and not _PROGRAM.match(line)
        and not _PROMPT.match(above)
        and len(above.rstrip()) + 1 + len(first[0]) > WRAP_WIDTH
    )


# a shared library's path ending a line with the colon its loader's message goes on after
# ('ImportError: /x/ext.cpython-312-x86_64-linux-gnu.so:' above an indented 'undefined symbol: ...')
_PATH_THEN_COLON = re.compile(r"\S+\.(?:so(?:\.[0-9]+)*|dylib|pyd|dll):$")


def split_after_path(above: str, line: str) -> bool:
    """Whether ``line`` is the rest of a loader's message that its writer put, indented, on the
    line below the library's path (``above`` ends with the path and its colon): the path
    belongs to the message below (ai-dynamo/nixl#1798's
    ``.../nixl_ep_cpp...so:`` then ``  undefined symbol: _ZN3c10...``)."""
    rest = line.strip()
    return (
        bool(rest)
        and rest[:1].islower()
        and line[:1].isspace()
        and _PATH_THEN_COLON.search(above.rstrip()) is not None
    )


# a line that names the program it comes from ('docker: Error response ...', 'ls: cannot
# access'): a record of its own; a shell's or Python's prompt above: a command, not a message
_PROGRAM = re.compile(r"[\w.-]+: ")
_PROMPT = re.compile(r"\s*(?:[$#%]|>>>) ")
