"""Logs in the encodings Windows tools write, read as the UTF-8, LF-ended bytes every signature
is written for: UTF-16 (Windows PowerShell's ``>`` and ``Out-File``, with or without a byte
order mark) and CRLF line ends (``cmd``, PowerShell 7, editors and log exports on Windows).

A log is sniffed from its first bytes; only a log that needs it is transcoded (a UTF-8, LF log
is scanned as it is, by grep reading the file directly). A CRLF line keeps its text and its line
number: only the ``\\r`` before each ``\\n`` goes, so an anchored pattern (``Killed *$``) matches
it as it matches the same line written on Linux.
"""

from __future__ import annotations

import codecs
import io
import sys
from typing import BinaryIO

SNIFF = 64 * 1024  # bytes looked at to decide
_CHUNK = 4 * 1024 * 1024
_SAMPLE = 4096  # bytes the NUL-pattern test of BOM-less UTF-16 looks at


def utf16_codec(head: bytes) -> str | None:
    """The UTF-16 codec a log starting with ``head`` is written in, or None (UTF-8/ASCII).
    A byte order mark decides; without one, text whose every other byte is NUL (ASCII written
    as UTF-16) is UTF-16 of that byte order."""
    if head.startswith(b"\xff\xfe"):
        return "utf-16"  # the codec reads (and drops) the mark
    if head.startswith(b"\xfe\xff"):
        return "utf-16"
    sample = head[:_SAMPLE]
    if len(sample) < 16:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


def needs_transcoding(head: bytes) -> tuple[str | None, bool]:
    """(the UTF-16 codec or None, whether lines end in CRLF), from a log's first bytes."""
    codec = utf16_codec(head)
    if codec is not None:
        text = head.decode(codec, errors="replace")
        return codec, "\r\n" in text
    return None, b"\r\n" in head


def normalize(data: bytes) -> bytes:
    """``data`` (a whole log held in memory) as UTF-8 with LF line ends."""
    codec, crlf = needs_transcoding(data[:SNIFF])
    if codec is not None:
        data = data.decode(codec, errors="replace").encode("utf-8")
    return data.replace(b"\r\n", b"\n") if crlf else data


class _Transcoded(io.RawIOBase):
    """A log stream decoded from UTF-16 and/or with CRLF turned into LF, as it is read."""

    def __init__(self, inner: BinaryIO, codec: str | None, crlf: bool) -> None:
        super().__init__()
        self._inner = inner
        self._decoder = codecs.getincrementaldecoder(codec)("replace") if codec else None
        self._crlf = crlf
        self._pending = b""
        self._at = 0
        self._held_cr = False  # a chunk ended in \r: it may be the first half of \r\n
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
            self._pending, self._at = self._lf(data, final=self._eof), 0

    def _lf(self, data: bytes, *, final: bool) -> bytes:
        if not self._crlf:
            return data
        if self._held_cr:
            data, self._held_cr = b"\r" + data, False
        if not final and data.endswith(b"\r"):
            data, self._held_cr = data[:-1], True
        return data.replace(b"\r\n", b"\n")

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
    """``stream`` itself when its first bytes ``head`` are UTF-8 with LF line ends, else a
    stream of the same log as UTF-8 with LF line ends (lines and line numbers unchanged)."""
    codec, crlf = needs_transcoding(head)
    if codec is None and not crlf:
        return stream
    return io.BufferedReader(_Transcoded(stream, codec, crlf), buffer_size=_CHUNK)
