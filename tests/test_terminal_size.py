"""envcheck.terminal.terminal_size answers as shutil.get_terminal_size (which `check` does not
import: shutil loads bz2 and lzma)."""

from __future__ import annotations

import shutil

import pytest

from envcheck.terminal import terminal_size


@pytest.mark.parametrize(
    ("columns", "lines"), [(None, None), ("120", None), ("0", "40"), ("x", "y"), ("90", "30")]
)
def test_terminal_size_is_shutils(
    monkeypatch: pytest.MonkeyPatch, columns: str | None, lines: str | None
) -> None:
    for name, value in (("COLUMNS", columns), ("LINES", lines)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    for fallback in ((80, 24), (100, 24)):
        assert terminal_size(fallback) == shutil.get_terminal_size(fallback)
