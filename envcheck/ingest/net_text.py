"""A node's network as people paste it into a distributed-training thread: ``ip addr`` /
``ip -br addr``, ``ifconfig`` (net-tools' two layouts), ``/etc/hosts`` (Debian's ``127.0.1.1
<hostname>`` line maps the node's own name to loopback) and ``ibstat``. What the text states
becomes the report's ``network`` section, read by the Gloo/NCCL interface rules (NET101-NET104)
and NCCL's InfiniBand rule (NET150); nothing else is guessed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from envcheck.ingest.common import Source, blank
from envcheck.model.report import IbDevice, IbPort, Interface, NetworkInfo, NodeReport
from envcheck.model.section import Section

LABEL = "network listing (ip addr, ifconfig, /etc/hosts, ibstat)"

# ip addr: "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default"
_IP_HEAD = re.compile(
    r"^\d+: (?P<name>[A-Za-z0-9_.:@-]+?)(?:@[A-Za-z0-9_.-]+)?: <(?P<flags>[A-Z0-9_,-]*)>"
    r"(?:.*? mtu (?P<mtu>\d+))?(?:.*? state (?P<state>[A-Z]+))?"
)
_IP_INET = re.compile(r"^\s+inet (?P<addr>[0-9.]+(?:/\d+)?)\b")
_IP_INET6 = re.compile(r"^\s+inet6 (?P<addr>[0-9a-fA-F:]+(?:/\d+)?)\b")
_IP_LINK = re.compile(r"^\s+link/(?P<kind>[a-z]+)\b")
# ip -br addr: "eth0             UP             10.0.0.5/24 fe80::1/64"
_BRIEF = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_.:@-]*)\s+(?P<state>UP|DOWN|UNKNOWN|DORMANT|LOWERLAYERDOWN)"
    r"(?:\s+(?P<addrs>.*))?$"
)
# ifconfig (net-tools 2.x): "eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500"
_IFC_HEAD = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_.:-]*): flags=\d+<(?P<flags>[A-Z0-9_,]*)>")
# ifconfig (net-tools 1.x): "eth0      Link encap:Ethernet  HWaddr 02:42:..."
_IFC_OLD = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_.:-]*)\s+Link encap:(?P<encap>[A-Za-z ]+?)(?:\s{2}|$)"
)
_IFC_INET = re.compile(r"^\s+inet (?:addr:)?(?P<addr>[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+)\b")
_IFC_INET6 = re.compile(r"^\s+inet6 (?:addr: ?)?(?P<addr>[0-9a-fA-F:]+(?:/\d+)?)\b")
_IFC_MTU = re.compile(r"\bmtu[: ](?P<mtu>\d+)", re.IGNORECASE)
# /etc/hosts: the Debian line for the node's own name
_HOSTS = re.compile(r"^(?P<addr>127\.0\.1\.1)\s+(?P<names>[A-Za-z0-9][A-Za-z0-9_. -]*?)\s*$")
# ibstat
_CA = re.compile(r"^CA '(?P<name>[^']+)'")
_PORT = re.compile(r"^\s+Port (?P<port>\d+):\s*$")
_PORT_FIELD = re.compile(r"^\s+(?P<key>State|Rate|Link layer):\s*(?P<value>.+?)\s*$")
_VIRTUAL = ("docker", "veth", "br-", "virbr", "cni", "flannel", "cali", "tun", "tap")


@dataclass
class _Iface:
    name: str
    state: str | None = None
    mtu: int | None = None
    ipv4: list[str] = field(default_factory=list)
    ipv6: list[str] = field(default_factory=list)
    kind: str | None = None

    def done(self) -> Interface:
        return Interface(
            name=self.name,
            state=self.state,
            mtu=self.mtu,
            ipv4=tuple(self.ipv4),
            ipv6=tuple(self.ipv6),
            kind=self.kind or _kind_of(self.name),
        )


def _kind_of(name: str) -> str | None:
    if name == "lo":
        return "loopback"
    if name.startswith(("docker", "br-", "virbr")):
        return "bridge"
    if name.startswith("veth"):
        return "veth"
    if name.startswith(("ib", "ibs", "ibp")):
        return "infiniband"
    if name.startswith(_VIRTUAL):
        return "virtual"
    return None


def _flag_state(flags: str) -> str:
    return "up" if "UP" in flags.split(",") else "down"


def _interfaces(lines: list[str]) -> list[_Iface]:
    found: dict[str, _Iface] = {}
    current: _Iface | None = None
    for line in lines:
        if m := _IP_HEAD.match(line):
            name = m.group("name")
            current = found.setdefault(name, _Iface(name))
            state = (m.group("state") or "").lower()
            current.state = state if state in ("up", "down") else _flag_state(m.group("flags"))
            current.mtu = int(m.group("mtu")) if m.group("mtu") else None
            continue
        if m := _IFC_HEAD.match(line) or _IFC_OLD.match(line):
            name = m.group("name")
            current = found.setdefault(name, _Iface(name))
            if "flags" in m.groupdict():
                current.state = _flag_state(m.group("flags"))
            elif "Local Loopback" in line:
                current.kind = "loopback"
            if mtu := _IFC_MTU.search(line):
                current.mtu = int(mtu.group("mtu"))
            continue
        if m := _BRIEF.match(line):
            iface = found.setdefault(m.group("name"), _Iface(m.group("name")))
            iface.state = "down" if m.group("state") == "DOWN" else "up"
            for addr in (m.group("addrs") or "").split():
                (iface.ipv6 if ":" in addr else iface.ipv4).append(addr)
            current = None
            continue
        if current is None or not line.startswith((" ", "\t")):
            current = None if line.strip() == "" else current
            continue
        if m := _IP_INET.match(line) or _IFC_INET.match(line):
            current.ipv4.append(m.group("addr"))
        elif m := _IP_INET6.match(line) or _IFC_INET6.match(line):
            current.ipv6.append(m.group("addr"))
        elif m := _IP_LINK.match(line):
            current.kind = {"loopback": "loopback", "ether": None, "infiniband": "infiniband"}.get(
                m.group("kind"), current.kind
            )
        elif re.match(r"^\s+UP\b", line) and current.state is None:  # net-tools 1.x flags line
            current.state = "up"
        if mtu := _IFC_MTU.search(line):
            current.mtu = current.mtu or int(mtu.group("mtu"))
    return list(found.values())


def _infiniband(lines: list[str]) -> list[IbDevice]:
    devices: list[IbDevice] = []
    name: str | None = None
    ports: list[IbPort] = []
    port: dict[str, str] | None = None
    number = 0

    def close_port() -> None:
        if port is not None:
            ports.append(
                IbPort(
                    port=number,
                    state=port.get("State"),
                    rate=port.get("Rate"),
                    link_layer=port.get("Link layer"),
                )
            )

    for line in lines:
        if m := _CA.match(line):
            close_port()
            if name is not None:
                devices.append(IbDevice(name=name, ports=tuple(ports)))
            name, ports, port = m.group("name"), [], None
        elif name is not None and (m := _PORT.match(line)):
            close_port()
            number, port = int(m.group("port")), {}
        elif port is not None and (m := _PORT_FIELD.match(line)):
            port.setdefault(m.group("key"), m.group("value"))
    close_port()
    if name is not None:
        devices.append(IbDevice(name=name, ports=tuple(ports)))
    return devices


def harvest(text: str) -> NetworkInfo | None:
    """The network the text states, or None when it states none."""
    lines = text.splitlines()
    ifaces = [i.done() for i in _interfaces(lines)]
    hca = _infiniband(lines)
    hosts = [m for line in lines if (m := _HOSTS.match(line.strip()))]
    hostname = hosts[0].group("names").split()[0] if hosts else None
    if not ifaces and not hca and hostname is None:
        return None
    return NetworkInfo(
        hostname=hostname,
        hostname_addresses=("127.0.1.1",) if hostname else (),
        interfaces=tuple(ifaces),
        infiniband=tuple(hca),
    )


def looks_like(text: str) -> bool:
    return harvest(text) is not None


def with_network(report: NodeReport, source: Source, label: str = LABEL) -> NodeReport:
    """``report`` with the network the text states, where it has none of its own."""
    if report.network.is_ok:
        return report
    network = harvest(source.text)
    if network is None:
        return report
    return report.with_sections(network=Section.ok(network, source=f"{source.name} ({label})"))


def parse(source: Source) -> NodeReport:
    from envcheck.ingest.common import FormatError

    if harvest(source.text) is None:
        raise FormatError("no interface, InfiniBand device or /etc/hosts line found")
    return with_network(blank(source, LABEL), source)
