"""The grep engine's rewrite of Python-only patterns (triage/ere.py): GNU grep must print every
line Python's pattern matches, so the verdicts are the other engines' ones."""

from __future__ import annotations

import io
import random
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from envcheck.triage.ere import grep_pattern, reads_alike, to_ere
from envcheck.triage.grep_engine import GrepScanner, gnu_grep
from envcheck.triage.scan import Scanner
from tests.triage.test_scan import EXAMPLES

GREP = gnu_grep()
needs_grep = pytest.mark.skipif(GREP is None, reason="GNU grep is not installed")

# Python-only syntax of every kind the rewrite handles, and look-alikes of ERE that grep reads
# differently (an escape inside a class, an escaped letter)
PATTERNS = [
    r"(?:Fatal|fatal) Python error",
    r"rank \d+ failed",
    r"is over [0-9]+% full,\s*$",
    r"worker .*? died",
    r"x{2,}? y",
    r"\bSIGKILL\b",
    r"no\Bde",
    r"(\w+) and \1",
    r"ab(?=c)",
    r"ab(?!c)d?",
    r"(?<=x)yz",
    r"[^\]]+\]",
    r"[\d.]+ GiB",
    r"\x41BC\t",
    r"(?i)nccl error",
    r"nccl (?i:ERROR)",
    r"\S+@\S+",
    r"\W\w\W",
    r"(a|ab)+c",
    r"^\s*Traceback",
    r"[^a-z\s]{3}",
    r"e(?:rr)?or\Z",
    r"\A\[rank[0-9]\]",
    r"[-^\]]x",
    r"(?:ab|)cd",
    r"caf\xe9|\xff\xfe",
]
ALPHABET = "abcdxyzABCXYZ01239 .,:-^]\\[\t@_%\xe9\xff"
WORDS = [
    "Fatal Python error",
    "fatal Python error",
    "rank 12 failed",
    "is over 95% full,  ",
    "worker 3 died",
    "xxx y",
    "SIGKILL",
    "node",
    "foo and foo",
    "abc",
    "abd",
    "xyz",
    "]]x",
    "1.5 GiB",
    "ABC\t",
    "NCCL Error",
    "nccl error",
    "nccl ERROR",
    "user@host",
    "ababc",
    "  Traceback",
    "ERR",
    "eor",
    "error",
    "[rank0]",
    "-x",
    "^x",
    "cd",
    "abcd",
    "caf\xe9",
    "\xff\xfe",
]


def _lines(rng: random.Random, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        parts = [
            rng.choice(WORDS) if rng.random() < 0.4 else "".join(rng.choices(ALPHABET, k=3))
            for _ in range(rng.randint(0, 4))
        ]
        out.append(rng.choice(["", " ", "\t"]).join(parts).encode("latin-1"))
    return out


def _grep_prints(line_pattern: bytes, lines: list[bytes], tmp_path: Path) -> set[int]:
    assert GREP is not None
    patterns = tmp_path / "p.txt"
    patterns.write_bytes(line_pattern + b"\n")
    done = subprocess.run(
        [GREP, "-n", "-a", "-E", "-f", str(patterns)],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
        timeout=30,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return {int(row.split(b":", 1)[0]) - 1 for row in done.stdout.splitlines()}


@needs_grep
@pytest.mark.parametrize("pattern", PATTERNS)
def test_grep_prints_every_line_python_matches(pattern: str, tmp_path: Path) -> None:
    """A superset, checked against GNU grep itself on lines built to match and not match."""
    rng = random.Random(pattern)
    lines = _lines(rng, 3000)
    python = re.compile(pattern.encode())
    expected = {i for i, line in enumerate(lines) if python.search(line)}
    assert expected, "the generated lines must exercise the pattern"
    line_pattern = grep_pattern(pattern)
    assert line_pattern is not None
    printed = _grep_prints(line_pattern, lines, tmp_path)
    assert expected <= printed, [lines[i] for i in sorted(expected - printed)][:5]


@needs_grep
@pytest.mark.parametrize("pattern", [p for p in PATTERNS if "(?" not in p and "\\1" not in p])
def test_the_rewrite_is_exact_without_lookaround(pattern: str, tmp_path: Path) -> None:
    """Without lookarounds or back references (widened on purpose) grep prints exactly the
    lines Python matches: the rewrite keeps the prefilter as narrow as the pattern."""
    rng = random.Random(pattern + "exact")
    lines = _lines(rng, 3000)
    python = re.compile(pattern.encode())
    expected = {i for i, line in enumerate(lines) if python.search(line)}
    printed = _grep_prints(to_ere(pattern).encode("latin-1"), lines, tmp_path)
    assert printed == expected


def test_alike_patterns_are_handed_over_unchanged() -> None:
    for pattern in (
        r"Floating point exception",
        r"CUDA error: (out of memory|an illegal memory access)",
        r"literal \(paren\) and \? and \.",
        r"sm_[0-9]+ is not compatible",
    ):
        assert reads_alike(pattern)
        assert grep_pattern(pattern) == pattern.encode()
    for pattern in (r"[^\]]", r"\x41", r"a\tb", r"(?:x)", r"\d"):
        assert not reads_alike(pattern)


def test_no_rewrite_falls_back_to_the_literals() -> None:
    # a NUL byte cannot go into grep's patterns file; every match holds the literal
    assert grep_pattern("Fatal Python error\\x00") == b"Fatal Python error"
    # ignoring case, a literal says nothing: neither is sure, the engine is not used
    assert grep_pattern("(?i)fatal python error\\x00") is None


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load()


@needs_grep
def test_python_only_signatures_keep_the_grep_engine_and_its_verdicts(matrix: Matrix) -> None:
    """The shipped signatures respelled with Python-only syntax: grep stays the engine and
    names the same lines, at the same line numbers, as Python's engine."""
    from envcheck.triage.run import _scanner

    assert GREP is not None
    respelled = []
    for sig in matrix.signatures:
        pattern = sig.pattern.replace("[0-9]", r"\d").replace(" *$", r"\s*$")
        respelled.append(replace(sig, pattern=f"{pattern}(?:)"))
    odd = replace(matrix, signatures=tuple(respelled))
    assert _scanner(odd, "auto").engine == "grep"
    examples = Path(__file__).parent.parent / "fixtures" / "triage"
    data = b"".join(p.read_bytes() for p in sorted(examples.glob("*.log")))
    data += b"\n".join(line.encode() for line, _sid in EXAMPLES) + b"\n"
    grep = GrepScanner(odd.signatures, GREP)
    try:
        assert grep.usable()
        got = grep.scan(io.BytesIO(data))
    finally:
        grep.close()
    want = Scanner(odd.signatures, "re").scan(io.BytesIO(data))
    assert got.lines == want.lines
    assert {k: (t.count, t.first.line, t.last.line) for k, t in got.tallies.items()} == {
        k: (t.count, t.first.line, t.last.line) for k, t in want.tallies.items()
    }
    assert got.tallies  # the data holds signature lines
