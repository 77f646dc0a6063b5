"""NCCL's ranks on several hosts that disagree, read from every host's NCCL start-up lines
(envcheck/triage/nccl_hosts.py): NET121's hosts on different NCCL releases (worded in
nccl_ranks.py), NET171, hosts on different network transports or plugins, and NET172, a
bootstrap address that is no node's own."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual


def address_kind(address: str) -> str | None:
    """Why a bootstrap address cannot reach another node, or None: loopback, link-local, or
    Docker's default bridge (172.17.0.0/16, every node's containers numbered alike; Docker's
    docs, 'Bridge network driver')."""
    try:
        ip = ipaddress.ip_address(address.split("%", maxsplit=1)[0])
    except ValueError:
        return None
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip in ipaddress.ip_network("172.17.0.0/16"):
        return "Docker's default bridge (172.17.0.0/16)"
    return None


def stated_groups(value: str) -> list[tuple[str, list[str]]]:
    """'2.18.6=node1,node2;2.20.5=node3' -> [('2.18.6', ['node1', 'node2']), ('2.20.5', ...)]
    (a '+' after the hosts: more than the three named)."""
    groups: list[tuple[str, list[str]]] = []
    for part in value.split(";"):
        what, _, hosts = part.rpartition("=")
        if what:
            groups.append((what, [h for h in hosts.rstrip("+").split(",") if h]))
    return groups


def on_hosts(hosts: list[str]) -> str:
    return ", ".join(hosts)


@rule("NET171", "nccl-hosts-network-differ", Severity.ERROR)
def nccl_hosts_network_differ(facts: Facts) -> Iterable[Hit]:
    """The hosts of one NCCL job use different network transports or network plugins

    ## What it checks
    Only a log says it: every host's NCCL start-up lines side by side (`NCCL_DEBUG=INFO`).
    One host's NCCL says `Using network IB` (or lists its HCAs, `NET/IB : Using
    [0]mlx5_0:1/IB`) while another's says `NET/IB : No device found.` and `Using network
    Socket`; or one host loads an external network plugin (`NET/Plugin: Loaded net plugin
    ...`, HPC-X's `Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so`) while
    another finds none (`NET/Plugin: Could not find: libnccl-net.so`).

    ## Why it matters
    Every rank of a communicator connects its peers through the same transport: a rank on
    sockets cannot talk to a rank that expects InfiniBand verbs, and a plugin's transport
    (IBext, AWS Libfabric) is not NCCL's internal one. The job hangs at the first collective
    across the nodes, or fails with a connection error, while each node alone works. The
    hosts differ in what they install or expose: the HCA (or /dev/infiniband in a
    container), libibverbs, or the plugin library on the library path.

    ## Example
    Two HGX nodes, HPC-X's plugin on one of them only:
    `HGX-04:... NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so`,
    `HGX-11:... NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network
    plugin.`; nccl-tests hangs.

    ## Fix
    Give every node the same network stack: on the host that fell back to sockets, check
    `ibstat` / `ibv_devinfo` (HCA present and Active), that NCCL_IB_HCA names its HCAs, and
    that libibverbs (rdma-core) and /dev/infiniband are visible in its container. Where a
    plugin is installed on some nodes only, install it on every node (same path on
    LD_LIBRARY_PATH) or turn it off everywhere with `NCCL_NET_PLUGIN=none`. To run on
    sockets everywhere meanwhile: `NCCL_IB_DISABLE=1` on every node.

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/init.cc
    - https://github.com/NVIDIA/nccl/blob/master/src/plugin/net.cc
    - https://github.com/NVIDIA/nccl/issues/1634
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net-plugin
    """
    raise Skip("only the log's NCCL start-up lines state each host's network", "log.nccl")


@from_log("NET171")
def nccl_hosts_network_differ_in_log(facts: Facts, line: LogLine) -> Hit:
    """The hosts' networks or plugins as the start-up lines state them: the fix goes to the
    hosts on the other transport, or that lack the plugin the others load."""
    networks = stated_groups(line.stated.get("nccl_hosts_networks", ""))
    plugins = stated_groups(line.stated.get("nccl_hosts_plugins", ""))
    if plugins:
        loaded = [(p, hs) for p, hs in plugins if p != "internal"]
        lacking = [h for p, hs in plugins if p == "internal" for h in hs]
        plugin, with_it = loaded[0]
        return Hit(
            f"NCCL loads the network plugin {plugin} on {on_hosts(with_it)} but none on "
            f"{on_hosts(lacking)} (line {line.line}): the ranks of one communicator use "
            "different network transports",
            evidence={"line": line.line, "plugins": line.stated["nccl_hosts_plugins"]},
            fix=fix(
                f"Use one network stack on every node: install the plugin ({plugin}) on "
                f"{on_hosts(lacking)} too, or set NCCL_NET_PLUGIN=none on every node so all "
                "use NCCL's internal transports",
                "manual",
                manual("export NCCL_NET_PLUGIN=none   # on every node, or:"),
                manual(
                    f"install {plugin} on {on_hosts(lacking)} (same path on LD_LIBRARY_PATH "
                    "as the other nodes)"
                ),
            ),
        )
    if not networks:
        raise NotStated(f"line {line.line} states no host's network")
    socket = [h for n, hs in networks if n.lower() == "socket" for h in hs]
    others = [(n, hs) for n, hs in networks if n.lower() != "socket"]
    shown = "; ".join(f"{n} on {on_hosts(hs)}" for n, hs in networks)
    if socket and others:
        net, hosts = others[0]
        return Hit(
            f"NCCL uses {net} on {on_hosts(hosts)} but fell back to sockets on "
            f"{on_hosts(socket)} (line {line.line}: {shown}): those hosts found no HCA NCCL "
            "could open",
            evidence={"line": line.line, "networks": line.stated["nccl_hosts_networks"]},
            fix=fix(
                f"Make {net} usable on {on_hosts(socket)} (HCA up, NCCL_IB_HCA naming it, "
                "libibverbs and /dev/infiniband in the container), or run every node on "
                "sockets with NCCL_IB_DISABLE=1",
                "manual",
                manual(f"ibstat; ibv_devinfo   # on {on_hosts(socket)}: an HCA, State Active"),
                manual("env | grep NCCL_IB_HCA   # the same HCA names as on the other nodes"),
                manual("docker run --device=/dev/infiniband ...   # where NCCL runs in one"),
                manual("export NCCL_IB_DISABLE=1   # meanwhile, on every node"),
            ),
        )
    return Hit(
        f"the hosts' NCCL uses different networks (line {line.line}: {shown})",
        evidence={"line": line.line, "networks": line.stated["nccl_hosts_networks"]},
        fix=fix(
            "Use one network on every node: the same NCCL_NET / plugin and the same "
            "NCCL_IB_* settings everywhere",
            "manual",
            manual("env | grep ^NCCL_   # on every node: the same settings"),
        ),
    )


@rule("NET172", "nccl-bootstrap-address-not-routable", Severity.ERROR)
def nccl_bootstrap_not_routable(facts: Facts) -> Iterable[Hit]:
    """A host's NCCL bootstrapped on an address the other nodes cannot reach

    ## What it checks
    Only a log says it: every host's `Bootstrap : Using <iface>:<address>` line (NCCL's
    bootstrap.cc; `NET : Using interface` before 2.4) side by side. Two hosts that advertise
    the same address (each one's container on Docker's default bridge, 172.17.0.x), or one
    host on a loopback, link-local or Docker-bridge address beside hosts on the network
    between the nodes.

    ## Why it matters
    Each rank publishes the address of the interface NCCL chose; the other nodes connect to
    it. An address that is private to one node (a container's bridge, lo, a link-local IPv6)
    is unreachable from the others, so the bootstrap or the socket transport times out or
    is refused, while a job on one node works.

    ## Example
    Two nodes each running the training container without host networking:
    `c39f5cf046aa:... NCCL INFO Bootstrap : Using eth0:172.17.0.3<0>` on both nodes;
    `unhandled system error`.

    ## Fix
    Run the containers with the host's network (`docker run --network=host`, Kubernetes'
    `hostNetwork: true`) and set `NCCL_SOCKET_IFNAME` (and `GLOO_SOCKET_IFNAME`) to the
    interface the nodes reach each other on; where the nodes name it differently, list both
    (`NCCL_SOCKET_IFNAME=eno1,eth0`) or set it per node in /etc/nccl.conf.

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/bootstrap.cc
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    - https://github.com/pytorch/pytorch/issues/23363
    - https://github.com/NVIDIA/nccl/issues/286
    """
    raise Skip("only the log's NCCL start-up lines state each host's bootstrap address", "log.nccl")


@from_log("NET172")
def nccl_bootstrap_not_routable_in_log(facts: Facts, line: LogLine) -> Hit:
    """The addresses no node owns, and the interfaces of the hosts whose own address it is:
    the interface to name in NCCL_SOCKET_IFNAME."""
    bad = stated_groups(line.stated.get("nccl_hosts_bootstrap", ""))
    if not bad:
        raise NotStated(f"line {line.line} states no bootstrap address")
    good = stated_groups(line.stated.get("nccl_hosts_routable", ""))
    why = []
    bridge = False
    for pair, hosts in bad:
        iface, _, address = pair.partition(":")
        kind = address_kind(address)
        bridge = bridge or (kind or "").startswith("Docker")
        reason = kind or "the same address on several hosts"
        if len(hosts) > 1 and kind:
            reason += ", on several hosts"
        why.append(f"{iface} {address} on {on_hosts(hosts)} ({reason})")
    ifaces = [i for i, _ in good]
    name = ",".join(dict.fromkeys(ifaces)) if ifaces else "<the interface between the nodes>"
    container = bridge or any(len(hs) > 1 for _, hs in bad)
    actions = [manual(f"export NCCL_SOCKET_IFNAME={name} GLOO_SOCKET_IFNAME={name}")]
    if container:
        actions.insert(0, manual("docker run --network=host ...   # hostNetwork: true on k8s"))
    return Hit(
        f"NCCL bootstrapped on an address the other nodes cannot reach (line {line.line}: "
        f"{'; '.join(why)})",
        evidence={"line": line.line, "bootstrap": line.stated["nccl_hosts_bootstrap"]},
        fix=fix(
            ("Run the containers on the host's network (--network=host) and " if container else "")
            + f"set NCCL_SOCKET_IFNAME={name} on every node (the interface the nodes reach "
            "each other on)",
            "manual",
            *actions,
        ),
    )
