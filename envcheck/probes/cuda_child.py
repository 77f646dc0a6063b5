"""Run in a child process (``python cuda_child.py``): load libcuda with ctypes and ask the driver.

Standard library only, so it runs in any interpreter. One JSON object per line on stdout, flushed
before and after every driver call: when a call never returns (a wedged driver), the parent kills
this process and the last ``begin`` line names the call that hung. ``ENVCHECK_LIBCUDA`` names the
library to load by absolute path (the parent finds ``libcuda.so.1`` with probes/libpath.py); none
is reported as no driver, never looked up by bare name.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from typing import Any


def _emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _loaded_from(marker: str = "libcuda") -> str | None:
    """The file the dynamic loader mapped for libcuda, read from this process's maps."""
    try:
        with open(f"/proc/{os.getpid()}/maps", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                parts = line.split(None, 5)
                if len(parts) == 6 and marker in parts[5].rsplit("/", 1)[-1]:
                    return parts[5].strip()
    except OSError:
        return None
    return None


class _Driver:
    def __init__(self, lib: Any) -> None:
        self.lib = lib

    def name(self, code: int) -> str | None:
        text = ctypes.c_char_p()
        try:
            if self.lib.cuGetErrorName(code, ctypes.byref(text)) == 0 and text.value:
                return text.value.decode("ascii", "replace")
        except AttributeError:
            return None
        return None

    def call(self, call: str, fn: Any, *args: Any, device: int | None = None) -> int:
        _emit(event="begin", call=call, device=device)
        start = time.perf_counter()
        result = int(fn(*args))
        ms = round((time.perf_counter() - start) * 1000, 3)
        name = self.name(result) if result else "CUDA_SUCCESS"
        _emit(event="end", call=call, device=device, result=result, name=name, ms=ms)
        return result


def main() -> int:
    # by absolute path only (the parent resolves it, probes/libpath.py): a bare name would be
    # searched in the working directory for an empty LD_LIBRARY_PATH component
    path = os.environ.get("ENVCHECK_LIBCUDA") or ""
    if not os.path.isabs(path):
        _emit(event="load_error", library="libcuda.so.1", error="not found")
        return 0
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        _emit(event="load_error", library=path, error=str(exc))
        return 0
    mapped = _loaded_from()
    _emit(event="loaded", library=mapped or path, realpath=os.path.realpath(mapped or path))
    drv = _Driver(lib)
    if drv.call("cuInit", lib.cuInit, 0) != 0:
        return 0
    version = ctypes.c_int(0)
    if drv.call("cuDriverGetVersion", lib.cuDriverGetVersion, ctypes.byref(version)) == 0:
        _emit(event="value", key="driver_api_version", value=version.value)
    count = ctypes.c_int(0)
    if drv.call("cuDeviceGetCount", lib.cuDeviceGetCount, ctypes.byref(count)) != 0:
        return 0
    _emit(event="value", key="device_count", value=count.value)
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        if drv.call("cuDeviceGet", lib.cuDeviceGet, ctypes.byref(device), ordinal, device=ordinal):
            continue
        name = ctypes.create_string_buffer(256)
        if lib.cuDeviceGetName(name, 256, device) == 0:
            _emit(event="value", key="device_name", device=ordinal, value=name.value.decode())
        ctx = ctypes.c_void_p()
        retain = lib.cuDevicePrimaryCtxRetain
        if drv.call("cuDevicePrimaryCtxRetain", retain, ctypes.byref(ctx), device, device=ordinal):
            continue
        release = getattr(lib, "cuDevicePrimaryCtxRelease_v2", None)
        (release or lib.cuDevicePrimaryCtxRelease)(device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
