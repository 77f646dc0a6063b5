"""envcheck.ray_hook inside real Ray workers (the local cluster of conftest.py): each worker
checks its own process when Ray starts it, and a failing one dies at once with the findings.

node-b's raylet sets GLOO_SOCKET_IFNAME=nosuch0 for its workers; the driver's shell does not:
the check must see the worker's environment, not the driver's.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cluster.conftest import LocalCluster

pytestmark = pytest.mark.slow

DRIVER = """
import json, os, sys
import ray
from envcheck import ray_hook

address, nodes, options = sys.argv[1], sys.argv[2].split(","), json.loads(sys.argv[3])
ray.init(address=address, runtime_env=ray_hook.runtime_env(**options), logging_level="ERROR",
         log_to_driver=False)

@ray.remote(num_cpus=0, max_restarts=0)
class Worker:
    def facts(self):
        return {"checked": os.environ.get(ray_hook.CHECKED), "gloo": os.environ.get("GLOO_SOCKET_IFNAME")}

out = {"driver_gloo": os.environ.get("GLOO_SOCKET_IFNAME")}
for node in nodes:
    try:
        actor = Worker.options(resources={node: 0.01}).remote()
        out[node] = {"ok": ray.get(actor.facts.remote(), timeout=90)}
    except Exception as exc:
        out[node] = {"error": type(exc).__name__, "message": str(exc)}
print(json.dumps(out), flush=True)
"""


def _drive(c: LocalCluster, nodes: list[str], **options: object) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, c.address, ",".join(nodes), json.dumps(options)],
        capture_output=True,
        text=True,
        env=c.env(),
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return _last_json(proc.stdout)


def _last_json(stdout: str) -> dict:
    """The driver's JSON line (Ray may print around it, on the same line too: under load a
    worker's message can land right after the JSON before the newline)."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert lines, stdout[-2000:]
    value, _end = json.JSONDecoder().raw_decode(lines[-1])
    assert isinstance(value, dict), lines[-1]
    return value


def test_each_worker_checks_its_own_environment(local_cluster: LocalCluster) -> None:
    out = _drive(local_cluster, ["node-a", "node-b"], select=["NET101"])
    assert out["driver_gloo"] is None
    # node-a's worker passed the check and runs
    assert out["node-a"] == {"ok": {"checked": "1", "gloo": None}}
    # node-b's worker inherits GLOO_SOCKET_IFNAME=nosuch0: it dies at creation, saying why
    failed = out["node-b"]
    assert failed["error"] == "ActorDiedError"
    message = failed["message"]
    assert "this Ray worker's environment fails its pre-flight check" in message
    assert "NET101 error: GLOO_SOCKET_IFNAME=nosuch0: no interface nosuch0" in message
    assert f"python: {sys.executable}" in message


def test_a_package_missing_from_the_workers_python_fails_the_worker(
    local_cluster: LocalCluster,
) -> None:
    out = _drive(local_cluster, ["node-a"], select=["NET101"], require=["packaging", "vllm"])
    message = out["node-a"]["message"]
    assert out["node-a"]["error"] == "ActorDiedError"
    assert "vllm is not installed in this worker's Python (ENVCHECK_REQUIRE)" in message
    assert "packaging is not installed" not in message


API_DRIVER = """
import json, sys
import envcheck
from envcheck.commands.cluster import ClusterOptions

outcome = envcheck.check_cluster(ClusterOptions(address=sys.argv[1], timeout=60))
print(json.dumps({"counts": outcome.counts(), "exit": outcome.exit_code,
                  "nodes": sorted(m.label for m in outcome.comparison.members)}), flush=True)
"""


def test_check_cluster_is_the_layer_the_cli_calls(local_cluster: LocalCluster) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", API_DRIVER, local_cluster.address],
        capture_output=True,
        text=True,
        env=local_cluster.env(),
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = _last_json(proc.stdout)
    assert out["nodes"] == ["node-a", "node-b", "node-c"]
    assert out["counts"]["answered"] == 3 and out["exit"] in (0, 1)
