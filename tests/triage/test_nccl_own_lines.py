"""Where an NCCL job's ranks ran, as NCCL's own INFO lines and the launcher's node rank or Slurm's
node count state it (matrices/signatures/nccl_transports.toml): facts that decide NET104 for
NCCL's generic error lines, its internal error and torch's watchdog timeout."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_CONNECT = (
    "h100-15:139:1092 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to "
    "10.0.0.82<38455> failed : Software caused connection abort"
)
_INTERNAL = (
    "Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL "
    "developers / '"
)
_WATCHDOG = (
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
)


@pytest.mark.parametrize(
    ("hint", "error"),
    [
        (
            "h100-15:136:136 [4] NCCL INFO Channel 00/0 : 1[1] -> 4[4] [receive] via "
            "NET/IBext_v8/4/GDRDMA",
            _CONNECT,
        ),
        (
            "node0:1043:1187 [0] NCCL INFO comm 0x55d1c7a4e0 rank 0 nRanks 16 nNodes 2 "
            "localRanks 8 localRank 0 MNNVL 0",
            _INTERNAL,
        ),
        ("export SLURM_NNODES=4", _CONNECT),
        ("#SBATCH --nodes=2", _INTERNAL),
        ("deepspeed --node_rank=1 --master_addr 10.0.0.1 train.py", _WATCHDOG),
        (
            "gpu-1:41449:43711 [6] NCCL INFO Ring 00 : 1 -> 0 [receive] via NET/Socket/0",
            _WATCHDOG,
        ),
    ],
)
def test_nccls_own_lines_or_the_launcher_say_several_nodes(
    cli: Callable[..., CliResult], tmp_path: Path, hint: str, error: str
) -> None:
    found = causes(cli, log_file(tmp_path, hint, error))
    assert found["NET104"]["verdict"] == "confirmed"
    assert "export NCCL_SOCKET_IFNAME=" in fix_text(found["NET104"])


@pytest.mark.parametrize(
    "hint",
    [
        # the host of _CONNECT's own line: NCCL's lines from another host are another node's
        "h100-15:1043:1187 [0] NCCL INFO comm 0x55d1c7a4e0 rank 0 nRanks 8 nNodes 1 "
        "localRanks 8 localRank 0 MNNVL 0",
        "h100-15:88:88 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "torchrun --nnodes 1 --node_rank 0 --nproc_per_node 8 train.py",
        "",
    ],
)
def test_one_node_or_nothing_said_leaves_the_interface_open(
    cli: Callable[..., CliResult], tmp_path: Path, hint: str
) -> None:
    found = causes(cli, log_file(tmp_path, hint, _CONNECT))
    assert found["NET104"]["verdict"] == "unknown"


def test_the_network_transport_with_shm_disabled_says_nothing_of_nodes(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "h100-15:88:88 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.",
        "h100-15:88:88 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0",
        _CONNECT,
    )
    assert causes(cli, log)["NET104"]["verdict"] == "unknown"


def test_a_peer_at_a_loopback_address_is_the_interface(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "10: torch.distributed.DistBackendError: NCCL error in: /opt/conda/conda-bld/pytorch/work/"
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled system error (run with "
        "NCCL_DEBUG=INFO for details), NCCL version 2.18.5",
        "10: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection "
        "abort",
    )
    found = causes(cli, log)
    assert found["NET104"]["verdict"] == "confirmed"
    assert "127.0.0.1" in found["NET104"]["findings"][0]["message"]
    other = causes(cli, log_file(tmp_path, _CONNECT, name="remote.log"))
    assert other["NET104"]["verdict"] == "unknown"  # another host's address says nothing


def test_an_ib_local_protection_error_is_gpudirect_not_the_gid(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    four = causes(
        cli,
        log_file(
            tmp_path,
            "NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df54%ib0<33397> with "
            "error 4, opcode 32611, len 32611, vendor err 81 (Send)",
        ),
    )
    assert "NCCL_NET_GDR_LEVEL=0" in fix_text(four["NET150"])
    twelve = causes(
        cli,
        log_file(
            tmp_path,
            "NCCL WARN NET/IB : Got completion from peer 192.168.17.147<38560> with error 12, "
            "opcode 0, len 0, vendor err 129",
            name="twelve.log",
        ),
    )
    assert "NCCL_IB_GID_INDEX=3" in fix_text(twelve["NET150"])
    assert "NCCL_NET_GDR_LEVEL" not in fix_text(twelve["NET150"])


def test_a_version_mismatch_decodes_both_versions_and_pins_the_newer(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    old_code = causes(
        cli,
        log_file(
            tmp_path,
            "n1:91:97 [0] init.cc:900 NCCL WARN Mismatched NCCL version detected : rank 3 "
            "version 2708 rank 0 version 21104",
        ),
    )
    text = fix_text(old_code["NET121"])
    assert old_code["NET121"]["verdict"] == "confirmed"
    assert "nvidia-nccl-cu12==2.11.4" in text
    assert "NCCL 2.7.8" in text


def test_a_truncated_message_leaves_the_version_question_open(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "n1:91:97 [0] misc/socket.cc:419 NCCL WARN Message truncated : received 4096 bytes "
        "instead of 256",
    )
    assert causes(cli, log)["NET121"]["verdict"] in ("unchecked", "unknown")


def test_a_connect_failure_in_nccls_new_wording_is_decided_by_the_node_count(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    poll = (
        "node5:240:240 [6] misc/socket.cc:484 NCCL WARN socketPollConnect: Connect to "
        "10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)"
    )
    assert causes(cli, log_file(tmp_path, poll))["NET104"]["verdict"] == "unknown"
    two = causes(cli, log_file(tmp_path, "#SBATCH --nodes=2", poll, name="two.log"))
    assert two["NET104"]["verdict"] == "confirmed"


def test_gloos_full_mesh_on_several_nodes_names_glooss_interface(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    mesh = (
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/"
        "pair.cc:144] no error"
    )
    found = causes(cli, log_file(tmp_path, "#SBATCH --nodes=2", mesh))
    assert found["NET104"]["verdict"] == "confirmed"
    assert found["NET104"]["findings"][0]["message"].startswith("Gloo failed between nodes")
    assert "GLOO_SOCKET_IFNAME=" in fix_text(found["NET104"])
    alone = causes(cli, log_file(tmp_path, mesh, name="alone.log"))
    assert alone["NET104"]["verdict"] == "unknown"


@pytest.mark.parametrize(
    ("listed", "verdict"),
    [
        (
            "#  Rank  1 Group  0 Pid 587622 on box4090 device  1 [0x22] NVIDIA GeForce RTX 4090",
            "confirmed",
        ),
        ("GPU 0,1,2,3: NVIDIA GeForce RTX 3090", "confirmed"),
        ("GPU 0,1,2,3,4,5,6,7: NVIDIA H20", "unknown"),
    ],
)
def test_the_gpus_nccl_tests_or_an_engine_lists_decide_p2p_on_a_timeout(
    cli: Callable[..., CliResult], tmp_path: Path, listed: str, verdict: str
) -> None:
    found = causes(cli, log_file(tmp_path, listed, _WATCHDOG))
    assert found["NET106"]["verdict"] == verdict
    if verdict == "confirmed":
        assert "NCCL_P2P_DISABLE=1" in fix_text(found["NET106"])
