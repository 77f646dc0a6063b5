"""A fake ``pynvml`` (nvidia-ml-py) for tests: the same names, errors and shapes, no GPU.

The scenario is read at ``nvmlInit()`` time from ``FAKE_PYNVML_SCENARIO`` (a name from
``nvml_scenarios.SCENARIOS``) or ``FAKE_PYNVML_JSON`` (a path to a JSON scenario), so the
module works both in-process (monkeypatched into sys.modules) and on PYTHONPATH of a subprocess.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
from nvml_scenarios import SCENARIOS

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_UNKNOWN = 999

_STRINGS = {
    1: "Uninitialized",
    2: "Invalid Argument",
    3: "Not Supported",
    4: "Insufficient Permissions",
    6: "Not Found",
    9: "Driver Not Loaded",
    10: "Timeout",
    12: "NVML Shared Library Not Found",
    13: "Function Not Found",
    15: "GPU is lost",
    18: "RM has detected an NVML/RM version mismatch.",
    999: "Unknown Error",
}


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _STRINGS.get(self.value, f"NVML error {self.value}")


class NVMLError_LibraryNotFound(NVMLError):
    pass


_state: dict[str, Any] = {"scenario": None}


def _scenario() -> dict[str, Any]:
    if _state["scenario"] is None:
        raise NVMLError(NVML_ERROR_UNINITIALIZED)
    return _state["scenario"]


def _load() -> dict[str, Any]:
    path = os.environ.get("FAKE_PYNVML_JSON")
    if path:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    return SCENARIOS[os.environ.get("FAKE_PYNVML_SCENARIO", "none")]


def _maybe_fail(name: str, device: dict[str, Any] | None = None) -> None:
    errors = (device or _scenario()).get("errors", {})
    if name in errors:
        raise NVMLError(errors[name])


def _maybe_hang(name: str) -> None:
    """``FAKE_PYNVML_HANG=<function>``: that call never returns (a wedged driver)."""
    if os.environ.get("FAKE_PYNVML_HANG") == name:
        while True:
            time.sleep(3600)


def nvmlInit() -> None:
    _maybe_hang("nvmlInit")
    scenario = _load()
    code = scenario.get("init_error")
    if code == NVML_ERROR_LIBRARY_NOT_FOUND:
        raise NVMLError_LibraryNotFound(code)
    if code:
        raise NVMLError(code)
    _state["scenario"] = scenario


def nvmlShutdown() -> None:
    _state["scenario"] = None


def nvmlSystemGetDriverVersion() -> str:
    _maybe_fail("nvmlSystemGetDriverVersion")
    return _scenario()["driver"]


def nvmlSystemGetCudaDriverVersion_v2() -> int:
    _maybe_fail("nvmlSystemGetCudaDriverVersion_v2")
    return _scenario()["cuda"]


def nvmlSystemGetCudaDriverVersion() -> int:
    return _scenario()["cuda"]


def nvmlSystemGetNVMLVersion() -> str:
    return "12." + _scenario()["driver"]


def nvmlDeviceGetCount() -> int:
    _maybe_fail("nvmlDeviceGetCount")
    return len(_scenario()["devices"])


def nvmlDeviceGetHandleByIndex(index: int) -> dict[str, Any]:
    devices = _scenario()["devices"]
    if index >= len(devices):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return devices[index]


def nvmlDeviceGetName(handle: dict[str, Any]) -> str:
    _maybe_hang("nvmlDeviceGetName")
    _maybe_fail("nvmlDeviceGetName", handle)
    return handle["name"]


def nvmlDeviceGetUUID(handle: dict[str, Any]) -> str:
    _maybe_fail("nvmlDeviceGetUUID", handle)
    return handle["uuid"]


def nvmlDeviceGetCudaComputeCapability(handle: dict[str, Any]) -> tuple[int, int]:
    _maybe_fail("nvmlDeviceGetCudaComputeCapability", handle)
    return tuple(handle["cc"])  # type: ignore[return-value]


def nvmlDeviceGetMemoryInfo(handle: dict[str, Any], version: Any = None) -> SimpleNamespace:
    _maybe_fail("nvmlDeviceGetMemoryInfo", handle)
    total, used = handle["memory_total"], handle["memory_used"]
    return SimpleNamespace(total=total, used=used, free=total - used)


def nvmlDeviceGetPersistenceMode(handle: dict[str, Any]) -> int:
    _maybe_fail("nvmlDeviceGetPersistenceMode", handle)
    return handle["persistence"]


def nvmlDeviceGetComputeRunningProcesses(handle: dict[str, Any]) -> list[SimpleNamespace]:
    _maybe_fail("nvmlDeviceGetComputeRunningProcesses", handle)
    return [
        SimpleNamespace(pid=p["pid"], usedGpuMemory=p["memory"])
        for p in handle.get("processes", [])
    ]


def nvmlDeviceGetGraphicsRunningProcesses(handle: dict[str, Any]) -> list[SimpleNamespace]:
    _maybe_fail("nvmlDeviceGetGraphicsRunningProcesses", handle)
    return [
        SimpleNamespace(pid=p["pid"], usedGpuMemory=p["memory"]) for p in handle.get("graphics", [])
    ]


# --- health queries (--deep) ------------------------------------------------------------------
# A device's "health" table gives the answers; a query whose key is absent raises
# NVML_ERROR_NOT_SUPPORTED, as NVML does on GPUs without the feature; "errors" still applies.

NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
NVML_NVLINK_MAX_LINKS = 18
NVML_P2P_CAPS_INDEX_READ = 0
NVML_FEATURE_DISABLED = 0
NVML_FEATURE_ENABLED = 1


def _health(handle: dict[str, Any], name: str, key: str) -> Any:
    _maybe_fail(name, handle)
    if _scenario().get("hang_in") == name:
        import time

        pidfile = os.environ.get("FAKE_PYNVML_PIDFILE")
        if pidfile:
            with open(pidfile, "w", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
        while True:
            time.sleep(3600)
    health = handle.get("health", {})
    if key not in health:
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
    return health[key]


def nvmlDeviceGetTotalEccErrors(handle: dict[str, Any], error_type: int, counter: int) -> int:
    key = "ecc_volatile" if counter == NVML_VOLATILE_ECC else "ecc_aggregate"
    counts = _health(handle, "nvmlDeviceGetTotalEccErrors", key)
    return int(counts[error_type])  # [corrected, uncorrected]


def nvmlDeviceGetRetiredPagesPendingStatus(handle: dict[str, Any]) -> int:
    return int(_health(handle, "nvmlDeviceGetRetiredPagesPendingStatus", "retired_pending"))


def nvmlDeviceGetRetiredPages(handle: dict[str, Any], cause: int) -> list[int]:
    return list(_health(handle, "nvmlDeviceGetRetiredPages", "retired_dbe_pages"))


def nvmlDeviceGetRemappedRows(handle: dict[str, Any]) -> tuple[int, int, int, int]:
    rows = _health(handle, "nvmlDeviceGetRemappedRows", "remapped_rows")
    return tuple(rows)  # type: ignore[return-value]  # (corrected, uncorrected, pending, failure)


def nvmlDeviceGetCurrentClocksEventReasons(handle: dict[str, Any]) -> int:
    return int(_health(handle, "nvmlDeviceGetCurrentClocksEventReasons", "clocks_event_reasons"))


def nvmlDeviceGetMigMode(handle: dict[str, Any]) -> list[int]:
    return list(_health(handle, "nvmlDeviceGetMigMode", "mig"))  # [current, pending]


def nvmlDeviceGetCurrPcieLinkGeneration(handle: dict[str, Any]) -> int:
    return int(_health(handle, "nvmlDeviceGetCurrPcieLinkGeneration", "pcie")[0])


def nvmlDeviceGetMaxPcieLinkGeneration(handle: dict[str, Any]) -> int:
    return int(_health(handle, "nvmlDeviceGetMaxPcieLinkGeneration", "pcie")[1])


def nvmlDeviceGetCurrPcieLinkWidth(handle: dict[str, Any]) -> int:
    return int(_health(handle, "nvmlDeviceGetCurrPcieLinkWidth", "pcie")[2])


def nvmlDeviceGetMaxPcieLinkWidth(handle: dict[str, Any]) -> int:
    return int(_health(handle, "nvmlDeviceGetMaxPcieLinkWidth", "pcie")[3])


def nvmlDeviceGetNvLinkState(handle: dict[str, Any], link: int) -> int:
    links = _health(handle, "nvmlDeviceGetNvLinkState", "nvlinks")
    if link >= len(links):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return int(links[link])


class c_nvmlGpuFabricInfo_t(ctypes.Structure):
    _fields_ = [
        ("clusterUuid", ctypes.c_uint8 * 16),
        ("status", ctypes.c_uint),
        ("cliqueId", ctypes.c_uint32),
        ("state", ctypes.c_uint),
    ]


def nvmlDeviceGetGpuFabricInfo(handle: dict[str, Any], info_ref: Any) -> int:
    """Like the real one: the struct must come by reference (ctypes.byref)."""
    state, status = _health(handle, "nvmlDeviceGetGpuFabricInfo", "fabric")
    info = info_ref._obj  # AttributeError for a struct passed by value, as ctypes would misbehave
    info.state, info.status = state, status
    return NVML_SUCCESS


def nvmlDeviceGetP2PStatus(a: dict[str, Any], b: dict[str, Any], index: int) -> int:
    _maybe_fail("nvmlDeviceGetP2PStatus")
    matrix = _scenario().get("p2p")
    if matrix is None:
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
    devices = _scenario()["devices"]
    return int(matrix[devices.index(a)][devices.index(b)])


def nvmlDeviceGetPciInfo(handle: dict[str, Any]) -> SimpleNamespace:
    _maybe_fail("nvmlDeviceGetPciInfo", handle)
    return SimpleNamespace(busId=handle.get("bus_id", "00000000:18:00.0").encode())
