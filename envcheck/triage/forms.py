"""The forms a log's text takes on its way to us, read back as the plain text every signature is
written for: an HTML page's source (``&#39;``, ``&quot;``, ``&nbsp;``), a word processor's or
chat client's typographic quotes and spaces (‘ ’ “ ” U+00A0, zero-width characters), a CJK input
method's full-width punctuation (＂ （ ） ：), terminal colour codes, a JSON string or Python
repr holding the lines (``\\n``, ``\\'``, ``\\u001b``), a Markdown quote (``> ``).

Only a line that shows such a form is rewritten (``MARKER`` finds them: grep selects those
lines beside the signatures' ones, in the same pass), so a plain log costs nothing more; the
line keeps its number in the user's file (a JSON or repr line that holds many lines gives each
of them that number).
"""

from __future__ import annotations

import ast
import html
import json
import re
from typing import Any

# lines that may hold a form to undo, as one POSIX ERE over bytes (grep -E, LC_ALL=C) that
# Python's re reads alike: an HTML entity; UTF-8 of U+00A0/U+00AD, U+2000-U+206F (spaces,
# zero-width characters, typographic quotes and dashes), U+3000, U+FEFF, the full-width forms
# U+FF01-U+FF5E; an escape sequence; a JSON or repr escape; a carriage return; a Markdown quote
MARKER = (
    b"&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);"
    b"|\xc2[\xa0\xad]|\xe2\x80[\x80-\xbf]|\xe2\x81[\x80-\xaf]|\xe3\x80\x80|\xef\xbb\xbf"
    b"|\xef\xbc[\x81-\xbf]|\xef\xbd[\x80-\x9e]"
    b"|\x1b\\[|\\\\[nrt'\"u]|\r|^ {0,3}>"
)
_MARKER = re.compile(MARKER)
# literals one of which every MARKER match holds (the Python engines' prefilter)
MARKER_LITERALS = (
    b"&",
    b"\xc2\xa0",
    b"\xc2\xad",
    b"\xe2\x80",
    b"\xe2\x81",
    b"\xe3\x80\x80",
    b"\xef\xbb\xbf",
    b"\xef\xbc",
    b"\xef\xbd",
    b"\x1b[",
    b"\\",
    b"\r",
    b">",
)

_SPACES = (
    "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
_TABLE: dict[int, str | None] = {
    **{ord(c): " " for c in _SPACES},
    **dict.fromkeys(map(ord, _INVISIBLE)),
    **{ord(c): "'" for c in "\u2018\u2019\u201a\u201b\u2032\u2035"},
    **{ord(c): '"' for c in "\u201c\u201d\u201e\u201f\u2033\u2036"},
    **{ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
    0x2026: "...",
    0x2028: " ",
    0x2029: " ",
    # the full-width forms of ASCII (U+FF01-U+FF5E) are ASCII shifted by 0xFEE0
    **{c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)},
}
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# a JSON string's or a Python repr's escapes; ``\n`` splits lines
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([nrt\"'\\/]))")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\", "/": "/"}
# a line a JSON string or repr holds many of: two escaped line ends, or one at a string's end
# (a Windows path's "\\new\\nvidia" is none: an escaped line end is followed by a space, a
# quote, a capital, another escape or the line's end)
_LINE_END = r"\\n(?=[\s'\"A-Z\\]|$)"
_ESCAPED_LINES = re.compile(rf"{_LINE_END}.*{_LINE_END}|\\n\s*['\"]")
_QUOTE = re.compile(r"^(?: {0,3}>)+ ?")


def needs_reading(line: bytes) -> bool:
    """Whether ``line`` shows a form this module undoes."""
    return _MARKER.search(line) is not None


def _unescape(match: re.Match[str]) -> str:
    code, byte, simple = match.groups()
    if code is not None:
        return chr(int(code, 16))
    if byte is not None:
        return chr(int(byte, 16))
    return _SIMPLE[simple]


def _strings(value: Any) -> list[str]:
    """The strings a parsed JSON value or Python literal holds, in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _literal(text: str) -> list[str] | None:
    """The strings of a line that is one JSON value or Python literal (a docker json-file
    line, ``print(traceback.format_exception(...))``), or None. ``ast.literal_eval`` reads
    literals only: nothing in the log is run."""
    try:
        return _strings(json.loads(text))
    except (ValueError, RecursionError):
        pass
    try:
        return _strings(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def plain_lines(line: bytes) -> list[bytes]:
    """``line`` read back as plain text: one line, or the lines a JSON string or repr on it
    holds (each stripped of the JSON or repr around it)."""
    text = line.decode("utf-8", errors="replace")
    stripped = text.strip()
    strings = _literal(stripped) if stripped[:1] in "{[(\"'" and "\\" in stripped else None
    if strings is not None:
        text = "\n".join(strings)
    elif _ESCAPED_LINES.search(text):
        text = _ESCAPE.sub(_unescape, text)
    elif "\\'" in text or '\\"' in text:  # one quoted message: `'cannot import name \'X\''`
        text = text.replace("\\'", "'").replace('\\"', '"')
    if "&" in text and ";" in text:
        # twice: a paste escaped again (&amp;#39;); &nbsp; becomes U+00A0, mapped below
        text = html.unescape(html.unescape(text)) if "&amp;" in text else html.unescape(text)
    text = text.translate(_TABLE)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    out = []
    for piece in text.replace("\r\n", "\n").split("\n"):
        plain = piece
        if "\r" in plain:  # a line end, or a progress bar's rewrites: the last one shows
            plain = plain.rstrip("\r").rsplit("\r", 1)[-1]
        if plain.lstrip().startswith(">"):
            plain = _QUOTE.sub("", plain)
        out.append(plain.encode("utf-8"))
    return out


def plain_text(text: str) -> str:
    """A line of text (a context line extractors read) in its plain form, on one line."""
    raw = text.encode("utf-8", errors="replace")
    if not needs_reading(raw):
        return text
    return " ".join(p.decode("utf-8", errors="replace") for p in plain_lines(raw) if p.strip())
