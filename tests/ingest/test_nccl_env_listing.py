"""``env | grep NCCL`` (and a script's ``export NCCL_...=`` lines) pasted beside ``ip addr``:
the NCCL/Gloo variables as the environment section, the interfaces as the network section, and
NET101 deciding an NCCL_SOCKET_IFNAME that names no interface of the node."""

from __future__ import annotations

import json
from pathlib import Path

from envcheck.cli import main
from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse

DUMP = """\
$ env | grep NCCL
NCCL_SOCKET_IFNAME=eth0
NCCL_DEBUG=INFO
$ ip addr
1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000
    inet 127.0.0.1/8 scope host lo
2: ens3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP group default qlen 1000
    inet 172.31.10.5/20 brd 172.31.15.255 scope global dynamic ens3
"""
LOG = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), "
    "NCCL version 2.19.3\n"
)


def test_the_listing_and_the_interfaces_are_both_read() -> None:
    report = parse(Source("dump.txt", DUMP))
    assert report.env.data is not None
    assert report.env.data.variables == {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_DEBUG": "INFO"}
    assert report.network.data is not None
    assert [i.name for i in report.network.data.interfaces] == ["lo", "ens3"]


def test_export_and_declare_forms() -> None:
    text = 'export NCCL_IB_HCA=mlx5_0\ndeclare -x GLOO_SOCKET_IFNAME="ens3"\n'
    report = parse(Source("dump.txt", text))
    assert report.env.data is not None
    assert report.env.data.variables == {"NCCL_IB_HCA": "mlx5_0", "GLOO_SOCKET_IFNAME": "ens3"}


def test_the_generic_error_is_decided_by_the_listing(tmp_path: Path, capsys) -> None:
    (tmp_path / "dump.txt").write_text(DUMP)
    (tmp_path / "job.log").write_text(LOG)
    main(
        [
            "triage",
            "--no-probe",
            "--json",
            "--from",
            str(tmp_path / "dump.txt"),
            str(tmp_path / "job.log"),
        ]
    )
    data = json.loads(capsys.readouterr().out)["data"]
    generic = next(m for m in data["matches"] if m["id"] == "nccl-unhandled-system-error")
    net101 = next(c for c in generic["causes"] if c["code"] == "NET101")
    assert net101["verdict"] == "confirmed"
    assert "NCCL_SOCKET_IFNAME=ens3" in json.dumps(net101["fix"])
