"""envcheck.inputs: one reader for every user input (cap, FIFOs, decoding, JSON bounds)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from envcheck.errors import InputError, ReportError
from envcheck.inputs import (
    check_schema,
    load_json_file,
    loads_json,
    read_bytes,
    read_text,
)


def test_a_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_text(str(path)) == '{"a": 1}'  # the UTF-8 byte order mark is dropped
    assert load_json_file(str(path)) == {"a": 1}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe{\x00}\x00", "UTF-16"),
        (b'{"a": "\xe9"}', r"not UTF-8 text \(byte 0xe9 at offset 7\)"),
        (b"{\x00}", "binary data"),
    ],
)
def test_bad_bytes_are_named(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(data)
    with pytest.raises(InputError, match=message) as info:
        read_text(str(path))
    assert str(path) in str(info.value)


def test_the_size_cap_applies_to_files_and_devices(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    assert len(read_bytes(str(path), limit=101)) == 101
    with pytest.raises(InputError, match="over 100 bytes: too big"):
        read_bytes(str(path), limit=100)
    with pytest.raises(InputError, match="/dev/zero: over 1 MiB"):
        read_bytes("/dev/zero", limit=1024**2)  # endless: cut off at the cap, not read forever


def test_a_fifo_nobody_writes_to_is_empty_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert read_bytes(str(fifo)) == b""
    assert time.monotonic() - started < 5


def test_a_fifo_is_read_to_its_end(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as out:
            out.write(b'{"schema": 1}')

    # the writer blocks in open() until the reader is there; the reader must not block first
    thread = threading.Thread(target=writer, daemon=True)
    result: list[bytes] = []
    reader = threading.Thread(target=lambda: result.append(read_bytes(str(fifo))), daemon=True)
    reader.start()
    thread.start()
    reader.join(10)
    # a writer still waiting in open() for a reader (the read ended first, empty) is let through
    # by a reader of our own, rather than waited for until the join's timeout
    keeper = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        thread.join(10)
    finally:
        os.close(keeper)
    assert not thread.is_alive() and not reader.is_alive()
    assert result in ([b'{"schema": 1}'], [b""])  # the writer may open after an empty read


def test_a_stream_that_never_ends_is_cut_off_by_the_deadline(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # hold a writer open that never writes: without a deadline the read would wait forever
    holder = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        with pytest.raises(InputError, match=r"no end of input after 0\.3 s"):
            read_bytes(str(fifo), deadline=0.3)
    finally:
        os.close(holder)


@pytest.mark.parametrize(
    ("path", "message"),
    [("", "empty file name"), ("/nonexistent/x.json", "no such file"), ("/", "is a directory")],
)
def test_unreadable_paths(path: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_bytes(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 5000, "nested too deeply"),
        ('{"a": [' * 3000, "nested too deeply"),
        ('{"a": 1} x', "not JSON: Extra data"),
        ("[1, 2]", "expected a JSON object, got an array"),
        ("true", "expected a JSON object, got a boolean"),
        ('{"node": "\\ud800"}', "lone UTF-16 surrogate"),
        ('{"a": ["\\udc00"]}', "lone UTF-16 surrogate"),
    ],
)
def test_json_is_bounded_and_checked(text: str, message: str) -> None:
    with pytest.raises(ReportError, match=message) as info:
        loads_json(text, "saved.json", error=ReportError)
    assert str(info.value).startswith("saved.json")


def test_a_surrogate_pair_is_fine() -> None:
    assert loads_json('{"a": "\\ud83d\\ude00"}', "x") == {"a": "\U0001f600"}
    assert loads_json('{"a": "\\\\ud800"}', "x") == {"a": "\\ud800"}  # an escaped backslash


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "unsupported report schema True"),
        (1.0, "unsupported report schema 1.0"),
        ("1", "unsupported report schema '1'"),
        (None, "unsupported report schema None"),
        (2, "unsupported report schema 2"),
    ],
)
def test_schema_must_be_the_integer(value: object, message: str) -> None:
    with pytest.raises(ReportError, match=message):
        check_schema(value, 1, "r.json", error=ReportError)
    check_schema(1, 1, "r.json", error=ReportError)
