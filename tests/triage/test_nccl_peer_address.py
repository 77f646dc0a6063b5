"""NCCL's own lines decide where a failed peer was: a rank that could not reach an address none
of this node's INFO lines state (its 'Bootstrap : Using eth0:A<0>') reached for another node, so
NCCL's generic errors confirm NET104; an address of this node leaves the causes open. A failure
line decides before NCCL's INFO retry line above it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import log_file

# NCCL 2.4's lines as espnet#1940 / pytorch#38702 show them (host names shortened)
_LINES = (
    "v100-11:41449:41449 [6] NCCL INFO Bootstrap : Using [0]eth0:10.38.10.4<0>\n"
    "v100-11:41449:41449 [6] NCCL INFO NET/Socket : Using [0]eth0:10.38.10.4<0>\n"
    "NCCL version 2.4.8+cuda10.0\n"
    "v100-11:41449:43077 [6] NCCL INFO Call to connect returned Connection refused, retrying\n"
    "v100-11:41449:43077 [6] include/socket.h:390 NCCL WARN Connect to {peer}<21724> failed : "
    "Connection refused\n"
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:410, unhandled "
    "system error, NCCL version 2.4.8\n"
)


def test_a_peer_at_another_nodes_address_is_net104(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _LINES.format(peer="10.38.10.112"))
    net104 = _causes(cli, log)["NET104"]
    assert net104["verdict"] == "confirmed"
    (finding,) = net104["findings"]
    assert "NCCL connected to 10.38.10.112" in finding["message"]
    assert "10.38.10.4" in finding["message"]


def test_a_peer_at_this_nodes_own_address_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _LINES.format(peer="10.38.10.4"))
    assert _causes(cli, log)["NET104"]["verdict"] != "confirmed"


def test_no_own_address_stated_leaves_the_peer_undecided(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = "".join(
        line + "\n"
        for line in _LINES.format(peer="10.38.10.112").splitlines()
        if "Using [0]eth0" not in line
    )
    log = log_file(tmp_path, text)
    assert _causes(cli, log)["NET104"]["verdict"] != "confirmed"


_ERROR = (
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
    "unhandled system error, NCCL version 2.14.3"
)


def test_launchers_node_counts_say_the_ranks_span_nodes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for launch in (
        "accelerate launch --num_machines 2 --machine_rank 0 train.py",
        "FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 llamafactory-cli train cfg.yaml",
        "srun -N 2 --ntasks-per-node=8 python train.py",
        "accelerate launch --machine_rank=1 train.py",
    ):
        log = log_file(tmp_path, launch, _ERROR)
        assert _causes(cli, log)["NET104"]["verdict"] == "confirmed", launch


def test_one_node_is_no_span(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(tmp_path, "accelerate launch --num_machines 1 train.py", _ERROR)
    assert _causes(cli, log)["NET104"]["verdict"] != "confirmed"


def test_an_mpi_host_list_of_two_hosts_spans_nodes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "mpirun -np 16 -H host1:8,host2:8 python train.py", _ERROR)
    net104 = _causes(cli, log)["NET104"]
    assert net104["verdict"] == "confirmed"
    assert "2 hosts (host1, host2)" in net104["findings"][0]["message"]


def test_an_mpi_host_list_of_this_node_alone_does_not(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "mpirun -np 2 -H 127.0.0.1:1,localhost:1 python train.py", _ERROR)
    assert _causes(cli, log)["NET104"]["verdict"] != "confirmed"


def test_torchruns_rendezvous_dump_states_the_node_count(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    dump = (
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for "
        "workers. Result:",
        "  restart_count=0",
        "  group_rank=0",
        "  group_world_size={nodes}",
        "  local_ranks=[0, 1, 2, 3, 4, 5, 6, 7]",
        _ERROR,
    )
    two = log_file(tmp_path, *(line.format(nodes=2) for line in dump), name="two.log")
    assert _causes(cli, two)["NET104"]["verdict"] == "confirmed"
    one = log_file(tmp_path, *(line.format(nodes=1) for line in dump), name="one.log")
    assert _causes(cli, one)["NET104"]["verdict"] != "confirmed"
