"""GPU11x (health): what NVML and /sys say about each GPU and the PCIe paths between them (--deep).

An NVML query the GPU does not support is "not supported", never a finding; a rule skips when
no GPU answered its query.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NodeDecides, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

if TYPE_CHECKING:  # the --deep records are imported when a --deep report is read
    from envcheck.model.deep import GpuHealth


def _known(value: Any) -> bool:
    from envcheck.model.deep import NOT_SUPPORTED

    return value is not None and value != NOT_SUPPORTED


def _answered(facts: Facts, field: str, what: str) -> list[GpuHealth]:
    gpus = [g for g in facts.health().gpus if _known(getattr(g, field))]
    if not gpus:
        raise Skip(f"no GPU reported {what} (not supported or not readable)", "deep.health")
    return gpus


def _drain(summary: str, *steps: str) -> Any:
    return fix(summary, "manual", *(manual(s) for s in steps))


@rule("GPU110", "gpu-uncorrectable-ecc", Severity.ERROR)
def uncorrectable_ecc(facts: Facts) -> Iterable[Hit]:
    """A GPU has uncorrectable ECC errors

    ## What it checks
    NVML's uncorrected ECC counters of each GPU (`nvmlDeviceGetTotalEccErrors`): the volatile
    count (since the last driver load; an error) and the aggregate count (over the GPU's life;
    a warning when only that is non-zero).

    ## Why it matters
    An uncorrectable (double-bit) error kills the process using that memory (Xid 48/63/64/94/95)
    and, until the GPU is reset, can fault again. Jobs die with `CUDA error: uncorrectable ECC
    error encountered` or an NCCL error on another rank.

    ## Example
    GPU 3: 2 volatile uncorrectable ECC errors.

    ## Fix
    Drain the node; reset the GPU (`nvidia-smi -r -i N`) or reboot; if errors recur, or remapping
    failed (GPU111), have the GPU replaced.

    ## References
    - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    hits = []
    for g in facts.health().gpus:
        vol, agg = g.ecc_volatile_uncorrected, g.ecc_aggregate_uncorrected
        if isinstance(vol, int) and vol > 0:
            hits.append(
                Hit(
                    f"GPU {g.index}: {vol} volatile uncorrectable ECC error(s) since the driver loaded",
                    evidence={"gpu": g.index, "volatile": vol, "aggregate": agg},
                    fix=_drain(
                        "Drain the node and reset the GPU",
                        f"nvidia-smi -r -i {g.index} (or reboot); replace the GPU if errors recur",
                    ),
                )
            )
        elif isinstance(agg, int) and agg > 0:
            hits.append(
                Hit(
                    f"GPU {g.index}: {agg} uncorrectable ECC error(s) over its life (none since the driver loaded)",
                    evidence={"gpu": g.index, "volatile": vol, "aggregate": agg},
                    fix=_drain(
                        "Watch the GPU's ECC counters",
                        f"nvidia-smi -q -d ECC,ROW_REMAPPER -i {g.index}",
                    ),
                    severity=Severity.WARNING,
                )
            )
    if not hits and not any(
        _known(g.ecc_volatile_uncorrected) or _known(g.ecc_aggregate_uncorrected)
        for g in facts.health().gpus
    ):
        raise Skip("no GPU reported ECC counters (ECC off or not supported)", "deep.health")
    return hits


@rule("GPU111", "gpu-memory-repair-pending", Severity.WARNING)
def repair_pending(facts: Facts) -> Iterable[Hit]:
    """A GPU needs a reset to retire pages or remap rows, or remapping failed

    ## What it checks
    NVML's row remapper state (`nvmlDeviceGetRemappedRows`: pending, failure) on GPUs that have
    one (A100 and later), and retired pages (`nvmlDeviceGetRetiredPagesPendingStatus`) on older
    GPUs.

    ## Why it matters
    After a memory error the GPU marks the bad row or page for repair, which takes effect only at
    the next GPU reset; until then the bad memory may be used again. A remapping *failure*
    means the GPU ran out of spare rows: it must be replaced.

    ## Example
    GPU 5: a row remap is pending (reset the GPU to apply it).

    ## Fix
    Pending: drain the node and reset the GPU (`nvidia-smi -r -i N`) or reboot. Failure: take
    the GPU out of service and have it replaced (RMA).

    ## References
    - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html
    - https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html
    """
    gpus = facts.health().gpus
    fields = ("remap_pending", "remap_failure", "retired_pages_pending")
    if not any(_known(getattr(g, f)) for g in gpus for f in fields):
        raise Skip("no GPU reported row remapping or page retirement", "deep.health")
    hits = []
    for g in gpus:
        if g.remap_failure is True:
            hits.append(
                Hit(
                    f"GPU {g.index}: row remapping FAILED (no spare rows left)"
                    + (
                        f"; {g.remapped_rows_uncorrectable} rows remapped for uncorrectable errors"
                        if isinstance(g.remapped_rows_uncorrectable, int)
                        else ""
                    ),
                    evidence={"gpu": g.index, "remap_failure": True},
                    fix=_drain(
                        "Take the GPU out of service and have it replaced",
                        f"drain the node; RMA GPU {g.index} (nvidia-smi -q -d ROW_REMAPPER -i {g.index})",
                    ),
                    severity=Severity.ERROR,
                )
            )
        elif g.remap_pending is True or g.retired_pages_pending is True:
            what = "a row remap" if g.remap_pending is True else "a page retirement"
            hits.append(
                Hit(
                    f"GPU {g.index}: {what} is pending (reset the GPU to apply it)",
                    evidence={
                        "gpu": g.index,
                        "remap_pending": g.remap_pending,
                        "retired_pages_pending": g.retired_pages_pending,
                    },
                    fix=_drain(
                        "Reset the GPU to apply the repair",
                        f"drain the node; nvidia-smi -r -i {g.index} (or reboot)",
                    ),
                )
            )
    return hits


_THROTTLE = (
    ("hw_slowdown", "hardware slowdown"),
    ("hw_thermal", "hardware thermal slowdown"),
    ("power_brake", "power brake slowdown"),
)


@rule("GPU112", "gpu-clocks-throttled", Severity.WARNING)
def clocks_throttled(facts: Facts) -> Iterable[Hit]:
    """A GPU's clocks are held down by a hardware slowdown, thermal limit or power brake

    ## What it checks
    NVML's current clock event reasons (`nvmlDeviceGetCurrentClocksEventReasons`): hardware
    slowdown, hardware thermal slowdown and hardware power brake. Software power capping and
    idle are normal and not reported.

    ## Why it matters
    These are raised by the board, not the driver's policy: overheating, a failing fan or power
    supply, or an external power-brake signal. The GPU then runs at a fraction of its clock and
    the whole data-parallel job runs at the speed of this GPU.

    ## Example
    GPU 2: hardware thermal slowdown active.

    ## Fix
    Check cooling and power (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`), the data-center
    airflow and the PSUs; drain the node if it persists.

    ## References
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html
    """
    hits = []
    for g in _answered(facts, "throttle", "clock event reasons"):
        throttle = g.throttle
        if isinstance(throttle, str) or throttle is None:
            continue
        active = [label for name, label in _THROTTLE if getattr(throttle, name)]
        if active:
            hits.append(
                Hit(
                    f"GPU {g.index}: {', '.join(active)} active (clock event mask {throttle.mask:#x})",
                    evidence={"gpu": g.index, "reasons": active, "mask": throttle.mask},
                    fix=_drain(
                        "Check the GPU's cooling and power",
                        f"nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i {g.index}",
                    ),
                )
            )
    return hits


@rule("GPU113", "gpu-pcie-link-degraded", Severity.WARNING)
def pcie_degraded(facts: Facts) -> Iterable[Hit]:
    """A GPU's PCIe link trained narrower than its maximum width

    ## What it checks
    NVML's current and maximum PCIe link width of each GPU (`nvmlDeviceGetCurrPcieLinkWidth`,
    `nvmlDeviceGetMaxPcieLinkWidth`). The link generation is reported but not judged: GPUs lower
    it when idle to save power.

    ## Why it matters
    A link at x8 or x4 instead of x16 (a badly seated card or riser, a damaged slot or cable)
    halves or quarters host-device bandwidth: data loading, checkpointing and any NCCL traffic
    through PCIe slow down, often only on that GPU.

    ## Example
    GPU 6: PCIe x4 (maximum x16), gen 4 of 5.

    ## Fix
    Reseat the GPU or its riser; check `lspci -vv` LnkSta against LnkCap; have the slot
    serviced if it persists after a reboot.

    ## References
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    hits = []
    for g in _answered(facts, "pcie_width", "the PCIe link width"):
        if (
            isinstance(g.pcie_width, int)
            and isinstance(g.pcie_width_max, int)
            and g.pcie_width < g.pcie_width_max
        ):
            gen = (
                f", gen {g.pcie_gen} of {g.pcie_gen_max}"
                if isinstance(g.pcie_gen, int) and isinstance(g.pcie_gen_max, int)
                else ""
            )
            hits.append(
                Hit(
                    f"GPU {g.index}: PCIe x{g.pcie_width} (maximum x{g.pcie_width_max}){gen}",
                    evidence={
                        "gpu": g.index,
                        "width": g.pcie_width,
                        "max_width": g.pcie_width_max,
                        "bus_id": g.pci_bus_id,
                    },
                    fix=_drain(
                        "Reseat the GPU or riser",
                        f"lspci -vv -s {g.pci_bus_id or '<bus id>'} | grep -E 'LnkCap|LnkSta'; reseat and reboot",
                    ),
                )
            )
    return hits


@rule("GPU114", "gpu-nvlink-down", Severity.ERROR)
def nvlink_down(facts: Facts) -> Iterable[Hit]:
    """Some NVLinks of a GPU are down while others are up

    ## What it checks
    NVML's state of each NVLink of each GPU (`nvmlDeviceGetNvLinkState`); a GPU with some links
    enabled and others disabled.

    ## Why it matters
    NCCL picks NVLink paths from the topology; a link down leaves a GPU with a fraction of its
    bandwidth (collectives slow to the weakest link) or makes NCCL fall back to PCIe/SHM.

    ## Example
    GPU 1: NVLinks 4, 7 down (16 up).

    ## Fix
    `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e` to confirm; reset the GPU or reboot; a link
    that stays down needs hardware service.

    ## References
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlNvLinkQueries.html
    """
    gpus = [g for g in facts.health().gpus if g.nvlink_active is not None]
    if not gpus:
        raise Skip("no GPU reported NVLink state (no NVLink, or not supported)", "deep.health")
    return [
        Hit(
            f"GPU {g.index}: NVLink(s) {', '.join(str(i) for i in g.nvlink_inactive)} down ({g.nvlink_active} up)",
            evidence={"gpu": g.index, "down": list(g.nvlink_inactive), "up": g.nvlink_active},
            fix=_drain(
                "Check the NVLinks and reset the GPU",
                f"nvidia-smi nvlink -s -i {g.index}; nvidia-smi -r -i {g.index} (or reboot)",
            ),
        )
        for g in gpus
        if g.nvlink_inactive and g.nvlink_active
    ]


@rule("GPU115", "gpu-fabric-not-ready", Severity.ERROR)
def fabric_not_ready(facts: Facts) -> Iterable[Hit]:
    """The GPU fabric (NVSwitch) registration is not complete

    ## What it checks
    On NVSwitch systems, NVML's GPU fabric state (`nvmlDeviceGetGpuFabricInfo`): "completed" with
    status success is healthy; "not started" or "in progress", or a failed status, is not.

    ## Why it matters
    On HGX systems the Fabric Manager registers every GPU with the NVSwitch fabric; until that is
    complete CUDA fails with error 802 (GPU101) or NVLink P2P is unavailable and NCCL hangs or
    crawls.

    ## Example
    GPU 0: fabric state "not started".

    ## Fix
    Start the Fabric Manager at the driver's exact version (`systemctl status
    nvidia-fabricmanager`, its log in /var/log/fabricmanager.log); wait for registration to
    complete before starting jobs.

    ## References
    - https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    from envcheck.model.deep import NOT_SUPPORTED

    gpus = [g for g in facts.health().gpus if g.fabric_state not in (None, NOT_SUPPORTED)]
    if not gpus:
        raise Skip("no GPU reported a fabric state (not an NVSwitch system)", "deep.health")
    return [
        Hit(
            f"GPU {g.index}: fabric state {g.fabric_state!r}"
            + (f", status {g.fabric_status}" if g.fabric_status else ""),
            evidence={"gpu": g.index, "state": g.fabric_state, "status": g.fabric_status},
            fix=_drain(
                "Start the Fabric Manager and wait for registration",
                "systemctl enable --now nvidia-fabricmanager; journalctl -u nvidia-fabricmanager; /var/log/fabricmanager.log",
            ),
        )
        for g in gpus
        if g.fabric_state != "completed" or g.fabric_status
    ]


@rule("GPU116", "gpu-p2p-unavailable", Severity.WARNING)
def p2p_unavailable(facts: Facts) -> Iterable[Hit]:
    """Peer-to-peer access between local GPUs is refused

    ## What it checks
    NVML's P2P read status between every pair of local GPUs (`nvmlDeviceGetP2PStatus`).

    ## Why it matters
    Without P2P, NCCL and CUDA copies between GPUs go through host memory: collectives slow down
    several times. When P2P is reported but broken (ACS redirect, see GPU117) NCCL hangs.
    "chipset not supported" or "topology not supported" usually means ACS or an IOMMU in the
    path, or GPUs on different CPU sockets without a P2P-capable link.

    ## Example
    GPU 0 <-> GPU 1: P2P chipset not supported.

    ## Fix
    Check `nvidia-smi topo -p2p r`; disable ACS on the PCIe switches (GPU117) and put the IOMMU in
    passthrough (GPU118); verify with NCCL's all-reduce test.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    links = facts.health().p2p
    if not links:
        raise Skip(
            "no P2P status between GPUs (fewer than 2 GPUs, or not supported)", "deep.health"
        )
    bad = [link for link in links if link.status != "ok"]
    if not bad:
        return []
    pairs = ", ".join(f"{link.a}<->{link.b}: {link.status}" for link in bad[:8])
    more = f" (+{len(bad) - 8} more)" if len(bad) > 8 else ""
    return [
        Hit(
            f"P2P refused between {len(bad)} of {len(links)} GPU pair(s): {pairs}{more}",
            evidence={"pairs": [[link.a, link.b, link.status] for link in bad]},
            fix=_drain(
                "Find what blocks P2P",
                "nvidia-smi topo -p2p r; check ACS (GPU117) and the IOMMU (GPU118)",
            ),
        )
    ]


@rule("GPU117", "pcie-acs-redirect", Severity.WARNING)
def acs_redirect(facts: Facts) -> Iterable[Hit]:
    """ACS redirects peer-to-peer traffic on PCIe bridges above the GPUs

    ## What it checks
    The ACS Control register (PCIe extended capability 0x000D, at offset +6) of every PCIe bridge
    and switch port between the GPUs and the root complex, read from
    `/sys/bus/pci/devices/*/config`: P2P Request Redirect or P2P Completion Redirect enabled.
    Reading past the first 64 bytes of config space needs root; unreadable bridges are counted.

    ## Why it matters
    NCCL's troubleshooting guide: with ACS enabled, PCIe switches redirect all point-to-point
    traffic to the CPU root complex, which can cause a large drop in performance or NCCL hangs
    (P2P looks available, transfers never complete). Bare-metal training nodes should have ACS
    disabled; virtual machines need it.

    ## Example
    ACS ReqRedir+ CmpltRedir+ on 0000:17:02.0 (above GPU 0).

    ## Fix
    Disable ACS on those bridges (`setpci -s <bridge> ECAP_ACS+0x6.w=0000`, as root, after every
    boot) or in the BIOS; verify with `lspci -vvv | grep ACSCtl`.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs
    """
    topology = facts.pcie()
    readable = [b for b in topology.bridges if b.readable]
    if not topology.bridges:
        raise Skip("no PCIe bridges found above NVIDIA GPUs in /sys", "deep.pcie")
    if not readable:
        raise Skip(
            f"ACS unreadable on {topology.unreadable} bridge(s): run as root to read config space",
            "deep.pcie",
        )
    bad = [b for b in readable if b.redirects]
    if not bad:
        return []
    try:
        if len(facts.gpus()) < 2:
            return []  # no peer to talk to
    except Skip:
        pass
    names = ", ".join(f"{b.address} (ACSCtl {b.acs_ctrl:#06x}, above GPU {b.gpu})" for b in bad[:6])
    return [
        Hit(
            f"ACS P2P redirect enabled on {len(bad)} bridge(s) above the GPUs: {names}; NCCL P2P "
            "goes through the root complex or hangs",
            evidence={"bridges": [b.address for b in bad]},
            fix=fix(
                "Disable ACS on the bridges above the GPUs (as root, after each boot)",
                "manual",
                *(manual(f"setpci -s {b.address} ECAP_ACS+0x6.w=0000") for b in bad[:16]),
            ),
        )
    ]


@rule("GPU118", "iommu-translated", Severity.WARNING)
def iommu_translated(facts: Facts) -> Iterable[Hit]:
    """The IOMMU translates GPU DMA (not passthrough) on a multi-GPU node

    ## What it checks
    The IOMMU mode from the GPU's IOMMU group type (`/sys/bus/pci/devices/<gpu>/iommu_group/type`:
    `identity` is passthrough, `DMA`/`DMA-FQ` translated), else `/sys/class/iommu` and the kernel
    command line (`iommu=pt`).

    ## Why it matters
    NCCL's troubleshooting guide lists the IOMMU with ACS among the causes of slow or hanging
    GPU Direct P2P: with translation on, every peer-to-peer transfer goes through the IOMMU
    (and enabling the IOMMU makes the kernel turn ACS on). Passthrough mode keeps the isolation
    for devices that need it and lets GPUs talk directly.

    ## Example
    iommu_group/type = DMA-FQ on a node with 8 GPUs.

    ## Fix
    Boot with `iommu=pt` (add it to GRUB_CMDLINE_LINUX, update-grub, reboot), or disable the
    IOMMU in the BIOS on bare-metal training nodes.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs
    - https://docs.kernel.org/admin-guide/kernel-parameters.html
    """
    topology = facts.pcie()
    if topology.iommu in (None, "unknown"):
        raise Skip("IOMMU mode unknown", "deep.pcie")
    gpus = facts.gpus()
    if len(gpus) < 2 or topology.iommu != "translated":
        return []
    return [
        Hit(
            f"IOMMU translates DMA ({topology.iommu_evidence}) on a node with {len(gpus)} GPUs: "
            "GPU peer-to-peer traffic goes through address translation",
            evidence={"iommu": topology.iommu, "evidence": topology.iommu_evidence},
            fix=fix(
                "Put the IOMMU in passthrough mode",
                "manual",
                manual(
                    "add iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX), update-grub, reboot"
                ),
            ),
        )
    ]


def _flag_rule(field: str, what: str) -> Callable[[Facts], list[GpuHealth]]:
    def get(facts: Facts) -> list[GpuHealth]:
        return _answered(facts, field, what)

    return get


_mig = _flag_rule("mig_mode", "MIG mode")
_persistence = _flag_rule("persistence_mode", "persistence mode")


@rule("GPU119", "gpu-mig-enabled", Severity.INFO)
def mig_enabled(facts: Facts) -> Iterable[Hit]:
    """MIG mode is enabled on a GPU

    ## What it checks
    NVML's current MIG mode of each GPU (`nvmlDeviceGetMigMode`).

    ## Why it matters
    With MIG on, CUDA sees MIG instances, not the GPU: a training job gets a slice of the memory
    and SMs, P2P and NVLink between instances are unavailable, and NCCL cannot run across them.
    Often left on after inference use.

    ## Example
    GPU 0: MIG mode enabled.

    A log states it too: torch's `device >= 0 && device < num_gpus INTERNAL ASSERT FAILED` on
    a node whose log names MIG devices (a GPU named `...-MIG-3g.40gb`, nvidia-smi -L's `MIG
    1g.5gb Device 0`): torch counted the physical GPUs, CUDA enumerates one MIG device.

    ## Fix
    A CUDA process uses one MIG device: export `CUDA_VISIBLE_DEVICES=MIG-<UUID>` (nvidia-smi -L
    lists them) before the process starts, one per process. If the node is for training:
    `nvidia-smi -i N -mig 0` (as root, with no processes on the GPU) and reset the GPU.

    ## References
    - https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
    - https://github.com/pytorch/pytorch/issues/130181
    """
    return [
        Hit(
            f"GPU {g.index}: MIG mode enabled (CUDA sees MIG instances; no P2P/NCCL across them)",
            evidence={"gpu": g.index},
            fix=fix(
                "Disable MIG for training",
                "manual",
                manual(f"nvidia-smi -i {g.index} -mig 0; nvidia-smi -r -i {g.index}"),
            ),
        )
        for g in _mig(facts)
        if g.mig_mode is True
    ]


@from_log("GPU119")
def mig_device_count_in_log(facts: Facts, line: LogLine) -> Hit:
    """torch's device-index assert where the log names MIG devices: one MIG device per process
    (pytorch/pytorch#130181, vllm-project/vllm#327); without MIG named the cause stays open."""
    mig = line.stated.get("mig_device")
    if not mig:
        raise NotStated(
            f"line {line.line}: torch counted more GPUs than CUDA enumerates; the log names no "
            "MIG device (nvidia-smi -L shows whether the GPUs are split by MIG)",
            "gpu.mig_mode",
            fix="if nvidia-smi -L lists MIG devices: export CUDA_VISIBLE_DEVICES=MIG-<UUID> (one "
            "per process) before the process starts",
        )
    return Hit(
        f"torch counted more GPUs than CUDA enumerates (line {line.line}) on GPUs split by MIG "
        f"({mig}): a CUDA process enumerates one MIG device",
        evidence={"line": line.line, "mig_device": mig},
        fix=fix(
            "Give each process one MIG device: export CUDA_VISIBLE_DEVICES=MIG-<UUID> before it "
            "starts (nvidia-smi -L lists the MIG devices' UUIDs); or, for a training node, "
            "disable MIG",
            "manual",
            manual("nvidia-smi -L  (the MIG devices: 'MIG 3g.40gb Device 0: (UUID: MIG-...)')"),
            manual("export CUDA_VISIBLE_DEVICES=MIG-<UUID>  (one MIG device per process)"),
            manual("training node: sudo nvidia-smi -i <gpu> -mig 0 && sudo nvidia-smi -r -i <gpu>"),
        ),
    )


@rule("GPU120", "gpu-persistence-off", Severity.INFO)
def persistence_off(facts: Facts) -> Iterable[Hit]:
    """Persistence mode is off on a GPU

    ## What it checks
    NVML's persistence mode of each GPU (`nvmlDeviceGetPersistenceMode`).

    ## Why it matters
    Without persistence mode (or the nvidia-persistenced daemon) the driver tears the GPU state
    down when the last client exits and rebuilds it at the next start: every process start pays
    seconds of initialisation, and settings such as clocks are lost between jobs.

    ## Example
    GPU 0: persistence mode off.

    ## Fix
    Run the `nvidia-persistenced` service (preferred) or `nvidia-smi -pm 1` as root.

    ## References
    - https://docs.nvidia.com/deploy/driver-persistence/index.html
    """
    off = [g for g in _persistence(facts) if g.persistence_mode is False]
    if not off:
        return []
    return [
        Hit(
            f"persistence mode off on GPU(s) {', '.join(str(g.index) for g in off)}",
            evidence={"gpus": [g.index for g in off]},
            fix=fix(
                "Enable persistence mode",
                "manual",
                manual("systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1)"),
            ),
        )
    ]


RPC_TIMEOUT = "container-driver-rpc-timeout"


@from_log("GPU120")
def persistence_off_in_log(facts: Facts, line: LogLine) -> Hit:
    """nvidia-container-cli's `driver rpc error: timed out`: the container runtime's NVML queries
    outran its RPC timeout because the driver set each GPU up afresh, persistence mode being off
    (the maintainer, nvidia-container-toolkit#556 and #202: 'usually caused by Persistence Mode
    not being enabled'; #202's reporter: works with `nvidia-smi -pm 1`). Where the node states
    its GPUs' persistence mode, that check decides."""
    if line.signature != RPC_TIMEOUT:
        raise NotStated(f"line {line.line} does not state the GPUs' persistence mode", "gpu")
    with contextlib.suppress(Skip):
        if _persistence(facts):
            raise NodeDecides(
                f"line {line.line}: the node states its GPUs' persistence mode", "gpu"
            )
    return Hit(
        f"the NVIDIA container runtime's call to the driver timed out (line {line.line}): with "
        "persistence mode off the driver initialises the GPUs on each query, which outlasts the "
        "runtime's RPC timeout",
        evidence={"line": line.line},
        fix=fix(
            "Enable persistence mode on the host: sudo systemctl enable --now "
            "nvidia-persistenced (preferred), or sudo nvidia-smi -pm 1; then start the container "
            "again",
            "manual",
            manual("sudo systemctl enable --now nvidia-persistenced"),
            manual("sudo nvidia-smi -pm 1  (until the next reboot)"),
            manual("nvidia-smi --query-gpu=index,persistence_mode --format=csv  (check: Enabled)"),
        ),
    )
