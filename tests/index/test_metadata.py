from __future__ import annotations

import hashlib

import pytest

from envcheck.index.cache import Cache
from envcheck.index.client import ClientOptions, IndexClient
from envcheck.index.metadata import CHUNK, VIA_FILE, VIA_RANGE, fetch_metadata, read_wheel_metadata
from envcheck.index.simple import IndexFile
from tests.index.server import build_wheel

OPTIONS = ClientOptions(timeout=2.0, retries=1, backoff=0.0)
NAME = "demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"


def _client(tmp_path, cache: bool = True) -> IndexClient:
    return IndexClient(Cache(tmp_path / "cache") if cache else None, OPTIONS)


def _file(server, body: bytes, **kwargs) -> IndexFile:
    return IndexFile(NAME, f"{server.url}/files/{NAME}", hashlib.sha256(body).hexdigest(), **kwargs)


def test_pep658_metadata_file_is_used_and_cached_by_file_hash(index_server, tmp_path) -> None:
    text = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: torch==2.4.0\n"
    index_server.add(f"/files/{NAME}.metadata", text)
    file = _file(
        index_server,
        b"wheel bytes",
        core_metadata=True,
        metadata_sha256=hashlib.sha256(text).hexdigest(),
    )
    got = fetch_metadata(_client(tmp_path), file, "demo")
    assert (got.text, got.how, got.cached) == (text.decode(), VIA_FILE, False)
    again = _client(tmp_path)
    assert fetch_metadata(again, file, "demo").cached
    assert again.counters.requests == 0 and index_server.requests() == 1


def test_metadata_hash_mismatch_is_unknown(index_server, tmp_path) -> None:
    index_server.add(f"/files/{NAME}.metadata", b"Name: demo\n")
    file = _file(index_server, b"w", core_metadata=True, metadata_sha256="0" * 64)
    got = fetch_metadata(_client(tmp_path), file, "demo")
    assert got.text is None and "does not match" in (got.unknown or "")


@pytest.mark.parametrize("metadata_first", [True, False])
def test_range_requests_read_only_the_metadata_of_a_wheel(
    index_server, tmp_path, metadata_first
) -> None:
    wheel = build_wheel(
        "demo",
        "1.0",
        ["torch==2.6.0", 'xformers==0.0.29; platform_machine == "x86_64"'],
        metadata_first=metadata_first,
    )
    index_server.add(f"/files/{NAME}", wheel)  # no .metadata: 404
    client = _client(tmp_path)
    got = fetch_metadata(client, _file(index_server, wheel), "demo")
    assert got.how == VIA_RANGE and got.text is not None
    assert "Requires-Dist: torch==2.6.0" in got.text
    sent = index_server.log.bytes_sent[f"/files/{NAME}"]
    assert sent < len(wheel) / 2, (sent, len(wheel))  # never the whole wheel
    assert index_server.log.hits[f"/files/{NAME}.metadata"] == 1
    assert 1 <= index_server.log.hits[f"/files/{NAME}"] <= 3
    assert client.counters.range_requests == index_server.log.hits[f"/files/{NAME}"]


def test_small_chunks_still_reassemble_the_member(index_server, tmp_path) -> None:
    from envcheck.index.metadata import RemoteFile

    wheel = build_wheel("demo", "1.0", ["numpy<2"], payload=50_000)
    index_server.add(f"/files/{NAME}", wheel)
    remote = RemoteFile(_client(tmp_path), f"{index_server.url}/files/{NAME}", chunk=1000)
    assert remote.size == len(wheel)
    remote.seek(0)
    assert remote.read(4) == b"PK\x03\x04"
    remote.seek(-22, 2)
    assert remote.read() == wheel[-22:]
    remote.seek(1990)
    assert remote.read(30) == wheel[1990:2020]


def test_server_ignoring_range_is_never_downloaded(index_server, tmp_path) -> None:
    wheel = build_wheel("demo", "1.0", ["torch"], payload=2 * CHUNK)
    index_server.add(f"/files/{NAME}", wheel, ignore_range=True)
    client = _client(tmp_path)
    got = fetch_metadata(client, _file(index_server, wheel), "demo")
    assert got.text is None and "ignores Range" in (got.unknown or "")
    assert client.counters.bytes < CHUNK
    # a permanent failure is remembered: the next refresh asks nothing for this file
    before = index_server.requests()
    assert fetch_metadata(_client(tmp_path), _file(index_server, wheel), "demo").cached
    assert index_server.requests() == before


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (None, "the wheel itself is missing (HTTP 404)"),
        (b"not a zip file at all" * 100, "not a readable wheel"),
    ],
)
def test_unreadable_wheels_are_unknown_with_the_reason(
    index_server, tmp_path, body, reason
) -> None:
    if body is not None:
        index_server.add(f"/files/{NAME}", body)
    got = fetch_metadata(_client(tmp_path), _file(index_server, body or b""), "demo")
    assert got.text is None and reason in (got.unknown or "")
    assert "metadata file: HTTP 404" in (got.unknown or "")


def test_sdists_are_not_read(index_server, tmp_path) -> None:
    file = IndexFile(
        "demo-1.0.tar.gz",
        f"{index_server.url}/files/demo-1.0.tar.gz",
        "ab" * 32,
        core_metadata=False,
    )
    got = fetch_metadata(_client(tmp_path), file, "demo")
    assert "only wheels" in (got.unknown or "") and index_server.requests() == 0


def test_transient_failures_are_not_cached(index_server, tmp_path) -> None:
    index_server.add(f"/files/{NAME}.metadata", b"Name: demo\n", fail_first=100, fail_status=503)
    file = _file(index_server, b"w")
    got = fetch_metadata(_client(tmp_path), file, "demo")
    assert "HTTP 503" in (got.unknown or "")
    index_server.add(f"/files/{NAME}.metadata", b"Name: demo\n")
    assert fetch_metadata(_client(tmp_path), file, "demo").text == "Name: demo\n"


def test_offline_without_cache_is_unknown(index_server, tmp_path) -> None:
    client = IndexClient(Cache(tmp_path / "c"), ClientOptions(offline=True))
    got = fetch_metadata(client, _file(index_server, b"w"), "demo")
    assert "offline" in (got.unknown or "") and index_server.requests() == 0


def test_wheel_metadata_member_is_found_by_project_name(index_server, tmp_path) -> None:
    wheel = build_wheel("my-pkg", "2.0", ["ray>=2.9"])
    index_server.add(f"/files/{NAME}", wheel)
    text = read_wheel_metadata(_client(tmp_path, cache=False), _file(index_server, wheel), "My_Pkg")
    assert "Name: my-pkg" in text
