"""Benchmark ``envcheck diff`` over 1,000 synthetic node reports, and the fan-out of
``envcheck cluster`` over a local multi-node Ray cluster next to a plain Ray task round trip.

    python scripts/bench_cluster.py                 # both parts
    python scripts/bench_cluster.py --nodes 1000 --runs 5 --skip-ray

The reports start from a real `envcheck probe` of this machine, padded to a training node's
size (300 distributions, 8 GPUs, 60 environment variables), with per-node hostnames, addresses,
GPU memory in use and free disk; a few nodes are odd (another Ray patch release, another torch
build, an RTX 4090 node, a missing GLOO_SOCKET_IFNAME). Targets (issue 5): diff ≤ 2 s median
and ≤ 500 MiB peak RSS for 1,000 reports.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import measure, table

REPO = Path(__file__).resolve().parent.parent
ENVCHECK = [sys.executable, "-m", "envcheck"]


def base_report() -> dict[str, Any]:
    out = subprocess.run([*ENVCHECK, "probe", "--json"], capture_output=True, text=True, check=True)
    data: dict[str, Any] = json.loads(out.stdout)
    dists = data["packages"]["data"]["distributions"]
    location = dists[0]["location"] if dists else "/opt/venv/lib/python3.11/site-packages"
    for i in range(max(0, 300 - len(dists))):
        dists.append(
            {
                "name": f"synthetic-dep-{i:03d}",
                "version": f"1.{i % 17}.{i % 5}",
                "location": location,
                "installer": "pip",
                "requires": [f"synthetic-dep-{(i + k) % 300:03d}>=1.0" for k in (1, 2, 3)],
            }
        )
    for name, version in (("ray", "2.9.3"), ("torch", "2.4.0+cu121"), ("numpy", "1.26.4")):
        found = [d for d in dists if d["name"].lower() == name]
        if found:
            found[0]["version"] = version
        else:
            dists.append({"name": name, "version": version, "location": location, "requires": []})
    gpus = [
        {
            "index": i,
            "name": "NVIDIA A100-SXM4-80GB",
            "uuid_hash": f"gpu{i}",
            "compute_capability": "8.0",
            "memory_total_mib": 81920,
            "memory_used_mib": 0,
            "persistence_mode": True,
            "process_count": 0,
            "process_memory_mib": 0,
        }
        for i in range(8)
    ]
    data["gpu"] = {
        "status": "ok",
        "data": {
            "driver_version": "550.54.15",
            "cuda_driver_version": "12.4",
            "nvml_version": "12.550.54.15",
            "driver_source": "nvml",
            "gpus": gpus,
            "gpus_reason": None,
        },
        "reason": None,
        "source": "nvml",
        "duration_ms": 12.0,
        "notes": [],
    }
    env = data["env"]["data"]["variables"]
    for i in range(60 - len(env)):
        env[f"SITE_SETTING_{i:02d}"] = f"value-{i}"
    env["GLOO_SOCKET_IFNAME"] = "eth0"
    env["NCCL_SOCKET_IFNAME"] = "eth0"
    return data


def node_report(base: dict[str, Any], i: int) -> dict[str, Any]:
    data = copy.deepcopy(base)
    name = f"gpu-node-{i:04d}"
    address = f"10.1.{i // 250}.{i % 250 + 2}"
    data["node"] = name
    net = data["network"]["data"]
    net["hostname"] = name
    net["hostname_addresses"] = [address]
    net["interfaces"] = [
        {
            "name": "lo",
            "state": "up",
            "mtu": 65536,
            "ipv4": ["127.0.0.1/8"],
            "ipv6": [],
            "kind": "loopback",
        },
        {
            "name": "eth0",
            "state": "up",
            "mtu": 9000,
            "ipv4": [f"{address}/16"],
            "ipv6": [],
            "kind": "ether",
        },
    ]
    for gpu in data["gpu"]["data"]["gpus"]:
        gpu["memory_used_mib"] = (i * 7 + gpu["index"]) % 3 * 512
    for disk in (data.get("storage", {}).get("data") or {}).get("disks", []):
        if disk.get("free_bytes") is not None:
            disk["free_bytes"] -= i * 4096
    dists = data["packages"]["data"]["distributions"]
    if i in (17, 42):
        next(d for d in dists if d["name"].lower() == "ray")["version"] = "2.9.2"
    if i == 99:
        next(d for d in dists if d["name"].lower() == "torch")["version"] = "2.4.0+cu124"
    if i == 500:
        for gpu in data["gpu"]["data"]["gpus"]:
            gpu.update(
                name="NVIDIA GeForce RTX 4090", compute_capability="8.9", memory_total_mib=24564
            )
    if i == 777:
        del data["env"]["data"]["variables"]["GLOO_SOCKET_IFNAME"]
    return data


def write_reports(directory: Path, count: int) -> int:
    base = base_report()
    size = 0
    for i in range(count):
        text = json.dumps(node_report(base, i), indent=2)
        (directory / f"gpu-node-{i:04d}.json").write_text(text, encoding="utf-8")
        size += len(text)
    return size


JSON_LOAD_ALL = "import json,pathlib,sys\nfor p in pathlib.Path(sys.argv[1]).iterdir(): json.loads(p.read_text())"


def bench_diff(count: int, runs: int) -> bool:
    with tempfile.TemporaryDirectory(prefix="envcheck-bench-") as tmp:
        directory = Path(tmp)
        size = write_reports(directory, count)
        print(
            f"{count} reports, {size / 1024**2:.1f} MiB of JSON ({size / count / 1024:.0f} KiB each)\n"
        )
        env = {**os.environ, "COLUMNS": "120"}
        baseline = measure(
            "python: json.loads every report",
            [sys.executable, "-c", JSON_LOAD_ALL, tmp],
            runs,
            env=env,
        )
        diff = measure(f"envcheck diff {count} reports", [*ENVCHECK, "diff", tmp], runs, env=env)
        diff_json = measure(
            f"envcheck diff {count} reports --json",
            [*ENVCHECK, "diff", tmp, "--json"],
            runs,
            env=env,
        )
        print(table([baseline, diff, diff_json]))
        check = subprocess.run(
            [*ENVCHECK, "diff", tmp, "--json"], capture_output=True, text=True, env=env, check=False
        )
        found = json.loads(check.stdout)["data"]
        drift = {row["fact"]: [v["count"] for v in row["values"]] for row in found["drift"]}
        print(f"\ndrift rows: {drift}")
        print(
            f"cluster findings: {sorted({f['code'] for f in found['findings'] if f['code'].startswith('CLU')})}"
        )
    ok = diff.median_wall_s <= 2.0 and diff.median_rss_mib <= 500
    print(f"\ntargets (diff ≤ 2 s median, ≤ 500 MiB): {'met' if ok else 'NOT met'}")
    return ok


def bench_fanout(nodes: int, runs: int) -> None:
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # keep the local cluster on loopback
    from ray.cluster_utils import Cluster

    from envcheck.cluster import fanout

    start = time.monotonic()
    cluster: Any = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 80 << 20},
    )
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=0, object_store_memory=80 << 20)
        cluster.wait_for_nodes()
        print(
            f"\nlocal Ray cluster: {nodes} nodes on this machine, started in {time.monotonic() - start:.1f} s"
        )
        with fanout.session(cluster.address) as info:
            fanout.round_trip(info.nodes)  # warm a worker on every node
            list(fanout.probe_nodes(info.nodes, timeout=60, probe_timeout=5))
            trips, probes = [], []
            for _ in range(runs):
                trips.append(fanout.round_trip(info.nodes))
                t0 = time.monotonic()
                answers = list(fanout.probe_nodes(info.nodes, timeout=60, probe_timeout=5))
                probes.append(time.monotonic() - t0)
                assert all(a.failure is None for a in answers), [a.failure for a in answers]
            size = statistics.median(len(a.payload) for a in answers)
        env = {**os.environ, "COLUMNS": "120"}
        cli = measure(
            f"envcheck cluster ({nodes} nodes) --json",
            [*ENVCHECK, "cluster", "--address", cluster.address, "--json"],
            runs,
            env=env,
        )
    finally:
        cluster.shutdown()
    trip, probe = statistics.median(trips), statistics.median(probes)
    print(
        f"\n| step | median of {runs} |\n|---|---|\n"
        f"| plain Ray task round trip to {nodes} nodes (pinned, warm workers) | {trip:.3f} s |\n"
        f"| envcheck fan-out: a probe task on each of {nodes} nodes | {probe:.3f} s "
        f"({probe / trip:.0f}× the round trip) |\n"
        f"| compressed report on the wire | {size / 1024:.1f} KiB per node |"
    )
    print()
    print(table([cli]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="synthetic reports for diff")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ray-nodes", type=int, default=4, help="nodes of the local Ray cluster")
    parser.add_argument("--skip-ray", action="store_true", help="only the diff benchmark")
    args = parser.parse_args()
    ok = bench_diff(args.nodes, args.runs)
    if not args.skip_ray:
        bench_fanout(args.ray_nodes, args.runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
