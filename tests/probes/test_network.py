from __future__ import annotations

import time

import pytest

from envcheck.probes.network import probe_network


def _iface(
    stage, name, *, operstate="up", mtu=1500, arp=1, device=True, bridge=False, flags="0x1003"
):
    base = f"/sys/class/net/{name}"
    stage.write(f"{base}/operstate", operstate + "\n")
    stage.write(f"{base}/mtu", f"{mtu}\n")
    stage.write(f"{base}/type", f"{arp}\n")
    stage.write(f"{base}/flags", flags + "\n")
    if device:
        stage.mkdir(f"{base}/device")
    if bridge:
        stage.mkdir(f"{base}/bridge")


def _stage_node(stage):
    _iface(stage, "lo", operstate="unknown", mtu=65536, arp=772, device=False, flags="0x9")
    _iface(stage, "eth0", mtu=9000)
    _iface(stage, "docker0", device=False, bridge=True)
    _iface(stage, "veth12ab", device=False)
    _iface(stage, "ib0", arp=32, mtu=2044)
    _iface(stage, "eth1", operstate="down", flags="0x1002")
    stage.write("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
    stage.write("/sys/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)\n")
    stage.write("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n")


ADDRS = {
    "lo": (["127.0.0.1/8"], ["::1/128"]),
    "eth0": (["10.0.0.5/24"], ["fe80::1/64"]),
    "docker0": (["172.17.0.1/16"], []),
    "ib0": (["192.168.100.5/24"], []),
}


def test_interfaces_kinds_states_addresses(stage):
    _stage_node(stage)
    info = probe_network(stage.ctx(addresses=lambda: ADDRS)).data
    by_name = {i.name: i for i in info.interfaces}
    assert {n: i.kind for n, i in by_name.items()} == {
        "docker0": "bridge",
        "eth0": "ether",
        "eth1": "ether",
        "ib0": "infiniband",
        "lo": "loopback",
        "veth12ab": "veth",
    }
    assert by_name["lo"].state == "up"  # operstate "unknown" but IFF_UP set
    assert by_name["eth1"].state == "down"
    assert by_name["eth0"].mtu == 9000 and by_name["eth0"].ipv4 == ("10.0.0.5/24",)
    assert by_name["veth12ab"].ipv4 == ()
    port = info.infiniband[0].ports[0]
    assert (info.infiniband[0].name, port.port, port.state, port.link_layer) == (
        "mlx5_0",
        1,
        "ACTIVE",
        "InfiniBand",
    )


def test_hostname_resolving_to_loopback_is_recorded(stage):
    _stage_node(stage)
    ctx = stage.ctx(
        addresses=lambda: ADDRS, resolver=lambda h: ["127.0.1.1"], hostname=lambda: "trainer-7"
    )
    info = probe_network(ctx).data
    assert info.hostname == "trainer-7"
    assert info.hostname_addresses == ("127.0.1.1",)
    assert info.resolve_error is None


def test_unresolvable_hostname(stage):
    def fail(host):
        raise OSError(-2, "Name or service not known")

    info = probe_network(stage.ctx(resolver=fail)).data
    assert info.hostname_addresses == ()
    assert info.resolve_error == "node-a does not resolve (Name or service not known)"


def test_hanging_resolver_costs_at_most_the_timeout(stage):
    def hang(host):
        time.sleep(10)
        return []

    start = time.monotonic()
    info = probe_network(stage.ctx(resolver=hang, timeout=0.3)).data
    assert time.monotonic() - start < 2
    assert info.resolve_error == "resolving node-a timed out after 0.3 s"


def test_address_lookup_failure_is_a_note(stage):
    def broken():
        raise OSError(97, "Address family not supported")

    section = probe_network(stage.ctx(addresses=broken))
    assert section.is_ok and "interface addresses unavailable" in section.notes[0]


def test_real_getifaddrs_has_loopback():
    from envcheck.probes.ifaddrs import interface_addresses

    addresses = interface_addresses()
    assert any(a.startswith("127.0.0.1/") for a in addresses.get("lo", ([], []))[0])


@pytest.mark.parametrize(
    "name",
    [
        "node-1",
        "gpu01.cluster.local",
        "localhost.",
        "a" * 63,
        "a" * 64,
        "x..y",
        ".lead",
        "bü.de",
        "",
    ],
)
def test_hostnames_reach_getaddrinfo_as_the_idna_codec_would_give_them(name):
    """ASCII names the codec accepts go as the codec's own bytes; the rest go as text, so the
    codec encodes (or refuses) them exactly as before."""
    from envcheck.probes.context import idna_host

    host = idna_host(name)
    if isinstance(host, bytes):
        assert host == name.encode("idna")
    else:
        assert host == name
        try:
            name.encode("ascii")
            ascii_name = True
        except UnicodeEncodeError:
            ascii_name = False
        if ascii_name and name:
            with pytest.raises(UnicodeError):
                name.encode("idna")
