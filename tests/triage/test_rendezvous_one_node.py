"""A rendezvous store's timeout on a job the log places on one node (torchrun's `--nnodes=1`,
Slurm's one node): the causes that matter only between nodes, the hostname resolving to
loopback (NET103) and the interface chosen between nodes (NET104), are ruled out, so the rank
that never arrived (NET170) is not led by them; several nodes, or nothing said, leave them open
(envcheck/rules/node/network.py, nccl_scope.py; rank_hosts.py ranks_on_one_node)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.rank_hosts import ranks_on_one_node
from tests.conftest import CliResult
from tests.triage.from_log import causes, log_file

_WAIT = (
    "[rank0]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for "
    "clients. 7/8 clients joined."
)
_CONNECT = (
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 "
    "(errno: 99 - Cannot assign requested address)."
)
_GLOO = (
    "[W ProcessGroupGloo.cpp:694] Warning: Unable to resolve hostname to a (local) address. "
    "Using the loopback address as fallback. Manually set the network interface to bind to "
    "with GLOO_SOCKET_IFNAME. (function operator())"
)


@pytest.mark.parametrize("error", [_WAIT, _CONNECT])
@pytest.mark.parametrize(
    "launch",
    ["$ torchrun --standalone --nnodes=1 --nproc_per_node=8 train.py", "export SLURM_NNODES=1"],
)
def test_one_node_rules_out_the_between_nodes_causes(
    cli: Callable[..., CliResult], tmp_path: Path, launch: str, error: str
) -> None:
    found = causes(cli, log_file(tmp_path, launch, error))
    for code in ("NET103", "NET104"):
        assert found[code]["verdict"] == "ruled_out", code
        assert "one node" in found[code]["reason"]


@pytest.mark.parametrize(
    "launch", ["", "$ torchrun --nnodes=2 --node_rank=0 --nproc_per_node=8 train.py"]
)
def test_several_nodes_or_nothing_said_leave_them_open(
    cli: Callable[..., CliResult], tmp_path: Path, launch: str
) -> None:
    found = causes(cli, log_file(tmp_path, launch, _WAIT))
    assert found["NET103"]["verdict"] == "unknown"
    assert found["NET104"]["verdict"] == "unknown"


def test_gloos_loopback_warning_is_harmless_on_one_node(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    one = causes(cli, log_file(tmp_path, "torchrun --nnodes 1 --nproc_per_node 2 x.py", _GLOO))
    assert one["NET103"]["verdict"] == "ruled_out"
    assert "harmless" in one["NET103"]["reason"]
    unsaid = causes(cli, log_file(tmp_path, _GLOO))
    assert unsaid["NET103"]["verdict"] == "confirmed"


def test_a_node_count_of_one_beside_another_host_is_not_one_node() -> None:
    assert ranks_on_one_node({"nnodes": "1"}) is not None
    assert ranks_on_one_node({"nnodes": "1", "nccl_hosts": "a,b"}) is None
    assert ranks_on_one_node({"nnodes": "2"}) is None
    assert ranks_on_one_node({}) is None


def test_the_unique_id_store_line_on_one_node(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    line = (
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout"
    )
    one = causes(cli, log_file(tmp_path, "torchrun --nnodes=1 --nproc_per_node=2 x.py", line))
    assert one["NET103"]["verdict"] == "ruled_out"
    assert one["NET104"]["verdict"] == "ruled_out"
    two = causes(cli, log_file(tmp_path, "torchrun --nnodes=2 --nproc_per_node=2 x.py", line))
    assert two["NET103"]["verdict"] == "unknown"
