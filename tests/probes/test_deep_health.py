"""--deep's NVML health (fake pynvml in the child) and the PCIe tree (a staged /sys)."""

from __future__ import annotations

import os
import struct
import time

import pytest

from envcheck.engine import evaluate
from envcheck.model.deep import NOT_SUPPORTED, DeepInfo, Throttle
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import Section
from envcheck.probes.deep import probe_health, probe_topology
from envcheck.probes.pcie import acs_control
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix
from tests.conftest import FAKES

MATRIX = builtin_matrix()
RULES = [r for r in all_rules(MATRIX) if r.code.startswith(("GPU11", "GPU12"))]


def _health(stage, scenario: str, timeout: float = 3.0, **env: str):
    ctx = stage.ctx(
        env={"PYTHONPATH": str(FAKES), "FAKE_PYNVML_SCENARIO": scenario, **env}, timeout=timeout
    )
    return probe_health(ctx)


def test_healthy_gpus_read_in_full(stage):
    health, reason, step = _health(stage, "hgx_healthy")
    assert reason is None and step.status == "ok" and health is not None
    g = health.gpus[0]
    assert (g.ecc_volatile_uncorrected, g.ecc_aggregate_uncorrected) == (0, 0)
    assert (g.remap_pending, g.remap_failure, g.remapped_rows_uncorrectable) == (False, False, 0)
    assert g.throttle == Throttle(mask=1)
    assert (g.pcie_gen, g.pcie_gen_max, g.pcie_width, g.pcie_width_max) == (5, 5, 16, 16)
    assert (g.nvlink_active, g.nvlink_inactive) == (18, ())
    assert (g.fabric_state, g.fabric_status) == ("completed", 0)
    assert (g.mig_mode, g.persistence_mode) == (False, True)
    assert g.pci_bus_id == "00000000:18:00.0"
    assert [(p.a, p.b, p.status) for p in health.p2p] == [(0, 1, "ok")]


def test_unsupported_queries_are_values_not_errors(stage):
    # the older scenarios describe no health at all: NVML answers NOT_SUPPORTED to each query
    health, reason, step = _health(stage, "rtx4090")
    assert reason is None and step.status == "ok" and health is not None
    g = health.gpus[0]
    assert g.ecc_volatile_uncorrected == NOT_SUPPORTED and g.remap_pending == NOT_SUPPORTED
    assert g.throttle == NOT_SUPPORTED and g.fabric_state == NOT_SUPPORTED
    assert g.nvlink_active is None and g.errors == {}
    assert g.persistence_mode is False  # answered by the older query


def test_other_nvml_errors_are_recorded_by_query(stage):
    health, _, _ = _health(stage, "hgx_errors")
    g = health.gpus[0]
    assert g.ecc_volatile_uncorrected is None and g.remap_pending is None
    assert g.errors["nvmlDeviceGetTotalEccErrors"].endswith("(NVML error 4)")
    assert g.errors["nvmlDeviceGetRemappedRows"] == "GPU is lost (NVML error 15)"
    assert g.pcie_width == 16  # the rest is still read


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("none", "NVML: NVML Shared Library Not Found"),
        ("driver_not_loaded", "NVML: Driver Not Loaded"),
    ],
)
def test_no_nvml_is_a_reason(stage, scenario, reason):
    health, why, step = _health(stage, scenario)
    assert health is None and why == reason and step.status == "unavailable"


def test_hung_nvml_is_killed_within_the_timeout(stage, tmp_path):
    pidfile = tmp_path / "pid"
    start = time.monotonic()
    _, reason, step = _health(stage, "nvml_hang", timeout=0.8, FAKE_PYNVML_PIDFILE=str(pidfile))
    assert time.monotonic() - start < 0.8 + 2.5
    assert step.status == "hung" and "NVML did not answer within 0.8 s" in (reason or "")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)


def _report(stage, scenario: str, deep_extra: dict | None = None) -> NodeReport:
    health, reason, step = _health(stage, scenario)
    gpus = tuple(Gpu(index=g.index, name="NVIDIA H100 80GB HBM3") for g in health.gpus)
    deep = DeepInfo(health=health, health_reason=reason, steps=(step,), **(deep_extra or {}))
    return NodeReport(
        node="n1",
        envcheck_version="0",
        created_at="2026-11-23T00:00:00Z",
        gpu=Section.ok(GpuInfo(driver_version="535.104.05", gpus=gpus)),
        deep=Section.ok(deep),
    )


def test_every_nvml_condition_produces_its_finding(stage):
    result = evaluate(_report(stage, "hgx_sick"), MATRIX, RULES)
    assert not result.errors
    by_code: dict[str, list[str]] = {}
    for f in result.findings:
        assert f.fix is not None and f.fix.actions, f.code
        by_code.setdefault(f.code, []).append(f.message)
    assert by_code["GPU110"] == [
        "GPU 0: 2 volatile uncorrectable ECC error(s) since the driver loaded"
    ]
    assert any("row remapping FAILED" in m for m in by_code["GPU111"])
    assert any("GPU 1: a row remap is pending" in m for m in by_code["GPU111"])
    assert by_code["GPU112"] == [
        "GPU 0: hardware slowdown, hardware thermal slowdown active (clock event mask 0x48)",
        "GPU 1: power brake slowdown active (clock event mask 0x80)",
    ]
    assert by_code["GPU113"] == ["GPU 1: PCIe x4 (maximum x16), gen 4 of 5"]
    assert by_code["GPU114"] == ["GPU 0: NVLink(s) 4, 7 down (16 up)"]
    assert by_code["GPU115"] == [
        "GPU 0: fabric state 'not started'",
        "GPU 1: fabric state 'in progress'",
    ]
    assert by_code["GPU116"] == [
        "P2P refused between 1 of 1 GPU pair(s): 0<->1: chipset not supported"
    ]
    assert by_code["GPU119"] == [
        "GPU 0: MIG mode enabled (CUDA sees MIG instances; no P2P/NCCL across them)"
    ]
    assert by_code["GPU120"] == ["persistence mode off on GPU(s) 1"]


def test_healthy_node_has_no_health_findings(stage):
    result = evaluate(_report(stage, "hgx_healthy"), MATRIX, RULES)
    assert result.findings == () and not result.errors
    skipped = {s.code for s in result.skipped}
    assert skipped == {"GPU117", "GPU118"}  # no PCIe topology in this report


# --- PCIe: ACS and IOMMU from a staged /sys -----------------------------------------------------


def _config(acs_ctrl: int | None, *, size: int = 4096) -> bytes:
    """Config space with an AER capability at 0x100 and, when asked, ACS (0x000D) at 0x148."""
    data = bytearray(size)
    if size <= 0x100:
        return bytes(data)
    nxt = 0x148 if acs_ctrl is not None else 0
    struct.pack_into("<I", data, 0x100, 0x0001 | (1 << 16) | (nxt << 20))
    if acs_ctrl is not None:
        struct.pack_into("<I", data, 0x148, 0x000D | (1 << 16))
        struct.pack_into("<HH", data, 0x14C, 0x005F, acs_ctrl)
    return bytes(data)


def _stage_gpu_tree(
    stage, acs: dict[str, int | None], *, size: int = 4096, group: str | None = None
):
    """Root port 17:01.0 -> switch up 18:00.0 -> down ports 19:00.0 / 19:04.0 -> GPUs."""
    base = stage.root / "sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0"
    links = stage.root / "sys/bus/pci/devices"
    links.mkdir(parents=True, exist_ok=True)
    gpus = {"0000:1a:00.0": "0000:19:00.0", "0000:1b:00.0": "0000:19:04.0"}
    for gpu, port in gpus.items():
        gdir = base / port / gpu
        gdir.mkdir(parents=True)
        (gdir / "vendor").write_text("0x10de\n")
        (gdir / "class").write_text("0x030200\n")
        if group:
            (gdir / "iommu_group").mkdir()
            (gdir / "iommu_group" / "type").write_text(group + "\n")
        (links / gpu).symlink_to(gdir)
    for bridge in ("0000:17:01.0", "0000:18:00.0", *gpus.values()):
        path = next(
            p
            for p in [base.parent, base, base / "0000:19:00.0", base / "0000:19:04.0"]
            if p.name == bridge
        )
        (path / "vendor").write_text("0x10b5\n")
        (path / "class").write_text("0x060400\n")
        (path / "config").write_bytes(_config(acs.get(bridge), size=size))
        (links / bridge).symlink_to(path)


def test_acs_control_parser_walks_the_capability_list():
    assert acs_control(_config(0x001D)) == 0x001D
    assert acs_control(_config(None)) is None
    assert acs_control(_config(0x1D, size=64)) is None
    loop = bytearray(_config(None))
    struct.pack_into("<I", loop, 0x100, 0x0001 | (0x100 << 20))  # points at itself
    assert acs_control(bytes(loop)) is None


def test_acs_redirect_on_switch_ports_is_found(stage):
    _stage_gpu_tree(stage, {"0000:19:00.0": 0x001D, "0000:19:04.0": 0x001D, "0000:18:00.0": 0x0000})
    stage.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on\n")
    (stage.root / "sys/class/iommu/dmar0").mkdir(parents=True)
    topology, step = probe_topology(stage.ctx())
    assert step.status == "ok" and topology is not None
    by_addr = {b.address: b for b in topology.bridges}
    assert set(by_addr) == {"0000:17:01.0", "0000:18:00.0", "0000:19:00.0", "0000:19:04.0"}
    assert by_addr["0000:19:04.0"].redirects and by_addr["0000:19:04.0"].gpu == 1
    assert not by_addr["0000:18:00.0"].redirects and by_addr["0000:17:01.0"].acs_ctrl is None
    assert topology.iommu == "translated" and "dmar0" in (topology.iommu_evidence or "")
    report = _pcie_report(topology)
    result = evaluate(report, MATRIX, [r for r in RULES if r.code in ("GPU117", "GPU118")])
    messages = {f.code: f for f in result.findings}
    assert "0000:19:00.0 (ACSCtl 0x001d, above GPU 0)" in messages["GPU117"].message
    assert "# setpci -s 0000:19:04.0 ECAP_ACS+0x6.w=0000" in messages["GPU117"].fix.commands
    assert "iommu=pt" in " ".join(messages["GPU118"].fix.commands)


def test_acs_off_and_passthrough_are_clean(stage):
    _stage_gpu_tree(stage, {"0000:19:00.0": 0x0000, "0000:19:04.0": 0x0001}, group="identity")
    topology, _ = probe_topology(stage.ctx())
    assert topology.iommu == "passthrough"
    result = evaluate(
        _pcie_report(topology), MATRIX, [r for r in RULES if r.code in ("GPU117", "GPU118")]
    )
    assert result.findings == () and not result.skipped


def test_unprivileged_config_reads_skip_with_the_reason(stage):
    _stage_gpu_tree(stage, {"0000:19:00.0": 0x001D}, size=64)
    topology, step = probe_topology(stage.ctx())
    assert topology.unreadable == 4 and "need root" in (step.reason or "")
    result = evaluate(_pcie_report(topology), MATRIX, [r for r in RULES if r.code == "GPU117"])
    assert result.findings == () and "run as root" in result.skipped[0].reason


def _pcie_report(topology) -> NodeReport:
    gpus = (Gpu(index=0, name="NVIDIA H100 80GB HBM3"), Gpu(index=1, name="NVIDIA H100 80GB HBM3"))
    return NodeReport(
        node="n1",
        envcheck_version="0",
        created_at="2026-11-23T00:00:00Z",
        gpu=Section.ok(GpuInfo(driver_version="535.104.05", gpus=gpus)),
        deep=Section.ok(DeepInfo(pcie=topology)),
    )


def test_nvswitches_are_counted_from_the_driver_or_the_pci_bus(stage):
    from envcheck.probes.deep import _nvswitches

    assert _nvswitches(stage.ctx()) is None
    for i, cls in enumerate(("0x068000", "0x068000", "0x030200")):
        stage.write(f"/sys/bus/pci/devices/0000:0{i}:00.0/vendor", "0x10de\n")
        stage.write(f"/sys/bus/pci/devices/0000:0{i}:00.0/class", cls + "\n")
    assert _nvswitches(stage.ctx()) == 2
    for n in range(4):
        stage.write(f"/proc/driver/nvidia-nvswitch/devices/0000:c{n}:00.0", "")
    assert _nvswitches(stage.ctx()) == 4
