"""The merged matrix kept whole (envcheck/matrix/merged.py): a second load reads one entry and
decodes each table on first use; it equals a load without the cache, provenance included; an
edited file, a damaged or unsafe entry is a miss; a file changed just before the load is never
kept."""

from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import fields
from pathlib import Path

import pytest

from envcheck.matrix import load as load_mod
from envcheck.matrix import merged
from envcheck.matrix.load import load
from envcheck.matrix.model import Matrix
from tests.matrix.overlays import NUMPY_BAN

NO_CACHE = {"ENVCHECK_NO_CACHE": "1"}


def _env(tmp_path: Path) -> dict[str, str]:
    return {"ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "merged").glob("w-*.json"))


def _records(matrix: Matrix) -> list[object]:
    """Every record a merged matrix holds, table by table, in order."""
    found: list[object] = []
    for f in fields(matrix):
        if f.name in ("files", "origins", "python_names_files"):
            continue
        value = getattr(matrix, f.name)
        if f.name == "generated":
            for g in fields(value):
                found.extend(getattr(value, g.name))
        elif isinstance(value, tuple):
            found.extend(value)
        elif isinstance(value, dict):
            found.extend(value.values())
        else:
            found.append(value)
    return found


def _same(kept: Matrix, fresh: Matrix) -> None:
    assert kept == fresh
    assert repr(kept) == repr(fresh)
    assert kept.python_names_files == fresh.python_names_files
    # each record keeps the file, table and index it was read from (matrix validate, show),
    # and matrix validate's places see every file's entries, those an overlay replaced too
    assert [kept.origin(r) for r in _records(kept)] == [fresh.origin(r) for r in _records(fresh)]
    assert sorted(set(kept.origins.values())) == sorted(set(fresh.origins.values()))


class _Spy:
    """Counts the loads that read and merge the files (each through the compiled cache)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = load_mod._merged_files

        def spy(*args: object, **kwargs: object) -> Matrix:
            self.calls += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(load_mod, "_merged_files", spy)


def test_a_second_load_is_the_kept_matrix_and_equals_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    fresh = load(env=NO_CACHE)
    spy = _Spy(monkeypatch)
    first = load(env=env)
    assert spy.calls == 1
    (entry,) = _entries(tmp_path)
    assert oct(entry.stat().st_mode & 0o777) == "0o600"
    header = json.loads(entry.read_bytes().split(b"\n", 1)[0])  # data: JSON, never code
    assert header["format"] == merged.FORMAT
    second = load(env=env)
    assert spy.calls == 1  # no file read, decoded or merged again
    # a table is decoded once, then the same records every time
    assert second.gpus is second.gpus
    assert second.generated.torch_wheel is second.generated.torch_wheel
    _same(second, fresh)
    _same(first, fresh)


def test_tables_decode_on_first_use_only(tmp_path: Path) -> None:
    env = _env(tmp_path)
    load(env=env)
    kept = load(env=env)
    assert "signatures" not in vars(kept)  # not asked for yet
    assert kept.known_bad == load(env=NO_CACHE).known_bad
    assert "known_bad" in vars(kept)
    assert "signatures" not in vars(kept)


def test_grouped_records_are_the_tables_records_undecoded(tmp_path: Path) -> None:
    from envcheck.model.record_lists import _data
    from envcheck.names import canonicalize_name
    from envcheck.rules.node.python_range import _Releases

    env = _env(tmp_path)
    load(env=env)
    kept = load(env=env)
    fresh = load(env=NO_CACHE)
    table = fresh.generated.companion_metadata
    for segment in merged.GROUPED:
        groups = merged.grouped(kept, segment)
        assert groups is not None
        assert merged.grouped(fresh, segment) is None  # not read from an entry
        assert "generated" not in vars(kept)  # nothing decoded to read them
        assert sorted(groups.names) == sorted({c.package for c in table})
        assert groups.records(groups.names) == [_data(c) for c in table]  # in the table's order
        for name in groups.names:
            assert groups.records([name]) == [_data(c) for c in table if c.package == name]
        assert groups.records(["not-a-package"]) == []
    # PY140's per-package ranges: the same from the records as from the decoded table
    from_rows, decoded = _Releases(kept), _Releases(fresh)
    for name in sorted({str(canonicalize_name(c.package)) for c in table}):
        assert from_rows._texts(name) is not None and decoded._texts(name) is None
        assert from_rows._parse(name) == decoded._parse(name)
        for c in table:
            if str(canonicalize_name(c.package)) == name:
                assert from_rows.get(name, c.version) == decoded.get(name, c.version)


def _overlay(tmp_path: Path, version: str) -> Path:
    directory = tmp_path / "site"
    directory.mkdir(exist_ok=True)
    (directory / "site.toml").write_text(NUMPY_BAN.format(version=version), encoding="utf-8")
    return directory


def _later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loads that start 5 s after now: files written now are not too fresh to be kept."""
    monkeypatch.setattr(merged, "started", lambda: time.time_ns() + 5_000_000_000)


def test_an_edited_overlay_is_loaded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(tmp_path)
    _later(monkeypatch)
    site = _overlay(tmp_path, "1.0.0")
    first = load([str(site)], env=env)
    assert len(_entries(tmp_path)) == 1
    assert "1.0.0" in first.known_bad[-1].when.packages["numpy"]
    path = site / "site.toml"
    before = path.stat()
    _overlay(tmp_path, "2.0.0")  # the same size, written in place
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime
    second = load([str(site)], env=env)
    assert "2.0.0" in second.known_bad[-1].when.packages["numpy"]
    _same(second, load([str(site)], env=NO_CACHE))
    # a file added to an overlay is another key too
    (site / "more.toml").write_text(
        NUMPY_BAN.format(version="3.0.0").replace("SITE901", "SITE902"), encoding="utf-8"
    )
    third = load([str(site)], env=env)
    assert {k.code for k in third.known_bad} >= {"SITE901", "SITE902"}


def test_a_file_changed_just_before_the_load_is_not_kept(tmp_path: Path) -> None:
    env = _env(tmp_path)
    site = _overlay(tmp_path, "1.0.0")  # written now: the coarse clock could hide an edit
    load([str(site)], env=env)
    assert _entries(tmp_path) == []
    load(env=env)  # the built-in files alone were written long ago
    assert len(_entries(tmp_path)) == 1


def _body_spaces(data: bytes) -> bytes:
    head, body = data.split(b"\n", 1)
    return head + b"\n" + b" " * len(body)


def _segment_of_another_type(data: bytes) -> bytes:
    """Every segment replaced by valid JSON of the wrong shape, offsets kept right."""
    header = json.loads(data.split(b"\n", 1)[0])
    parts = []
    offset = 0
    for name in header["segments"]:
        text = b'{"not":"a table"}'
        header["segments"][name] = [offset, offset + len(text)]
        offset += len(text)
        parts.append(text)
    return json.dumps(header).encode() + b"\n" + b"".join(parts)


def _origins_damaged(data: bytes) -> bytes:
    header = json.loads(data.split(b"\n", 1)[0])
    body = data.split(b"\n", 1)[1]
    start, end = header["segments"]["origins"]
    return data.split(b"\n", 1)[0] + b"\n" + body[:start] + b"[" * (end - start) + body[end:]


DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "header only": lambda data: data.split(b"\n", 1)[0],
    "no header": lambda data: data.split(b"\n", 1)[1],
    "body blanked": _body_spaces,
    "segments of another shape": _segment_of_another_type,
    "provenance damaged": _origins_damaged,
    "another format": lambda data: data.replace(b'"format":1', b'"format":9', 1),
    "a pickle": lambda data: b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00.",
    "empty": lambda data: b"",
}


@functools.cache
def _uncached() -> Matrix:
    """A load without the cache, once for the damaged entries' nine tests (a matrix is data:
    comparing it decodes its tables, the same records for every test)."""
    return load(env=NO_CACHE)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_entry_gives_the_matrix_of_a_load_without_it(tmp_path: Path, damage: str) -> None:
    env = _env(tmp_path)
    load(env=env)
    (entry,) = _entries(tmp_path)
    entry.write_bytes(DAMAGE[damage](entry.read_bytes()))
    _same(load(env=env), _uncached())


@pytest.mark.parametrize("unsafe", ["group-writable directory", "a link", "a directory"])
def test_an_unsafe_entry_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unsafe: str
) -> None:
    env = _env(tmp_path)
    load(env=env)
    (entry,) = _entries(tmp_path)
    if unsafe == "group-writable directory":
        entry.parent.chmod(0o770)
    elif unsafe == "a link":
        target = tmp_path / "elsewhere.json"
        target.write_bytes(entry.read_bytes())
        entry.unlink()
        entry.symlink_to(target)
    else:
        entry.unlink()
        entry.mkdir()
    spy = _Spy(monkeypatch)
    _same(load(env=env), load(env=NO_CACHE))
    assert spy.calls == 2  # read and merged: the entry was passed over


def test_no_cache_keeps_nothing(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "ENVCHECK_NO_CACHE": "1"}
    load(env=env)
    assert not (tmp_path / "cache").exists()


def test_pruning_deletes_only_the_caches_own_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "cache" / "merged"
    directory.mkdir(parents=True, mode=0o700)
    others = ["notes.json", "w-1234.json", "m-" + "a" * 48 + ".json", "w-" + "b" * 48 + ".pickle"]
    for name in others:
        (directory / name).write_text("x", encoding="utf-8")
    old = [directory / f"w-{i:048x}.json" for i in range(merged.KEEP)]
    for index, path in enumerate(old):
        path.write_text("{}", encoding="utf-8")
        os.utime(path, (1_000_000 + index, 1_000_000 + index))
    load(env=_env(tmp_path))
    names = {p.name for p in directory.iterdir()}
    assert set(others) <= names
    assert old[0].name not in names  # the oldest of its own entries went
    assert len([n for n in names if merged._NAME.fullmatch(n)]) == merged.KEEP


def test_other_decoding_code_or_version_is_another_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry is keyed by the stat of the modules that decode it and by the version."""
    module = tmp_path / "schema.py"
    module.write_text("# the decoding code\n", encoding="utf-8")
    os.utime(module, ns=(1_000_000_000, 1_000_000_000))
    monkeypatch.setattr(merged, "_code_files", lambda: [str(module)])
    _later(monkeypatch)
    files = [load_mod.tree_files(load_mod.builtin_dir())]
    dirs = [load_mod.builtin_dir()]
    first = merged.key_of(dirs, files)
    assert first is not None
    assert merged.key_of(dirs, files).digest == first.digest  # type: ignore[union-attr]
    module.write_text("# the decoding code, changed\n", encoding="utf-8")
    os.utime(module, ns=(1_000_000_000, 1_000_000_000))  # the same mtime: ctime and size differ
    changed = merged.key_of(dirs, files)
    assert changed is not None and changed.digest != first.digest
    monkeypatch.setattr(merged, "__version__", "999.0")
    other = merged.key_of(dirs, files)
    assert other is not None and other.digest not in (first.digest, changed.digest)
    module.unlink()
    assert merged.key_of(dirs, files) is None  # a module gone: no entry answers
