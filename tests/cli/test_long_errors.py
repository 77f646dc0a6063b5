"""An error quoting the input stays one short line: a lock or requirements file with a
megabyte-long line was echoed whole to stderr (`not an exact pin: 'xxxx...'`)."""

from __future__ import annotations

from pathlib import Path

from envcheck.errors import MAX_ERROR, InputError
from tests.conftest import run_cli
from tests.specs import TINYZERO


def _one_short_line(stderr: str, where: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr[:300]
    line = lines[0]
    assert line.startswith(f"envcheck: error: {where}")
    assert len(line) <= len("envcheck: error: ") + MAX_ERROR
    assert "characters]..." in line
    return line


def test_check_lock_with_a_huge_line_names_file_and_line_briefly(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(TINYZERO, encoding="utf-8")
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==1.26.4\n" + "x" * 1_000_000 + "\n", encoding="utf-8")
    result = run_cli("check", "--lock", str(lock), "--spec", str(spec))
    assert result.returncode == 2 and result.stdout == ""
    line = _one_short_line(result.stderr, f"{lock}:2: not an exact pin: 'xxx")
    assert line.endswith("(a lock pins every package with ==)")


def test_lock_requirements_with_a_huge_line_names_file_and_line_briefly(tmp_path: Path) -> None:
    extra = tmp_path / "extra.txt"
    extra.write_text("torch==2.4.0 " + "a" * 1_000_000 + "\n", encoding="utf-8")
    out = tmp_path / "out.lock"
    result = run_cli("lock", "-r", str(extra), "--python", "3.11", "-o", str(out))
    assert result.returncode == 2 and not out.exists()
    _one_short_line(result.stderr, f"{extra}:1: invalid requirement 'torch==2.4.0 aaa")


def test_short_errors_are_unchanged() -> None:
    error = InputError("invalid TOML: Expected ']'", where="stack.toml:1")
    assert error.one_line() == "stack.toml:1: invalid TOML: Expected ']'"
