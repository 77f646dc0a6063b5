"""The grep engine counts a regular file's lines from grep's last match on (grep_engine's
_TailCount): the same bytes and lines, and the same matches, as counting the whole file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from envcheck.triage import grep_engine
from envcheck.triage.grep_engine import GrepScanner, _TailCount, gnu_grep
from envcheck.triage.scan import ScanResult

ERROR = b"ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."
PLAIN = b"INFO step 12 loss 0.5"

pytestmark = pytest.mark.skipif(gnu_grep() is None, reason="GNU grep is not installed")


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load()


def _expected_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


CASES = {
    "empty": b"",
    "no match": b"\n".join([PLAIN] * 50) + b"\n",
    "no match, no final newline": b"\n".join([PLAIN] * 50),
    "match first": b"\n".join([ERROR] + [PLAIN] * 50) + b"\n",
    "match last, no final newline": b"\n".join([PLAIN] * 50 + [ERROR]),
    "match last": b"\n".join([PLAIN] * 50 + [ERROR]) + b"\n",
    "matches spread": b"\n".join(([PLAIN] * 9 + [ERROR]) * 20 + [PLAIN] * 3) + b"\n",
    "blank lines after": b"\n".join([PLAIN, ERROR]) + b"\n\n\n\n",
    "only newlines": b"\n\n\n",
}


@pytest.mark.parametrize("chunk", [5, 64, 4 * 1024 * 1024])
@pytest.mark.parametrize("skip", [0, 1, len(PLAIN) + 1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_lines_and_bytes_as_counted_in_full(
    matrix: Matrix,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    skip: int,
    chunk: int,
) -> None:
    """Small chunks make the backward count cross many blocks; ``skip``: stdin redirected
    from a file already read partway (grep starts there, and counts from there)."""
    monkeypatch.setattr(grep_engine, "CHUNK", chunk)
    data = CASES[name]
    path = tmp_path / "job.log"
    path.write_bytes(data)
    rest = data[skip:]
    scanner = GrepScanner(matrix.signatures, gnu_grep() or "grep")
    try:
        with path.open("rb") as stream:
            stream.seek(min(skip, len(data)))
            result = scanner.scan(stream)
    finally:
        scanner.close()
    assert (result.bytes_read, result.lines) == (len(rest), _expected_lines(rest))
    # the lines the signature's own pattern matches (a start partway through the error line
    # leaves a fragment that another of its wordings may still match)
    actor_died = next(s for s in matrix.signatures if s.id == "ray-actor-died")
    pattern = re.compile(actor_died.pattern.encode())
    matched = [i + 1 for i, line in enumerate(rest.split(b"\n")) if pattern.search(line)]
    tally = next(iter(result.tallies.values()), None)
    if not matched:
        assert tally is None
    else:
        assert tally is not None
        assert (tally.count, tally.first.line, tally.last.line) == (
            len(matched),
            matched[0],
            matched[-1],
        )


def test_a_file_that_grows_is_counted_to_its_new_end(tmp_path: Path) -> None:
    """A live log appended to while grep read it: counted to where it ends when grep is done,
    also when grep's last match lies in the appended part."""
    first = b"\n".join([PLAIN] * 30) + b"\n"
    added = b"\n".join([PLAIN, ERROR, PLAIN]) + b"\n"
    path = tmp_path / "live.log"
    for number, offset in ((0, 0), (2, len(PLAIN) + 1), (32, len(first) + len(PLAIN) + 1)):
        path.write_bytes(first)
        fd = os.open(path, os.O_RDONLY)
        try:
            count = _TailCount(fd, 0)
            with path.open("ab") as out:
                out.write(added)
            result = ScanResult(engine="grep")
            count.finish(number, offset, result)
        finally:
            os.close(fd)
        data = first + added
        assert (result.bytes_read, result.lines) == (len(data), _expected_lines(data))
