"""NCCL's and aws-ofi-nccl's WARN lines by subsystem (socket, bootstrap, shm, p2p, graph, proxy,
net plugins), written as their source prints them: the cause each line's own words decide, and
its fix printed as a fix; INFO lines that healthy nodes print confirm nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_PREFIX = "gpu1:100:200 [0] "


def _triage(cli: Callable[..., CliResult], path: Path) -> dict[str, Any]:
    result = cli("triage", str(path), "--json", "--no-probe")
    data: dict[str, Any] = result.json()["data"]
    return data


@pytest.mark.parametrize(
    ("line", "code", "fragments"),
    [
        # init/socket: the interface the variable names is not on this node
        (
            "NCCL WARN NCCL_SOCKET_IFNAME set to ib0 but no interface found",
            "NET101",
            ["NCCL_SOCKET_IFNAME=ib0 matches no interface", "ip -br addr"],
        ),
        # net/socket: the peer's address is on a subnet this node has no interface on
        (
            "misc/socket.cc:339 NCCL WARN Net : No interface found in the same subnet as remote "
            "address 10.1.2.3<45671>",
            "NET104",
            ["subnet of 10.1.2.3", "NCCL_SOCKET_IFNAME="],
        ),
        # shm: the segment NCCL creates in /dev/shm, no reason stated (NCCL 2.12-2.28)
        (
            "misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment "
            "/dev/shm/nccl-8dSw7N (size 9637888)",
            "SYS101",
            ["9.2 MiB segment", "--shm-size"],
        ),
        # NCCL <= 2.11: shm_open's name without the /dev/shm path
        (
            "include/shm.h:48 NCCL WARN Error while creating shared memory segment "
            "nccl-shm-recv-7c1 (size 4460544)",
            "SYS101",
            ["--shm-size"],
        ),
        # p2p: CUDA refused peer access (cudaErrorPeerAccessUnsupported)
        (
            "NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
            "GPU116",
            ["export NCCL_P2P_DISABLE=1", "nvidia-smi topo -p2p r", "ACSCtl"],
        ),
        (
            "transport/p2p.cc:355 NCCL WARN failed to peer with device 1(=3b000): 217 peer "
            "access is not supported between these two devices",
            "GPU116",
            ["export NCCL_P2P_DISABLE=1"],
        ),
        # graph/rings: the ranks built different topologies
        (
            "graph/rings.cc:51 NCCL WARN Error : ring 0 does not contain rank 1",
            "NET121",
            ["inconsistent rings", "env | grep ^NCCL_", "torch.cuda.nccl.version()"],
        ),
        (
            "init.cc:232 NCCL WARN NCCL version mismatch with remote peer gpu2 (local: 2.18.3, "
            "remote 2.21.5)",
            "NET121",
            ["NCCL 2.18.3", "NCCL 2.21.5", "nvidia-nccl-cu12==2.21.5"],
        ),
        (
            "bootstrap.cc:335 NCCL WARN Bootstrap Root : mismatch in info from procs, nranks 8 vs "
            "16, nroots 1 vs 1, iroot 0 vs 0, offset 0",
            "NET121",
            ["MASTER_PORT", "same world size"],
        ),
        # graph/xml: the graph file NCCL_GRAPH_FILE names is not there
        (
            "graph/xml.cc:843 NCCL WARN Could not open XML graph file "
            "/opt/microsoft/ncv4/graph.xml : No such file or directory",
            "NET120",
            ["/opt/microsoft/ncv4/graph.xml", "unset NCCL_GRAPH_FILE"],
        ),
        # nvls (2.23+): the multicast bind that needs the fabric manager
        (
            "transport/nvls.cc:138 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory "
            "of size 1073741824 : CUDA error 1 'invalid argument'.",
            "NET122",
            ["NCCL_NVLS_ENABLE=0"],
        ),
        # enqueue: NCCL_ALGO that leaves no algorithm (2.19+ names it)
        (
            "enqueue.cc:2063 NCCL WARN No algorithm/protocol available for function AllReduce "
            "with datatype ncclFloat32. NCCL_ALGO was set to NVLS.",
            "NET125",
            ["NCCL_ALGO=NVLS", "unset NCCL_ALGO"],
        ),
        # socket/proxy: EMFILE
        (
            "misc/socket.cc:415 NCCL WARN socketTryAccept: Accept failed: Too many open files",
            "NET124",
            ["open-files limit", "ulimit -n 1048576"],
        ),
        (
            "proxy.cc:1517 NCCL WARN [Service thread] Accept failed Too many open files",
            "NET124",
            ["ulimit -n 1048576"],
        ),
        # net plugins: aws-ofi-nccl found no provider; NCCL_NET names a network none provides
        (
            "nccl_ofi_net.cpp:418 NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
            "NET123",
            ["fi_info -p efa", "--device=/dev/infiniband/uverbs0", "NCCL_NET=Socket"],
        ),
        (
            "NCCL WARN NET/OFI Unable to find a suitable ofi provider",
            "NET123",
            ["fi_info -p efa"],
        ),
        (
            "init.cc:215 NCCL WARN Error: network AWS Libfabric not found.",
            "NET123",
            ["NCCL_NET names 'AWS Libfabric'", "unset NCCL_NET"],
        ),
        (
            "nccl_ofi_net.cpp:651 NCCL WARN NET/OFI EFA provider requires at least libfabric "
            "version 1.22.0.",
            "NET123",
            ["libfabric >= 1.22.0"],
        ),
    ],
)
def test_a_warn_line_confirms_the_cause_it_names(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, fragments: list[str]
) -> None:
    found = causes(cli, log_file(tmp_path, _PREFIX + line))[code]
    assert found["verdict"] == "confirmed", found
    (finding,) = found["findings"]
    text = finding["message"] + "\n" + fix_text(found)
    for fragment in fragments:
        assert fragment in text, (fragment, text)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # attaching to another rank's segment is not a size: the ranks' /dev/shm may differ
        (
            "misc/shmutils.cc:113 NCCL WARN Error while attaching to shared memory segment "
            "/dev/shm/nccl-aBcDeF (size 4194656)",
            "SYS101",
        ),
        # NVLink's own P2P state: NCCL calls it a hardware issue, not refused peering
        (
            "transport/p2p.cc:424 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 0. "
            "This should not be the case given their connectivity, and is probably due to a "
            "hardware issue.",
            "GPU116",
        ),
        # NCCL <= 2.18 names no setting: without NCCL_ALGO / NCCL_PROTO it is internal
        ("enqueue.cc:1182 NCCL WARN Error : no algorithm/protocol available", "NET125"),
        # the plugin's INFO of its provider search: nodes without EFA print it too
        ("NCCL INFO NET/OFI No eligible providers were found", "NET123"),
    ],
)
def test_a_line_that_does_not_decide_leaves_the_cause_open(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str
) -> None:
    found = causes(cli, log_file(tmp_path, _PREFIX + line))[code]
    assert found["verdict"] == "unknown", found
    assert not found["findings"]


def test_a_proxy_failure_of_another_error_is_not_the_open_files_limit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "proxy.cc:1505 NCCL WARN [Proxy Service 3] Failed to execute operation Connect from "
        "rank 3, retcode 3"
    )
    found = causes(cli, log_file(tmp_path, _PREFIX + line))
    assert found["NET124"]["verdict"] == "ruled_out"
    assert not any(c["verdict"] == "confirmed" for c in found.values())


@pytest.mark.parametrize(
    "line",
    [
        # NCCL's echo of the variable alone (the value is a fact for other lines)
        "NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
        # NCCL's INFO that no external net plugin is installed: every node without one
        "NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot "
        "open shared object file: No such file or directory",
        "NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
    ],
)
def test_info_lines_healthy_nodes_print_are_noise(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    result = cli("triage", str(log_file(tmp_path, _PREFIX + line)), "--json", "--no-probe")
    assert result.returncode == 0, result.stdout
    data = result.json()["data"]
    assert data["matches"] and all(m["noise"] for m in data["matches"])


def test_an_info_line_under_a_timeout_confirms_nothing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A socket-only node prints `NET/IB : No device found.` on every run: under a watchdog
    timeout it is no cause of it, and no confirmed finding of its own."""
    log = log_file(
        tmp_path,
        _PREFIX + "NCCL INFO NET/IB : No device found.",
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
    )
    data = _triage(cli, log)
    verdicts = {c["code"]: c["verdict"] for m in data["matches"] for c in m["causes"]}
    assert verdicts["NET150"] == "unknown"
    assert "confirmed" not in verdicts.values()


def test_torchs_last_error_repeats_nccls_words(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch's `Last error:` block repeats NCCL's last WARN without its prefix: the refused
    peer access decides the cause of the unhandled cuda error above it too."""
    log = log_file(
        tmp_path,
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "Last error:",
        "Cuda failure 217 'peer access is not supported between these two devices'",
    )
    found = causes(cli, log)
    assert found["GPU116"]["verdict"] == "confirmed"
    assert "export NCCL_P2P_DISABLE=1" in fix_text(found["GPU116"])


@pytest.mark.parametrize("error", ["invalid argument", "operation in progress"])
def test_torchs_nccl_error_of_any_kind_is_not_the_banner(
    tmp_path: Path, cli: Callable[..., CliResult], error: str
) -> None:
    """torch ends every NCCL error line with ', NCCL version X': an error no signature knows
    yet is no start-up banner (noise would hide it as a clean line)."""
    line = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        f"ProcessGroupNCCL.cpp:1970, {error} (run with NCCL_DEBUG=WARN for details), NCCL "
        "version 2.20.5"
    )
    data = _triage(cli, log_file(tmp_path, line))
    assert all(m["id"] != "nccl-version-banner" for m in data["matches"])
