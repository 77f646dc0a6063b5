"""A real local multi-node Ray cluster (ray.cluster_utils.Cluster), started once per session.

Three nodes on this machine, each with its own custom resource and environment:
- node-a (head): a plain node;
- node-b: GLOO_SOCKET_IFNAME=nosuch0, an interface that does not exist;
- node-c: a fake nvidia-smi on its PATH. envcheck's GPU probe runs it (NVML is missing here);
  it behaves like a driverless machine, unless a flag file tells it to stop its parent (the
  Ray worker running the probe: a hung node) or to kill it (a task that dies).
Everything stays on 127.0.0.1 (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 keeps Ray on loopback).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

FAKE_SMI = """#!/bin/sh
# fake nvidia-smi for the test cluster's node-c
flags="{flags}"
if [ -e "$flags/hang" ]; then kill -STOP "$PPID"; exit 0; fi
if [ -e "$flags/die" ]; then kill -9 "$PPID"; exit 0; fi
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
exit 9
"""


@dataclass
class LocalCluster:
    address: str
    flags: Path
    node_ids: dict[str, str]  # name -> Ray node id

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", **extra)
        env.pop("RAY_ADDRESS", None)
        return env

    def flag(self, name: str) -> Path:
        return self.flags / name


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


needs_torch = pytest.mark.skipif(
    not torch_available(),
    reason="torch is not installed here (make test installs the CPU wheel when pip has it locally)",
)


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    from ray.cluster_utils import Cluster

    root = tmp_path_factory.mktemp("cluster")
    flags = root / "flags"
    flags.mkdir()
    fake_bin = root / "bin"
    fake_bin.mkdir()
    smi = fake_bin / "nvidia-smi"
    smi.write_text(FAKE_SMI.format(flags=flags), encoding="utf-8")
    smi.chmod(0o755)
    saved = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    common = {"object_store_memory": 80 * 1024 * 1024, "include_dashboard": False}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"node-a": 1}, "node_name": "node-a", **common},
    )
    try:
        node_b = cluster.add_node(
            num_cpus=0,
            resources={"node-b": 1},
            node_name="node-b",
            env_vars={"GLOO_SOCKET_IFNAME": "nosuch0"},
            **common,
        )
        node_c = cluster.add_node(
            num_cpus=0,
            resources={"node-c": 1},
            node_name="node-c",
            env_vars={"PATH": f"{fake_bin}:{path}"},
            **common,
        )
        cluster.wait_for_nodes()
        ids = {
            "node-a": cluster.head_node.node_id,
            "node-b": node_b.node_id,
            "node-c": node_c.node_id,
        }
        yield LocalCluster(address=cluster.address, flags=flags, node_ids=ids)
    finally:
        cluster.shutdown()
        if saved is None:
            os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        else:
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = saved
