"""The "GPU health" block of `probe --deep`: rows from the --deep facts (model/deep.py)."""

from __future__ import annotations

from envcheck.formats.rows import Row, Tone
from envcheck.model.deep import NOT_SUPPORTED, DeepInfo, GpuHealth


def _v(value: object) -> str:
    if value is None:
        return "?"
    if value == NOT_SUPPORTED:
        return "n/a"
    return str(value)


def _gpu_line(g: GpuHealth) -> tuple[str, bool]:
    bad = False
    ecc = f"ECC uncorr {_v(g.ecc_volatile_uncorrected)}/{_v(g.ecc_aggregate_uncorrected)}"
    if isinstance(g.ecc_volatile_uncorrected, int) and g.ecc_volatile_uncorrected:
        bad = True
    remap = (
        "remap FAILED"
        if g.remap_failure is True
        else (
            "remap pending"
            if g.remap_pending is True or g.retired_pages_pending is True
            else "remap ok"
        )
    )
    bad = bad or remap != "remap ok"
    pcie = (
        f"PCIe gen{_v(g.pcie_gen)}/{_v(g.pcie_gen_max)} x{_v(g.pcie_width)}/{_v(g.pcie_width_max)}"
    )
    throttle = g.throttle
    slow = (
        []
        if isinstance(throttle, str) or throttle is None
        else [
            n
            for n, on in (
                ("HW slowdown", throttle.hw_slowdown),
                ("thermal", throttle.hw_thermal),
                ("power brake", throttle.power_brake),
            )
            if on
        ]
    )
    bad = bad or bool(slow)
    nvlink = (
        f"NVLink {g.nvlink_active} up"
        + (f", {len(g.nvlink_inactive)} down" if g.nvlink_inactive else "")
        if g.nvlink_active is not None
        else "NVLink n/a"
    )
    fabric = f"fabric {_v(g.fabric_state)}"
    parts = [ecc, remap, pcie, nvlink, fabric, "throttle: " + (", ".join(slow) or "none")]
    if g.mig_mode is True:
        parts.append("MIG on")
    return " · ".join(parts), bad


def deep_rows(info: DeepInfo, row: type[Row]) -> list[Row]:
    rows = []
    for step in info.steps:
        ms = f"{step.duration_ms:.0f} ms" if step.duration_ms is not None else "?"
        text = f"{step.status} in {ms}" + (f" ({step.reason})" if step.reason else "")
        tone: Tone = (
            "normal"
            if step.status == "ok"
            else ("muted" if step.status == "unavailable" else "bad")
        )
        rows.append(row(f"step {step.name}", text, tone))
    if info.cuda is not None and info.cuda.outcome == "ok":
        lib = info.cuda.library or "libcuda"
        rows.append(row("CUDA driver", f"{info.cuda.device_count} device(s), contexts ok · {lib}"))
    for g in info.health.gpus if info.health else ():
        text, bad = _gpu_line(g)
        rows.append(row(f"GPU {g.index}", text, "warn" if bad else "normal"))
    if info.health and info.health.p2p:
        refused = [p for p in info.health.p2p if p.status != "ok"]
        text = f"{len(info.health.p2p) - len(refused)}/{len(info.health.p2p)} pairs ok"
        rows.append(row("P2P", text, "warn" if refused else "normal"))
    if info.pcie is not None:
        redirect = [b.address for b in info.pcie.bridges if b.redirects]
        acs = f"redirect on {', '.join(redirect)}" if redirect else "no P2P redirect"
        if info.pcie.unreadable:
            acs += f" ({info.pcie.unreadable} bridge(s) unreadable without root)"
        rows.append(row("PCIe ACS", acs, "warn" if redirect else "normal"))
        rows.append(
            row("IOMMU", f"{info.pcie.iommu} ({info.pcie.iommu_evidence or 'no evidence'})")
        )
    if info.torch is not None:
        t = info.torch
        gemms = ", ".join(f"{g.dtype} {g.outcome}" for g in t.gemms) or "none"
        rows.append(
            row(
                "torch smoke",
                f"{t.outcome}: {gemms}; all-reduce {t.allreduce or 'not run'}",
                "normal" if t.outcome == "ok" else "bad",
            )
        )
    return rows
