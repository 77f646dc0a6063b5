"""Every host's NCCL start-up lines read in one stream and compared (envcheck/triage/nccl_hosts.py),
and the causes triage names from them: NET121, NET171, NET172."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from envcheck.cli import main
from envcheck.triage import nccl_hosts

# two hosts behind Open MPI's --tag-output and pdsh's host prefixes, NCCL 2.3's 'NET : Using
# interface' and 'Using internal Network' beside 2.18's lines (formats of NVIDIA/nccl#224,
# horovod/horovod#636 and NVIDIA/nccl#1634)
MIXED = b"""\
[1,0]<stdout>:gpu6:1407:1595 [0] NCCL INFO NET : Using interface enp1s0f0:172.16.0.166<0>
[1,0]<stdout>:gpu6:1407:1595 [0] NCCL INFO Using internal Network IB
[1,0]<stdout>:NCCL version 2.4.2+cuda10.0
worker-1: worker-1:4105:4372 [0] NCCL INFO cudaDriverVersion 12020
worker-1: worker-1:4105:4372 [0] NCCL INFO NCCL version 2.18.6+cuda12.1
worker-1: worker-1:4105:4372 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.2<0>
worker-1: worker-1:4105:4380 [0] NCCL INFO NET/IB : No device found.
worker-1: worker-1:4105:4380 [0] NCCL INFO Using network Socket
worker-1: worker-1:4105:4380 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so.
"""


def _read(data: bytes) -> list[nccl_hosts.HostNccl]:
    return nccl_hosts.read_hosts(io.BytesIO(data))


def test_reads_each_host_behind_launcher_prefixes():
    hosts = {h.host: h for h in _read(MIXED)}
    assert set(hosts) == {"gpu6", "worker-1"}
    gpu6, worker = hosts["gpu6"], hosts["worker-1"]
    assert (gpu6.interface, gpu6.address, gpu6.network) == ("enp1s0f0", "172.16.0.166", "IB")
    assert gpu6.nccl is None  # the bare banner names no host
    assert (worker.nccl, worker.nccl_cuda, worker.driver) == ("2.18.6", "12.1", "12020")
    assert (worker.interface, worker.address) == ("eth0", "10.0.0.2")
    assert (worker.network, worker.plugin) == ("Socket", "internal")
    assert worker.lines["nccl"] == 5 and worker.line == 4


def test_line_numbers_and_values_survive_chunk_boundaries(monkeypatch):
    whole = {h.host: (h.line, h.lines, h.address) for h in _read(MIXED)}
    for size in (7, 64, 100):
        monkeypatch.setattr(nccl_hosts, "CHUNK", size)
        assert {h.host: (h.line, h.lines, h.address) for h in _read(MIXED)} == whole


def test_one_host_states_no_difference():
    single = b"n1:1:1 [0] NCCL INFO NCCL version 2.18.6+cuda12.1\n" * 3
    assert nccl_hosts.compare(_read(single)) == []


def test_compare_names_each_difference():
    log = b"""\
a:1:1 [0] NCCL INFO NCCL version 2.20.5+cuda12.4
b:2:2 [0] NCCL INFO NCCL version 2.18.6+cuda12.1
c:3:3 [0] NCCL INFO NCCL version 2.20.5+cuda12.4
a:1:1 [0] NCCL INFO Using network IB
b:2:2 [0] NCCL INFO Using network Socket
"""
    facts = {f.name: f for f in nccl_hosts.compare(_read(log))}
    # oldest release first, each with its hosts and its build's CUDA
    assert facts["nccl_hosts_versions"].value == "2.18.6+cuda12.1=b;2.20.5+cuda12.4=a,c"
    assert facts["nccl_hosts_versions"].line == 1
    assert facts["nccl_hosts_networks"].value == "IB=a;Socket=b"
    assert "nccl_hosts_bootstrap" not in facts


def test_containers_of_one_node_on_the_bridge_are_not_unreachable():
    log = b"""\
3f2a9c1b7d10:1:1 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>
9e8d7c6b5a40:2:2 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.3<0>
"""
    assert nccl_hosts.compare(_read(log)) == []


def test_the_hosts_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(nccl_hosts, "MAX_HOSTS", 3)
    log = b"".join(b"h%d:1:1 [0] NCCL INFO cudaDriverVersion 12020\n" % i for i in range(10))
    assert [h.host for h in _read(log)] == ["h0", "h1", "h2"]


def _triage(tmp_path: Path, data: bytes, capsys, name: str = "job.log") -> dict:
    log = tmp_path / name
    log.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    main(["triage", "--no-probe", "--json", str(log)])
    return json.loads(capsys.readouterr().out)


def _causes(data: dict) -> dict[str, dict]:
    match = next(m for m in data["data"]["matches"] if m["id"] == nccl_hosts.SIGNATURE_ID)
    return {c["code"]: c for c in match["causes"]}


@pytest.mark.parametrize("name", ["job.log", "job.log.gz"])
def test_triage_pins_the_newest_nccl_on_the_older_hosts(tmp_path, capsys, name):
    log = (Path(__file__).parents[1] / "rules/cases/NET121/bad_hosts.log").read_bytes()
    causes = _causes(_triage(tmp_path, log, capsys, name))
    assert causes["NET121"]["verdict"] == "confirmed"
    fix = json.dumps(causes["NET121"]["fix"])
    assert "nvidia-nccl-cu12==2.20.5" in fix and "on node1" in fix


def test_the_hosts_difference_outranks_the_interface_guess(tmp_path, capsys):
    log = (Path(__file__).parents[1] / "rules/cases/NET121/bad_hosts.log").read_bytes()
    data = _triage(tmp_path, log, capsys)
    generic = next(m for m in data["data"]["matches"] if m["id"] == "nccl-unhandled-system-error")
    verdicts = {c["code"]: c["verdict"] for c in generic["causes"]}
    assert verdicts.get("NET104") != "confirmed"


def test_triage_names_the_bridge_address_and_host_networking(tmp_path, capsys):
    log = (Path(__file__).parents[1] / "rules/cases/NET172/bad.log").read_bytes()
    causes = _causes(_triage(tmp_path, log, capsys))
    assert causes["NET172"]["verdict"] == "confirmed"
    assert "--network=host" in json.dumps(causes["NET172"]["fix"])


def test_a_protocol_set_on_some_hosts_only_is_named():
    log = b"""\
a:1:1 [0] NCCL INFO NCCL version 2.20.5+cuda12.4
a:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple
b:2:2 [0] NCCL INFO NCCL version 2.20.5+cuda12.4
"""
    facts = {f.name: f.value for f in nccl_hosts.compare(_read(log))}
    assert facts == {"nccl_hosts_settings": "NCCL_PROTO:Simple=a;unset=b"}


def test_a_plugin_loaded_after_a_name_not_found_is_the_hosts_plugin():
    log = b"""\
a:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so.
a:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v8)
b:2:2 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v8)
"""
    assert [h.plugin for h in _read(log)] == ["AWS Libfabric", "AWS Libfabric"]
    assert nccl_hosts.compare(_read(log)) == []


def test_hosts_are_read_where_no_signature_names_a_line(tmp_path, capsys):
    log = b"nodeA:11:40 [0] NCCL INFO Using network IB\nnodeB:22:50 [0] NCCL INFO Using network Socket\n"
    causes = _causes(_triage(tmp_path, log, capsys))
    assert causes["NET171"]["verdict"] == "confirmed"
