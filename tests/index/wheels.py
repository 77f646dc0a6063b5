"""Wheel indexes on 127.0.0.1 for resolver tests: each index is a folder of real wheels (built by
tests/wheelfactory.py) served as a PEP 691 JSON simple API with PEP 700 upload times, so uv and
pip resolve, hash and download from it exactly as from a public index.

One server serves several indexes (``/<name>/simple/``): one plays the default index, another
the PyTorch index. Nothing is read from or written to the network beyond loopback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from packaging.utils import canonicalize_name

from tests.wheelfactory import WheelSpec, make_wheel

JSON = "application/vnd.pypi.simple.v1+json"
DEFAULT_TIME = "2024-01-01T00:00:00Z"


@dataclass
class _File:
    path: Path
    sha256: str
    uploaded: str
    requires_python: str | None


@dataclass
class WheelIndexes:
    """Serve ``{index name: wheels}`` on loopback; ``url(name)`` is an index URL for pip/uv."""

    root: Path
    files: dict[str, dict[str, list[_File]]] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    _httpd: ThreadingHTTPServer | None = None

    def add(self, index: str, specs: Iterable[WheelSpec], *, uploaded: str = DEFAULT_TIME) -> None:
        folder = self.root / index
        for spec in specs:
            wheel = make_wheel(folder, spec)
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            self.files.setdefault(index, {}).setdefault(canonicalize_name(spec.name), []).append(
                _File(wheel, digest, uploaded, spec.requires_python)
            )

    @property
    def base(self) -> str:
        assert self._httpd is not None, "start() first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, index: str) -> str:
        """The index URL: ``/<index>/simple`` (an index named ``whl/cu128`` is served at
        ``/whl/cu128`` too, the PyTorch index's shape)."""
        return f"{self.base}/{index}" + ("" if "/" in index else "/simple")

    def _page(self, index: str, project: str) -> bytes | None:
        found = self.files.get(index, {}).get(canonicalize_name(project))
        if not found:
            return None
        data: dict[str, Any] = {
            "meta": {"api-version": "1.1"},
            "name": canonicalize_name(project),
            "versions": [],
            "files": [
                {
                    "filename": f.path.name,
                    "url": f"{self.base}/{index}/files/{f.path.name}",
                    "hashes": {"sha256": f.sha256},
                    "requires-python": f.requires_python,
                    "upload-time": f.uploaded,
                    "size": f.path.stat().st_size,
                }
                for f in found
            ],
        }
        return json.dumps(data).encode()

    def start(self) -> WheelIndexes:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.do_GET(head=True)

            def do_GET(self, head: bool = False) -> None:
                owner.hits.append(self.path)
                parts = [unquote(p) for p in self.path.split("?")[0].split("/") if p]
                body, ctype = None, "application/octet-stream"
                if len(parts) >= 3 and parts[-2] == "files":
                    path = owner.root.joinpath(*parts[:-2], parts[-1])
                    body = path.read_bytes() if path.is_file() else None
                elif len(parts) >= 2:
                    index = parts[:-1][:-1] if parts[-2] == "simple" else parts[:-1]
                    body, ctype = owner._page("/".join(index), parts[-1]), JSON
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if head:
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def serve(root: Path, indexes: Mapping[str, Iterable[WheelSpec]]) -> WheelIndexes:
    served = WheelIndexes(root)
    for name, specs in indexes.items():
        served.add(name, specs)
    return served.start()
