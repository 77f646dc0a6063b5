"""Entries of one matrix directory that share an identity.

The merge keeps one entry per identity (:data:`envcheck.matrix.load.IDENTITY`): an overlay's
entry replaces the built-in one on purpose, but two entries with the same identity in the same
directory (the same soname twice in ``cuda/sonames.toml``, one signature id in two files) are a
mistake that the merge would hide: the later one silently wins, and which one that is depends on
the files' order. `envcheck matrix validate` lists each clash with both places."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path

from envcheck.matrix.load import IDENTITY, parse_file, tree_files
from envcheck.matrix.locate import line_of
from envcheck.matrix.schema import MatrixFile


def clashes(
    directories: Sequence[Path], cache_env: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(where, key, message) for every entry whose identity an earlier entry of the same
    directory already has: ``where`` is ``file:line`` of the later entry, ``key`` its dotted key
    (``soname[41]``), and the message names the earlier one."""
    found: list[tuple[str, str, str]] = []
    for directory in directories:
        first: dict[tuple[str, object], tuple[str, int]] = {}
        for path in tree_files(directory):
            text = ""
            mfile = parse_file(path, cache_env)
            for f in fields(MatrixFile):
                if f.name == "meta":
                    continue
                identity = IDENTITY[f.name]
                for index, entry in enumerate(getattr(mfile, f.name)):
                    key = (f.name, identity(entry))
                    earlier = first.setdefault(key, (str(path), index))
                    if earlier == (str(path), index):
                        continue
                    if not text:
                        text = path.read_text(encoding="utf-8")
                    dotted = f"{f.name}[{index}]"
                    line = line_of(text, dotted)
                    where = f"{path}:{line}" if line else str(path)
                    found.append((where, dotted, _message(f.name, earlier, directory)))
    return found


def _message(table: str, earlier: tuple[str, int], directory: Path) -> str:
    path, index = earlier
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        text = ""
    line = line_of(text, f"{table}[{index}]")
    place = f"{path}:{line}" if line else path
    return (
        f"the same {table} as {table}[{index}] at {place}: within one matrix directory only "
        "one of them is used (the later), so keep one"
    )
