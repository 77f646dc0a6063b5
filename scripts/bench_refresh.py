"""Benchmark ``envcheck matrix refresh --packages vllm`` over vLLM's full release history:
a cold refresh (empty cache), the same with one worker, and a cached refresh, each the median of
several runs of the CLI, with the requests the client counted. A cached refresh must make at most
one request per package (the project page's conditional request).

What a user would otherwise do to read the same facts is download each release's wheel
(``pip download --no-deps vllm==X``): the script quotes the bytes that would take (from the
sizes the index lists) against the bytes the refresh transferred.

    python scripts/bench_refresh.py --index-url URL [--runs 3]    # a real index (by hand)
    python scripts/bench_refresh.py --local [--releases 100]      # a loopback index
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


@dataclass(frozen=True)
class Row:
    label: str
    walls: list[float]
    requests: list[int]
    transferred: list[int]
    result: dict[str, Any]

    @property
    def median(self) -> float:
        return statistics.median(self.walls)


def refresh(index: str, out: Path, cache: Path, *extra: str) -> tuple[float, dict[str, Any]]:
    argv = [sys.executable, "-m", "envcheck", "matrix", "refresh", "--packages", "vllm"]
    argv += ["--index-url", index, "--output", str(out), "--cache-dir", str(cache), "--json"]
    start = time.perf_counter()
    proc = subprocess.run([*argv, *extra], capture_output=True, text=True, check=False, cwd=REPO)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"refresh failed ({proc.returncode}): {proc.stderr.strip()}")
    envelope: dict[str, Any] = json.loads(proc.stdout)
    return wall, envelope


def series(label: str, index: str, runs: int, work: Path, *extra: str, cold: bool) -> Row:
    walls, requests, transferred = [], [], []
    envelope: dict[str, Any] = {}
    shared = work / "cache-shared"
    if not cold:  # fill the cache once
        refresh(index, work / "out-warm", shared, *extra)
    for n in range(runs):
        cache = work / f"cache-{label}-{n}" if cold else shared
        out = work / f"out-{label}-{n}"
        wall, envelope = refresh(index, out, cache, *extra)
        walls.append(wall)
        requests.append(envelope["data"]["requests"]["requests"])
        transferred.append(envelope["data"]["requests"]["bytes"])
    return Row(label, walls, requests, transferred, envelope)


def wheel_bytes(index: str, result: dict[str, Any], out: Path) -> tuple[int, int]:
    """(number of wheels read, their total size as the index lists it)."""
    from envcheck.index.client import IndexClient
    from envcheck.index.simple import parse_project
    from envcheck.matrix.load import parse_file

    page = parse_project(IndexClient(None).project_page(f"{index.rstrip('/')}/vllm/").body, index)
    sizes = {f.filename: f.size or 0 for f in page.files}
    files = [m.file for m in parse_file(out / "vllm.toml").vllm_metadata if m.file and m.metadata]
    del result
    return len(files), sum(sizes.get(f, 0) for f in files)


def report(rows: list[Row], releases: int, wheels: int, whole: int) -> str:
    cold = rows[0]
    lines = [
        "| refresh of vLLM's history | runs | median wall | min–max | requests | transferred | vs cold |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = "baseline" if row is cold else f"{cold.median / row.median:.1f}× faster"
        if row.median > cold.median:
            ratio = f"{row.median / cold.median:.1f}× slower"
        lines.append(
            f"| {row.label} | {len(row.walls)} | {row.median:.2f} s | {min(row.walls):.2f}–"
            f"{max(row.walls):.2f} s | {statistics.median(row.requests):g} | "
            f"{statistics.median(row.transferred) / 1e6:.2f} MB | {ratio} |"
        )
    moved = statistics.median(cold.transferred)
    lines.append("")
    lines.append(
        f"{releases} releases; metadata of {wheels} wheels read. Downloading those wheels "
        f"(`pip download --no-deps`) would move {whole / 1e9:.2f} GB; the cold refresh moved "
        f"{moved / 1e6:.2f} MB ({whole / max(moved, 1):,.0f}× less)."
    )
    return "\n".join(lines)


def serve_local(releases: int, latency_ms: float) -> tuple[Any, str]:
    """A loopback index with a vLLM-like history: one Linux wheel and one sdist per release;
    two thirds have PEP 658 metadata files, the rest are read by range requests."""
    from tests.index.server import JSON, IndexServer, build_wheel

    server = IndexServer()
    files = []
    for n in range(releases):
        version = f"0.{n // 10}.{n % 10}"
        name = f"vllm-{version}-cp38-abi3-manylinux1_x86_64.whl"
        wheel = build_wheel("vllm", version, [f"torch==2.{n % 10}.0", "ray>=2.9", "numpy<2"])
        server.add(f"/files/{name}", wheel, delay=latency_ms / 1000)
        if n % 3:
            meta = wheel_metadata(wheel)
            server.add(f"/files/{name}.metadata", meta, delay=latency_ms / 1000)
        sha = hashlib.sha256(wheel).hexdigest()
        files.append(
            {
                "filename": name,
                "url": f"../../files/{name}",
                "hashes": {"sha256": sha},
                "requires-python": ">=3.9",
                "size": len(wheel),
            }
        )
        files.append(
            {
                "filename": f"vllm-{version}.tar.gz",
                "url": f"../../files/vllm-{version}.tar.gz",
                "hashes": {},
            }
        )
    body = json.dumps({"meta": {"api-version": "1.1"}, "name": "vllm", "files": files}).encode()
    server.add("/simple/vllm/", body, content_type=JSON, etag='"v1"', delay=latency_ms / 1000)
    return server.start(), server.index


def wheel_metadata(wheel: bytes) -> bytes:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--index-url", help="a simple index (e.g. the one pip uses)")
    where.add_argument("--local", action="store_true", help="a loopback index (no network)")
    parser.add_argument("--releases", type=int, default=100, help="--local: releases to serve")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="--local: per response")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    server = None
    if args.local:
        server, index = serve_local(args.releases, args.latency_ms)
    else:
        index = args.index_url
    try:
        with tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp:
            work = Path(tmp)
            rows = [
                series("cold (4 workers)", index, args.runs, work, cold=True),
                series("cold (1 worker)", index, args.runs, work, "--workers", "1", cold=True),
                series("cached", index, max(args.runs, 5), work, cold=False),
            ]
            package = rows[0].result["data"]["packages"][0]
            wheels, whole = wheel_bytes(index, rows[0].result, work / "out-cold (4 workers)-0")
            print(report(rows, package["releases"], wheels, whole))
            cached = rows[2]
            assert max(cached.requests) <= 1, f"a cached refresh made {cached.requests} requests"
            print(f"\ncached refresh: at most {max(cached.requests)} request for 1 package: ok")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
