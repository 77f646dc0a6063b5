"""A fake ``pynvml`` (nvidia-ml-py) for tests: the same names, errors and shapes, no GPU.

The scenario is read at ``nvmlInit()`` time from ``FAKE_PYNVML_SCENARIO`` (a name from
``nvml_scenarios.SCENARIOS``) or ``FAKE_PYNVML_JSON`` (a path to a JSON scenario), so the
module works both in-process (monkeypatched into sys.modules) and on PYTHONPATH of a subprocess.
"""

from __future__ import annotations

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
