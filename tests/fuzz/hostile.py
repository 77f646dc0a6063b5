"""Fuzz families for the security bounds (docs/security.md): terminal control sequences in
every kind of input, and a hostile package index on 127.0.0.1 for `matrix refresh`.

The index is one loopback server per process (a thread); each case registers a behaviour
under a path prefix of its own and points `--index-url` at it. Behaviours: a huge
Retry-After, a slow drip, an endless body, a gzip bomb, broken or hostile JSON, a zip-bomb
METADATA, server errors, with control sequences and planted secrets in what it serves."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import threading
import time
import zipfile
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.cases import LOG_LINES, Case, report_json
from tests.fuzz.harness import SECRET

CONTROLS = [
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b]0;title\x07",
    "\x1b]8;;https://evil.example/\x1b\\x\x1b]8;;\x1b\\",
    "\x1b[2J",
    "\x1b[1;1H",
    "\x9b2J",
    "\x1bP+q544e\x1b\\",
    "\x1b]52;c;unterminated",
    "\x07\x08\x0b\x0c\x7f\x85",
    "\x1bc",
]


@st.composite
def controlled(draw: st.DrawFn, text: str) -> str:
    """``text`` with control sequences put in at drawn places."""
    pieces = draw(st.lists(st.sampled_from(CONTROLS), min_size=1, max_size=3))
    for piece in pieces:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + piece + text[at:]
    return text


@st.composite
def control_case(draw: st.DrawFn) -> Case:
    which = draw(st.integers(0, 2))
    fmt = draw(st.sampled_from([(), ("--json",), ("--format", "markdown"), ("--verbose",)]))
    if which == 0:
        data = draw(report_json())
        data["node"] = draw(controlled("node-a"))
        packages = data.get("packages")
        if isinstance(packages, dict) and isinstance(packages.get("data"), dict):
            dists = packages["data"].get("distributions")
            if isinstance(dists, list) and dists and isinstance(dists[0], dict):
                dists.append({**dists[0], "name": draw(controlled("evil-pkg"))})
        body = json.dumps(data).encode()
        return Case("controls", ("check", "--report", "{dir}/r.json", *fmt), {"r.json": body})
    if which == 1:
        lines = [
            draw(controlled(line))
            for line in draw(st.lists(st.sampled_from(LOG_LINES), min_size=1, max_size=4))
        ]
        log = ("\n".join(lines) + "\n").encode()
        engine = draw(st.sampled_from([(), ("--engine", "re"), ("--engine", "grep")]))
        args = ("triage", "{dir}/job.log", "--no-probe", *engine)
        return Case("controls", (*args, *fmt[:1]) if fmt == ("--json",) else args, {"job.log": log})
    dump = draw(controlled("torch==2.4.0+cu121\nnumpy==2.1.3\nvllm==0.6.3\n"))
    return Case("controls", ("check", "--from", "{dir}/dump.txt"), {"dump.txt": dump.encode()})


# --- the hostile index -----------------------------------------------------------------------

Behaviour = Callable[[BaseHTTPRequestHandler, str], None]
_behaviours: dict[str, Behaviour] = {}
_servers: list[ThreadingHTTPServer] = []  # the one server of this process, once started
_lock = threading.Lock()
_ids = itertools.count()


def _page(files: list[dict[str, Any]], name: str = "torch") -> bytes:
    return json.dumps(
        {"meta": {"api-version": "1.1"}, "name": name, "files": files, "versions": ["1.0"]}
    ).encode()


def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
    h.send_response(status)
    for key, value in {"Content-Length": str(len(body)), **headers}.items():
        h.send_header(key, value)
    h.end_headers()
    h.wfile.write(body)


JSON = {"Content-Type": "application/vnd.pypi.simple.v1+json"}


def _bomb_wheel() -> bytes:
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("torch-1.0.dist-info/METADATA", "w", force_zip64=True) as member,
    ):
        for _ in range(40):
            member.write(b"\0" * (1 << 20))
    return buffer.getvalue()


_WHEEL: list[bytes] = []


def _wheel_files(prefix: str) -> list[dict[str, Any]]:
    return [
        {
            "filename": "torch-1.0-py3-none-any.whl",
            "url": f"{prefix}/files/torch-1.0-py3-none-any.whl",
            "hashes": {},
            "core-metadata": False,
        }
    ]


def _hostile(kind: str, secret_url: bool) -> Behaviour:
    def serve(h: BaseHTTPRequestHandler, rest: str) -> None:
        prefix = h.path[: len(h.path) - len(rest)]
        if kind == "retry-after":
            return _send(h, 503, b"", {"Retry-After": "100000"})
        if kind == "server-error":
            return _send(h, 500, b"\x1b]0;oops\x07", {})
        if kind == "drip":
            h.send_response(200)
            h.send_header("Content-Type", JSON["Content-Type"])
            h.send_header("Content-Length", "100000")
            h.end_headers()
            for _ in range(100000):
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(0.05)
            return None
        if kind == "endless":
            h.send_response(200)
            h.send_header("Content-Type", JSON["Content-Type"])
            h.send_header("Connection", "close")
            h.end_headers()
            while True:
                h.wfile.write(b" " * (1 << 20))
        if kind == "gzip-bomb":
            return _send(h, 200, _GZIP_BOMB, {**JSON, "Content-Encoding": "gzip"})
        if kind == "broken-json":
            return _send(h, 200, b'{"meta": {"api-version": "1.1"}, "files": [', JSON)
        if kind == "zip-bomb":
            if rest.startswith("/files/"):
                if not _WHEEL:
                    _WHEEL.append(_bomb_wheel())
                body = _WHEEL[0]
                spec = h.headers.get("Range", "")
                first, last = 0, len(body) - 1
                if spec.startswith("bytes=-"):
                    first = max(0, len(body) - int(spec[7:]))
                elif spec.startswith("bytes="):
                    a, _, b = spec[6:].partition("-")
                    first, last = int(a), min(int(b or last), len(body) - 1)
                return _send(
                    h,
                    206,
                    body[first : last + 1],
                    {"Content-Range": f"bytes {first}-{last}/{len(body)}"},
                )
            return _send(h, 200, _page(_wheel_files(prefix)), JSON)
        # hostile text in a well-formed page: control sequences, a credential in a URL
        url = f"http://alice:{SECRET}@127.0.0.1:1/x.whl" if secret_url else "\x1b]52;c;x\x07.whl"
        files = [{"filename": "torch-1.0\x1b[2J-py3-none-any.whl", "url": url, "hashes": {}}]
        return _send(h, 200, _page(files), JSON)

    return serve


_GZIP_BOMB = gzip.compress(b" " * (96 << 20), compresslevel=9)

KINDS = [
    "retry-after",
    "server-error",
    "drip",
    "endless",
    "gzip-bomb",
    "broken-json",
    "zip-bomb",
    "hostile-text",
]


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (as envcheck does at a cap) is not an error to print: the
        harness reads standard error for tracebacks."""


def _ensure_server() -> int:
    with _lock:
        if not _servers:

            class Serve(BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"

                def log_message(self, format: str, *args: Any) -> None:
                    pass

                def do_GET(self) -> None:
                    parts = self.path.split("/", 2)  # "", case id, rest
                    behaviour = _behaviours.get(parts[1]) if len(parts) > 1 else None
                    try:
                        if behaviour is None:
                            _send(self, 404, b"", {})
                        else:
                            behaviour(self, "/" + (parts[2] if len(parts) > 2 else ""))
                    except (BrokenPipeError, ConnectionResetError, TimeoutError):
                        pass

            server = _Quiet(("127.0.0.1", 0), Serve)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            _servers.append(server)
        return int(_servers[0].server_address[1])


@st.composite
def index_case(draw: st.DrawFn) -> Case:
    kind = draw(st.sampled_from(KINDS))
    port = _ensure_server()
    case_id = f"c{next(_ids)}-{hashlib.sha1(kind.encode()).hexdigest()[:6]}"
    _behaviours[case_id] = _hostile(kind, draw(st.booleans()))
    argv = (
        "matrix",
        "refresh",
        "--index-url",
        f"http://127.0.0.1:{port}/{case_id}/simple/",
        "--packages",
        "torch",
        "--no-cache",
        "--dry-run",
        "--retries",
        draw(st.sampled_from(["0", "1", "2"])),
        "--timeout",
        "0.5",
        "--deadline",
        "3",
        *draw(st.sampled_from([(), ("--json",)])),
    )
    return Case("index", argv)
