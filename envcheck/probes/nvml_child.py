"""Run in a child process (``python nvml_child.py``): NVML health of every GPU, one JSON line each.

Uses nvidia-ml-py's ``pynvml`` names. A query NVML answers with NVML_ERROR_NOT_SUPPORTED becomes
the value "not supported"; any other NVML error is recorded by query name. The parent bounds the
whole child with its timeout and kills its process group, so a hung NVML cannot hang envcheck.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
from typing import Any

NOT_SUPPORTED = "not supported"
_MIB = 1024 * 1024
_FABRIC = {0: "not supported", 1: "not started", 2: "in progress", 3: "completed"}
_P2P = {
    0: "ok",
    1: "chipset not supported",
    2: "gpu not supported",
    3: "topology not supported",
    4: "disabled by regkey",
    5: "not supported",
    6: "unknown",
}


def _emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class _Query:
    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        self.error: type[Exception] = getattr(nvml, "NVMLError", Exception)
        self.not_supported = getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", 3)
        self.errors: dict[str, str] = {}

    def __call__(self, name: str, *args: Any) -> Any:
        fn = getattr(self.nvml, name, None)
        if fn is None:
            return NOT_SUPPORTED  # this nvidia-ml-py predates the query
        try:
            return fn(*args)
        except self.error as exc:
            code = getattr(exc, "value", None)
            if code == self.not_supported or code == getattr(
                self.nvml, "NVML_ERROR_FUNCTION_NOT_FOUND", 13
            ):
                return NOT_SUPPORTED
            self.errors[name] = f"{exc} (NVML error {code})"
            return None


def _num(value: Any) -> Any:
    return value if value is None or value == NOT_SUPPORTED else int(value)


def _flag(value: Any) -> Any:
    return value if value is None or value == NOT_SUPPORTED else bool(value)


def _throttle(nvml: Any, mask: Any) -> Any:
    if mask is None or mask == NOT_SUPPORTED:
        return mask
    mask = int(mask)
    return {
        "hw_slowdown": bool(mask & 0x08),
        "hw_thermal": bool(mask & 0x40),
        "sw_thermal": bool(mask & 0x20),
        "power_brake": bool(mask & 0x80),
        "sw_power_cap": bool(mask & 0x04),
        "mask": mask,
    }


def _nvlinks(nvml: Any, q: _Query, handle: Any) -> tuple[int | None, list[int]]:
    active, inactive = 0, []
    for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
        state = q("nvmlDeviceGetNvLinkState", handle, link)
        q.errors.pop("nvmlDeviceGetNvLinkState", None)  # links past the last answer with errors
        if state is None or state == NOT_SUPPORTED:
            break
        if state:
            active += 1
        else:
            inactive.append(link)
    if active == 0 and not inactive:
        return None, []
    return active, inactive


def _fabric(nvml: Any, q: _Query, handle: Any) -> tuple[str | None, int | None]:
    struct = getattr(nvml, "c_nvmlGpuFabricInfo_t", None)
    if struct is None:
        return NOT_SUPPORTED, None
    info = struct()
    # the C function fills the struct through a pointer: pynvml passes the argument as given
    if q("nvmlDeviceGetGpuFabricInfo", handle, ctypes.byref(info)) in (None, NOT_SUPPORTED):
        return NOT_SUPPORTED, None
    return _FABRIC.get(int(info.state), f"state {int(info.state)}"), int(info.status)


def _processes(q: _Query, handle: Any) -> tuple[int | None, int | None]:
    seen: dict[int, int] = {}
    known = False
    for name in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        procs = q(name, handle)
        if procs is None or procs == NOT_SUPPORTED:
            continue
        known = True
        for proc in procs:
            used = int(getattr(proc, "usedGpuMemory", 0) or 0)
            seen[int(proc.pid)] = max(seen.get(int(proc.pid), 0), used)
    if not known:
        return None, None
    return len(seen), sum(seen.values()) // _MIB


def _device(nvml: Any, index: int) -> tuple[Any, dict[str, Any]]:
    q = _Query(nvml)
    handle = q("nvmlDeviceGetHandleByIndex", index)
    if handle is None or handle == NOT_SUPPORTED:
        return None, {"index": index, "errors": q.errors}
    volatile, aggregate = (
        getattr(nvml, "NVML_VOLATILE_ECC", 0),
        getattr(nvml, "NVML_AGGREGATE_ECC", 1),
    )
    uncorrected = getattr(nvml, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
    remap = q("nvmlDeviceGetRemappedRows", handle)
    remap_ok = isinstance(remap, (tuple, list))
    dbe = q(
        "nvmlDeviceGetRetiredPages", handle, 1
    )  # NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
    mig = q("nvmlDeviceGetMigMode", handle)
    mask = q("nvmlDeviceGetCurrentClocksEventReasons", handle)
    if mask == NOT_SUPPORTED:
        mask = q("nvmlDeviceGetCurrentClocksThrottleReasons", handle)
    active, inactive = _nvlinks(nvml, q, handle)
    fabric_state, fabric_status = _fabric(nvml, q, handle)
    count, mib = _processes(q, handle)
    pci = q("nvmlDeviceGetPciInfo", handle)
    bus_id = getattr(pci, "busId", None) if pci not in (None, NOT_SUPPORTED) else None
    if isinstance(bus_id, bytes):
        bus_id = bus_id.decode("ascii", "replace")
    return handle, {
        "index": index,
        "ecc_volatile_uncorrected": _num(
            q("nvmlDeviceGetTotalEccErrors", handle, uncorrected, volatile)
        ),
        "ecc_aggregate_uncorrected": _num(
            q("nvmlDeviceGetTotalEccErrors", handle, uncorrected, aggregate)
        ),
        "retired_pages_pending": _flag(q("nvmlDeviceGetRetiredPagesPendingStatus", handle)),
        "retired_pages_dbe": len(dbe) if isinstance(dbe, (list, tuple)) else dbe,
        "remapped_rows_uncorrectable": int(remap[1]) if remap_ok else remap,
        "remap_pending": bool(remap[2]) if remap_ok else remap,
        "remap_failure": bool(remap[3]) if remap_ok else remap,
        "throttle": _throttle(nvml, mask),
        "persistence_mode": _flag(q("nvmlDeviceGetPersistenceMode", handle)),
        "mig_mode": _flag(mig[0]) if isinstance(mig, (list, tuple)) else mig,
        "pcie_gen": _num(q("nvmlDeviceGetCurrPcieLinkGeneration", handle)),
        "pcie_gen_max": _num(q("nvmlDeviceGetMaxPcieLinkGeneration", handle)),
        "pcie_width": _num(q("nvmlDeviceGetCurrPcieLinkWidth", handle)),
        "pcie_width_max": _num(q("nvmlDeviceGetMaxPcieLinkWidth", handle)),
        "nvlink_active": active,
        "nvlink_inactive": inactive,
        "fabric_state": fabric_state,
        "fabric_status": fabric_status,
        "process_count": count,
        "process_memory_mib": mib,
        "pci_bus_id": bus_id,
        "errors": q.errors,
    }


def _drop_script_dir() -> None:
    """Running as ``python path/to/this.py`` puts envcheck/probes first on sys.path, where its
    modules (gpu, system, network...) would shadow what the code under test imports."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]


def main() -> int:
    _drop_script_dir()
    try:
        import pynvml as nvml
    except ImportError as exc:
        _emit(event="unavailable", reason=f"nvidia-ml-py not importable ({exc})")
        return 0
    if getattr(nvml, "nvmlLib", False) is None:
        # nvidia-ml-py would load the library by bare name: give it the absolute path the
        # parent resolved (probes/libpath.py), never a search of the working directory
        path = os.environ.get("ENVCHECK_LIBNVML") or ""
        if not os.path.isabs(path):
            _emit(event="unavailable", reason="NVML library (libnvidia-ml.so.1) not found")
            return 0
        try:
            nvml.nvmlLib = ctypes.CDLL(path)
        except OSError as exc:
            _emit(event="unavailable", reason=f"NVML: {exc}")
            return 0
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError or OSError: the reason is the answer
        _emit(event="unavailable", reason=f"NVML: {exc}")
        return 0
    try:
        count = int(nvml.nvmlDeviceGetCount())
        handles = []
        for index in range(count):
            handle, health = _device(nvml, index)
            handles.append(handle)
            _emit(event="gpu", health=health)
        q = _Query(nvml)
        read = getattr(nvml, "NVML_P2P_CAPS_INDEX_READ", 0)
        for a in range(count):
            for b in range(a + 1, count):
                if handles[a] is None or handles[b] is None:
                    continue
                status = q("nvmlDeviceGetP2PStatus", handles[a], handles[b], read)
                if status is not None and status != NOT_SUPPORTED:
                    _emit(event="p2p", a=a, b=b, status=_P2P.get(int(status), str(status)))
    except Exception as exc:
        _emit(event="error", reason=f"{type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
