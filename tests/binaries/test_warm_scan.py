"""The binary scan's whole answer kept between runs (envcheck/binaries/warm.py): a warm run
answers from it only while nothing the scan looked at changed; a change to a library, a RECORD
or a directory the loader searched, a damaged entry, an entry or directory that is not this
user's alone, each runs the scan again. Entries are JSON, written only in the cache directory."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from envcheck.binaries import scan as scan_module
from envcheck.binaries import warm
from envcheck.binaries.scan import scan
from envcheck.model.binaries import BinariesInfo
from envcheck.probes.context import ProbeContext
from tests.binaries.elfbuild import build_so, record
from tests.binaries.test_loading import EXT, _node


@pytest.fixture
def trusted_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's libraries were built a moment ago: trust what changed before the scan began
    (the default margin of a second guards the file system clock's granularity)."""
    monkeypatch.setattr(warm, "RACY_NS", 0)


def _ctx(tmp_path: Path, **env: str) -> ProbeContext:
    return ProbeContext(env={"HOME": str(tmp_path / "home"), **env})


def _entries(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "home" / ".cache" / "envcheck" / "binaries"
    return sorted(folder.glob("s-*.json")) if folder.is_dir() else []


class Scans:
    """Counts the full scans (a warm answer runs none)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = scan_module._scan

        def counted(*args: Any) -> Any:
            self.count += 1
            return real(*args)

        monkeypatch.setattr(scan_module, "_scan", counted)


def _ext(info: BinariesInfo) -> Any:
    return next(f for f in info.files if f.path.endswith(EXT))


@pytest.mark.usefixtures("trusted_now")
def test_a_second_scan_answers_from_the_kept_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, system = _node(tmp_path)
    ctx = _ctx(tmp_path, LD_LIBRARY_PATH=str(system))
    scans = Scans(monkeypatch)
    first = scan(ctx, [str(site)], "x86_64")
    second = scan(ctx, [str(site)], "x86_64")
    assert scans.count == 1
    assert second.files == first.files and second.site_dirs == first.site_dirs
    assert second.torch_lib == first.torch_lib and second.scanned == first.scanned == 3
    assert second.from_cache == second.scanned  # every file is as it was
    assert dataclasses.replace(second, from_cache=first.from_cache) == first  # the same answer
    [entry] = _entries(tmp_path)
    data = json.loads(entry.read_bytes())  # data only: JSON
    assert data["format"] == warm.FORMAT
    assert str(site / "myext" / EXT) in data["paths"]
    assert str(system) in data["paths"]  # a directory the loader searched


@pytest.mark.usefixtures("trusted_now")
def test_a_rebuilt_library_is_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, _ = _node(tmp_path)
    ctx = _ctx(tmp_path)
    scans = Scans(monkeypatch)
    first = scan(ctx, [str(site)], "x86_64")
    assert _ext(first).needs and "libdep.so.1" in {n.name for n in _ext(first).needs}
    build_so(
        site / "myext_libs" / "libdep.so.1",
        "int dep(void){return 1;}",
        soname="libdep.so.1",
        version_script="DEP_1.0 { }; DEP_2.0 { global: dep; local: *; };",
    )
    again = scan(ctx, [str(site)], "x86_64")
    assert scans.count == 2
    assert "libdep.so.1" not in {n.name for n in _ext(again).needs}  # it defines DEP_2.0 now


@pytest.mark.usefixtures("trusted_now")
def test_a_library_added_where_the_loader_looks_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing library installed into a directory the loader searched: the directory's
    listing changed, so the kept answer (``libgone.so.3`` not found) is not used."""
    site, system = _node(tmp_path)
    ctx = _ctx(tmp_path, LD_LIBRARY_PATH=str(system))
    scans = Scans(monkeypatch)
    first = scan(ctx, [str(site)], "x86_64")
    assert next(n for n in _ext(first).needs if n.name == "libgone.so.3").path is None
    build_so(system / "libgone.so.3", "int gone(void){return 3;}", soname="libgone.so.3")
    again = scan(ctx, [str(site)], "x86_64")
    assert scans.count == 2
    assert "libgone.so.3" not in {n.name for n in _ext(again).needs}


@pytest.mark.usefixtures("trusted_now")
def test_a_touched_file_or_a_new_distribution_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, _ = _node(tmp_path)
    ctx = _ctx(tmp_path)
    scans = Scans(monkeypatch)
    scan(ctx, [str(site)], "x86_64")
    ext = site / "myext" / EXT
    os.utime(ext, ns=(ext.stat().st_atime_ns, ext.stat().st_mtime_ns - 10**9))  # touched
    scan(ctx, [str(site)], "x86_64")
    assert scans.count == 2
    other = build_so(site / "other" / "_o.abi3.so", "int o(void){return 1;}")
    record(site, "other", "1.0", [other], requires=("torch",))
    info = scan(ctx, [str(site)], "x86_64")
    assert scans.count == 3 and info.scanned == 4
    scan(ctx, [str(site)], "x86_64")
    assert scans.count == 3  # nothing changed since


@pytest.mark.usefixtures("trusted_now")
def test_other_inputs_have_their_own_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, system = _node(tmp_path)
    scans = Scans(monkeypatch)
    plain = scan(_ctx(tmp_path), [str(site)], "x86_64")
    shadowed = scan(_ctx(tmp_path, LD_LIBRARY_PATH=str(system)), [str(site)], "x86_64")
    assert scans.count == 2
    assert "libfakeblas.so.12" not in {n.name for n in _ext(plain).needs}
    assert "libfakeblas.so.12" in {n.name for n in _ext(shadowed).needs}
    assert len(_entries(tmp_path)) == 2


@pytest.mark.usefixtures("trusted_now")
@pytest.mark.parametrize(
    "damage",
    [b"", b'{"format": 1, "key": "', b"[1, 2]", b'{"format": 1}', b"\xff\xfe{"],
)
def test_a_damaged_entry_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    site, _ = _node(tmp_path)
    ctx = _ctx(tmp_path)
    first = scan(ctx, [str(site)], "x86_64")
    [entry] = _entries(tmp_path)
    entry.write_bytes(damage)
    scans = Scans(monkeypatch)
    again = scan(ctx, [str(site)], "x86_64")
    assert scans.count == 1 and again.files == first.files


@pytest.mark.usefixtures("trusted_now")
def test_a_forged_answer_in_an_entry_is_not_believed_unless_it_is_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry another user could have written is never read: a directory others can write
    to, or a file this user does not own."""
    site, _ = _node(tmp_path)
    ctx = _ctx(tmp_path)
    scan(ctx, [str(site)], "x86_64")
    [entry] = _entries(tmp_path)
    data = json.loads(entry.read_bytes())
    names = [f.name for f in dataclasses.fields(BinariesInfo)]  # the answer: field values
    data["info"][names.index("files")] = []  # a clean bill of health, if it were believed
    entry.write_text(json.dumps(data))
    scans = Scans(monkeypatch)
    assert scan(ctx, [str(site)], "x86_64").files == ()  # ours: believed (it is our data)
    folder = entry.parent
    folder.chmod(0o777)
    try:
        assert scan(ctx, [str(site)], "x86_64").files != ()
    finally:
        folder.chmod(0o700)
    assert scans.count == 1
    if os.getuid() == 0:  # root can give the file away
        os.chown(entry, 12345, 12345)
        assert scan(ctx, [str(site)], "x86_64").files != ()
        assert scans.count == 2


def test_an_answer_scanned_while_files_change_is_not_kept(tmp_path: Path) -> None:
    """Files changed within a second of the scan's start (the file system's clock is coarse):
    the answer is not kept."""
    site, _ = _node(tmp_path)
    scan(_ctx(tmp_path), [str(site)], "x86_64")
    assert _entries(tmp_path) == []


@pytest.mark.usefixtures("trusted_now")
def test_no_cache_keeps_nothing_and_nothing_is_written_outside_the_cache(
    tmp_path: Path,
) -> None:
    site, system = _node(tmp_path)
    before = {p for p in tmp_path.rglob("*") if "home" not in p.parts}
    scan(_ctx(tmp_path, ENVCHECK_NO_CACHE="1"), [str(site)], "x86_64")
    assert not (tmp_path / "home").exists()
    cache = tmp_path / "elsewhere"
    ctx = _ctx(tmp_path, ENVCHECK_CACHE_DIR=str(cache), LD_LIBRARY_PATH=str(system))
    scan(ctx, [str(site)], "x86_64")
    scan(ctx, [str(site)], "x86_64")
    after = {p for p in tmp_path.rglob("*") if "home" not in p.parts}
    assert {p for p in after - before if cache not in p.parents and p != cache} == set()
    assert [p.name[:2] for p in (cache / "binaries").iterdir()] == ["s-"]
    assert oct((cache / "binaries").stat().st_mode & 0o777) == oct(0o700)


@pytest.mark.usefixtures("trusted_now")
def test_an_editable_install_is_never_kept(tmp_path: Path) -> None:
    """An editable install's source tree is walked, folder by folder: not fingerprinted, so the
    answer is not kept."""
    site, _ = _node(tmp_path)
    info = site / "ed-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ed\nVersion: 1.0\n")
    (info / "RECORD").write_text("")
    source = tmp_path / "src" / "ed"
    source.mkdir(parents=True)
    url = {"url": f"file://{source}", "dir_info": {"editable": True}}
    (info / "direct_url.json").write_text(json.dumps(url))
    scan(_ctx(tmp_path), [str(site)], "x86_64")
    assert _entries(tmp_path) == []
