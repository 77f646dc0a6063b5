"""A process that triages many logs compiles the signatures once; a small log is read in the
process (triage/scan.py `_compiled`, triage/grep_engine.py `_grep_lines` / `_USABLE`,
triage/run.py `SMALL_LOG`)."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest

from envcheck.triage import grep_engine, scan
from envcheck.triage.grep_engine import GrepScanner, gnu_grep
from envcheck.triage.run import SMALL_LOG, _scanner, scan_log
from envcheck.triage.scan import Scanner
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()
LINE = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def test_scanners_of_the_same_patterns_share_what_they_compiled() -> None:
    first = Scanner(MATRIX.signatures, "re")
    second = Scanner(MATRIX.signatures, "re")
    assert first._line_res is second._line_res
    assert first._literals is second._literals
    # each scanner keeps its own lines seen: nothing of one scan reaches another's
    assert first._seen is not second._seen


def test_another_pattern_set_is_compiled_anew_and_the_kept_sets_are_bounded() -> None:
    base = Scanner(MATRIX.signatures, "re")
    for n in range(scan._COMPILED_KEPT + 2):
        changed = replace(MATRIX.signatures[0], pattern=f"distinct pattern {n}: (x+)")
        other = Scanner((changed, *MATRIX.signatures[1:]), "re")
        assert other._line_res is not base._line_res
        assert other._line_res[0].pattern == f"distinct pattern {n}: (x+)".encode()
        assert len(scan._COMPILED) <= scan._COMPILED_KEPT


def test_a_bad_pattern_still_fails_and_is_not_kept() -> None:
    bad = replace(MATRIX.signatures[0], pattern="unbalanced (")
    before = dict(scan._COMPILED)
    with pytest.raises(ValueError, match="does not compile"):
        Scanner((bad, *MATRIX.signatures[1:]), "re")
    assert before == scan._COMPILED


def test_auto_reads_a_small_regular_file_with_re(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(LINE, encoding="utf-8")
    assert _scanner(MATRIX, "auto", log.stat().st_size).engine == "re"
    _, result = scan_log(str(log), MATRIX)
    assert result.engine == "re"
    assert result.tallies, "the OOM line is matched"


def test_auto_hands_a_large_file_to_grep(tmp_path: Path) -> None:
    if gnu_grep() is None:
        pytest.skip("GNU grep is not installed")
    log = tmp_path / "big.log"
    filler = b"INFO step done\n" * (SMALL_LOG // 15 + 1)
    log.write_bytes(filler + LINE.encode())
    assert log.stat().st_size > SMALL_LOG
    _, result = scan_log(str(log), MATRIX)
    assert result.engine == "grep"
    # the same matches as the small file read by re
    small_log = tmp_path / "small.log"
    small_log.write_text(LINE, encoding="utf-8")
    _, by_re = scan_log(str(small_log), MATRIX)
    assert set(result.tallies) == set(by_re.tallies)
    # an unknown size (a pipe, standard input) is grep's too
    assert _scanner(MATRIX, "auto", None).engine == "grep"


def test_grep_is_asked_once_per_pattern_set(tmp_path: Path) -> None:
    """The answer to "does grep accept every pattern" is kept by grep's path and the patterns:
    a second scanner does not start grep again; another grep is asked."""
    real = gnu_grep()
    if real is None:
        pytest.skip("GNU grep is not installed")
    calls = tmp_path / "calls"
    fake = tmp_path / "grep"
    fake.write_text(f'#!/bin/sh\necho x >> "{calls}"\nexec "{real}" "$@"\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    grep_engine._USABLE.clear()
    for _ in range(3):
        scanner = GrepScanner(MATRIX.signatures, str(fake))
        try:
            assert scanner.usable()
        finally:
            scanner.close()
    assert calls.read_text().count("x") == 1
    other = tmp_path / "grep2"
    other.write_bytes(fake.read_bytes())
    other.chmod(fake.stat().st_mode)
    scanner = GrepScanner(MATRIX.signatures, str(other))
    try:
        assert scanner.usable()
    finally:
        scanner.close()
    assert calls.read_text().count("x") == 2
