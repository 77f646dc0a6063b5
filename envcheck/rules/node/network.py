"""NET: the interfaces Gloo, NCCL and Ray will use, and what the hostname resolves to."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.model.report import Interface, NetworkInfo
from envcheck.rules.base import Hit, LogLine, NotStated, StatedOtherwise, from_log, rule
from envcheck.rules.fixes import fix, manual, set_env

SOCKET_VARS = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME")
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_VIRTUAL_PREFIXES = ("docker", "veth", "br-", "cni", "flannel", "cali", "virbr", "tun", "tap", "lo")


def _addresses(iface: Interface) -> list[str]:
    return [a.split("/")[0] for a in iface.ipv4 + iface.ipv6]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address, or None when it is not one (``--redact`` replaces them with pseudonyms)."""
    try:
        return ipaddress.ip_address(text.split("%", maxsplit=1)[0])
    except ValueError:
        return None


def usable(iface: Interface) -> bool:
    """Up, with an address other than an IPv6 link-local one."""
    if iface.state not in ("up", None):
        return False
    return any(not (ip and ip.is_link_local) for ip in map(_ip, _addresses(iface)))


def is_virtual(iface: Interface) -> bool:
    if iface.kind in ("loopback", "bridge", "veth", "virtual"):
        return True
    return iface.kind is None and iface.name.startswith(_VIRTUAL_PREFIXES)


def candidate(net: NetworkInfo) -> Interface | None:
    """The interface a user most likely means: up, not virtual, with an IPv4 address."""
    options = [i for i in net.interfaces if usable(i) and not is_virtual(i) and i.ipv4]
    options.sort(key=lambda i: (i.kind != "ether", i.kind != "infiniband", i.name))
    return options[0] if options else None


def _describe_ifaces(net: NetworkInfo) -> str:
    return (
        ", ".join(
            f"{i.name} ({i.state or '?'}{', ' + i.ipv4[0] if i.ipv4 else ''})"
            for i in net.interfaces
        )
        or "none"
    )


def _ifname_fix(net: NetworkInfo, variables: tuple[str, ...]) -> Fix | None:
    best = candidate(net)
    if best is None:
        return None
    return fix(
        f"Name the routable interface ({best.name}) explicitly on every node before `ray start`",
        "safe",
        set_env(**{v: best.name for v in variables}),
    )


def nccl_selection(value: str, interfaces: Iterable[Interface]) -> list[Interface]:
    """Interfaces NCCL's IFNAME syntax selects: prefixes, `=` for exact names, `^` to exclude."""
    exclude = value.startswith("^")
    rest = value[1:] if exclude else value
    exact = rest.startswith("=")
    rest = rest[1:] if exact else rest
    names = [n for n in rest.split(",") if n]

    def matches(name: str) -> bool:
        return any(name == n if exact else name.startswith(n) for n in names)

    return [i for i in interfaces if matches(i.name) != exclude]


def _problem(iface: Interface | None, name: str, net: NetworkInfo) -> str | None:
    if iface is None:
        return f"no interface {name} on this node (interfaces: {_describe_ifaces(net)})"
    if iface.state not in ("up", None):
        return f"interface {name} is {iface.state}"
    if not usable(iface):
        return f"interface {name} has no usable IP address"
    return None


@rule("NET101", "socket-ifname-unusable", Severity.ERROR)
def socket_ifname_unusable(facts: Facts) -> Iterable[Hit]:
    """GLOO/NCCL/TP_SOCKET_IFNAME names an interface that is missing, down or has no address

    ## What it checks
    The interfaces named by `GLOO_SOCKET_IFNAME` (exact names, comma-separated),
    `NCCL_SOCKET_IFNAME` and `TP_SOCKET_IFNAME` (NCCL syntax: prefixes, `=` for exact names,
    `^` to exclude) against this node's interfaces, their state and addresses.

    ## Why it matters
    Gloo raises `Unable to find address for: eth1`; NCCL fails with `Bootstrap : no socket
    interface found` or silently uses another interface; the job hangs at the first collective.
    Multi-node images often carry one node's interface name to nodes where it differs.

    ## Example
    GLOO_SOCKET_IFNAME=eth1 on a node whose interfaces are eth0, docker0 and lo.

    ## Fix
    Set the variable to this node's routable interface (the one with the address the other nodes
    reach), on every node, before `ray start`.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    - https://pytorch.org/docs/stable/distributed.html#common-environment-variables
    - https://github.com/AMD-AGI/Primus/pull/1063
    """
    env = facts.env()
    set_vars = [v for v in SOCKET_VARS if env.get(v)]
    if not set_vars:
        return []
    net = facts.network()
    hits = []
    for var in set_vars:
        value = env[var]
        if var == "GLOO_SOCKET_IFNAME":
            if value.startswith(("^", "=")):
                continue  # NET102
            problems = [
                p
                for name in value.split(",")
                if name and (p := _problem(net.interface(name), name, net))
            ]
        else:
            chosen = nccl_selection(value, net.interfaces)
            problems = (
                []
                if any(usable(i) for i in chosen)
                else [
                    f"it selects no usable interface ({', '.join(i.name for i in chosen) or 'none matches'}; interfaces: {_describe_ifaces(net)})"
                ]
            )
        if problems:
            hits.append(
                Hit(
                    f"{var}={value}: {'; '.join(problems)}",
                    evidence={
                        "variable": var,
                        "value": value,
                        "interfaces": [i.name for i in net.interfaces],
                    },
                    fix=_ifname_fix(net, (var,)),
                )
            )
    return hits


@rule("NET102", "gloo-nccl-ifname-syntax", Severity.ERROR)
def gloo_exclusion_syntax(facts: Facts) -> Iterable[Hit]:
    """GLOO_SOCKET_IFNAME uses NCCL's `^`/`=` syntax, which Gloo does not understand

    ## What it checks
    `GLOO_SOCKET_IFNAME` starting with `^` (exclude) or `=` (exact): syntax of
    `NCCL_SOCKET_IFNAME` that Gloo reads as a literal interface name.

    ## Why it matters
    Process-group init fails on every rank: `RuntimeError: [enforce fail at
    gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find address for: ^lo`.
    Copying `NCCL_SOCKET_IFNAME=^lo,docker0` into `GLOO_SOCKET_IFNAME` is the usual cause.

    ## Example
    GLOO_SOCKET_IFNAME=^lo,docker0

    ## Fix
    Give Gloo concrete interface names (`GLOO_SOCKET_IFNAME=eth0`); keep the `^` list for
    `NCCL_SOCKET_IFNAME` only.

    ## References
    - https://github.com/aws-samples/aws-do-eks/pull/51
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    """
    value = facts.env().get("GLOO_SOCKET_IFNAME", "")
    if not value.startswith(("^", "=")):
        return []
    try:
        remedy = _ifname_fix(facts.network(), ("GLOO_SOCKET_IFNAME",))
    except Skip:
        remedy = None
    first = value.split(",")[0]
    return [
        Hit(
            f"GLOO_SOCKET_IFNAME={value} uses NCCL's syntax; Gloo takes interface names and fails "
            f"with 'Unable to find address for: {first}'",
            evidence={"value": value},
            fix=remedy
            or fix(
                "Set GLOO_SOCKET_IFNAME to an interface name",
                "manual",
                manual("export GLOO_SOCKET_IFNAME=<this node's routable interface>"),
            ),
        )
    ]


def _loopback(addresses: Iterable[str]) -> bool:
    addrs = list(addresses)
    return bool(addrs) and all((ip := _ip(a)) is not None and ip.is_loopback for a in addrs)


def _gloo_ok(env: Mapping[str, str], net: NetworkInfo) -> bool:
    value = env.get("GLOO_SOCKET_IFNAME", "")
    if not value or value.startswith(("^", "=")):
        return False
    return all(_problem(net.interface(n), n, net) is None for n in value.split(",") if n)


_MULTI_NODE_VARS = (
    "GLOO_SOCKET_IFNAME",
    "NCCL_SOCKET_IFNAME",
    "MASTER_ADDR",
    "RAY_ADDRESS",
    "RLINF_NODE_RANK",
)


def _multi_node_hints(env: Mapping[str, str]) -> bool:
    """Signs that this node is set up to work with others."""
    if any(env.get(v) for v in _MULTI_NODE_VARS):
        return True
    try:
        return int(env.get("SLURM_NNODES", "1")) > 1 or int(env.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        return False


@rule("NET103", "hostname-resolves-to-loopback", Severity.ERROR)
def hostname_loopback(facts: Facts) -> Iterable[Hit]:
    """The hostname resolves to a loopback address (or not at all)

    ## What it checks
    What the node's hostname resolves to through getaddrinfo, as Gloo resolves it when
    `GLOO_SOCKET_IFNAME` is not set. Debian and Ubuntu map the hostname to 127.0.1.1 in
    /etc/hosts. With a valid `GLOO_SOCKET_IFNAME` Gloo does not use the hostname and the finding
    is a warning (torch's TCPStore and tools that use the hostname still see loopback). In a
    log, also a multi-node launcher's ssh that cannot resolve a host of its hostfile (`ssh:
    Could not resolve hostname node-0: Name or service not known`).

    ## Why it matters
    Gloo binds loopback: `Unable to resolve hostname to a (local) address. Using the loopback
    address as fallback`, then peers cannot connect (`Gloo connectFullMesh failed`,
    `Connection refused` to 127.0.1.1) and multi-node rollouts hang. It is an error when the
    node is set up for multi-node work (`*_SOCKET_IFNAME`, `MASTER_ADDR`, `RAY_ADDRESS`,
    `SLURM_NNODES` or `WORLD_SIZE` above 1) and a warning otherwise.

    ## Example
    hostname trainer-7 resolves to 127.0.1.1.

    ## Fix
    Set `GLOO_SOCKET_IFNAME` (and `NCCL_SOCKET_IFNAME`) to the routable interface on every node,
    or map the hostname to the node's routable address in /etc/hosts. A hostfile name ssh
    cannot resolve: put the node's IP address in the hostfile, or add the name to /etc/hosts.

    ## References
    - https://github.com/vllm-project/vllm/issues/5094
    - https://github.com/pytorch/pytorch/issues/15592
    - https://github.com/sgl-project/sglang/issues/3226
    """
    net = facts.network()
    try:
        env: Mapping[str, str] | None = facts.env()
    except Skip:  # a declared node or a log: what the hostname resolves to is still known
        env = None
    if net.resolve_error and not net.hostname_addresses:
        problem = f"{net.resolve_error}: Gloo falls back to loopback ('Unable to resolve hostname to a (local) address')"
    elif _loopback(net.hostname_addresses):
        problem = (
            f"hostname {net.hostname or '(this node)'} resolves to {', '.join(net.hostname_addresses)}: "
            "Gloo binds loopback and peers cannot connect ('Gloo connectFullMesh failed')"
        )
    else:
        if not net.hostname_addresses and not net.resolve_error:
            raise Skip("what the hostname resolves to is unknown")
        return []
    severity = None
    if env is None:
        severity = Severity.WARNING
        problem += (
            "; the environment is unknown: harmless on a single node or with GLOO_SOCKET_IFNAME "
            "set to the routable interface, fatal for Gloo across nodes otherwise"
        )
    elif _gloo_ok(env, net):
        severity = Severity.WARNING
        problem += "; GLOO_SOCKET_IFNAME is set, so Gloo is unaffected, but the TCPStore and tools using the hostname are"
    elif not _multi_node_hints(env):
        severity = Severity.WARNING
        problem += "; harmless on a single node, fatal once a second node joins"
    remedy = _ifname_fix(net, ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")) or loopback_fix()
    return [
        Hit(
            problem,
            evidence={
                "hostname": net.hostname,
                "resolves_to": list(net.hostname_addresses),
                "resolve_error": net.resolve_error,
            },
            fix=remedy,
            severity=severity,
        )
    ]


def loopback_fix() -> Fix:
    """The fix when this node's interfaces are unknown: name the interface, or fix /etc/hosts."""
    return fix(
        "On every node, set GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME to the routable interface "
        "(`ip -4 addr` shows it; Gloo takes names only, no '^' exclusions), or map the hostname "
        "to the node's routable address in /etc/hosts (Debian and Ubuntu map it to 127.0.1.1)",
        "manual",
        manual("export GLOO_SOCKET_IFNAME=<routable interface> NCCL_SOCKET_IFNAME=<same>"),
        manual(
            "or: in /etc/hosts, replace 127.0.1.1 <hostname> with <routable address> <hostname>"
        ),
    )


# Gloo's own warning that the hostname resolved to loopback (matrices/signatures/nccl.toml)
_GLOO_LOOPBACK = "gloo-hostname-loopback"


# matrices/signatures/nccl.toml: ssh's own refusal under a launcher's hostfile
_SSH_UNRESOLVABLE = "launcher-ssh-host-unresolvable"


def _launcher_host_unresolvable(line: LogLine) -> Hit:
    """ssh could not resolve a host of the launcher's hostfile: the name in the hostfile is the
    thing to change (an address, or a name /etc/hosts gives)."""
    host = line.stated.get("unresolved_host") or "<the host>"
    return Hit(
        f"the launcher could not reach {host} (line {line.line}): ssh cannot resolve that name, "
        "so the hostfile names a host this machine does not know",
        evidence={"line": line.line, "host": host},
        fix=fix(
            f"Put the node's IP address (or a name that resolves) in the hostfile in place of "
            f"{host}, or add {host} to /etc/hosts",
            "manual",
            manual(f"getent hosts {host}   # nothing: the name does not resolve here"),
            manual(f"hostfile: replace {host} with the node's IP (e.g. 10.0.0.2 slots=8)"),
            manual(f"echo '<its IP> {host}' | sudo tee -a /etc/hosts   # or fix DNS"),
        ),
    )


@from_log("NET103")
def hostname_loopback_in_log(facts: Facts, line: LogLine) -> Hit:
    """Gloo's own warning: 'Unable to resolve hostname to a (local) address. Using the loopback
    address as fallback' (gloo/transport/tcp: the hostname gave no non-loopback address). A
    loopback hostname matters only to ranks on other nodes: where the log states one node, the
    warning is harmless and a rendezvous or store timeout is not this cause (every rank reaches
    rank 0's store on the same host); where it states several, the store's and the generic lines
    leave the node's hostname to check; where it says neither, the cause stays open."""
    from envcheck.rules.node.rank_hosts import ranks_on_one_node, ranks_span_nodes

    if line.signature == _SSH_UNRESOLVABLE:
        return _launcher_host_unresolvable(line)
    one = ranks_on_one_node(line.stated)
    if line.signature != _GLOO_LOOPBACK:
        if one:
            raise StatedOtherwise(
                f"{one}: every rank reaches the store and its peers on this host, so what the "
                f"hostname resolves to does not decide line {line.line}"
            )
        spans = ranks_span_nodes(line.stated)
        if spans is None:
            raise NotStated(
                f"line {line.line} does not say whether the ranks ran on several nodes (a "
                "loopback hostname matters only between nodes)",
                "log.nodes",
            )
        raise NotStated(
            f"{spans}: the other nodes reach this one only where its hostname resolves to an "
            "address they can reach; `getent hosts $(hostname)` on each node says whether it does",
            "network.hostname",
        )
    if one:
        raise StatedOtherwise(
            f"Gloo fell back to loopback (line {line.line}), harmless here: {one}, so no rank "
            "connects from another host"
        )
    try:
        remedy = _ifname_fix(facts.network(), ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"))
    except Skip:
        remedy = None
    return Hit(
        f"Gloo could not resolve the hostname to a non-loopback address and bound loopback (line "
        f"{line.line}): ranks on other nodes cannot reach this one",
        evidence={"line": line.line},
        fix=remedy or loopback_fix(),
        severity=Severity.WARNING,  # harmless when every rank is on this node
    )


_NCCL_NO_INTERFACE = "nccl-no-socket-interface"
# ncclSocketInit's address of no family: the same missing interface, or a peer's other NCCL
_NCCL_FAMILY_GARBAGE = "nccl-socket-address-family-garbage"
# 'NCCL_SOCKET_IFNAME set to ib0 but no interface found', NCCL_OOB_NET_IFNAME's 'no device found
# matching ...' (matrices/signatures/nccl_transports.toml)
_NCCL_IFNAME_NO_INTERFACE = "nccl-socket-ifname-no-interface"


def _nccl_no_interface(line: LogLine) -> Hit:
    """NCCL found no interface (or, with one named that the node lacks, an address of no family):
    the value NCCL echoed ('NCCL_SOCKET_IFNAME set by environment to X'), where the log has it,
    names what to change; a container with nothing but lo needs host networking."""
    value = line.stated.get("nccl_socket_ifname")
    exact = value[1:] if value and value.startswith("=") else None
    named = (
        f"NCCL_SOCKET_IFNAME={value} matches no interface of this node"
        if value
        else "NCCL_SOCKET_IFNAME names an interface this node does not have, or only excluded "
        "ones (lo, docker0) are left"
    )
    steps = [
        manual("ip -br addr   # the interface that carries the nodes' addresses"),
        manual(
            "export NCCL_SOCKET_IFNAME=eth0 (that interface; a prefix list such as "
            "'^docker,lo' excludes instead) and GLOO_SOCKET_IFNAME to the same name"
        ),
    ]
    if exact:
        steps.insert(
            0,
            manual(
                f"export NCCL_SOCKET_IFNAME={exact} (without the '=' exact-match prefix, which "
                "older NCCL builds do not read), if that is the interface between the nodes"
            ),
        )
    steps.append(
        manual(
            "in a container whose only interface is lo: run it with host networking "
            "(docker run --network host, --net=host; hostNetwork: true on Kubernetes)"
        )
    )
    return Hit(
        f"NCCL found no network interface to use (line {line.line}): {named}",
        evidence={"line": line.line, "NCCL_SOCKET_IFNAME": value},
        fix=fix(
            "Set NCCL_SOCKET_IFNAME to the interface between the nodes (the same on every node, "
            "from `ip -br addr`), e.g. NCCL_SOCKET_IFNAME=eth0"
            + (f" (not {value})" if value else ""),
            "manual",
            *steps,
        ),
    )


def _gloo_iface(line: LogLine) -> str:
    name = line.stated.get("iface")
    if not name:
        raise NotStated("the log does not name the interface Gloo looked for", "log.iface")
    return name


def _routable_fix(facts: Facts, summary: str) -> Fix:
    try:
        remedy = _ifname_fix(facts.network(), ("GLOO_SOCKET_IFNAME",))
    except Skip:
        remedy = None
    return remedy or fix(
        summary,
        "manual",
        manual("export GLOO_SOCKET_IFNAME=<this node's routable interface, from `ip -4 addr`>"),
    )


@from_log("NET101")
def gloo_no_address_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Gloo's 'Unable to find address for: eth1': the interface GLOO_SOCKET_IFNAME names has no
    address on the node that logged it (a `^`/`=` value is NET102 instead). NCCL's 'Bootstrap :
    no socket interface found' says the same of NCCL_SOCKET_IFNAME (or that nothing but
    excluded interfaces, lo and docker0, is left)."""
    if line.signature in (_NCCL_NO_INTERFACE, _NCCL_IFNAME_NO_INTERFACE, _NCCL_FAMILY_GARBAGE):
        return _nccl_no_interface(line)
    named = _named_interface_between_nodes(facts, line)
    if named is not None:
        return named
    name = _gloo_iface(line)
    if name.startswith(("^", "=")):
        return None
    return Hit(
        f"GLOO_SOCKET_IFNAME names {name}, which has no address on the node that logged line "
        f"{line.line} (missing, down, or named differently there)",
        evidence={"line": line.line, "interface": name},
        fix=_routable_fix(
            facts,
            f"Set GLOO_SOCKET_IFNAME to an interface this node has (not {name}): the name can "
            "differ from node to node",
        ),
    )


def _named_interface_between_nodes(facts: Facts, line: LogLine) -> Hit | None:
    """NCCL's generic error between nodes where the log sets NCCL_SOCKET_IFNAME: the ranks
    connect over the interface it names (NCCL uses only the interfaces the variable selects,
    src/misc/socket.cc), so the failure is of that interface between the nodes: missing or
    without the address on one of them, named differently there, enslaved to a bridge that
    holds the address. The reading NET104 gives the same line where nothing sets it (the
    interface NCCL chose itself). None for other lines."""
    from envcheck.rules.node.rank_hosts import GENERIC_NCCL_LINES, ranks_span_nodes

    if line.signature not in GENERIC_NCCL_LINES:
        return None
    named = line.stated.get("nccl_socket_ifname")
    if not named:
        raise NotStated(
            f"line {line.line} is NCCL's error with no interface named: the log does not set "
            "NCCL_SOCKET_IFNAME (where nothing sets it, the interface NCCL chose is NET104's)",
            "log.iface",
        )
    spans = ranks_span_nodes(line.stated)
    if spans is None:
        raise NotStated(
            f"NCCL_SOCKET_IFNAME={named} is set, and line {line.line} does not say whether the "
            "ranks ran on several nodes",
            "log.nodes",
        )
    try:
        remedy = _ifname_fix(facts.network(), ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"))
    except Skip:
        remedy = None
    return Hit(
        f"NCCL failed between nodes (line {line.line}): {spans}, and the log sets "
        f"NCCL_SOCKET_IFNAME={named}, so the ranks connected over that interface: it is "
        "missing, down or without the address the other nodes reach on one of them (or named "
        "differently there)",
        evidence={"line": line.line, "value": named, "spans_nodes": spans},
        fix=remedy or _between_nodes_fix(named),
        severity=Severity.WARNING,
    )


def _between_nodes_fix(named: str) -> Fix:
    """The interface fix for ranks on several nodes where the log sets NCCL_SOCKET_IFNAME:
    each node's own interface. One name (``enp6s0``, the same on every host where a launcher
    exports it, mpirun's ``-x``) fails where another node names its NIC otherwise: NCCL takes a
    comma-separated list of prefixes (src/misc/socket.cc), so listing every node's name works on
    all of them, and /etc/nccl.conf (or ~/.nccl.conf) sets a host's own value (NCCL's
    documentation, 'Environment Variables'; NVIDIA/nccl#286, NVIDIA/nccl-tests#219)."""
    single = "," not in named and not named.startswith(("^", "="))
    listed = (
        f"NCCL_SOCKET_IFNAME={named},<the other nodes' interface names>"
        if single
        else ("NCCL_SOCKET_IFNAME=eno1,eth0")
    )
    return fix(
        f"Set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) on every node to the interface "
        f"that carries the address the other nodes reach, not {named} unless it does (a "
        "bridge such as br0 holds the address of the NIC enslaved to it); names may differ "
        f"per node: list each node's ({listed}), or set each host's own in /etc/nccl.conf",
        "manual",
        manual("ip -br addr   # on each node: the interface with the address the others reach"),
        manual(f"export {listed}" if single else "export NCCL_SOCKET_IFNAME=<that interface>"),
        manual(
            'echo "NCCL_SOCKET_IFNAME=<this host\'s interface>" >> /etc/nccl.conf   # on each host'
        ),
    )


@from_log("NET102")
def gloo_exclusion_syntax_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The same line with NCCL's syntax in GLOO_SOCKET_IFNAME ('Unable to find address for:
    ^lo'): Gloo reads the value as an interface name."""
    name = _gloo_iface(line)
    if not name.startswith(("^", "=")):
        return None
    return Hit(
        f"GLOO_SOCKET_IFNAME={name} (line {line.line}) uses NCCL's syntax; Gloo takes "
        "interface names",
        evidence={"line": line.line, "value": name},
        fix=_routable_fix(
            facts,
            f"Give Gloo an interface name (GLOO_SOCKET_IFNAME=eth0, say); keep {name} for "
            "NCCL_SOCKET_IFNAME only",
        ),
    )


@rule("NET104", "ambiguous-interfaces", Severity.WARNING)
def ambiguous_interfaces(facts: Facts) -> Iterable[Hit]:
    """Several candidate interfaces and none chosen for Gloo or NCCL

    ## What it checks
    More than one interface that is up with an IPv4 address besides loopback (physical NICs,
    docker bridges, veth pairs, IB), while neither `GLOO_SOCKET_IFNAME` nor
    `NCCL_SOCKET_IFNAME` is set.

    ## Why it matters
    Each library picks on its own: Gloo the hostname's address, NCCL the first interface not
    excluded by default, Ray the route to the head. They can pick a docker bridge (172.17.0.1,
    the same address on every node) or an unroutable NIC, and multi-node collectives hang.

    ## Example
    eth0 10.0.0.5, docker0 172.17.0.1 and ib0 192.168.100.5, with no *_SOCKET_IFNAME set.

    ## Fix
    Set `GLOO_SOCKET_IFNAME` and `NCCL_SOCKET_IFNAME` to the interface the nodes reach each other
    on, on every node. Containers on several nodes: run them with host networking (`docker run
    --network=host`, `hostNetwork: true` on Kubernetes); a bridge's address is not reachable
    from another node.

    ## References
    - https://github.com/vllm-project/vllm/issues/7074
    - https://github.com/pytorch/pytorch/issues/23363
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    """
    env = facts.env()
    if env.get("GLOO_SOCKET_IFNAME") or env.get("NCCL_SOCKET_IFNAME"):
        return []
    net = facts.network()
    options = [
        i
        for i in net.interfaces
        if usable(i) and i.kind != "loopback" and i.name != "lo" and i.ipv4
    ]
    if len(options) < 2:
        return []
    listed = ", ".join(f"{i.name} {i.ipv4[0]}" for i in options)
    return [
        Hit(
            f"{len(options)} interfaces could carry Gloo/NCCL traffic ({listed}) and neither "
            "GLOO_SOCKET_IFNAME nor NCCL_SOCKET_IFNAME chooses one",
            evidence={"interfaces": [i.name for i in options]},
            fix=_ifname_fix(net, ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")),
        )
    ]


def _covered(address: str, entries: list[str], hostname: str | None) -> bool:
    ip = ipaddress.ip_address(address)
    for entry in entries:
        if entry == "*":
            return True
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            if hostname and (hostname == entry or hostname.endswith(entry.lstrip("*"))):
                return True
    return False


@rule("NET105", "proxy-without-no-proxy", Severity.WARNING)
def proxy_without_no_proxy(facts: Facts) -> Iterable[Hit]:
    """An HTTP proxy is set without no_proxy covering the cluster's addresses

    ## What it checks
    With `http_proxy` / `https_proxy` / `all_proxy` set: whether `no_proxy` covers this node's
    addresses (as `*`, the address, a CIDR containing it, or the hostname's domain).

    ## Why it matters
    HTTP clients inside the cluster then send cluster traffic to the proxy: Ray job submission
    and the dashboard API, Ray Client (`ray://`) connections (Ray issue 37757), vLLM's
    OpenAI-compatible server, model downloads from peers. Ray's core gRPC ignores proxies by
    default, so the cluster starts and then these calls time out or return the proxy's error
    pages.

    ## Example
    https_proxy=http://proxy.corp:3128 and no no_proxy, on a node at 10.0.0.5.

    ## Fix
    Add the cluster's subnets, localhost and 127.0.0.1 to `no_proxy` (and `NO_PROXY`).

    ## References
    - https://github.com/ray-project/ray/issues/37757
    - https://github.com/ray-project/ray/pull/6744
    - https://github.com/ray-project/ray/pull/23526
    """
    env = facts.env()
    proxies = [v for v in PROXY_VARS if env.get(v)]
    if not proxies:
        return []
    net = facts.network()
    existing = env.get("no_proxy") or env.get("NO_PROXY") or ""
    entries = [e.strip() for e in existing.split(",") if e.strip()]
    uncovered = []
    subnets = []
    for iface in net.interfaces:
        if not usable(iface) or is_virtual(iface):
            continue
        for text in iface.ipv4:
            address = text.split("/")[0]
            if _ip(address) is None:
                continue  # redacted
            if not _covered(address, entries, net.hostname):
                uncovered.append(address)
                subnets.append(
                    str(ipaddress.ip_interface(text if "/" in text else f"{text}/24").network)
                )
    if not uncovered:
        return []
    wanted = ",".join(dict.fromkeys(entries + subnets + ["localhost", "127.0.0.1"]))
    return [
        Hit(
            f"{', '.join(proxies)} is set but no_proxy ({existing or 'unset'}) does not cover "
            f"{', '.join(uncovered)}: HTTP calls between nodes (Ray job API, Ray Client, vLLM's server) go to the proxy",
            evidence={"proxies": proxies, "no_proxy": existing, "uncovered": uncovered},
            fix=fix(
                "Exempt the cluster's addresses from the proxy",
                "safe",
                set_env(no_proxy=wanted, NO_PROXY=wanted),
            ),
        )
    ]
