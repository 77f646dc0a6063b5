"""Overlay signature patterns whose backtracking is exponential are refused, at `matrix
validate` and at load by every command: nested repetition (`(a+)+`) and, the case that still
hung `triage --engine re`, alternatives that match alike (`(a|a)+$`, which re parses as `a`
followed by a branch of two empty alternatives)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from envcheck.triage.patterns import super_linear
from tests.conftest import run_cli

OVERLAY = """[meta]
description = "site signatures"
reviewed = "2026-11-26"

[[signature]]
id = "site-hang"
pattern = "{pattern}"
meaning = "a site's own line"
causes = ["CUD102"]
source = "a site overlay"
"""


@pytest.mark.parametrize(
    "pattern", ["(a|a)+$", "Error (ab|ab)+$", "x(y(a|a))+z", "(a+)+$", "(a|aa)+$"]
)
def test_super_linear_shapes_are_named(pattern: str) -> None:
    assert super_linear(pattern) is not None


@pytest.mark.parametrize("pattern", ["(a|b)+$", "(ab|ac)+", "([0-9]+\\.)+[0-9]+", "x(y(a|b))+z"])
def test_linear_shapes_pass(pattern: str) -> None:
    assert super_linear(pattern) is None


def _overlay(tmp_path: Path, pattern: str) -> Path:
    folder = tmp_path / "overlay" / "signatures"
    folder.mkdir(parents=True)
    (folder / "site.toml").write_text(
        OVERLAY.format(pattern=pattern.replace("\\", "\\\\")), encoding="utf-8"
    )
    return tmp_path / "overlay"


def test_matrix_validate_refuses_ambiguous_alternation(tmp_path: Path) -> None:
    overlay = _overlay(tmp_path, "CUDA fault (a|a)+$")
    result = run_cli("matrix", "validate", str(overlay))
    assert result.returncode == 2
    assert "site.toml" in result.stderr and "alternatives that can match alike" in result.stderr


def test_triage_engine_re_refuses_it_at_load_instead_of_hanging(tmp_path: Path) -> None:
    overlay = _overlay(tmp_path, "CUDA fault (a|a)+$")
    log = tmp_path / "job.log"
    log.write_text("CUDA fault " + "a" * 40 + "!\n", encoding="utf-8")
    start = time.monotonic()
    result = run_cli("triage", "--engine", "re", "--matrix", str(overlay), str(log), timeout=60)
    assert time.monotonic() - start < 30
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "site.toml" in result.stderr and "pattern" in result.stderr
