"""Where an NCCL job's ranks ran, from the hosts its launcher states in forms beside the node
count: DeepSpeed's workers, its pdsh command and its world, pdsh's host before each gathered
line, NCCL's own hostname before its lines, Slurm's node list (signatures in
matrices/signatures/nccl_transports.toml, facts in envcheck/triage/run.py host_facts, read by
envcheck/rules/node/rank_hosts.py ranks_span_nodes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.rank_hosts import ranks_span_nodes, slurm_hosts
from envcheck.triage.prefixes import line_host, nccl_host
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_REMOTE = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1333, remote process exited or there was a network error, NCCL "
    "version 2.18.6"
)


@pytest.mark.parametrize(
    "lines",
    [
        [
            "[INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: "
            "192.168.3.100,192.168.3.101"
        ],
        ["[INFO] [runner.py:571:main] cmd = pdsh -S -f 1024 -w node-a1,node-b2 cd /root"],
        ["[INFO] [launch.py:162:main] WORLD INFO DICT: {'worker-0': [0, 1], 'worker-1': [0, 1]}"],
        ["SLURM_JOB_NODELIST=gpu[01-02]"],
        ["PET_NNODES=2"],
        ["PET_NODE_RANK=1"],
        [
            "[INFO] [launch.py:164:main] global_rank_mapping=defaultdict(<class 'list'>, "
            "{'worker-0': [0, 1], 'worker-1': [2, 3]})"
        ],
        [
            "worker-0: node-a:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            "worker-1: node-b:2234:2234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>",
        ],
        [
            "node-a:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            "node-b:2234:2234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>",
        ],
    ],
    ids=[
        "ds-workers",
        "pdsh-w",
        "ds-world",
        "slurm-nodelist",
        "pet-nnodes",
        "pet-node-rank",
        "ds-rank-mapping",
        "pdsh-prefix",
        "nccl-prefix",
    ],
)
def test_hosts_a_launcher_states_decide_the_interface(
    cli: Callable[..., CliResult], tmp_path: Path, lines: list[str]
) -> None:
    found = causes(cli, log_file(tmp_path, *lines, _REMOTE))
    assert found["NET104"]["verdict"] == "confirmed"
    assert "export NCCL_SOCKET_IFNAME=" in fix_text(found["NET104"])


def test_lines_pdsh_gathered_from_two_hosts_decide_it(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    found = causes(cli, log_file(tmp_path, f"worker-0: {_REMOTE}", f"worker-1: {_REMOTE}"))
    assert found["NET104"]["verdict"] == "confirmed"
    assert "pdsh gathered" in found["NET104"]["findings"][0]["message"]


@pytest.mark.parametrize(
    "lines",
    [
        ["SLURM_JOB_NODELIST=gpu01"],
        ["[INFO] [launch.py:78:main] WORLD INFO DICT: {'localhost': [0, 1]}"],
        [f"worker-0: {_REMOTE}"],
        ["node-a:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"],
    ],
    ids=["one-slurm-node", "one-world-host", "one-pdsh-host", "one-nccl-host"],
)
def test_one_host_leaves_it_open(
    cli: Callable[..., CliResult], tmp_path: Path, lines: list[str]
) -> None:
    found = causes(cli, log_file(tmp_path, *lines, _REMOTE))
    assert found["NET104"]["verdict"] == "unknown"


def test_an_interface_deepspeed_exports_is_net101s(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """DeepSpeed forwards the user's variables in its pdsh command: an interface named there is
    set, so whether it is the right one is NET101's, not NCCL's own choice (NET104)."""
    cmd = (
        "[INFO] [runner.py:571:main] cmd = pdsh -S -f 1024 -w 192.168.3.100,192.168.3.101 "
        "export NCCL_SOCKET_IFNAME=eno1; cd /root/"
    )
    found = causes(cli, log_file(tmp_path, cmd, _REMOTE))
    assert found["NET104"]["verdict"] == "unknown"
    assert "eno1" in found["NET104"]["reason"]


@pytest.mark.parametrize(
    ("nodelist", "count"),
    [
        ("gpu01", 1),
        ("gpu[01-02]", 2),
        ("gpu[01-04,07],cpu7", 6),
        ("node1,node2", 2),
        ("10-0-4-[10-11]", 2),
        ("", 0),
    ],
)
def test_slurm_hostlists_count_their_nodes(nodelist: str, count: int) -> None:
    assert slurm_hosts(nodelist) == count


def test_the_prefixes_name_their_hosts() -> None:
    assert line_host("worker-1: [INFO] x") == "worker-1"
    assert line_host("10.0.0.2: x") == "10.0.0.2"
    assert line_host("libcuda.so.1: cannot open shared object file") is None
    assert line_host('gpu003:   File "/data/train.py", line 5, in main') == "gpu003"
    assert line_host("ainode01: ncclInternalError: Internal check failed.") == "ainode01"
    for numbered in ("rank10: x", "epoch12: loss 0.1", "step100: x", "sm90: x", "gpu0: x"):
        assert line_host(numbered) is None
    assert nccl_host("gpu2:46654:46654 [0] NCCL INFO NET : Using interface ib0") == "gpu2"
    assert nccl_host("[1,0]<stdout>:dlv01:257:257 [0] misc/socket.cc:484 NCCL WARN x") == "dlv01"
    assert nccl_host("worker-1: node-b:22:22 [3] NCCL INFO comm 0x1 rank 3") == "node-b"
    assert nccl_host("RuntimeError: NCCL error in: x.cpp:1, unhandled system error") is None


def test_a_world_of_one_host_says_nothing() -> None:
    assert ranks_span_nodes({"launcher_world_info": "'localhost': [0, 1]"}) is None
    assert ranks_span_nodes({"launcher_world_info": "'a': [0], 'b': [0]"}) is not None


def test_an_exported_interface_across_nodes_is_net101s_finding(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """The ranks span nodes and the log sets NCCL_SOCKET_IFNAME: the ranks connected over the
    interface it names, so NCCL's failure between them is that interface's (NET101)."""
    cmd = (
        "[INFO] [runner.py:571:main] cmd = pdsh -S -f 1024 -w 192.168.3.100,192.168.3.101 "
        "export NCCL_SOCKET_IFNAME=eno1; cd /root/"
    )
    found = causes(cli, log_file(tmp_path, cmd, _REMOTE))
    assert found["NET101"]["verdict"] == "confirmed"
    assert "NCCL_SOCKET_IFNAME=eno1" in found["NET101"]["findings"][0]["message"]
    single = causes(
        cli, log_file(tmp_path, "export NCCL_SOCKET_IFNAME=eno1", _REMOTE, name="one.log")
    )
    assert single["NET101"]["verdict"] != "confirmed"


# nccl-tests' device table and the NCCL_SOCKET_IFNAME an mpirun exports to every host, as
# NVIDIA/nccl-tests#219 logged them: two hosts, one name for both
_NCCL_TESTS_TWO_HOSTS = (
    "`mpirun -np 2 -pernode --allow-run-as-root -hostfile host.txt -mca btl_tcp_if_include "
    "192.168.0.0/24 -x NCCL_SOCKET_IFNAME=enp6s0 ./nccl-tests/build/all_reduce_perf -b 8 -e 128M "
    "-f 2 -g 2 -c 0`",
    "#  Rank  0 Group  0 Pid 3740409 on fengyun416 device  0 [0x01] NVIDIA RTX A6000",
    "#  Rank  1 Group  0 Pid 3740409 on fengyun416 device  1 [0x07] NVIDIA RTX A6000",
    "#  Rank  2 Group  0 Pid 3164639 on    fengyun device  0 [0x01] NVIDIA RTX A6000",
    "#  Rank  3 Group  0 Pid 3164639 on    fengyun device  1 [0x05] NVIDIA RTX A6000",
    "fengyun: Test NCCL failure common.cu:959 'internal error - please report this issue to the "
    "NCCL developers / '",
)


def test_an_interface_mpirun_exports_to_two_hosts_is_net101s(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """mpirun's `-x NCCL_SOCKET_IFNAME=enp6s0` gives every host the same name; nccl-tests'
    device table puts the ranks on two hosts: NET101, its fix each host's own name, listed or in
    /etc/nccl.conf."""
    found = causes(cli, log_file(tmp_path, *_NCCL_TESTS_TWO_HOSTS))
    assert found["NET101"]["verdict"] == "confirmed"
    message = found["NET101"]["findings"][0]["message"]
    assert "2 hosts (fengyun416, fengyun)" in message
    assert "NCCL_SOCKET_IFNAME=enp6s0" in message
    text = fix_text(found["NET101"])
    assert "NCCL_SOCKET_IFNAME=enp6s0,<the other nodes' interface names>" in text
    assert "/etc/nccl.conf" in text
    assert found["NET104"]["verdict"] == "unknown"


def test_one_host_in_nccl_tests_table_says_nothing_of_nodes(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    one_host = [line.replace("   fengyun ", "fengyun416 ") for line in _NCCL_TESTS_TWO_HOSTS]
    found = causes(cli, log_file(tmp_path, *one_host))
    assert found["NET101"]["verdict"] == "unknown"


def test_mpich_genv_states_the_interface(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    lines = (
        "mpiexec -n 16 -ppn 8 -hosts gpu01,gpu02 -genv NCCL_SOCKET_IFNAME ib0 ./train",
        _REMOTE,
    )
    found = causes(cli, log_file(tmp_path, *lines))
    assert found["NET101"]["verdict"] == "confirmed"
    assert "NCCL_SOCKET_IFNAME=ib0" in found["NET101"]["findings"][0]["message"]
