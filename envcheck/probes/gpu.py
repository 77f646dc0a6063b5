"""GPU and driver: NVML first; then /proc and /sys for the driver and nvidia-smi for the GPUs.

Every NVML call that fails leaves its field unknown; nothing here raises to the caller.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import Any

from envcheck.model.report import Gpu, GpuInfo
from envcheck.model.section import Section
from envcheck.patterns import lazy
from envcheck.probes.context import ProbeContext
from envcheck.probes.run import run, which

_MIB = 1024 * 1024


def hash_uuid(uuid: str) -> str:
    """GPU UUIDs identify hardware; reports carry a short stable hash instead."""
    # the interpreter's own SHA-256 (the same digest): hashlib loads OpenSSL's libcrypto,
    # which every `check` on a GPU node paid for these few bytes
    from envcheck.cachefiles import sha256

    return sha256(uuid.strip().encode()).hexdigest()[:12]


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def cuda_version_from_int(value: int) -> str | None:
    """NVML/cuDriverGetVersion encode CUDA 12.4 as 12040."""
    if value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def probe_gpu(ctx: ProbeContext) -> Section[GpuInfo]:
    from envcheck.probes import bounded

    started = time.monotonic()
    outcome = bounded.call(lambda: _probe_nvml(ctx.env), ctx.timeout, "nvml")
    if not outcome.done:
        # nvidia-smi answers through the same NVML: it would hang too; the driver files do not
        reason = f"NVML did not answer within {round(ctx.timeout, 1):g} s (a wedged driver?)"
        return _probe_fallback(ctx, nvml_reason=reason, try_smi=False)
    if outcome.error is not None:
        exc = outcome.error
        if not isinstance(exc, Exception):
            raise exc
        nvml: GpuInfo | str = f"NVML failed: {type(exc).__name__}: {exc}"
    else:
        nvml = outcome.value if outcome.value is not None else "NVML gave nothing"
    if isinstance(nvml, GpuInfo):
        return Section.ok(nvml, source="nvml")
    left = max(0.1, ctx.timeout - (time.monotonic() - started))
    return _probe_fallback(ctx, nvml_reason=nvml, budget=left)


# --- NVML -------------------------------------------------------------------------------------


def _nvml_error_reason(pynvml: Any, exc: Exception) -> str:
    code = getattr(exc, "value", None)
    if code == getattr(pynvml, "NVML_ERROR_LIBRARY_NOT_FOUND", 12):
        return "NVML library (libnvidia-ml.so.1) not found"
    if code == getattr(pynvml, "NVML_ERROR_DRIVER_NOT_LOADED", 9):
        return "NVIDIA driver not loaded"
    return f"NVML: {exc}" if str(exc) else f"NVML error {code}"


def _probe_nvml(env: Mapping[str, str] | None = None) -> GpuInfo | str:
    """GpuInfo from NVML, or the reason NVML could not be used."""
    if _library_surely_absent(env):
        return "NVML library (libnvidia-ml.so.1) not found"
    try:
        import pynvml
    except ImportError as exc:
        return f"nvidia-ml-py not importable ({exc})"
    nvml_error: type[Exception] = getattr(pynvml, "NVMLError", Exception)
    try:
        problem = _load_nvml(pynvml, env)
        if problem is not None:
            return problem
        pynvml.nvmlInit()
    except nvml_error as exc:
        return _nvml_error_reason(pynvml, exc)
    except OSError as exc:
        return f"NVML could not be loaded ({exc})"
    try:
        return _read_nvml(pynvml, nvml_error)
    finally:
        with contextlib.suppress(nvml_error):
            pynvml.nvmlShutdown()


def _library_surely_absent(env: Mapping[str, str] | None) -> bool:
    """What ``_load_nvml`` would say on a node without the driver's library, said without
    importing nvidia-ml-py (its ``ctypes.util`` brings subprocess, tempfile and random: about
    25 ms of every ``check`` on a node with no GPU): when its module is not imported yet, is
    nvidia-ml-py's own (it loads only the library envcheck hands it, ``nvmlLib = None`` until
    then) and there is no ``libnvidia-ml.so.1`` to hand it. Any other module (a test's fake,
    another package's ``pynvml``) is imported and asked, as before."""
    import sys

    if "pynvml" in sys.modules:
        return False
    from envcheck.probes.libpath import find_library

    if find_library("libnvidia-ml.so.1", env) is not None:
        return False
    import importlib.util

    try:
        spec = importlib.util.find_spec("pynvml")
    except (ImportError, ValueError):
        return False
    origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith(".py"):
        return False
    try:
        with open(origin, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4 * 1024 * 1024)
    except OSError:
        return False
    return "\nnvmlLib = None\n" in text


def _load_nvml(pynvml: Any, env: Mapping[str, str] | None) -> str | None:
    """nvidia-ml-py loads ``libnvidia-ml.so.1`` by bare name (searching the working directory
    for an empty ``LD_LIBRARY_PATH`` component): hand it the library by absolute path instead
    (``probes.libpath``), or say it is missing."""
    if getattr(pynvml, "nvmlLib", False) is not None:
        return None  # loaded already, or not nvidia-ml-py's module layout
    import ctypes

    from envcheck.probes.libpath import find_library

    path = find_library("libnvidia-ml.so.1", env)
    if path is None:
        return "NVML library (libnvidia-ml.so.1) not found"
    pynvml.nvmlLib = ctypes.CDLL(path)
    return None


def _call(nvml_error: type[Exception], fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except nvml_error:
        return None


def _read_nvml(pynvml: Any, nvml_error: type[Exception]) -> GpuInfo | str:
    driver = _call(nvml_error, pynvml.nvmlSystemGetDriverVersion)
    cuda_int = None
    for name in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
        fn = getattr(pynvml, name, None)
        if fn is not None:
            cuda_int = _call(nvml_error, fn)
            if cuda_int:
                break
    nvml_version = _call(nvml_error, pynvml.nvmlSystemGetNVMLVersion)
    try:
        count = int(pynvml.nvmlDeviceGetCount())
    except nvml_error as exc:
        return GpuInfo(
            driver_version=_text(driver) if driver else None,
            cuda_driver_version=cuda_version_from_int(int(cuda_int)) if cuda_int else None,
            nvml_version=_text(nvml_version) if nvml_version else None,
            driver_source="nvml",
            gpus=None,
            gpus_reason=_nvml_error_reason(pynvml, exc),
        )
    gpus = tuple(_read_device(pynvml, nvml_error, i) for i in range(count))
    return GpuInfo(
        driver_version=_text(driver) if driver else None,
        cuda_driver_version=cuda_version_from_int(int(cuda_int)) if cuda_int else None,
        nvml_version=_text(nvml_version) if nvml_version else None,
        driver_source="nvml",
        gpus=gpus,
    )


def _read_device(pynvml: Any, nvml_error: type[Exception], index: int) -> Gpu:
    handle = _call(nvml_error, pynvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return Gpu(index=index)
    name = _call(nvml_error, pynvml.nvmlDeviceGetName, handle)
    uuid = _call(nvml_error, pynvml.nvmlDeviceGetUUID, handle)
    cc = _call(nvml_error, pynvml.nvmlDeviceGetCudaComputeCapability, handle)
    mem = _call(nvml_error, pynvml.nvmlDeviceGetMemoryInfo, handle)
    persistence = _call(nvml_error, pynvml.nvmlDeviceGetPersistenceMode, handle)
    procs = None
    for fn_name in (
        "nvmlDeviceGetComputeRunningProcesses",
        "nvmlDeviceGetComputeRunningProcesses_v2",
    ):
        fn = getattr(pynvml, fn_name, None)
        if fn is not None:
            procs = _call(nvml_error, fn, handle)
            if procs is not None:
                break
    graphics = None
    if hasattr(pynvml, "nvmlDeviceGetGraphicsRunningProcesses"):
        graphics = _call(nvml_error, pynvml.nvmlDeviceGetGraphicsRunningProcesses, handle)
    process_count = process_mib = None
    if procs is not None or graphics is not None:
        by_pid: dict[int, int] = {}
        for proc in list(procs or []) + list(graphics or []):
            used = getattr(proc, "usedGpuMemory", None)
            by_pid[int(proc.pid)] = max(by_pid.get(int(proc.pid), 0), int(used or 0))
        process_count = len(by_pid)
        process_mib = sum(by_pid.values()) // _MIB
    return Gpu(
        index=index,
        name=_text(name) if name is not None else None,
        uuid_hash=hash_uuid(_text(uuid)) if uuid else None,
        compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
        memory_total_mib=int(mem.total) // _MIB if mem is not None else None,
        memory_used_mib=int(mem.used) // _MIB if mem is not None else None,
        persistence_mode=bool(persistence) if persistence is not None else None,
        process_count=process_count,
        process_memory_mib=process_mib,
    )


# --- fallbacks: /proc, /sys, nvidia-smi ---------------------------------------------------------

_PROC_VERSION = lazy(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")
_QUERY_FIELDS = (
    "index",
    "name",
    "uuid",
    "driver_version",
    "memory.total",
    "memory.used",
    "persistence_mode",
    "compute_cap",
)


def driver_from_files(ctx: ProbeContext) -> tuple[str | None, str | None]:
    """(driver version, file it came from) from /proc/driver/nvidia/version or /sys/module."""
    text = ctx.read_text("/proc/driver/nvidia/version")
    if text:
        match = _PROC_VERSION.search(text)
        if match:
            return match.group(1), "/proc/driver/nvidia/version"
    text = ctx.read_text("/sys/module/nvidia/version")
    if text and text.strip():
        return text.strip(), "/sys/module/nvidia/version"
    return None, None


def _na(value: str) -> str | None:
    value = value.strip()
    if not value or value.startswith("[") or value in ("N/A", "Unknown Error"):
        return None
    return value


def _int_or_none(value: str) -> int | None:
    value_na = _na(value)
    try:
        return int(float(value_na)) if value_na is not None else None
    except ValueError:
        return None


def parse_query_gpu(text: str, fields: tuple[str, ...]) -> list[dict[str, str | None]]:
    """Rows of ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(fields):
            continue
        rows.append({f: _na(v) for f, v in zip(fields, values, strict=True)})
    return rows


def gpus_from_rows(rows: list[dict[str, str | None]]) -> tuple[str | None, tuple[Gpu, ...]]:
    driver = None
    gpus = []
    for position, row in enumerate(rows):
        driver = driver or row.get("driver_version")
        persistence = row.get("persistence_mode")
        uuid = row.get("uuid")
        index = _int_or_none(row.get("index") or "")
        gpus.append(
            Gpu(
                index=index if index is not None else position,
                name=row.get("name"),
                uuid_hash=hash_uuid(uuid) if uuid else None,
                compute_capability=row.get("compute_cap"),
                memory_total_mib=_int_or_none(row.get("memory.total") or ""),
                memory_used_mib=_int_or_none(row.get("memory.used") or ""),
                persistence_mode=(persistence.lower() == "enabled") if persistence else None,
            )
        )
    return driver, tuple(gpus)


def _nvidia_smi(ctx: ProbeContext, deadline: float) -> tuple[str | None, tuple[Gpu, ...]] | str:
    exe = which("nvidia-smi", ctx.env)
    if exe is None:
        return "nvidia-smi not on PATH"
    fields: tuple[str, ...] = _QUERY_FIELDS
    for _attempt in range(2):
        remaining = max(0.1, deadline - time.monotonic())
        result = run(
            [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            timeout=remaining,
            env=ctx.env,
        )
        if result.ok:
            return gpus_from_rows(parse_query_gpu(result.stdout, fields))
        if result.problem is None and "compute_cap" in (result.stdout + result.stderr):
            fields = tuple(f for f in fields if f != "compute_cap")  # drivers before 510
            continue
        return f"nvidia-smi {result.describe_failure()}"
    return "nvidia-smi rejected the query"


def _probe_fallback(
    ctx: ProbeContext, *, nvml_reason: str, try_smi: bool = True, budget: float | None = None
) -> Section[GpuInfo]:
    deadline = time.monotonic() + (ctx.timeout if budget is None else budget)
    driver, driver_file = driver_from_files(ctx)
    smi = _nvidia_smi(ctx, deadline) if try_smi else "nvidia-smi not tried (NVML hung)"
    if isinstance(smi, str):
        if driver is None:
            why = f"{nvml_reason}; no /proc/driver/nvidia/version; {smi}"
            return Section.unavailable(why, source="nvml, /proc, nvidia-smi")
        info = GpuInfo(driver_version=driver, driver_source=driver_file, gpus_reason=smi)
        return Section.ok(info, source=driver_file, notes=(nvml_reason,))
    smi_driver, gpus = smi
    info = GpuInfo(
        driver_version=driver or smi_driver,
        driver_source=driver_file or "nvidia-smi",
        gpus=gpus,
    )
    notes = (nvml_reason, "CUDA driver version is not reported without NVML")
    return Section.ok(info, source="nvidia-smi", notes=notes)
