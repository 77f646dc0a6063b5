"""write_atomic: whole files, sensible permissions, never a device replaced."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from envcheck.errors import InputError
from envcheck.fileio import write_atomic


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_new_file_gets_the_umask_mode_like_open(tmp_path: Path, umask_022: None) -> None:
    out = write_atomic(tmp_path / "report.json", "{}\n")
    assert out.read_text() == "{}\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left


def test_replacing_keeps_the_existing_mode(tmp_path: Path, umask_022: None) -> None:
    target = tmp_path / "fix.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


def test_refuses_without_overwrite_and_leaves_the_file(tmp_path: Path) -> None:
    target = tmp_path / "lock.txt"
    target.write_text("keep\n")
    with pytest.raises(InputError, match="file exists"):
        write_atomic(target, "new\n", overwrite=False)
    assert target.read_text() == "keep\n"


def test_never_replaces_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        write_atomic(fifo, "x")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_missing_directory_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        write_atomic(tmp_path / "nope" / "out.json", "x")
