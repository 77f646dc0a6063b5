"""Logs written on Windows: UTF-16 (Windows PowerShell's ``>``, with or without a byte order
mark, either byte order) and CRLF line ends are scanned as the same log in UTF-8 and LF: the
same signatures, line numbers and extracted facts, whatever the engine, from a file, a .gz or
standard input. A UTF-8, LF log is not transcoded (grep still reads the file itself)."""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.api import triage
from envcheck.triage import encoding
from envcheck.triage.encoding import needs_transcoding, normalize, transcoded, utf16_codec
from tests.conftest import CliResult

LOG = (
    "Epoch 1/3\n"
    "Traceback (most recent call last):\n"
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity)\n"
    "Killed\n"
)


def _matches(cli: Callable[..., CliResult], path: Path, *args: str) -> dict[str, int]:
    result = cli("triage", str(path), "--json", "--no-probe", *args)
    assert result.returncode == 1, result.stderr
    return {m["id"]: m["first"]["line"] for m in result.json()["data"]["matches"]}


@pytest.mark.parametrize(
    "codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-crlf", "utf-16-le-crlf", "utf-8-ansi"]
)
@pytest.mark.parametrize("engine", ["auto", "re"])
def test_windows_logs_match_as_their_utf8_lf_form(
    tmp_path: Path, cli: Callable[..., CliResult], codec: str, engine: str
) -> None:
    plain = tmp_path / "plain.log"
    plain.write_bytes(LOG.encode())
    text = LOG.replace("\n", "\r\n") if codec.endswith("crlf") else LOG
    if codec.endswith("ansi"):  # a coloured terminal: the anchored `Killed *$` too
        text = "".join(f"\x1b[1;31m{line}\x1b[0m\n" for line in LOG.splitlines())
    windows = tmp_path / "windows.log"
    encoded = codec.removesuffix("-crlf").removesuffix("-ansi").removesuffix("utf-8")
    windows.write_bytes(text.encode(encoded or "utf-8"))
    expected = _matches(cli, plain, "--engine", engine)
    assert expected  # the OOM line and the bare Killed
    assert _matches(cli, windows, "--engine", engine) == expected


def test_gzipped_utf16_and_crlf_on_stdin(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    plain = tmp_path / "plain.log"
    plain.write_bytes(LOG.encode())
    packed = tmp_path / "job.log.gz"
    packed.write_bytes(gzip.compress(LOG.replace("\n", "\r\n").encode("utf-16")))
    assert _matches(cli, packed) == _matches(cli, plain)
    result = cli("triage", "-", "--json", "--no-probe", stdin=LOG.replace("\n", "\r\n"))
    assert {m["id"] for m in result.json()["data"]["matches"]} == set(_matches(cli, plain))


def test_sniffing() -> None:
    assert utf16_codec("Killed\n".encode("utf-16")) == "utf-16"
    assert utf16_codec("Traceback (most recent)\n".encode("utf-16-le")) == "utf-16-le"
    assert utf16_codec("Traceback (most recent)\n".encode("utf-16-be")) == "utf-16-be"
    assert utf16_codec(b"Traceback (most recent call last):\n") is None
    assert utf16_codec("Fehler: Speicher voll\u00e4\n".encode()) is None
    assert needs_transcoding(b"a\r\nb\r\n") == (None, True)
    assert needs_transcoding(b"a\nb\n") == (None, False)
    stream = io.BytesIO(b"a\nb\n")
    assert transcoded(stream, stream.getvalue()) is stream  # nothing to do: the stream itself


def test_crlf_split_across_reads_keeps_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoding, "_CHUNK", 3)  # every \r\n falls across a read somewhere
    data = "".join(f"line {i}\r\n" for i in range(50)).encode("utf-16-le") + "tail\r".encode(
        "utf-16-le"
    )
    stream = transcoded(io.BytesIO(data), data[:64])
    out = stream.read()
    assert out == "".join(f"line {i}\n" for i in range(50)).encode() + b"tail\r"
    assert normalize(data) == out


def test_colour_codes_cut_by_a_read_are_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoding, "_CHUNK", 5)  # every escape sequence falls across a read
    data = b"".join(b"\x1b[1;31mline %d\x1b[0m\r\n" % i for i in range(40))
    out = transcoded(io.BytesIO(data), data[:64]).read()
    assert out == b"".join(b"line %d\n" % i for i in range(40))
    assert normalize(data) == out
    assert b"\x1b" not in normalize("\x1b[33mwarn\x1b[0m\n".encode("utf-16"))


def test_api_reads_utf16_bytes() -> None:
    result = triage(LOG.replace("\n", "\r\n").encode("utf-16"))
    assert {m.tally.signature.id for m in result.matches} >= {"cuda-out-of-memory"}
