"""CLU, the network half: interface variables, addresses and the Gloo / NCCL test."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.rules.cluster import values
from envcheck.rules.cluster.model import (
    ClusterFacts,
    ClusterHit,
    NodeView,
    cluster_rule,
    describe_split,
    evidence,
    name_nodes,
    need_two,
)
from envcheck.rules.fixes import fix, manual, set_env
from envcheck.rules.node.network import nccl_selection

_IFNAME_VARS = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")


@cluster_rule("CLU106", "socket-ifname-on-some-nodes", Severity.WARNING)
def socket_ifname_partial(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """GLOO_SOCKET_IFNAME or NCCL_SOCKET_IFNAME is set on some nodes but not others

    ## What it checks
    Whether `GLOO_SOCKET_IFNAME` and `NCCL_SOCKET_IFNAME` are set on every node or on none
    (as Ray workers see them: the environment of `ray start`).

    ## Why it matters
    The nodes without it pick an interface on their own: the hostname's address for Gloo
    (often loopback or a docker bridge), the first non-excluded interface for NCCL. Ranks then
    advertise addresses their peers cannot reach and the first collective hangs
    (`Gloo connectFullMesh failed`). It usually means one node group was started from another
    script.

    ## Example
    GLOO_SOCKET_IFNAME=eth0 on 15 nodes; unset on node-16.

    ## Fix
    Export the variable on every node before `ray start` (per node group when their interface
    names differ).

    ## References
    - https://github.com/vllm-project/vllm/issues/5094
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    - RLinf/RLinf docs/source-en/rst_source/guides/hetero.rst
    """
    need_two(facts)
    hits = []
    for var in _IFNAME_VARS:
        row = facts.group(f"env:{var}", var, values.env_var(var))
        unset = next((v for v in row.values if v.value == values.UNSET), None)
        if unset is None or len(row.values) < 2:
            continue
        set_values = [v for v in row.values if v.value != values.UNSET]
        listing = "; ".join(f"{var}={v.value} on {name_nodes(v.nodes)}" for v in set_values)
        hits.append(
            ClusterHit(
                f"{listing}; unset on {name_nodes(unset.nodes)}, which pick an interface "
                "on their own",
                evidence={**evidence(row), "unset_on": list(unset.nodes)},
                fix=_ifname_everywhere(facts, var, set_values[0].value, unset.nodes),
            )
        )
    return hits


def _ifname_everywhere(facts: ClusterFacts, var: str, value: str, unset: tuple[str, ...]) -> Fix:
    """Copy the value when the unset nodes have that interface; else name the step."""
    nodes = [n for n in facts.nodes if n.label in unset]
    names = [_interfaces(n) for n in nodes]
    if names and all(n is not None and _selects(var, value, n) for n in names):
        return fix(
            f"Set {var}={value} on {name_nodes(unset)} too, before `ray start`",
            "manual",
            set_env(**{var: value}),
        )
    return fix(
        f"Set {var} on {name_nodes(unset)} too, to each node's routable interface",
        "manual",
        manual(f"export {var}=<the node's routable interface> before `ray start`"),
    )


def _interfaces(node: NodeView) -> list[str] | None:
    try:
        return [i.name for i in node.facts.network().interfaces]
    except Skip:
        return None


def _selects(var: str, value: str, names: list[str]) -> bool:
    from envcheck.model.report import Interface

    if var == "GLOO_SOCKET_IFNAME":
        return all(n in names for n in value.split(",") if n)
    return bool(nccl_selection(value, [Interface(name=n) for n in names]))


@cluster_rule("CLU107", "socket-ifname-missing-on-some-nodes", Severity.ERROR)
def socket_ifname_missing(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """A *_SOCKET_IFNAME names an interface that exists on some nodes only

    ## What it checks
    For `GLOO_SOCKET_IFNAME` and `NCCL_SOCKET_IFNAME` values set on several nodes: whether the
    interface (Gloo: exact names; NCCL: prefixes, `=` and `^`) exists on each of them.

    ## Why it matters
    The same value copied to every node only works when the interface names match. Where it
    does not exist, Gloo fails with `Unable to find address for: eth1` and NCCL with
    `Bootstrap : no socket interface found`; the other ranks wait for that rank until the
    timeout. Mixed hardware (different NIC names per node group) is the usual cause.

    ## Example
    GLOO_SOCKET_IFNAME=ens1f0 on 4 nodes; node-d has no ens1f0 (its NIC is eth0).

    ## Fix
    Set the variable per node group to each group's interface name, or rename interfaces
    consistently (udev rules / predictable names).

    ## References
    - https://github.com/AMD-AGI/Primus/pull/1063
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    - RLinf/RLinf docs/source-en/rst_source/guides/hetero.rst
    """
    need_two(facts)
    hits = []
    for var in _IFNAME_VARS:
        row = facts.group(f"env:{var}", var, values.env_var(var))
        for value in row.values:
            if value.value == values.UNSET or (
                var == "GLOO_SOCKET_IFNAME" and value.value[:1] in "^="
            ):
                continue
            have: list[str] = []
            lack: list[str] = []
            for node in facts.nodes:
                if node.label not in value.nodes:
                    continue
                names = _interfaces(node)
                if names is not None:
                    (have if _selects(var, value.value, names) else lack).append(node.label)
            if not lack or (not have and len(value.nodes) < 2):
                continue
            where = f"exists on {name_nodes(have)} only" if have else "exists on none of them"
            hits.append(
                ClusterHit(
                    f"{var}={value.value} is set on {len(value.nodes)} node(s) but the interface "
                    f"{where}; missing on {name_nodes(lack)}",
                    evidence={
                        "variable": var,
                        "value": value.value,
                        "missing_on": lack,
                        "present_on": have,
                    },
                    fix=fix(
                        f"Set {var} on {name_nodes(lack)} to an interface they have",
                        "manual",
                        manual(
                            f"export {var}=<that node's routable interface> on {name_nodes(lack)}"
                        ),
                    ),
                )
            )
    return hits


@cluster_rule("CLU108", "address-subnet-mismatch", Severity.WARNING)
def address_subnet_mismatch(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """Nodes' addresses are in different subnets, public next to private, or shared

    ## What it checks
    The address each node is reached at (Ray's node address under `envcheck cluster`; for saved
    reports the `GLOO_SOCKET_IFNAME` / `NCCL_SOCKET_IFNAME` interface's address, else the
    hostname's), its subnet (from the interface's prefix), and whether it is public or
    private. Several hosts sharing one address is an error.

    ## Why it matters
    Nodes of one training cluster normally share a subnet. One in another subnet or with a
    public address usually chose the wrong interface (a management NIC, a docker bridge, a
    public IP behind a firewall): traffic is routed through a gateway or blocked and
    collectives crawl or hang. Hosts sharing an address (172.17.0.1 of docker0 on every node)
    make peers connect to themselves.

    ## Example
    10.0.0.0/24 on 14 nodes; 192.168.1.0/24 on node-15; 3.120.4.17 (public) on node-16.

    ## Fix
    Start Ray with `--node-ip-address` on the cluster network and set `GLOO_SOCKET_IFNAME` /
    `NCCL_SOCKET_IFNAME` to that network's interface on every node.

    ## References
    - https://docs.ray.io/en/latest/cluster/vms/user-guides/community/slurm.html
    - https://github.com/vllm-project/vllm/issues/7074
    - https://github.com/pytorch/pytorch/issues/15592
    """
    need_two(facts)
    found: dict[str, values.Address] = {}
    hosts: dict[str, str] = {}
    for node in facts.nodes:
        try:
            found[node.label] = values.chosen_address(node)
            hosts[node.label] = node.facts.network().hostname or node.label
        except Skip:
            continue
    if len(found) < 2:
        raise Skip("fewer than two nodes with a known address")
    hits = []
    by_ip: dict[str, list[str]] = {}
    for label, address in found.items():
        if not address.ip.is_loopback:
            by_ip.setdefault(str(address.ip), []).append(label)
    for ip, labels in by_ip.items():
        if len({hosts[label] for label in labels}) > 1:
            hits.append(
                ClusterHit(
                    f"{name_nodes(labels)} all use {ip}: different hosts sharing one address "
                    "(a docker bridge or NAT address), so peers connect to the wrong host",
                    evidence={"address": ip, "nodes": labels},
                    fix=_address_fix(),
                    severity=Severity.ERROR,
                )
            )
    routable = {k: v for k, v in found.items() if not v.ip.is_loopback}
    row = facts.group(
        "subnet", "address subnet", lambda n: values.subnet(n) if n.label in routable else None
    )
    if len(row.values) > 1:
        public = [v for v in row.values if v.value.endswith("(public)")]
        private = [v for v in row.values if v.value.endswith("(private)")]
        mixed = " (public next to private addresses)" if public and private else ""
        hits.append(
            ClusterHit(
                f"Node addresses are in different subnets{mixed}: {describe_split(row)}",
                evidence={
                    **evidence(row),
                    "addresses": {k: f"{v.interface} via {v.how}" for k, v in routable.items()},
                },
                fix=_address_fix(),
            )
        )
    return hits


def _address_fix() -> Fix:
    return fix(
        "Use the cluster network on every node",
        "manual",
        manual("ray start --node-ip-address=<address on the cluster network> ..."),
        manual(
            "export GLOO_SOCKET_IFNAME=<cluster interface> NCCL_SOCKET_IFNAME=<cluster interface>"
        ),
    )


@cluster_rule("CLU109", "collective-failed", Severity.ERROR)
def collective_failed(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """The Gloo / NCCL connectivity test failed

    ## What it checks
    With `envcheck cluster --collective gloo|nccl`: one process per node joins a
    `torch.distributed` group (TCP store on the head node), runs an all-reduce and a ring of
    send/recv with a hard timeout. Each rank that failed is reported with the address it
    bound and the classified reason (interface missing, loopback, unreachable, timeout, no
    torch, no GPU).

    ## Why it matters
    This is what the training job does first. A rank bound to loopback or a docker bridge, a
    firewall between nodes, or an interface name that exists on some nodes only shows up here
    in seconds instead of as a hang after the job has loaded its model.

    ## Example
    node-c: GLOO_SOCKET_IFNAME=nosuch0 names no interface on that node ('Unable to find address
    for: nosuch0'); node-a, node-b: timed out waiting for node-c.

    ## Fix
    Follow the reason: set `GLOO_SOCKET_IFNAME` / `NCCL_SOCKET_IFNAME` to the routable
    interface on every node (`--ifname` tries one without restarting Ray), open the ports
    between nodes, install torch where it is missing.

    ## References
    - https://pytorch.org/docs/stable/distributed.html#common-environment-variables
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://github.com/pytorch/pytorch/issues/15592
    """
    report = facts.collective
    if report is None:
        raise Skip("no collective test was run (--collective gloo|nccl)")
    if report.not_run:
        return [
            ClusterHit(
                f"the {report.backend} test could not run: {report.not_run}",
                evidence={"backend": report.backend},
            )
        ]
    causes, waited = report.root_causes()
    hits = []
    for rank in causes:
        also = ""
        if waited:
            also = f"; {name_nodes([r.node for r in waited])} waited for it"
        hits.append(
            ClusterHit(
                f"{report.backend} rank {rank.rank} on {rank.node} failed at {rank.stage}: "
                f"{rank.reason}{also}",
                evidence={
                    "backend": report.backend,
                    "kind": rank.kind,
                    "bound": list(rank.bound),
                    "ifname": rank.ifname,
                    "error": rank.error,
                    "waited": [r.node for r in waited],
                },
                node=rank.node,
            )
        )
    if not causes and waited:
        hits.append(
            ClusterHit(
                f"{report.backend}: {name_nodes([r.node for r in waited])} timed out at "
                f"{waited[0].stage}: {waited[0].reason}",
                evidence={"backend": report.backend, "timed_out": [r.node for r in waited]},
            )
        )
    return hits
