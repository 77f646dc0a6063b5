"""Facts from ``--deep``: what the CUDA driver, NVML's health queries, the PCIe tree and (opt-in)
a torch smoke test answered on this node. Every step records its outcome and its duration.

``None`` means unknown (not asked, not reached, or the step failed); ``NOT_SUPPORTED`` is the
value of an NVML query the GPU or driver does not support, which is an answer, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

NOT_SUPPORTED = "not supported"

StepStatus = Literal["ok", "failed", "hung", "crashed", "unavailable", "skipped", "error"]


@dataclass(frozen=True)
class Step:
    """One bounded step of --deep (a child process or a read of /sys)."""

    name: str  # "cuda", "nvml_health", "pcie", "torch"
    status: StepStatus
    duration_ms: float | None = None
    reason: str | None = None


@dataclass(frozen=True)
class CudaCall:
    """One CUDA driver API call and its CUresult (``result`` None: started but never returned)."""

    call: str  # "cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", ...
    result: int | None
    name: str | None = None  # "CUDA_ERROR_SYSTEM_NOT_READY", from cuGetErrorName
    device: int | None = None
    duration_ms: float | None = None


@dataclass(frozen=True)
class CudaDriverCheck:
    """libcuda loaded with ctypes in a child process; each call's CUresult."""

    outcome: Literal["ok", "failed", "hung", "no_driver", "crashed"]
    library: str | None = None  # the libcuda file the child mapped (from /proc/<child>/maps)
    library_version: str | None = None  # "550.54.15" from libcuda.so.550.54.15
    compat: bool | None = None  # loaded from a CUDA forward-compatibility (compat) directory
    driver_api_version: int | None = None  # cuDriverGetVersion: 12040 for CUDA 12.4
    device_count: int | None = None
    device_names: tuple[str, ...] = ()
    calls: tuple[CudaCall, ...] = ()
    reason: str | None = None  # why outcome is not ok, in words

    def first_failure(self) -> CudaCall | None:
        return next((c for c in self.calls if c.result != 0), None)


@dataclass(frozen=True)
class Throttle:
    """Clock event (throttle) reasons active now, from nvmlDeviceGetCurrentClocksEventReasons."""

    hw_slowdown: bool = False
    hw_thermal: bool = False
    sw_thermal: bool = False
    power_brake: bool = False
    sw_power_cap: bool = False
    mask: int = 0


@dataclass(frozen=True)
class GpuHealth:
    """NVML health of one GPU. str fields hold ``NOT_SUPPORTED`` where NVML says so."""

    index: int
    ecc_volatile_uncorrected: int | str | None = None
    ecc_aggregate_uncorrected: int | str | None = None
    retired_pages_pending: bool | str | None = None
    retired_pages_dbe: int | str | None = None  # pages retired for double-bit errors
    remapped_rows_uncorrectable: int | str | None = None
    remap_pending: bool | str | None = None
    remap_failure: bool | str | None = None
    throttle: Throttle | str | None = None
    persistence_mode: bool | str | None = None
    mig_mode: bool | str | None = None
    pcie_gen: int | str | None = None
    pcie_gen_max: int | str | None = None
    pcie_width: int | str | None = None
    pcie_width_max: int | str | None = None
    nvlink_active: int | None = None  # links reported enabled
    nvlink_inactive: tuple[int, ...] = ()  # links reported disabled
    fabric_state: str | None = None  # "not supported", "not started", "in progress", "completed"
    fabric_status: int | None = None  # nvmlReturn_t of the fabric probe (0: success)
    process_count: int | None = None
    process_memory_mib: int | None = None
    pci_bus_id: str | None = None  # "0000:18:00.0"
    errors: dict[str, str] = field(
        default_factory=dict
    )  # NVML query -> error (not "not supported")


@dataclass(frozen=True)
class P2PLink:
    a: int
    b: int
    status: str  # "ok", "chipset not supported", "gpu not supported", "topology not supported", ...


@dataclass(frozen=True)
class NvmlHealth:
    gpus: tuple[GpuHealth, ...] = ()
    p2p: tuple[P2PLink, ...] = ()  # read P2P between each pair of local GPUs (a < b)
    nvswitch_count: int | None = None  # /proc/driver/nvidia-nvswitch/devices entries


@dataclass(frozen=True)
class Bridge:
    """A PCIe bridge or switch port above a GPU and its ACS control bits (ext. capability 0x000D)."""

    address: str  # "0000:17:02.0"
    gpu: int | None  # index of the GPU below it (by PCI bus id), when known
    acs_ctrl: int | None  # ACS Control register; None when the capability is absent
    readable: bool = True  # False when config space beyond 64 bytes needs root

    @property
    def redirects(self) -> bool:
        """P2P request or completion redirect (ReqRedir+ or CmpltRedir+): P2P goes via the root."""
        return bool(self.acs_ctrl and self.acs_ctrl & (0x0004 | 0x0008))


@dataclass(frozen=True)
class PcieTopology:
    bridges: tuple[Bridge, ...] = ()
    iommu: str | None = None  # "passthrough", "translated", "off", "unknown"
    iommu_evidence: str | None = None  # the cmdline token or /sys entry it came from
    unreadable: int = 0  # bridges whose extended config space could not be read


@dataclass(frozen=True)
class GemmRun:
    dtype: str  # "float16", "bfloat16", "float32", "tf32"
    shape: tuple[int, int, int]  # (m, k, n)
    outcome: Literal["ok", "error", "signal", "hung", "not reached"]
    detail: str | None = None  # the error text or "SIGFPE"
    source: str | None = None  # why this shape is run (a known crash report)
    duration_ms: float | None = None


@dataclass(frozen=True)
class TorchSmoke:
    """``--deep=torch``: the node's own torch, in a child process."""

    outcome: Literal["ok", "failed", "crashed", "hung", "no_torch"]
    torch_version: str | None = None
    cuda_available: bool | None = None
    device_count: int | None = None
    gemms: tuple[GemmRun, ...] = ()
    signal: str | None = None  # "SIGFPE" when the child died of a signal
    allreduce: Literal["ok", "error", "hung", "skipped"] | None = None
    allreduce_detail: str | None = None
    nccl_warnings: tuple[str, ...] = ()  # NCCL WARN lines captured with NCCL_DEBUG=WARN
    reason: str | None = None


@dataclass(frozen=True)
class DeepInfo:
    cuda: CudaDriverCheck | None = None
    health: NvmlHealth | None = None
    health_reason: str | None = None  # why NVML health is missing
    pcie: PcieTopology | None = None
    torch: TorchSmoke | None = None
    steps: tuple[Step, ...] = ()
