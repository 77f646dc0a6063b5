"""Where an NCCL job's ranks ran, as its log states it, and what that decides among the causes of
NCCL's generic error lines; and NET106 (peer-to-peer on GeForce boards) from a line.

NCCL's `unhandled system error` (ncclSystemError), `remote process exited or there was a network
error` (ncclRemoteError) and its proxy's failures name no subsystem: the socket transport between
nodes and the shared-memory transport inside a container are both behind them (NCCL's
troubleshooting guide). The log decides between them when it says where the ranks ran:

- on several nodes: Ray forwards a worker's output as `(pid=N, ip=A)` only when the worker is on
  another node than the driver (python/ray/_private/worker.py), launchers state the node count
  (torchrun `--nnodes 2`, its `min_nodes : 2` dump, DeepSpeed's `--num_nodes`, Accelerate's
  `--num_machines 2`, LLaMA-Factory's `NNODES=2`, Slurm's `SLURM_NNODES` and `srun -N 2`, the
  hosts of `mpirun -H host1:8,host2:8` or horovodrun, torchrun's rendezvous dump
  `group_world_size=2`) or a
  node rank above 0, NCCL's WARN that a connection to an address none of this node's INFO lines
  state (`Bootstrap : Using [0]eth0:A<0>`) failed, and NCCL's own INFO lines say it: `comm 0x..
  rank 0 nRanks 16 nNodes 2` (src/init.cc) and channels `via NET/Socket` or `via NET/IB...`
  (src/transport.cc: the network transport, used between nodes while SHM is enabled). With
  NCCL_SOCKET_IFNAME not set, NCCL picked the interface between the nodes itself: NET104, whose fix
  (`NCCL_SOCKET_IFNAME`) is what the threads of these lines establish (NVIDIA/nccl#207, #697,
  #1141, ROCm/rccl#328);
- in a Docker container with nothing saying another node: NCCL's shared-memory segments in a
  /dev/shm of Docker's default 64 MiB (SYS101; system.py reads the container).

Nothing stated: the causes stay open (NotStated), as before."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, StatedOtherwise, from_log
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.nccl import nccl_chose_virtual_interface
from envcheck.rules.node.network import candidate
from envcheck.rules.node.rank_hosts import (
    GENERIC_NCCL_LINES,
    STORE_LINES,
    ranks_on_one_node,
    ranks_span_nodes,
)

# NCCL's 'Net : No interface found in the same subnet as remote address A' (socket.cc)
_NO_SUBNET = "nccl-no-interface-in-peer-subnet"


def _loopback_peer(stated: Mapping[str, str]) -> str | None:
    """Why NCCL's own connect line says a rank advertised a loopback address: NCCL connects to
    the address each rank published from the interface it chose (src/bootstrap.cc), so a peer at
    127.x or ::1 that refuses means that interface was lo, not one the ranks share."""
    peer = stated.get("nccl_peer_address")
    if peer and (peer.startswith("127.") or peer in ("::1", "localhost")):
        return (
            f"NCCL connected to a peer at {peer}, a loopback address: a rank published its lo "
            "interface"
        )
    return None


# the facts of triage/nccl_hosts.py that name a difference between the hosts other than
# their interfaces: another NCCL release, transport or plugin decides the generic error first
_HOSTS_DIFFER = (
    "nccl_hosts_versions",
    "nccl_hosts_settings",
    "nccl_hosts_networks",
    "nccl_hosts_plugins",
)


@from_log("NET104")
def nccl_chose_virtual_interface_or_spans_nodes(facts: Facts, line: LogLine) -> Hit | None:
    """NCCL's own 'Bootstrap : Using docker0:...' line (nccl.py); for NCCL's generic error lines,
    a job whose log shows ranks on several nodes and no NCCL_SOCKET_IFNAME."""
    if line.signature == _NO_SUBNET:
        return _no_interface_in_peer_subnet(facts, line)
    one = ranks_on_one_node(line.stated)
    if line.signature in STORE_LINES:
        if one:
            raise StatedOtherwise(
                f"{one}: the ranks reach rank 0's store on this host, whatever interface "
                f"Gloo and NCCL would choose between nodes (line {line.line})"
            )
        raise NotStated(
            f"line {line.line} is the rendezvous store's: the interface NCCL and Gloo choose "
            "between nodes comes after it"
            if ranks_span_nodes(line.stated)
            else f"line {line.line} does not say whether the ranks ran on several nodes",
            "log.nodes",
        )
    if line.signature not in GENERIC_NCCL_LINES:
        if line.informational and not line.stated.get("nccl_listed_iface"):
            _info_line_alone(line)
        return nccl_chose_virtual_interface(facts, line)
    differ = [line.stated[k] for k in _HOSTS_DIFFER if line.stated.get(k)]
    if differ:
        raise NotStated(
            "the hosts' NCCL start-up lines differ in more than the interface ("
            + differ[0].replace(":", " ").replace("=", " on ").replace(";", ", ")
            + "): "
            "nccl-hosts-differ's causes (NET121, NET171) are the likelier call"
        )
    why = (
        ranks_span_nodes(line.stated)
        or _loopback_peer(line.stated)
        or _virtual_then_connect_failed(line)
    )
    if why is None:
        if line.stated.get("nccl_listed_iface") and not line.stated.get("nccl_chosen_iface"):
            return None  # NCCL's own interface list (INFO) holds no virtual interface
        raise NotStated(f"line {line.line} does not say whether the ranks ran on several nodes")
    named = line.stated.get("nccl_socket_ifname")
    if named:
        raise NotStated(f"NCCL_SOCKET_IFNAME was set ({named}): whether it is right is NET101's")
    best = None
    with contextlib.suppress(Skip):
        best = candidate(facts.network())
    # the node's own interfaces first; else the physical one NCCL listed beside the bridges
    iface = (
        best.name
        if best is not None
        else line.stated.get("nccl_listed_iface") or "<the interface between the nodes, e.g. eth0>"
    )
    chosen = line.stated.get("nccl_chosen_iface")
    gloo = line.signature.startswith("gloo-")
    lib, var = ("Gloo", "GLOO_SOCKET_IFNAME") if gloo else ("NCCL", "NCCL_SOCKET_IFNAME")
    return Hit(
        f"{lib} failed between nodes (line {line.line}): {why}, and nothing in the log sets "
        f"{var}, so {lib} chose the interface itself (the first that is not lo or "
        "docker*: a bridge, a veth, an interface the other nodes do not reach)",
        evidence={"line": line.line, "spans_nodes": why},
        fix=fix(
            f"Name the interface between the nodes on every node: export "
            f"NCCL_SOCKET_IFNAME={iface} GLOO_SOCKET_IFNAME={iface}"
            + (f", not {chosen}" if chosen and not gloo else "")
            + " (and, without a working InfiniBand/RoCE fabric, NCCL_IB_DISABLE=1)",
            "manual",
            manual("ip -br addr   # the interface that carries the address the other nodes reach"),
            manual(f"export NCCL_SOCKET_IFNAME={iface} GLOO_SOCKET_IFNAME={iface}"),
            manual("rerun with NCCL_DEBUG=INFO: the 'Bootstrap : Using <iface>' line of each rank"),
            manual(
                "containers on several nodes: docker run --network=host (hostNetwork: true on "
                "Kubernetes), so that the ranks publish an address the other nodes reach"
            ),
        ),
        severity=Severity.WARNING,
    )


# NCCL's lines that say a connection between ranks failed or timed out (a rank could not reach
# the address another one published), as opposed to errors that name no connection
_CONNECT_LINES = frozenset(
    {
        "nccl-socket-connect-failed",
        "nccl-socket-poll-connect",
        "nccl-connect-returned",
        "nccl-peer-connection-timeout",
        "nccl-remote-exited",
        "gloo-connect-full-mesh",
    }
)


def _info_line_alone(line: LogLine) -> None:
    """NCCL's INFO 'Bootstrap : Using docker0:...' is a fact, not a failure: harmless when every
    rank is on this node (a single-node container often has no other interface). It decides
    NET104 only where the log also says the ranks span nodes; a failed connection after it is
    read on that failure's own line (``_virtual_then_connect_failed``)."""
    if ranks_span_nodes(line.stated) is None:
        chosen = line.stated.get("nccl_chosen_iface") or "a virtual interface"
        raise NotStated(
            f"line {line.line} is NCCL's INFO that it chose {chosen}, harmless when every rank "
            "is on this node; nothing in the log says the ranks span nodes or that a connection "
            "between them failed",
            fix=(
                "across nodes, set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface "
                f"the nodes reach each other on, not {chosen}"
            ),
        )


def _virtual_then_connect_failed(line: LogLine) -> str | None:
    """Why a failed connection between ranks is NCCL's choice of a virtual interface: the log
    states NCCL chose lo, a docker bridge or a veth (its INFO line) and this line says a rank
    could not connect to (or timed out waiting for) another: the address published from that
    interface is not reachable from the other ranks."""
    chosen = line.stated.get("nccl_chosen_iface")
    if not chosen:
        return None
    listed = line.stated.get("nccl_listed_iface")
    if listed:  # the socket transport's list: it spreads connections over every interface
        return (
            f"NCCL's socket transport listed {chosen} beside {listed} (its INFO line) and then "
            "failed: it connects over every interface it lists, bridges included"
        )
    if line.signature not in _CONNECT_LINES:
        return None
    return (
        f"NCCL chose {chosen} (a loopback or virtual interface, as its INFO line says) and a "
        "connection between ranks then failed"
    )


def _no_interface_in_peer_subnet(facts: Facts, line: LogLine) -> Hit:
    """The peer's address is on a subnet none of this node's interfaces is on: the ranks chose
    interfaces on different networks (NCCL_SOCKET_IFNAME unset, or naming an interface that
    differs between the nodes)."""
    peer = line.stated.get("nccl_peer_address") or "the peer's address"
    best = None
    with contextlib.suppress(Skip):
        best = candidate(facts.network())
    iface = best.name if best is not None else f"<the interface on {peer}'s subnet>"
    return Hit(
        f"no interface of this node is on the subnet of {peer} (line {line.line}): the ranks "
        "advertise addresses on different networks, so NCCL cannot connect them",
        evidence={"line": line.line, "peer": peer},
        fix=fix(
            f"Set NCCL_SOCKET_IFNAME on every node to the interface on the network they share "
            f"(the one on {peer}'s subnet): export NCCL_SOCKET_IFNAME={iface} "
            f"GLOO_SOCKET_IFNAME={iface}",
            "manual",
            manual(f"ip -br addr   # on each node: the interface on {peer}'s subnet"),
            manual(f"export NCCL_SOCKET_IFNAME={iface} GLOO_SOCKET_IFNAME={iface}"),
            manual(
                "with NCCL_COMM_ID (or MASTER_ADDR) set: an address of the root node on that "
                "same network"
            ),
        ),
        severity=Severity.WARNING,
    )


# GeForce boards by NVIDIA's naming: 'GeForce', GTX, and RTX x050-x090 of the 20-50 series (the
# workstation boards are RTX A6000, RTX 4500/5000/6000 Ada, RTX PRO 6000, Quadro RTX 8000)
_GEFORCE = lazy(r"GeForce|\bGTX\b|\bRTX ?[2-5]0[5-9]0\b")
# the lines that state peer access itself is refused between the GPUs (no GPU name needed)
_REFUSED = frozenset({"accelerate-rtx4000-p2p", "custom-allreduce-peer-unsupported"})


@from_log("NET106")
def geforce_p2p_in_log(facts: Facts, line: LogLine) -> Hit:
    """Accelerate's refusal on RTX 40xx boards, vLLM's custom all-reduce without peer access;
    NCCL's `unhandled cuda error` and torch's watchdog timeouts where the log or the node's
    facts (a pasted dump) name a GeForce GPU and nothing says the ranks span nodes: P2P hangs
    and fails on these boards (nccl-tests#117, nccl#1637, vllm#14449)."""
    names = [line.stated["gpu_name"]] if line.stated.get("gpu_name") else []
    count = None
    with contextlib.suppress(Skip):  # the node's (or a pasted dump's) GPUs
        gpus = facts.gpus()
        names += [g.name for g in gpus if g.name]
        section = facts.report.gpu
        # a log names the GPUs it mentions, not all of them: only a node's or a dump's list counts
        if not (section.source or "").startswith("log ("):
            count = len(gpus)
    geforce = next((n for n in names if _GEFORCE.search(n)), "")
    if line.signature not in _REFUSED:
        if not geforce:
            raise NotStated(
                f"line {line.line} names no GeForce GPU, nor do the node's facts"
                + (f" ({', '.join(dict.fromkeys(names))})" if names else "")
            )
        if count == 1:
            raise NotStated(f"the node has one GPU ({geforce}): no peer-to-peer between GPUs")
        if spans := ranks_span_nodes(line.stated):
            raise NotStated(f"{spans}: a hang between nodes is not peer-to-peer's")
    gpu = geforce or line.stated.get("gpu_name") or ""
    board = f"{gpu} boards" if gpu else "these GPUs"
    engine = line.signature == "custom-allreduce-peer-unsupported"
    summary = (
        "Turn off the custom all-reduce: vllm serve ... --disable-custom-all-reduce (SGLang: "
        "--disable-custom-all-reduce); for NCCL itself export NCCL_P2P_DISABLE=1"
        if engine
        else "Disable NCCL peer-to-peer: export NCCL_P2P_DISABLE=1 (and NCCL_IB_DISABLE=1 "
        "without InfiniBand); vLLM: --disable-custom-all-reduce"
    )
    steps = [
        manual("export NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1"),
        manual("vllm serve <model> --disable-custom-all-reduce"),
    ]
    if engine:
        steps.reverse()
    return Hit(
        f"peer-to-peer between {board} is refused or unsupported (line {line.line}): GeForce "
        "boards have no P2P over PCIe, so NCCL (or the engine's own all-reduce) must not use it",
        evidence={"line": line.line, "gpu": gpu or None},
        fix=fix(summary, "safe", *steps),
        severity=Severity.WARNING,
    )
