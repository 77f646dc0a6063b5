"""Where a job's ranks ran, as its log states it: the launchers' node counts and host lists,
Slurm's node list, DeepSpeed's world, pdsh's and NCCL's line hosts, NCCL's own addresses. Read by
the rules that decide NCCL's and Gloo's generic error lines (nccl_scope.py, network.py,
system.py); it imports no rule module, so each of them can import it."""

from __future__ import annotations

from collections.abc import Mapping

from envcheck.patterns import lazy

# NCCL's error lines that name no subsystem (matrices/signatures/nccl.toml)
GENERIC_NCCL_LINES = frozenset(
    {
        "nccl-unhandled-system-error",
        "nccl-remote-exited",
        "nccl-proxy-failed",
        "nccl-internal-error",
        "nccl-watchdog-timeout",
        "nccl-socket-connect-failed",
        "nccl-socket-poll-connect",
        "nccl-connect-returned",
        "gloo-connect-full-mesh",
        "nccl-peer-connection-timeout",
        "torch-nccl-error-any-reason",
    }
)
# torch.distributed's rendezvous-store lines (matrices/signatures/nccl.toml): a store on rank 0
# that waited for ranks, a client that could not reach it, a rank that could not read what rank 0
# published there (the NCCL unique id)
STORE_LINES = frozenset(
    {"c10d-store-wait-timeout", "c10d-store-connect-failed", "c10d-nccl-unique-id-store"}
)
# names an MPI host list may give this node itself
_LOCAL = frozenset({"localhost", "127.0.0.1", "::1"})
# a host of DeepSpeed's 'WORLD INFO DICT' (deepspeed/launcher/launch.py logs the dict of host ->
# the GPU indices it runs ranks on): "'worker-0': [0, 1]"
_WORLD_HOST = lazy(r"['\"]([^'\"]+)['\"]: ?\[")
# one name of a Slurm hostlist: a prefix and, in brackets, numbers and ranges ('gpu[01-04,07]')
_HOSTLIST_NAME = lazy(r"[^,\[]*(?:\[([^\]]*)\][^,\[]*)?")


def slurm_hosts(nodelist: str) -> int:
    """How many nodes a Slurm hostlist names ('gpu[01-02],cpu7' -> 3): each comma-separated
    name, its bracketed numbers and ranges counted (Slurm's hostlist expressions, the form of
    SLURM_JOB_NODELIST); 0 for an empty list."""
    count = 0
    for found in _HOSTLIST_NAME.finditer(nodelist):
        if not found.group(0):
            continue
        ranges = found.group(1)
        if ranges is None:
            count += 1
            continue
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            if low.isdigit() and high.isdigit() and int(high) >= int(low):
                count += int(high) - int(low) + 1
            elif part:
                count += 1
    return count


def ranks_span_nodes(stated: Mapping[str, str]) -> str | None:
    """Why the log says the job's ranks span several nodes, or None when it does not say so."""
    ip = stated.get("remote_node_ip")
    if ip:
        return f"Ray forwarded a worker's output from another node (ip={ip})"
    nodes = stated.get("nnodes")
    if nodes and nodes.isdigit() and int(nodes) > 1:
        return f"the launcher (or NCCL's communicator) states {nodes} nodes"
    hosts = stated.get("nccl_hosts", "").split(",")
    if len(hosts) > 1:
        return f"NCCL's lines come from {len(hosts)} hosts ({', '.join(hosts[:3])})"
    tested = stated.get("nccl_tests_hosts", "").split(",")
    if len(tested) > 1:
        return (
            f"nccl-tests' device table lists ranks on {len(tested)} hosts ({', '.join(tested[:3])})"
        )
    named = stated.get("launcher_hosts", "").split(",")
    launched = dict.fromkeys(h.split(":")[0] for h in named if h and h.split(":")[0] not in _LOCAL)
    if len(launched) > 1:
        return f"the launcher was given {len(launched)} hosts ({', '.join(list(launched)[:3])})"
    gathered = stated.get("launcher_line_hosts", "").split(",")
    if len(gathered) > 1:
        return (
            f"pdsh gathered the job's lines from {len(gathered)} hosts ({', '.join(gathered[:3])})"
        )
    world = _WORLD_HOST.findall(stated.get("launcher_world_info", ""))
    if len(dict.fromkeys(world)) > 1:
        shown = ", ".join(list(dict.fromkeys(world))[:3])
        return f"DeepSpeed's launcher states {len(dict.fromkeys(world))} hosts ({shown})"
    allocated = slurm_hosts(stated.get("slurm_nodelist", ""))
    if allocated > 1:
        return f"Slurm allocated {allocated} nodes ({stated['slurm_nodelist']})"
    rank = stated.get("node_rank")
    if rank and rank.isdigit() and int(rank) > 0:
        return f"the launcher was given node rank {rank} (a job of several nodes)"
    if other := peer_elsewhere(stated):
        return other
    net = stated.get("nccl_net_transport")
    if net and not stated.get("nccl_shm_disabled"):
        return (
            f"NCCL connected ranks through its network transport (via NET/{net.strip()}), "
            "which it uses between nodes"
        )
    return None


def ranks_on_one_node(stated: Mapping[str, str]) -> str | None:
    """Why the log says every rank ran on one node, or None when it does not say so (or says
    several): the launcher's node count of 1 (torchrun's `--nnodes=1`, Slurm's
    `SLURM_NNODES=1`, DeepSpeed's `--num_nodes 1`; launcher-node-count) with nothing in the log
    placing a rank elsewhere. On one node every rank reaches the store and its peers on the same
    host, so what another node would need of this one (a hostname that resolves to a routable
    address, the interface between the nodes) decides nothing there."""
    if ranks_span_nodes(stated) is not None:
        return None
    if stated.get("nnodes") == "1":
        return "the launcher states one node (nnodes 1)"
    return None


def peer_elsewhere(stated: Mapping[str, str]) -> str | None:
    """Why NCCL's own lines say a peer is on another node: a rank connected (or failed to) to an
    address none of this node's ranks use. On one node every rank publishes an address of the
    interfaces NCCL chose there (src/bootstrap.cc: the bootstrap interface's address; the
    socket transport's, net_socket.cc), and the log's INFO lines state those; an address that
    is none of them, and no loopback, is another node's."""
    peer = stated.get("nccl_peer_address")
    own = stated.get("nccl_own_addresses")
    if not peer or not own or peer.startswith("127.") or peer in ("::1", "localhost"):
        return None
    mine = own.split(",")
    if peer in mine:
        return None
    return (
        f"NCCL connected to {peer}, an address none of this node's ranks use (its INFO lines "
        f"state {', '.join(mine[:3])}): a rank on another node"
    )
