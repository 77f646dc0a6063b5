"""A node's network as pasted into distributed-training threads (ip addr, ip -br addr,
ifconfig, /etc/hosts, ibstat), alone or beside another format: the network section the
interface and InfiniBand rules read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from envcheck.ingest.common import Source
from envcheck.ingest.detect import detect, parse
from envcheck.ingest.net_text import harvest
from tests.conftest import CliResult

IP_ADDR = """\
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000
    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
    inet 127.0.0.1/8 scope host lo
2: eth0@if9: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default
    link/ether 02:42:ac:11:00:02 brd ff:ff:ff:ff:ff:ff link-netnsid 0
    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0
    inet6 fe80::42:acff:fe11:2/64 scope link
3: docker0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state DOWN group default
    inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0
"""
IFCONFIG_OLD = """\
docker0   Link encap:Ethernet  HWaddr 02:42:a9:9e:3d:33
          inet addr:172.17.0.1  Bcast:0.0.0.0  Mask:255.255.0.0
          UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1

enp159s0  Link encap:Ethernet  HWaddr ec:0d:9a:e8:ba:a0
          inet addr:172.30.160.6  Bcast:172.30.175.255  Mask:255.255.240.0
          UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1
"""
IFCONFIG = """\
eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 9000
        inet 10.0.0.5  netmask 255.255.255.0  broadcast 10.0.0.255
lo: flags=73<UP,LOOPBACK,RUNNING>  mtu 65536
        inet 127.0.0.1  netmask 255.0.0.0
"""
IBSTAT = """\
CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tPort 1:
\t\tState: Down
\t\tPhysical state: Disabled
\t\tRate: 10
\t\tLink layer: InfiniBand
"""


def test_ip_addr_interfaces_with_state_and_addresses() -> None:
    net = harvest(IP_ADDR)
    assert net is not None
    eth0, docker0 = net.interface("eth0"), net.interface("docker0")
    assert eth0 is not None and docker0 is not None
    assert (eth0.state, eth0.mtu, eth0.ipv4) == ("up", 1500, ("10.0.0.5/24",))
    assert eth0.ipv6 == ("fe80::42:acff:fe11:2/64",)
    assert (docker0.state, docker0.kind) == ("down", "bridge")
    assert net.interface("lo").kind == "loopback"  # type: ignore[union-attr]


def test_both_ifconfig_layouts() -> None:
    old = harvest(IFCONFIG_OLD)
    assert old is not None
    assert [(i.name, i.state, i.ipv4, i.mtu) for i in old.interfaces] == [
        ("docker0", "up", ("172.17.0.1",), 1500),
        ("enp159s0", "up", ("172.30.160.6",), 1500),
    ]
    new = harvest(IFCONFIG)
    assert new is not None and new.interface("eth0").mtu == 9000  # type: ignore[union-attr]


def test_ip_brief_and_ibstat() -> None:
    brief = harvest("lo UNKNOWN 127.0.0.1/8 ::1/128\neth0 UP 10.0.0.5/24\nib0 DOWN\n")
    assert brief is not None
    assert [(i.name, i.state, i.kind) for i in brief.interfaces] == [
        ("lo", "up", "loopback"),
        ("eth0", "up", None),
        ("ib0", "down", "infiniband"),
    ]
    ib = harvest(IBSTAT)
    assert ib is not None
    ((port,),) = [d.ports for d in ib.infiniband]
    assert (port.state, port.rate, port.link_layer) == ("Down", "10", "InfiniBand")


def test_hosts_line_maps_the_hostname_to_loopback() -> None:
    net = harvest("127.0.0.1\tlocalhost\n127.0.1.1\ttrainer-7\n")
    assert net is not None
    assert (net.hostname, net.hostname_addresses) == ("trainer-7", ("127.0.1.1",))


def test_text_without_a_network_is_not_this_format() -> None:
    assert harvest("torch==2.4.0\nnumpy==1.26.4\n") is None
    assert detect("RuntimeError: something went wrong\n") is None


def test_a_listing_beside_nvidia_smi_adds_the_network() -> None:
    smi = (
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        "|-------------------------------+----------------------+----------------------+\n"
        "|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |\n"
        "+-------------------------------+----------------------+----------------------+\n"
    )
    report = parse(Source(name="dump.txt", text=smi + "\n" + IP_ADDR))
    assert report.gpu.is_ok
    assert report.network.is_ok and report.network.data.interface("eth0") is not None


def test_check_reads_a_network_listing(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(IP_ADDR + "127.0.1.1\ttrainer-7\n")
    result = cli("check", "--from", str(dump), "--json")
    assert result.returncode in (0, 1), result.stderr
    codes = {f["code"] for f in result.json()["data"]["findings"]}
    assert "NET103" in codes
    # NCCL's IB rule reads ibstat: every port down
    dump.write_text(IBSTAT + IP_ADDR)
    result = cli("check", "--from", str(dump), "--json")
    net150 = [f for f in result.json()["data"]["findings"] if f["code"] == "NET150"]
    assert net150 and "mlx5_0 (Down)" in net150[0]["message"]
