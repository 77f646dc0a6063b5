"""NCCL's start-up INFO lines of every host of a multi-node log, read per host and compared.

The scan keeps a signature's first and last line only, so the banners of two hosts
(``host1:1234:1234 [0] NCCL INFO NCCL version 2.18.6+cuda12.1`` on one node, ``2.20.5`` on
another) are never set side by side. This module reads the log once more, in a stream of
CHUNK-byte pieces (memory bounded by the chunk, MAX_CARRY bytes of a line without an end and
MAX_HOSTS hosts, whatever the log's size; the literal 'NCCL INFO <message>' is searched, so a
100 MB log of NCCL lines reads in about half a second), only where the scan matched one of
NCCL's lines, and collects for each host that NCCL's own prefix names: the NCCL release and
the CUDA it was built for, the driver's CUDA version, the bootstrap interface and address,
the network transport, the network plugin and NCCL_PROTO / NCCL_ALGO. Each INFO message is
NCCL's own (NVIDIA/nccl):

- src/init.cc showVersion: ``INFO(NCCL_ALL, "%s", VERSION_STRING)`` with VERSION_STRING
  ``"NCCL version " X.Y.Z NCCL_SUFFIX "+cuda" A.B``, on every process from v2.22.3-1 on (once
  per process, pthread_once); before, only rank 0 printf'd it with no host prefix, so an older
  job's other hosts state no release and are not compared;
- src/misc/cudawrap.cc: ``INFO(NCCL_INIT, "cudaDriverVersion %d", driverVersion)``;
- src/bootstrap.cc: ``INFO(NCCL_BOOTSTRAP, "Bootstrap: Using%s", " <ifname>:<address>")`` (``Bootstrap
  : Using [0]eth0:10.0.0.1<0>`` before 2.19), and before 2.4 ``NET : Using interface
  ib0:192.168.1.35<0>``;
- src/init.cc: ``INFO(NCCL_INIT, "Using network %s", comm->ncclNet->name)`` (``Using internal
  Network IB`` before 2.4);
- src/transport/net_ib/init.cc: ``NET/IB : Using%s %s; OOB %s:%s`` (the HCAs) and ``NET/IB :
  No device found.``;
- src/plugin/net.cc: ``NET/Plugin: Loaded net plugin %s``, ``NET/Plugin: Could not find:
  libnccl-net.so`` and ``No plugin found`` (the internal transports); HPC-X's
  nccl-rdma-sharp-plugins prints ``Plugin Path : %s`` when it loads;
- src/graph/tuning.cc: ``NCCL_PROTO set by environment to %s`` and NCCL_ALGO's (INFO, ENV
  subsystem, in NCCL_DEBUG_SUBSYS's default), the settings transport/net_socket.cc's truncated
  message names as ones the ranks must share; a host whose lines state neither runs without it.

``compare`` turns the hosts into the facts NET121 (rules/node/nccl_ranks.py), NET171 and
NET172 (rules/node/nccl_hosts.py) read: the hosts' NCCL releases, settings, drivers, networks,
plugins and bootstrap addresses where they differ.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from envcheck.matrix.schema import Signature
from envcheck.rules.node.nccl_hosts import address_kind
from envcheck.triage.extract import LogFact

CHUNK = 4 * 1024 * 1024
MAX_HOSTS = 512  # hosts kept; a larger job's further hosts are not read
MAX_LINE = 4096  # bytes of one line read
MAX_CARRY = 1024 * 1024  # a "line" longer than this is read in pieces
SIGNATURE_ID = "nccl-hosts-differ"

# the start-up messages read, after 'NCCL INFO ' (a literal the regex engine searches for fast)
_MESSAGE = re.compile(
    rb"NCCL INFO (NCCL version |cudaDriverVersion |Bootstrap ?: ?Using|NET : Using interface |"
    rb"NET/IB ?: ?Using|NET/IB ?: No device found|Using network |Using internal Network |"
    rb"NET/Plugin|Plugin Path ?: |NCCL_(?:PROTO|ALGO) set by environment to )"
)
# NCCL's prefix before 'NCCL INFO ', 'host:pid:tid [dev] ' (src/debug.cc), after any launcher's
_HOST = re.compile(
    rb"(?:^|[^A-Za-z0-9._-])([A-Za-z0-9][A-Za-z0-9._-]*):[0-9]+:[0-9]+ \[[0-9]+\] $", re.MULTILINE
)
_VERSION = re.compile(r"NCCL version ([0-9]+\.[0-9]+\.[0-9]+)\S*?(?:\+cuda([0-9]+\.[0-9]+))?\b")
_DRIVER = re.compile(r"cudaDriverVersion ([0-9]{4,6})")
# ' [0]eth0:10.0.0.1<0>', ' eth0:10.0.0.1<0>', 'ib0:192.168.1.35<0>' (the first interface)
_BOOTSTRAP = re.compile(
    r"(?:Bootstrap ?: ?Using|NET : Using interface) ?(?:\[[0-9]+\])?([^\s:\[]+):(\S+?)<[0-9]+>"
)
_NETWORK = re.compile(r"(?:Using network|Using internal Network) (\S+)")
_IB_USING = re.compile(r"NET/IB ?: ?Using ?(\[[0-9]+\][A-Za-z0-9_.-]+:[0-9]+/(?:IB|RoCE))")
_PLUGIN_LOADED = re.compile(r"(?:Loaded net plugin (.+?)(?: \(v[0-9]+\))?$|Plugin Path ?: ?(\S+))")
# src/graph/tuning.cc: INFO(NCCL_ENV, "NCCL_PROTO set by environment to %s") and NCCL_ALGO's; the
# settings that net_socket.cc's truncated-message WARN names as ones the ranks must share
_SETTING = re.compile(r"(NCCL_PROTO|NCCL_ALGO) set by environment to (\S+)")
SETTINGS = ("NCCL_PROTO", "NCCL_ALGO")
_PLUGIN_NONE = re.compile(
    r"NET/Plugin ?: ?(?:Could not find|No plugin found|Plugin load.* returned)"
)


@dataclass
class HostNccl:
    """What NCCL's start-up lines state about one host (None: not stated)."""

    host: str
    line: int  # the first line read for the host
    nccl: str | None = None
    nccl_cuda: str | None = None
    driver: str | None = None
    interface: str | None = None
    address: str | None = None
    network: str | None = None  # 'IB', 'Socket' or a plugin's network name
    hcas: str | None = None  # the first HCA of 'NET/IB : Using'
    plugin: str | None = None  # an external plugin's name or path, 'internal' where none
    settings: dict[str, str] = field(default_factory=dict)  # NCCL_PROTO / NCCL_ALGO as set
    lines: dict[str, int] = field(default_factory=dict)  # fact -> the line that stated it

    def set(self, name: str, value: str, line: int) -> None:
        if getattr(self, name) is None:
            setattr(self, name, value)
            self.lines[name] = line


def _read(hosts: dict[str, HostNccl], host: str, text: str, line: int) -> None:
    seen = hosts.get(host)
    if seen is None:
        if len(hosts) >= MAX_HOSTS:
            return
        seen = hosts[host] = HostNccl(host, line)
    if found := _VERSION.search(text):
        seen.set("nccl", found.group(1), line)
        if found.group(2):
            seen.set("nccl_cuda", found.group(2), line)
    elif found := _DRIVER.search(text):
        seen.set("driver", found.group(1), line)
    elif found := _BOOTSTRAP.search(text):
        seen.set("interface", found.group(1), line)
        seen.set("address", found.group(2), line)
    elif found := _NETWORK.search(text):
        seen.set("network", found.group(1), line)
    elif found := _IB_USING.search(text):
        seen.set("hcas", found.group(1), line)
    elif found := _PLUGIN_LOADED.search(text):
        if seen.plugin == "internal":  # a name not found before the one that loaded
            seen.plugin = None
        seen.set("plugin", (found.group(1) or found.group(2)).strip(), line)
    elif _PLUGIN_NONE.search(text):
        seen.set("plugin", "internal", line)
    elif (found := _SETTING.search(text)) and found.group(1) not in seen.settings:
        seen.settings[found.group(1)] = found.group(2)
        seen.lines.setdefault(found.group(1), line)


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    """The stream in pieces that end at a line end (the last one at the end of the stream)."""
    carry = b""
    while True:
        try:
            data = stream.read(CHUNK)
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
            data = b""
        if not data:
            if carry:
                yield carry
            return
        data = carry + data
        end = data.rfind(b"\n")
        if end < 0 and len(data) <= MAX_CARRY:
            carry = data
            continue
        cut = end + 1 if end >= 0 else len(data)
        carry = data[cut:]
        yield data[:cut]


def read_hosts(stream: BinaryIO) -> list[HostNccl]:
    """Each host's NCCL start-up facts, in the order the log first names the hosts."""
    hosts: dict[str, HostNccl] = {}
    number = 1  # the line number of the chunk's first line
    for chunk in _chunks(stream):
        if b"NCCL INFO" not in chunk:
            number += chunk.count(b"\n")
            continue
        at = 0
        for found in _MESSAGE.finditer(chunk):
            start = chunk.rfind(b"\n", 0, found.start()) + 1
            if start < at:  # a second message on a line already read
                continue
            host = _HOST.search(chunk, max(start, found.start() - 256), found.start())
            if host is None:
                continue
            number += chunk.count(b"\n", at, start)
            stop = chunk.find(b"\n", found.end())
            stop = len(chunk) if stop < 0 else stop
            text = chunk[found.start(1) : min(stop, found.start(1) + MAX_LINE)]
            _read(hosts, host.group(1).decode(), text.decode("utf-8", "replace").rstrip(), number)
            at = start
        number += chunk.count(b"\n", at)
    return list(hosts.values())


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _by_host(hosts: Iterable[HostNccl], name: str) -> dict[str, list[HostNccl]]:
    """The hosts grouped by one fact's value (the hosts that state it)."""
    groups: dict[str, list[HostNccl]] = {}
    for host in hosts:
        value = getattr(host, name)
        if value is not None:
            groups.setdefault(value, []).append(host)
    return groups


def _listed(groups: dict[str, list[HostNccl]]) -> str:
    """'value=host1,host2;value=host3' (at most 3 hosts named a value)."""
    return ";".join(
        f"{value}={','.join(h.host for h in hosts[:3])}" + ("+" if len(hosts) > 3 else "")
        for value, hosts in groups.items()
    )


def _network(host: HostNccl) -> str | None:
    """The network a host's NCCL uses between nodes: the transport it names, else IB where it
    lists HCAs."""
    if host.network is not None:
        return host.network
    return "IB" if host.hcas is not None else None


def compare(hosts: list[HostNccl]) -> list[LogFact]:
    """The facts where two or more hosts' NCCL start-up lines differ: NCCL releases, driver
    CUDA versions, networks, plugins, and bootstrap addresses that are no node's own (two hosts
    on one address, a loopback, link-local or Docker-bridge address beside hosts on another
    network). Nothing for a log of one host."""
    if len(hosts) < 2:
        return []
    facts: list[LogFact] = []

    def add(name: str, groups: dict[str, list[HostNccl]], fact: str) -> None:
        line = min(h.lines.get(fact, h.line) for g in groups.values() for h in g)
        facts.append(LogFact(name, _listed(groups), line, SIGNATURE_ID))

    versions = _by_host(hosts, "nccl")
    if len(versions) > 1:
        # each release labelled with the CUDA its first host's build names ('2.18.6+cuda12.1')
        ordered = {
            v + (f"+cuda{hs[0].nccl_cuda}" if hs[0].nccl_cuda else ""): hs
            for v, hs in sorted(versions.items(), key=lambda kv: _release(kv[0]))
        }
        add("nccl_hosts_versions", ordered, "nccl")
    drivers = _by_host(hosts, "driver")
    if len(drivers) > 1:
        add("nccl_hosts_drivers", dict(sorted(drivers.items())), "driver")
    differ = []
    for name in SETTINGS:
        if not any(name in h.settings for h in hosts):
            continue
        values: dict[str, list[HostNccl]] = {}
        for host in hosts:
            values.setdefault(host.settings.get(name, "unset"), []).append(host)
        if len(values) > 1:
            differ.append(f"{name}:{_listed(values)}")
    if differ:
        line = min(h.lines.get(n, h.line) for h in hosts for n in SETTINGS if n in h.settings)
        facts.append(LogFact("nccl_hosts_settings", "|".join(differ), line, SIGNATURE_ID))
    networks: dict[str, list[HostNccl]] = {}
    for host in hosts:
        if (net := _network(host)) is not None:
            networks.setdefault(net, []).append(host)
    if len(networks) > 1:
        add("nccl_hosts_networks", networks, "network")
    plugins = _by_host(hosts, "plugin")
    if len(plugins) > 1 and "internal" in plugins:
        add("nccl_hosts_plugins", plugins, "plugin")
    addresses = _by_host(hosts, "address")
    shared = {a for a, hs in addresses.items() if len(hs) > 1}
    local = {a for a in addresses if address_kind(a)}
    elsewhere = [h for h in hosts if h.address is not None and h.address not in shared | local]
    # one address on two hosts is no node's own; a host-local one only beside a host that is
    # on another network (containers of one node all on Docker's bridge reach each other)
    if shared or (local and elsewhere):
        add(
            "nccl_hosts_bootstrap",
            {f"{hs[0].interface}:{a}": hs for a, hs in addresses.items() if a in shared | local},
            "address",
        )
        if elsewhere:
            add("nccl_hosts_routable", _by_host(elsewhere, "interface"), "interface")
    return facts


_SHOWN = {
    "nccl_hosts_versions": "NCCL",
    "nccl_hosts_settings": "settings",
    "nccl_hosts_drivers": "driver CUDA",
    "nccl_hosts_networks": "network",
    "nccl_hosts_plugins": "net plugin",
    "nccl_hosts_bootstrap": "bootstrap",
}


def summary(stated: dict[str, str]) -> str:
    """The line shown for the match: each differing fact with its hosts."""
    parts = [
        f"{label} {stated[name].replace(':', ' ').replace('=', ' on ').replace(';', ', ')}"
        for name, label in _SHOWN.items()
        if name in stated
    ]
    return "the hosts' NCCL start-up lines differ: " + "; ".join(parts)


def signature(codes: tuple[str, ...]) -> Signature:
    """The match of no single line: the hosts' NCCL start-up lines set side by side."""
    return Signature(
        id=SIGNATURE_ID,
        pattern="",
        meaning=(
            "The NCCL start-up lines of the log's hosts (NCCL version, cudaDriverVersion, "
            "Bootstrap, Using network, NET/Plugin, NCCL_PROTO / NCCL_ALGO) differ between "
            "hosts: one communicator's ranks need one NCCL with the same settings, one network "
            "transport and addresses the other nodes reach."
        ),
        source=(
            "NVIDIA/nccl src/init.cc (showVersion, 'Using network %s'), src/misc/cudawrap.cc "
            "('cudaDriverVersion %d'), src/bootstrap.cc ('Bootstrap: Using%s'), "
            "src/plugin/net.cc; envcheck/triage/nccl_hosts.py"
        ),
        causes=codes,
        confirms=codes,
    )
