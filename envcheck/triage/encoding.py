"""Logs in the encodings Windows tools write, read as the UTF-8, LF-ended bytes every signature
is written for: UTF-16 (Windows PowerShell's ``>`` and ``Out-File``, with or without a byte
order mark) and CRLF line ends (``cmd``, PowerShell 7, editors and log exports on Windows); and
terminal colour codes (ANSI escape sequences: a coloured ``Killed`` or ``MemoryError`` written
through ``script`` or a CI runner) removed, as they are from the lines triage shows.

A log is sniffed from its first bytes; only a log that needs it is transcoded (a UTF-8, LF log
is scanned as it is, by grep reading the file directly). A CRLF line keeps its text and its line
number: only the ``\\r`` before each ``\\n`` goes, so an anchored pattern (``Killed *$``) matches
it as it matches the same line written on Linux.
"""

from __future__ import annotations

import codecs
import io
import re
import sys
from typing import BinaryIO

from envcheck.inputs import utf16_codec  # one sniffing for logs and --from texts

SNIFF = 64 * 1024  # bytes looked at to decide
_CHUNK = 4 * 1024 * 1024
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
_ANSI_LONGEST = 32  # an escape sequence cut by a read is held back at most this many bytes


def needs_transcoding(head: bytes) -> tuple[str | None, bool]:
    """(the UTF-16 codec or None, whether lines end in CRLF), from a log's first bytes."""
    codec = utf16_codec(head)
    if codec is not None:
        text = head.decode(codec, errors="replace")
        return codec, "\r\n" in text
    return None, b"\r\n" in head


def _coloured(head: bytes, codec: str | None) -> bool:
    """Whether the log's first bytes hold a terminal colour code (an ANSI escape sequence)."""
    text = head.decode(codec, errors="replace").encode() if codec is not None else head
    return _ANSI.search(text) is not None


def normalize(data: bytes) -> bytes:
    """``data`` (a whole log held in memory) as UTF-8 with LF line ends, colour codes removed."""
    codec, crlf = needs_transcoding(data[:SNIFF])
    if codec is not None:
        data = data.decode(codec, errors="replace").encode("utf-8")
    if crlf:
        data = data.replace(b"\r\n", b"\n")
    return _ANSI.sub(b"", data) if b"\x1b[" in data else data


class _Transcoded(io.RawIOBase):
    """A log stream decoded from UTF-16, with CRLF turned into LF and colour codes removed, as it
    is read."""

    def __init__(self, inner: BinaryIO, codec: str | None, crlf: bool, ansi: bool) -> None:
        super().__init__()
        self._inner = inner
        self._decoder = codecs.getincrementaldecoder(codec)("replace") if codec else None
        self._crlf = crlf
        self._ansi = ansi
        self._pending = b""
        self._at = 0
        self._held = b""  # the end of the last read that may continue in the next one
        self._eof = False

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        while self._at >= len(self._pending) and not self._eof:
            block = self._inner.read(_CHUNK)
            if not block:
                self._eof = True
                data = self._decoder.decode(b"", final=True).encode() if self._decoder else b""
            else:
                data = self._decoder.decode(block).encode() if self._decoder else block
            self._pending, self._at = self._clean(data, final=self._eof), 0

    def _clean(self, data: bytes, *, final: bool) -> bytes:
        data, self._held = self._held + data, b""
        if not final:
            # hold back what a later read may complete: a \r before its \n, an escape sequence
            cut = len(data)
            if self._crlf and data.endswith(b"\r"):
                cut -= 1
            if self._ansi:
                esc = data.rfind(b"\x1b", max(0, cut - _ANSI_LONGEST), cut)
                if esc != -1 and _ANSI.match(data, esc, cut) is None:
                    cut = esc
            data, self._held = data[:cut], data[cut:]
        if self._crlf:
            data = data.replace(b"\r\n", b"\n")
        return _ANSI.sub(b"", data) if self._ansi else data

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        self._fill()
        n = min(len(buffer), len(self._pending) - self._at)
        buffer[:n] = self._pending[self._at : self._at + n]
        self._at += n
        return n

    def close(self) -> None:
        if not self.closed and self._inner is not sys.stdin.buffer:
            self._inner.close()
        super().close()


def transcoded(stream: BinaryIO, head: bytes) -> BinaryIO:
    """``stream`` itself when its first bytes ``head`` are UTF-8 with LF line ends and no colour
    codes, else a stream of the same log as UTF-8 with LF line ends and no colour codes (lines
    and line numbers unchanged)."""
    codec, crlf = needs_transcoding(head)
    ansi = _coloured(head, codec)
    if codec is None and not crlf and not ansi:
        return stream
    return io.BufferedReader(_Transcoded(stream, codec, crlf, ansi), buffer_size=_CHUNK)
