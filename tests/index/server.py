"""A package index on 127.0.0.1 for tests: a thread running http.server that serves recorded
responses, with the misbehaviours a real index shows (404s, 429s, slow answers, broken JSON,
ignored Range headers) switched on per path."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "index"
JSON = "application/vnd.pypi.simple.v1+json"


@dataclass
class Route:
    body: bytes
    status: int = 200
    content_type: str = "application/octet-stream"
    etag: str | None = None
    delay: float = 0.0  # seconds before answering
    fail_first: int = 0  # answer 429 to this many requests first
    fail_status: int = 429
    ignore_range: bool = False


@dataclass
class Log:
    hits: Counter[str] = field(default_factory=Counter)
    headers: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    bytes_sent: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


class IndexServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.log = Log()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with server.log.lock:
                    server.log.hits[path] += 1
                    server.log.headers.append((path, dict(self.headers.items())))
                    count = server.log.hits[path]
                route = server.routes.get(path)
                if route is None:
                    return self._send(404, b"", "text/plain", path)
                if count <= route.fail_first:
                    return self._send(
                        route.fail_status, b"slow down", "text/plain", path, {"Retry-After": "0"}
                    )
                if route.delay:
                    time.sleep(route.delay)
                if route.etag and self.headers.get("If-None-Match") == route.etag:
                    return self._send(304, b"", None, path, {"ETag": route.etag})
                extra = {"ETag": route.etag} if route.etag else {}
                spec = self.headers.get("Range")
                if spec and not route.ignore_range and route.status == 200:
                    first, last = _range(spec, len(route.body))
                    extra["Content-Range"] = f"bytes {first}-{last}/{len(route.body)}"
                    return self._send(
                        206, route.body[first : last + 1], route.content_type, path, extra
                    )
                return self._send(route.status, route.body, route.content_type, path, extra)

            def _send(
                self,
                status: int,
                body: bytes,
                ctype: str | None,
                path: str,
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                if ctype:
                    self.send_header("Content-Type", ctype)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    return
                with server.log.lock:
                    server.log.bytes_sent[path] += len(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def index(self) -> str:
        return f"{self.url}/simple"

    def start(self) -> IndexServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add(self, path: str, body: bytes, **kwargs: Any) -> Route:
        route = Route(body, **kwargs)
        self.routes[path] = route
        return route

    def page(self, name: str, data: dict[str, Any] | bytes, **kwargs: Any) -> Route:
        body = data if isinstance(data, bytes) else json.dumps(data).encode()
        kwargs.setdefault("content_type", JSON)
        return self.add(f"/simple/{name}/", body, **kwargs)

    def serve_fixtures(self) -> IndexServer:
        for page in sorted((FIXTURES / "pages").glob("*.json")):
            self.page(
                page.stem,
                page.read_bytes(),
                etag=f'"{hashlib.sha256(page.read_bytes()).hexdigest()[:16]}"',
            )
        for meta in sorted((FIXTURES / "files").glob("*.metadata")):
            self.add(f"/files/{meta.name}", meta.read_bytes())
        return self

    def requests(self, prefix: str = "") -> int:
        return sum(n for path, n in self.log.hits.items() if path.startswith(prefix))


def _range(spec: str, size: int) -> tuple[int, int]:
    unit, _, value = spec.partition("=")
    assert unit.strip() == "bytes", spec
    first, _, last = value.partition("-")
    if not first:
        n = int(last)
        return max(size - n, 0), size - 1
    return int(first), min(int(last) if last else size - 1, size - 1)


def fixture_page(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "pages" / f"{name}.json").read_text())
    return data


def build_wheel(
    name: str,
    version: str,
    requires: list[str],
    *,
    requires_python: str | None = None,
    payload: int = 300_000,
    metadata_first: bool = True,
) -> bytes:
    """A real-format wheel: dist-info (METADATA, WHEEL, RECORD) and an incompressible payload
    large enough that its METADATA lies outside the last 64 KiB when written first."""
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    metadata = "\n".join(lines) + "\n"
    wheel = "Wheel-Version: 1.0\nGenerator: envcheck-tests\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        members = [
            (f"{dist}/METADATA", metadata.encode()),
            (f"{dist}/WHEEL", wheel.encode()),
        ]
        payload_member = (f"{name.replace('-', '_')}/_payload.bin", _noise(payload))
        ordered = [*members, payload_member] if metadata_first else [payload_member, *members]
        for member, data in ordered:
            archive.writestr(
                zipfile.ZipInfo(member),
                data,
                compress_type=zipfile.ZIP_STORED
                if member.endswith(".bin")
                else zipfile.ZIP_DEFLATED,
            )
        archive.writestr(f"{dist}/RECORD", "")
    return buffer.getvalue()


def _noise(size: int) -> bytes:
    out = bytearray()
    block = b"envcheck"
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])
