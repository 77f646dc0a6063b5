"""A hostile package index on 127.0.0.1 (a thread in the test; never any other address):
an unbounded Retry-After, a slow drip that never trips a per-read timeout, an endless body,
a gzip bomb and a zip-bomb METADATA. Each is cut off within the bounds of
envcheck/index/client.py (one deadline per request and per command, Retry-After capped,
body and unpacked-size caps) instead of sleeping for days or filling memory."""

from __future__ import annotations

import gzip
import io
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from envcheck.index.client import ClientOptions, FetchError, IndexClient, _CountingRetry
from envcheck.index.metadata import RangeError, read_wheel_metadata
from envcheck.index.simple import IndexFile
from tests.conftest import run_cli

Handler = Callable[[BaseHTTPRequestHandler], None]


def _bomb_wheel() -> bytes:
    """A wheel whose METADATA unpacks to 64 MiB more than the cap (deflated: ~80 KiB)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo("bomb-1.0.dist-info/METADATA")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(80):  # 80 MiB, over the 16 MiB cap
                member.write(block)
        archive.writestr("bomb/__init__.py", "")
    return buffer.getvalue()


class HostileIndex:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        outer = self

        class Serve(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                route = outer.routes.get(self.path.split("?")[0])
                try:
                    if route is None:
                        self.send_response(404)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                    else:
                        route(self)
                except (TimeoutError, BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Serve)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def index() -> Iterator[HostileIndex]:
    server = HostileIndex()
    yield server
    server.close()


def _retry_after(h: BaseHTTPRequestHandler) -> None:
    h.send_response(503)
    h.send_header("Retry-After", "100000")  # 27 hours
    h.send_header("Content-Length", "0")
    h.end_headers()


def _drip(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    for _ in range(100000):
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.1)  # well inside any per-read timeout


def _endless(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
    h.send_header("Connection", "close")
    h.end_headers()
    block = b"0" * (1 << 20)
    while True:  # 6 GB and more: until the client hangs up
        h.wfile.write(block)


BOMB = gzip.compress(b" " * (256 << 20), compresslevel=9)  # 256 MiB unpacked, ~250 KiB sent


def _gzip_bomb(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
    h.send_header("Content-Encoding", "gzip")
    h.send_header("Content-Length", str(len(BOMB)))
    h.end_headers()
    h.wfile.write(BOMB)


def _ranged(body: bytes) -> Handler:
    def serve(h: BaseHTTPRequestHandler) -> None:
        spec = h.headers.get("Range", "")
        first, last = 0, len(body) - 1
        if spec.startswith("bytes=-"):
            first = max(0, len(body) - int(spec[7:]))
        elif spec.startswith("bytes="):
            a, _, b = spec[6:].partition("-")
            first, last = int(a), min(int(b or last), len(body) - 1)
        chunk = body[first : last + 1]
        h.send_response(206)
        h.send_header("Content-Range", f"bytes {first}-{last}/{len(body)}")
        h.send_header("Content-Length", str(len(chunk)))
        h.end_headers()
        h.wfile.write(chunk)

    return serve


def test_retry_after_is_capped() -> None:
    from envcheck.index.client import RETRY_AFTER_CAP

    retry = _CountingRetry(total=1)
    assert retry.parse_retry_after("100000") == RETRY_AFTER_CAP == 60.0
    assert retry.parse_retry_after("Wed, 21 Oct 2099 07:28:00 GMT") == RETRY_AFTER_CAP
    retry.time_left = lambda: 2.5
    assert retry.parse_retry_after("100000") == 2.5  # never past the command's deadline


def test_retry_after_never_outlasts_the_command(index: HostileIndex) -> None:
    index.routes["/simple/torch/"] = _retry_after
    client = IndexClient(None, ClientOptions(timeout=2, retries=2, backoff=0, command_deadline=3))
    start = time.monotonic()
    with pytest.raises(FetchError):
        response = client.get(index.url("/simple/torch/"), kind="page")
        client.raise_for_status(response)
    assert time.monotonic() - start < 10


def test_slow_drip_hits_the_request_deadline(index: HostileIndex) -> None:
    index.routes["/simple/torch/"] = _drip
    client = IndexClient(None, ClientOptions(timeout=1, retries=0, request_deadline=2))
    start = time.monotonic()
    with pytest.raises(FetchError, match="no complete answer within 2 s"):
        client.get(index.url("/simple/torch/"), kind="page")
    assert time.monotonic() - start < 6


def test_endless_body_is_cut_at_the_cap(index: HostileIndex) -> None:
    index.routes["/simple/torch/"] = _endless
    client = IndexClient(None, ClientOptions(timeout=5, retries=0, max_body=8 << 20))
    with pytest.raises(FetchError, match="larger than 8388608 bytes"):
        client.get(index.url("/simple/torch/"), kind="page")


def test_gzip_bomb_is_cut_after_decompression(index: HostileIndex) -> None:
    index.routes["/simple/torch/"] = _gzip_bomb
    client = IndexClient(None, ClientOptions(timeout=5, retries=0))  # default cap: 64 MiB
    with pytest.raises(FetchError, match="larger than"):
        client.get(index.url("/simple/torch/"), kind="page")


def test_zip_bomb_metadata_is_not_unpacked(index: HostileIndex) -> None:
    index.routes["/files/bomb-1.0-py3-none-any.whl"] = _ranged(_bomb_wheel())
    client = IndexClient(None, ClientOptions(timeout=5, retries=0))
    wheel = IndexFile("bomb-1.0-py3-none-any.whl", index.url("/files/bomb-1.0-py3-none-any.whl"))
    with pytest.raises(RangeError, match="METADATA"):
        read_wheel_metadata(client, wheel, "bomb")


def test_matrix_refresh_against_a_hostile_index_is_bounded(index: HostileIndex) -> None:
    """The command end to end: a 27-hour Retry-After on every page, --deadline 3: the
    package fails with a reason, exit 1, within seconds, no traceback."""
    index.routes["/simple/torch/"] = _retry_after
    start = time.monotonic()
    result = run_cli(
        "matrix",
        "refresh",
        "--index-url",
        index.url("/simple/"),
        "--packages",
        "torch",
        "--no-cache",
        "--dry-run",
        "--retries",
        "3",
        "--deadline",
        "3",
        timeout=60,
    )
    assert time.monotonic() - start < 30
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "FAILED" in result.stdout
