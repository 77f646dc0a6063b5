"""`envcheck cluster` on a real local multi-node Ray cluster (see conftest.py for its nodes).

One cluster for the whole session (starting one takes ~10 s on two cores); each test runs the
real command in a subprocess, as a user would, and reads its JSON envelope.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.conftest import LocalCluster, needs_torch
from tests.conftest import CliResult, run_cli

pytestmark = pytest.mark.slow

# Runs `envcheck cluster` in-process in a fresh interpreter and fails if the driver imported
# torch: the collective test must import it only in the Ray workers.
NO_TORCH_DRIVER = """
import sys
from envcheck.cli import main
code = main(sys.argv[1:])
if "torch" in sys.modules:
    sys.stderr.write("driver imported torch\\n")
    code = 99
sys.exit(code)
"""


def cluster_cli(c: LocalCluster, *args: str, timeout: float = 180) -> CliResult:
    return run_cli("cluster", "--address", c.address, "--json", *args, env=c.env(), timeout=timeout)


def driver_cli(c: LocalCluster, *args: str) -> CliResult:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", NO_TORCH_DRIVER, "cluster", "--address", c.address, "--json", *args],
        capture_output=True,
        text=True,
        env=c.env(),
        timeout=240,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def flag(local_cluster: LocalCluster) -> Iterator[callable]:  # type: ignore[valid-type]
    made: list[Path] = []

    def make(name: str) -> None:
        path = local_cluster.flag(name)
        path.touch()
        made.append(path)

    yield make
    for path in made:
        path.unlink(missing_ok=True)


def by_node(envelope: dict, key: str) -> dict[str, dict]:
    return {item["node"]: item for item in envelope["data"][key]}


def test_every_node_is_probed_on_its_own_node(local_cluster: LocalCluster) -> None:
    from envcheck.cluster import fanout

    info = fanout.connect(local_cluster.address)
    try:
        assert {n.node_id for n in info.nodes} == set(local_cluster.node_ids.values())
        assert info.nodes[0].is_head and info.nodes[0].node_id == local_cluster.node_ids["node-a"]
        answers = list(fanout.probe_nodes(info.nodes, timeout=60, probe_timeout=5))
        baseline = fanout.round_trip(info.nodes)
    finally:
        fanout.disconnect()
    assert all(a.failure is None for a in answers), [a.failure for a in answers]
    import json
    import zlib

    reports = {a.node.name: json.loads(zlib.decompress(a.payload)) for a in answers}
    assert set(reports) == {"node-a", "node-b", "node-c"}
    # each report was made on its own node: the node's own environment shows
    assert reports["node-b"]["env"]["data"]["variables"]["GLOO_SOCKET_IFNAME"] == "nosuch0"
    assert "GLOO_SOCKET_IFNAME" not in reports["node-a"]["env"]["data"]["variables"]
    assert "couldn't communicate" in reports["node-c"]["gpu"]["reason"]
    assert baseline < 30


def test_all_nodes_reported_with_drift_and_node_findings(local_cluster: LocalCluster) -> None:
    result = cluster_cli(local_cluster, "--timeout", "60")
    envelope = result.json()
    assert result.returncode == 1, result.stderr
    assert envelope["command"] == "cluster" and envelope["status"] == "findings"
    assert envelope["exit_code"] == 1 and envelope["data"]["unreachable"] == []
    nodes = by_node(envelope, "nodes")
    assert set(nodes) == {"node-a", "node-b", "node-c"}
    assert nodes["node-b"]["node_id"] == local_cluster.node_ids["node-b"]
    assert [r["node"] for r in envelope["data"]["reports"]] == list(nodes)
    drift = {row["fact"]: row for row in envelope["data"]["drift"]}
    ifname = drift["env:GLOO_SOCKET_IFNAME"]["values"]
    assert [(v["value"], v["nodes"]) for v in ifname] == [
        ("(unset)", ["node-a", "node-c"]),
        ("nosuch0", ["node-b"]),
    ]
    codes = {(f["code"], f["node"]) for f in envelope["data"]["findings"]}
    assert ("NET101", "node-b") in codes  # node rules ran on node-b's own report
    assert ("CLU106", "cluster") in codes
    assert envelope["data"]["ray"]["alive_nodes"] == 3
    assert "3/3 node(s) checked" in result.stderr


def test_a_hung_node_is_unreachable_and_the_others_are_checked(
    local_cluster: LocalCluster, flag
) -> None:
    flag("hang")
    start = time.monotonic()
    result = cluster_cli(local_cluster, "--timeout", "12")
    took = time.monotonic() - start
    envelope = result.json()
    assert result.returncode == 1 and envelope["exit_code"] == 1
    assert envelope["status"] == "partial"
    [failure] = envelope["data"]["unreachable"]
    assert failure["node"] == "node-c" and failure["kind"] == "timeout"
    assert "no answer within 12 s" in failure["reason"]
    assert set(by_node(envelope, "nodes")) == {"node-a", "node-b"}
    clu100 = [f for f in envelope["data"]["findings"] if f["code"] == "CLU100"]
    assert [(f["node"], f["severity"]) for f in clu100] == [("node-c", "error")]
    assert took < 12 + 30  # the timeout plus connecting and rendering, not a hang


def test_a_probe_task_that_dies_is_reported_with_the_reason(
    local_cluster: LocalCluster, flag
) -> None:
    flag("die")
    result = cluster_cli(local_cluster, "--timeout", "60")
    envelope = result.json()
    assert result.returncode == 1 and envelope["status"] == "partial"
    [failure] = envelope["data"]["unreachable"]
    assert failure["node"] == "node-c" and failure["kind"] == "died"
    assert "worker process died" in failure["reason"]
    assert set(by_node(envelope, "nodes")) == {"node-a", "node-b"}


def test_nccl_without_gpus_says_so(local_cluster: LocalCluster) -> None:
    envelope = cluster_cli(local_cluster, "--collective", "nccl", "--timeout", "60").json()
    collective = envelope["data"]["collective"]
    assert collective["backend"] == "nccl" and not collective["ok"]
    assert "NCCL needs a GPU on every node" in collective["not_run"]
    assert "node-a, node-b, node-c have none" in collective["not_run"]
    assert envelope["status"] == "partial" and envelope["exit_code"] == 1
    assert any(f["code"] == "CLU109" for f in envelope["data"]["findings"])


@needs_torch
def test_gloo_all_reduce_and_ring_across_the_nodes(local_cluster: LocalCluster) -> None:
    result = driver_cli(local_cluster, "--collective", "gloo", "--ifname", "lo", "--timeout", "60")
    assert result.returncode in (0, 1), result.stderr  # 99: the driver imported torch
    collective = result.json()["data"]["collective"]
    assert collective["ok"], collective["summary"]
    ranks = {r["node"]: r for r in collective["ranks"]}
    assert list(ranks) == ["node-a", "node-b", "node-c"]  # rank 0 on the head, with the store
    for rank in ranks.values():
        assert rank["ok"] and rank["stage"] == "done" and rank["ifname"] == "lo"
        assert rank["bound"] and all(b.startswith("127.0.0.1:") for b in rank["bound"])
    assert [(p["src"], p["dst"], p["ok"]) for p in collective["pairs"]] == [
        ("node-a", "node-b", True),
        ("node-b", "node-c", True),
        ("node-c", "node-a", True),
    ]
    assert collective["store"].endswith(tuple(f":{p}" for p in range(1, 65536)))


@needs_torch
def test_gloo_reports_the_node_whose_interface_is_missing_within_the_timeout(
    local_cluster: LocalCluster,
) -> None:
    start = time.monotonic()
    result = driver_cli(local_cluster, "--collective", "gloo", "--timeout", "20")
    took = time.monotonic() - start
    envelope = result.json()
    assert result.returncode == 1, result.stderr
    collective = envelope["data"]["collective"]
    assert not collective["ok"]
    ranks = {r["node"]: r for r in collective["ranks"]}
    assert ranks["node-b"]["kind"] == "interface"
    assert "GLOO_SOCKET_IFNAME=nosuch0" in ranks["node-b"]["reason"]
    assert "no interface 'nosuch0'" in ranks["node-b"]["reason"]
    assert {ranks[n]["kind"] for n in ("node-a", "node-c")} <= {"waiting", "timeout"}
    [clu109] = [f for f in envelope["data"]["findings"] if f["code"] == "CLU109"]
    assert clu109["node"] == "node-b" and "waited for it" in clu109["message"]
    assert took < 20 + 60  # within the timeout (plus start-up: three torch imports on 2 cores)
