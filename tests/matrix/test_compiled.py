"""The compiled-matrix cache: hits skip the parse, edits and code changes miss, unsafe entries
are never read, and a broken cache never breaks a load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envcheck.errors import MatrixError
from envcheck.matrix import compiled as compiled_mod
from envcheck.matrix import load as load_mod
from envcheck.matrix.compiled import _entries, cache_dir, compiled
from envcheck.matrix.load import load, parse_text
from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import MatrixFile

OVERLAY = """
[meta]
description = "site overlay"

[[known_bad]]
code = "SITE901"
id = "site-numpy-ban"
title = "numpy {version} is banned here"
severity = "warning"
message = "numpy {{pkg[numpy]}} is banned here"
symptom = "s"
cause = "c"
source = "https://wiki.example.internal/SITE901"
[known_bad.when]
packages = {{ numpy = "=={version}" }}
"""


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
    assert len(list((tmp_path / "cache" / "matrix").glob("*.pickle"))) == 1


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
    (entry,) = directory.glob("*.pickle")
    if damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:20])
    elif damage == "not a MatrixFile":
        import pickle

        entry.write_bytes(pickle.dumps({"not": "a matrix"}))
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
    assert not list((tmp_path / "cache" / "matrix").glob("*.pickle"))


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
    site.write_text(OVERLAY.format(version="1.0.0"), encoding="utf-8")
    first = load(env=env)
    site.write_text(OVERLAY.format(version="2.0.0"), encoding="utf-8")
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
    for path in sorted(matrices.glob("*.toml")) + sorted(matrices.glob("generated/*.toml")):
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


def test_the_merged_matrix_is_one_entry_equal_to_a_fresh_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    fresh = load(env={"ENVCHECK_NO_CACHE": "1"})
    first = load(env=env)
    (merged,) = (tmp_path / "cache" / "matrix").glob("merged-*.pickle")

    def no_merge(parsed: object) -> Matrix:
        raise AssertionError("merged again although the merged matrix is cached")

    monkeypatch.setattr(load_mod, "merge", no_merge)
    second = load(env=env)
    assert second == first == fresh
    assert repr(second) == repr(fresh)
    # records keep the file, table and index they were read from (matrix validate, show)
    assert _origins(second) == _origins(fresh)
    assert all(origin is not None for origin in _origins(second))
    assert len(list((tmp_path / "cache" / "matrix").glob("merged-*.pickle"))) == 1
    # a hit marks the entry as recently used: pruning (oldest first) keeps it
    os.utime(merged, (1_000_000, 1_000_000))
    load(env=env)
    assert merged.stat().st_mtime > 1_000_000


def test_adding_editing_or_removing_any_matrix_file_misses_the_merged_entry(
    tmp_path: Path,
) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    env = {**_env(tmp_path), "ENVCHECK_MATRIX": str(overlay)}
    codes = []
    for version in ("1.0.0", "2.0.0"):  # one more file each time, then an edit
        (overlay / f"site-{version}.toml").write_text(
            OVERLAY.format(version=version).replace("SITE901", f"SITE90{version[0]}"),
            encoding="utf-8",
        )
        codes.append(sorted(k.code for k in load(env=env).known_bad if k.code.startswith("SITE")))
    (overlay / "site-2.0.0.toml").write_text(
        OVERLAY.format(version="3.0.0").replace("SITE901", "SITE903"), encoding="utf-8"
    )
    codes.append(sorted(k.code for k in load(env=env).known_bad if k.code.startswith("SITE")))
    (overlay / "site-1.0.0.toml").unlink()
    codes.append(sorted(k.code for k in load(env=env).known_bad if k.code.startswith("SITE")))
    assert codes == [["SITE901"], ["SITE901", "SITE902"], ["SITE901", "SITE903"], ["SITE903"]]
    assert len(list((tmp_path / "cache" / "matrix").glob("merged-*.pickle"))) == 4


@pytest.mark.parametrize("damage", ["truncated", "a MatrixFile", "group-writable dir"])
def test_a_damaged_merged_entry_is_a_miss(tmp_path: Path, damage: str) -> None:
    env = _env(tmp_path)
    good = load(env=env)
    directory = tmp_path / "cache" / "matrix"
    (entry,) = directory.glob("merged-*.pickle")
    if damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:100])
    elif damage == "a MatrixFile":
        import pickle

        entry.write_bytes(pickle.dumps(MatrixFile()))
    else:
        directory.chmod(0o777)
    again = load(env=env)
    assert again == good
    assert _origins(again) == _origins(good)


def test_equal_versions_and_specifiers_are_stored_once_and_read_back_exactly(
    tmp_path: Path,
) -> None:
    """The pickle shares equal values (same pickled form) and keeps different spellings apart:
    a driver version keeps its text, ``==2.4`` and ``==2.4.0`` stay two specifiers."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from envcheck.matrix.compiled import _read, _write
    from envcheck.model.versions import DriverVersion

    values = [
        SpecifierSet(">=2.4,<2.5"),
        SpecifierSet(">=2.4,<2.5"),
        SpecifierSet("==2.4"),
        SpecifierSet("==2.4.0"),
        Version("1.0"),
        Version("1.0.0"),
        Version("1.0"),
        DriverVersion("530.30.02"),
        DriverVersion("530.30.02"),
    ]
    directory = tmp_path / "c"
    directory.mkdir(mode=0o700)
    _write(directory, directory / "x.pickle", values)
    back = _read(directory / "x.pickle")
    assert isinstance(back, list)
    assert [str(v) for v in back] == [str(v) for v in values]
    assert [type(v) for v in back] == [type(v) for v in values]
    assert back == values
    assert back[0] is back[1] and back[4] is back[6] and back[7] is back[8]
    assert back[2] is not back[3] and back[4] is not back[5]
