"""The compiled-matrix cache: hits skip the parse, edits and code changes miss, unsafe entries
are never read, and a broken cache never breaks a load."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from envcheck.errors import MatrixError
from envcheck.matrix import compiled as compiled_mod
from envcheck.matrix.compiled import cache_dir, compiled
from envcheck.matrix.load import load, parse_text
from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import MatrixFile
from tests.matrix.overlays import NUMPY_BAN


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str, where: str) -> MatrixFile:
        self.calls += 1
        return parse_text(text, where)


def _env(tmp_path: Path) -> dict[str, str]:
    return {"ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}


def test_second_parse_of_the_same_text_is_served_from_the_cache(tmp_path: Path) -> None:
    text = (Path(__file__).parents[2] / "matrices" / "hardware" / "gpus.toml").read_text(
        encoding="utf-8"
    )
    parse, env = Counting(), _env(tmp_path)
    first = compiled(text, "gpus.toml", parse, env)
    second = compiled(text, "gpus.toml", parse, env)
    assert parse.calls == 1
    assert first == second
    assert len(list((tmp_path / "cache" / "matrix").glob("m-*.json"))) == 1


def test_an_edited_text_or_other_code_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (Path(__file__).parents[2] / "matrices" / "hardware" / "gpus.toml").read_text(
        encoding="utf-8"
    )
    parse, env = Counting(), _env(tmp_path)
    compiled(text, "gpus.toml", parse, env)
    compiled(text + "\n# edited\n", "gpus.toml", parse, env)
    assert parse.calls == 2
    compiled_mod.code_key.cache_clear()
    monkeypatch.setattr(compiled_mod, "__version__", "999.0")
    try:
        compiled(text, "gpus.toml", parse, env)
    finally:
        compiled_mod.code_key.cache_clear()
    assert parse.calls == 3


@pytest.mark.parametrize("damage", ["truncated", "not a MatrixFile", "group-writable dir"])
def test_a_damaged_or_unsafe_entry_is_a_miss(tmp_path: Path, damage: str) -> None:
    text = (Path(__file__).parents[2] / "matrices" / "hardware" / "gpus.toml").read_text(
        encoding="utf-8"
    )
    parse, env = Counting(), _env(tmp_path)
    good = compiled(text, "gpus.toml", parse, env)
    directory = tmp_path / "cache" / "matrix"
    (entry,) = directory.glob("m-*.json")
    if damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:20])
    elif damage == "not a MatrixFile":
        entry.write_text('{"format": 1, "file": {"not": "a matrix"}}')
    else:
        directory.chmod(0o777)
    assert compiled(text, "gpus.toml", parse, env) == good
    assert parse.calls == 2


def test_bad_toml_raises_every_time_and_is_never_cached(tmp_path: Path) -> None:
    parse, env = Counting(), _env(tmp_path)
    for _ in range(2):
        with pytest.raises(MatrixError, match="invalid TOML"):
            compiled("[[gpu]\nname =", "bad.toml", parse, env)
    assert parse.calls == 2
    assert not list((tmp_path / "cache" / "matrix").glob("m-*.json"))


def test_an_unwritable_cache_only_costs_a_parse(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x", encoding="utf-8")
    env = {"ENVCHECK_CACHE_DIR": str(blocked)}
    text = (Path(__file__).parents[2] / "matrices" / "hardware" / "gpus.toml").read_text(
        encoding="utf-8"
    )
    parse = Counting()
    assert compiled(text, "gpus.toml", parse, env) == compiled(text, "gpus.toml", parse, env)
    assert parse.calls == 2


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"ENVCHECK_NO_CACHE": "1", "HOME": "/h"}, None),
        ({}, None),
        ({"HOME": "/h"}, Path("/h/.cache/envcheck/matrix")),
        ({"HOME": "/h", "XDG_CACHE_HOME": "/x"}, Path("/x/envcheck/matrix")),
        ({"HOME": "/h", "ENVCHECK_CACHE_DIR": "/c"}, Path("/c/matrix")),
    ],
)
def test_cache_location(env: dict[str, str], expected: Path | None) -> None:
    assert cache_dir(env) == expected


def test_load_sees_an_overlay_edit_at_once(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    env = {**_env(tmp_path), "ENVCHECK_MATRIX": str(overlay)}
    site = overlay / "site.toml"
    site.write_text(NUMPY_BAN.format(version="1.0.0"), encoding="utf-8")
    first = load(env=env)
    site.write_text(NUMPY_BAN.format(version="2.0.0"), encoding="utf-8")
    second = load(env=env)
    assert load(env={"ENVCHECK_MATRIX": str(overlay)}) == second  # same as with no cache

    def rule(matrix: object) -> str:
        (entry,) = [k for k in matrix.known_bad if k.code == "SITE901"]  # type: ignore[attr-defined]
        return str(entry.when)

    assert "1.0.0" in rule(first)
    assert "2.0.0" in rule(second)
    assert os.listdir(tmp_path / "cache" / "matrix")


def test_records_survive_the_cache_exactly(tmp_path: Path) -> None:
    """Every built-in file read back from the cache equals a fresh parse, and prints the same
    (driver versions keep their text: 530.30.02, not 530.30.2)."""
    env = _env(tmp_path)
    matrices = Path(__file__).parents[2] / "matrices"
    from envcheck.matrix.load import tree_files

    for path in tree_files(matrices):
        text = path.read_text(encoding="utf-8")
        fresh = parse_text(text, str(path))
        compiled(text, str(path), parse_text, env)
        unused = Counting()
        cached = compiled(text, str(path), unused, env)
        assert unused.calls == 0, path.name
        assert cached == fresh, path.name
        assert repr(cached) == repr(fresh), path.name


def _origins(matrix: Matrix) -> list[tuple[str, str, int] | None]:
    return [matrix.origin(entry) for entry in _entries(matrix)]


def _entries(matrix: Matrix) -> list[object]:
    from dataclasses import fields

    found: list[object] = []
    for f in fields(matrix):
        value = getattr(matrix, f.name)
        if f.name in ("files", "origins", "generated", "python_names_files"):
            continue
        if isinstance(value, tuple):
            found.extend(value)
        elif isinstance(value, dict):
            found.extend(value.values())
    return found


def test_a_cached_load_equals_a_fresh_one(tmp_path: Path) -> None:
    env = _env(tmp_path)
    fresh = load(env={"ENVCHECK_NO_CACHE": "1"})
    first = load(env=env)
    entries = list((tmp_path / "cache" / "matrix").glob("m-*.json"))
    assert entries
    second = load(env=env)
    assert second == first == fresh
    assert repr(second) == repr(fresh)
    # records keep the file, table and index they were read from (matrix validate, show)
    assert _origins(second) == _origins(fresh)
    assert all(origin is not None for origin in _origins(second))
    # the second load was answered by the merged matrix kept whole (matrix/merged.py)
    assert list((tmp_path / "cache" / "merged").glob("w-*.json"))
    # a hit marks the entry as recently used: pruning (oldest first) keeps it (a load without
    # the merged entry reads each file's)
    os.utime(entries[0], (1_000_000, 1_000_000))
    shutil.rmtree(tmp_path / "cache" / "merged")
    load(env=env)
    assert entries[0].stat().st_mtime > 1_000_000


def test_pruning_deletes_only_the_caches_own_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "cache" / "matrix"
    directory.mkdir(parents=True, mode=0o700)
    others = ["notes.pickle", "m-1234.json", "keep.json", "merged-" + "a" * 48 + ".pickle"]
    for name in others:
        (directory / name).write_text("x")
    monkeypatch.setattr(compiled_mod, "_KEEP", 1)
    text = (Path(__file__).parents[2] / "matrices" / "hardware" / "gpus.toml").read_text()
    compiled(text, "gpus.toml", parse_text, _env(tmp_path))
    compiled(text, "other.toml", parse_text, _env(tmp_path))
    assert sorted(p.name for p in directory.iterdir() if p.name in others) == sorted(others)
    assert len([p for p in directory.glob("m-*.json") if p.name not in others]) == 1
