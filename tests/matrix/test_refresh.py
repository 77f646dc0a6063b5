"""`envcheck matrix refresh` end to end against the loopback index serving recorded pages."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.errors import UsageError
from envcheck.index.cache import Cache
from envcheck.index.client import ClientOptions, IndexClient
from envcheck.index.config import IndexChoice
from envcheck.matrix.crosscheck import crosscheck
from envcheck.matrix.generated import DEFAULT_PACKAGES
from envcheck.matrix.load import builtin_dir, matrix_files, merge, parse_file, tree_files
from envcheck.matrix.refresh import RefreshOptions, RefreshResult, refresh
from tests.builtin_matrix import builtin_matrix
from tests.index.server import FIXTURES, build_wheel, fixture_page

TODAY = "2026-01-02"
BUILTIN = builtin_matrix()
# the default packages whose pages are recorded under tests/fixtures/index (trl is tested apart)
RECORDED = tuple(
    p for p in DEFAULT_PACKAGES if (FIXTURES / "pages" / f"{p}.json").exists() and p != "trl"
)


def run_refresh(
    server,
    tmp_path: Path,
    packages=RECORDED,
    *,
    cache: str = "cache",
    offline=False,
    **kwargs,
) -> tuple[RefreshResult, IndexClient]:
    client = IndexClient(
        Cache(tmp_path / cache),
        ClientOptions(timeout=2.0, retries=2, backoff=0.0, workers=4, offline=offline),
    )
    options = RefreshOptions(
        tuple(packages), tmp_path / "out", kwargs.pop("today", TODAY), **kwargs
    )
    return refresh(client, IndexChoice((server.index,), "--index-url"), options), client


def generated(tmp_path: Path):
    """The curated built-in tables with only this refresh's output as the generated set (the
    shipped set in matrices/generated/ would answer for releases the recorded pages lack)."""
    curated = [(str(p), parse_file(p)) for p in matrix_files(builtin_dir())]
    fresh = [(str(p), parse_file(p)) for p in tree_files(tmp_path / "out")]
    return merge(curated + fresh)


def test_refresh_of_recorded_pages_reproduces_the_curated_facts(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    result, _ = run_refresh(index_server, tmp_path)
    assert not result.failed and all(p.written for p in result.packages)
    matrix = generated(tmp_path)
    # the curated entries for these releases were built by hand from the same metadata
    assert crosscheck(matrix) == []
    gen = matrix.generated
    compared = 0
    for version in ("2.4.0", "2.9.0", "2.11.0"):
        wheel = gen.torch(Version(version))
        curated = BUILTIN.torch_release(Version(version))
        assert wheel is not None and curated is not None
        assert (wheel.pins, wheel.python, wheel.variant) == (
            curated.pins,
            curated.python,
            curated.pypi_default,
        )
        compared += 1
    for meta in gen.vllm_metadata:
        curated_vllm = BUILTIN.vllm_release(meta.version)
        if meta.unknown or curated_vllm is None or not curated_vllm.verified:
            continue
        for name in (
            "torch",
            "torchvision",
            "xformers",
            "ray",
            "numpy",
            "flashinfer",
            "requires_python",
        ):
            assert (getattr(meta, name) or SpecifierSet()) == (
                getattr(curated_vllm, name) or SpecifierSet()
            ), name
        compared += 1
    ray = next(r for r in gen.ray_wheels if r.version == Version("2.9.0"))
    assert ray.python == BUILTIN.ray_release(Version("2.9.0")).python
    assert compared == 7


def test_markers_arches_and_free_threading(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    run_refresh(index_server, tmp_path, ["torch", "vllm"])
    gen = generated(tmp_path).generated
    x86, arm = gen.torch(Version("2.9.0")), gen.torch(Version("2.9.0"), "aarch64")
    threaded = sorted(
        {
            f"3.{m.group(1)}"
            for f in fixture_page("torch")["files"]
            if (m := re.match(r"torch-2\.9\.0-cp3(\d+)-cp3\1t-manylinux.*_x86_64", f["filename"]))
        }
    )
    assert threaded and list(x86.free_threaded) == threaded
    assert not set(x86.free_threaded) - set(x86.python)  # cp313t beside cp313: both listed
    # up to 2.10 every CUDA pin is marked platform_machine == "x86_64": none applies on aarch64
    assert x86.pins and arm.pins == {} and arm.unknown is None
    assert all('platform_machine == "x86_64"' in m for m in x86.markers.values())
    # from 2.11 the marker is platform_system == "Linux" only, so aarch64 gets them too
    x86, arm = gen.torch(Version("2.11.0")), gen.torch(Version("2.11.0"), "aarch64")
    assert arm.pins == x86.pins and arm.variant == x86.variant == "cu130"
    assert x86.pins["cuda-toolkit"] == SpecifierSet("==13.0.2")
    # metadata answered 404 and the wheel is not on the index: unknown, with the reason
    arm = gen.torch(Version("2.4.0"), "aarch64")
    assert arm.python and arm.pins == {} and "HTTP 404" in (arm.unknown or "")
    # vLLM moved flashinfer into an extra; it still counts, and the marker says so
    vllm = next(v for v in gen.vllm_metadata if v.version == Version("0.10.1"))
    assert (
        vllm.flashinfer == SpecifierSet("==0.2.11") and "extra" in vllm.markers["flashinfer-python"]
    )
    assert vllm.numpy is None  # unconstrained numpy is not a requirement on the version


def test_sources_dates_and_yanked_releases(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    run_refresh(index_server, tmp_path)
    gen = generated(tmp_path).generated
    hashes = {
        f["filename"]: f["hashes"]["sha256"]
        for name in ("torch", "vllm", "xformers")
        for f in fixture_page(name)["files"]
    }
    with_metadata = [*gen.torch_wheel, *gen.vllm_metadata, *gen.companion_metadata]
    assert with_metadata
    for record in with_metadata:
        assert record.read == TODAY
        if record.file:
            assert record.sha256 == hashes[record.file]
        if record.unknown is None:
            assert record.metadata in ("metadata file", "range requests")
    yanked = {f["filename"].split("-")[1] for f in fixture_page("vllm")["files"] if f["yanked"]}
    for meta in gen.vllm_metadata:
        assert meta.yanked == (str(meta.version) in yanked)
    old = next(v for v in gen.vllm_metadata if v.yanked)
    assert old.yanked_reason and old.unknown  # yanked, and its metadata 404s on the index
    assert next(r for r in gen.ray_wheels if r.version == Version("1.7.1")).yanked
    for fa in gen.flash_attn_index:
        assert fa.sdist and fa.wheel_tags == () and "GitHub releases" in (fa.note or "")
    assert any(fa.yanked for fa in gen.flash_attn_index)
    for sim in gen.isaacsim_index:
        assert sim.requires_python is not None and sim.requires_python.contains(f"{sim.python}.0")


def test_a_broken_project_page_fails_that_package_only(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    index_server.page("ray", b'{"files": [ {"filename": ')
    result, _ = run_refresh(index_server, tmp_path, ["ray", "vllm"])
    ray, vllm = result.packages
    assert "not valid JSON" in (ray.error or "") and not ray.written
    assert not (tmp_path / "out" / "ray.toml").exists()
    assert vllm.error is None and vllm.written
    assert [p.name for p in result.failed] == ["ray"]


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        (
            b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.6.3\nRequires-Dist: torch==;;\n",
            "invalid Requires-Dist",
        ),
        (b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.6.2\n", "says version 0.6.2"),
        (b"Metadata-Version: 2.1\nName: other\nVersion: 0.6.3\n", "about other"),
        (b"\x00\x01 not metadata", "no Name or Version"),
    ],
)
def test_invalid_metadata_is_unknown_with_the_reason(
    index_server, tmp_path, metadata, reason
) -> None:
    index_server.serve_fixtures()
    index_server.add("/files/vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl.metadata", metadata)
    result, _ = run_refresh(index_server, tmp_path, ["vllm"])
    (vllm,) = result.packages
    assert vllm.error is None
    unknown = dict(vllm.unknown)
    assert reason in unknown["vllm 0.6.3"] and "invalid metadata" in unknown["vllm 0.6.3"]
    good = next(
        m for m in generated(tmp_path).generated.vllm_metadata if m.version == Version("0.11.0")
    )
    assert good.torch == SpecifierSet("==2.8.0")


def test_range_request_fallback_inside_a_refresh(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    page = fixture_page("vllm")
    wheel = build_wheel(
        "vllm", "0.8.1", ["torch==2.6.0", "ray[cgraph]>=2.43.0"], requires_python=">=3.9"
    )
    name = "vllm-0.8.1-cp38-abi3-manylinux1_x86_64.whl"
    page["files"].append(
        {
            "filename": name,
            "url": f"../../files/{name}",
            "hashes": {"sha256": hashlib.sha256(wheel).hexdigest()},
            "requires-python": ">=3.9",
        }
    )
    index_server.page("vllm", page)
    index_server.add(f"/files/{name}", wheel)
    result, _client = run_refresh(index_server, tmp_path, ["vllm"])
    meta = next(
        m for m in generated(tmp_path).generated.vllm_metadata if m.version == Version("0.8.1")
    )
    assert meta.metadata == "range requests" and meta.torch == SpecifierSet("==2.6.0")
    assert meta.ray == SpecifierSet(">=2.43.0") and meta.sha256 == hashlib.sha256(wheel).hexdigest()
    assert index_server.log.bytes_sent[f"/files/{name}"] < len(wheel) / 2
    assert result.packages[0].metadata.get("range requests") == 1


def test_429_on_the_project_page_is_retried(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    index_server.routes["/simple/ray/"].fail_first = 2
    result, client = run_refresh(index_server, tmp_path, ["ray"])
    assert not result.failed and client.counters.retries == 2


def test_a_cached_refresh_makes_one_request_per_package(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    run_refresh(index_server, tmp_path)
    first = {p: (tmp_path / "out" / f"{p}.toml").read_text() for p in RECORDED}
    before = index_server.requests()
    result, client = run_refresh(index_server, tmp_path, today="2026-02-03")
    assert index_server.requests() - before == len(RECORDED) == client.counters.requests
    assert client.counters.not_modified == len(RECORDED)
    assert all(not p.changes and not p.written for p in result.packages)
    # nothing changed, so the files (and the dates in them) are as they were
    assert first == {p: (tmp_path / "out" / f"{p}.toml").read_text() for p in RECORDED}
    offline, client = run_refresh(index_server, tmp_path, offline=True)
    assert index_server.requests() - before == len(RECORDED) and client.counters.requests == 0
    assert not offline.failed and all(not p.changes for p in offline.packages)


def test_unchanged_entries_keep_their_date_and_known_facts_are_not_lost(
    index_server, tmp_path
) -> None:
    index_server.serve_fixtures()
    run_refresh(index_server, tmp_path, ["vllm"])
    index_server.routes[
        "/files/vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl.metadata"
    ].fail_first = 100
    index_server.routes[
        "/files/vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl.metadata"
    ].fail_status = 503
    result, _ = run_refresh(
        index_server, tmp_path, ["vllm"], cache="fresh-cache", today="2026-03-04"
    )
    (vllm,) = result.packages
    assert vllm.kept == 1 and "HTTP 503" in dict(vllm.unknown)["vllm 0.6.3"]
    records = parse_file(tmp_path / "out" / "vllm.toml").vllm_metadata
    kept = next(m for m in records if m.version == Version("0.6.3"))
    assert kept.torch == SpecifierSet("==2.4.0") and kept.unknown is None
    assert {m.read for m in records} == {TODAY} and not vllm.changes


def test_since_refreshes_only_newer_releases_and_keeps_the_rest(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    run_refresh(index_server, tmp_path, ["vllm"])
    before = parse_file(tmp_path / "out" / "vllm.toml").vllm_metadata
    page = fixture_page("vllm")
    page["files"] = [f for f in page["files"] if not f["filename"].startswith("vllm-0.5.4")]
    index_server.page("vllm", page)  # 0.5.4 gone from the index, but before --since
    result, _ = run_refresh(index_server, tmp_path, ["vllm"], since=Version("0.10.0"))
    assert result.packages[0].releases == 2
    assert parse_file(tmp_path / "out" / "vllm.toml").vllm_metadata == before


def test_dry_run_writes_nothing_and_lists_the_changes(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    result, _ = run_refresh(index_server, tmp_path, ["ray"], dry_run=True)
    assert not (tmp_path / "out").exists()
    (ray,) = result.packages
    assert not ray.written and {c.kind for c in ray.changes} == {"added"}
    assert sorted(c.key for c in ray.changes) == ["1.7.1", "2.9.0"]


def test_hand_curated_files_are_never_overwritten(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    out = tmp_path / "out"
    out.mkdir()
    curated = (FIXTURES.parents[2] / "matrices" / "packages" / "ray.toml").read_text()
    (out / "ray.toml").write_text(curated)
    with pytest.raises(UsageError, match="not written by `envcheck matrix refresh`"):
        run_refresh(index_server, tmp_path, ["ray"])
    assert (out / "ray.toml").read_text() == curated


def test_generated_files_round_trip_through_the_strict_loader(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    run_refresh(index_server, tmp_path)
    for path in sorted((tmp_path / "out").glob("*.toml")):
        text = path.read_text()
        assert index_server.url not in text and "127.0.0.1" not in text  # no index URL recorded
        parsed = parse_file(path)
        assert parsed.meta.generated_by == "envcheck matrix refresh"
    data = json.loads((FIXTURES / "pages" / "torch.json").read_text())
    assert data["files"]


def test_a_companion_records_its_requirements_on_the_stack(index_server, tmp_path) -> None:
    """trl's recorded wheels: its transformers / accelerate / datasets floors become data
    (`requires`), extras-only requirements (deepspeed, peft) do not."""
    index_server.serve_fixtures()
    result, _ = run_refresh(index_server, tmp_path, ("trl",))
    assert not result.failed
    records = {str(c.version): c for c in generated(tmp_path).generated.companion_metadata}
    trl = records["0.19.0"]
    assert trl.package == "trl" and trl.torch is None
    assert trl.requires == {
        "accelerate": SpecifierSet(">=1.4.0"),
        "datasets": SpecifierSet(">=3.0.0"),
        "transformers": SpecifierSet(">=4.51.0"),
    }
    assert trl.requires_python == SpecifierSet(">=3.9")
    assert records["0.20.0"].requires["transformers"] == SpecifierSet(">=4.53.2")
