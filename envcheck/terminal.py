"""Terminal control sequences taken out of text that came from data.

A package's METADATA, a saved report, a pasted dump or a log line may hold escape sequences: an
OSC 52 clipboard write, an OSC 8 hyperlink, a window-title change, cursor movement (CSI) or a
DCS string. Printed raw, they act on the reader's terminal. ``strip_controls`` removes every
ESC sequence (CSI, OSC, DCS/SOS/PM/APC strings, two-character escapes), the C1 controls
(U+0080-U+009F, which some terminals read as ESC + a letter) and the C0 controls except
newline and tab; a carriage return that is not part of CRLF is dropped too (it would let a
line overwrite what was printed before it on the same row). ``keep_sgr`` keeps colour and
style sequences (``ESC [ ... m``), which is how rich's own styling survives on a terminal.

Linear in the text's length: one regular expression without nested repetition.
"""

from __future__ import annotations

import os
import re
import sys

from envcheck.patterns import lazy

# ESC [ params intermediates final | ESC ] ... (BEL | ESC \) | ESC P/X/^/_ ... ESC \ | ESC + one
# character | 8-bit CSI/OSC/DCS forms. A string sequence left open runs to the end of the text.
_SEQUENCE = lazy(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
_CONTROL = lazy(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_SGR = lazy(r"\x1b\[[0-9;:]*m")
_FAST = lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str, *, keep_sgr: bool = False) -> str:
    """``text`` without terminal control sequences (see the module's docstring)."""
    if not _FAST.search(text):
        return text

    def sequence(match: re.Match[str]) -> str:
        found = match.group(0)
        return found if keep_sgr and _SGR.fullmatch(found) else ""

    text = _SEQUENCE.sub(sequence, text)
    if keep_sgr:
        parts = _SGR.split(text)
        sgrs = _SGR.findall(text)
        out = [_CONTROL.sub("", parts[0])]
        for sgr, part in zip(sgrs, parts[1:], strict=True):
            out.append(sgr)
            out.append(_CONTROL.sub("", part))
        return "".join(out)
    return _CONTROL.sub("", text)


def terminal_size(fallback: tuple[int, int] = (80, 24)) -> os.terminal_size:
    """``shutil.get_terminal_size(fallback)`` (Python 3.10-3.13), without importing shutil:
    it loads the bz2 and lzma modules, about 1% of a whole `check`. ``COLUMNS`` and ``LINES``
    first, then the terminal on standard output, then ``fallback``."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    try:
        lines = int(os.environ["LINES"])
    except (KeyError, ValueError):
        lines = 0
    if columns <= 0 or lines <= 0:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            # standard output is None, closed, detached or not a terminal
            size = os.terminal_size(fallback)
        if columns <= 0:
            columns = size.columns or fallback[0]
        if lines <= 0:
            lines = size.lines or fallback[1]
    return os.terminal_size((columns, lines))
