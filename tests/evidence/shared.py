"""Helpers shared by the evidence tests: the built-in matrix (loaded once) and a log file."""

from __future__ import annotations

import functools
from pathlib import Path

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load


@functools.cache
def matrix() -> Matrix:
    return load([])


def write(tmp_path: Path, text: str, name: str = "job.log") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path
