"""``--deep``: ask the CUDA driver and NVML instead of inferring from versions.

Each step runs in a child process with its own process group and deadline (``ctx.timeout`` for
the driver and NVML, ``ctx.torch_timeout`` for the torch smoke test); the steps run side by side,
so the driver and NVML together add at most ``ctx.timeout`` to a probe whatever the driver does.
Outputs are parsed into facts (model/deep.py); rules/node/gpu_health.py and rules/node/gpu_cuda.py read them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envcheck.errors import CodecError
from envcheck.model.codec import from_dict
from envcheck.model.deep import (
    CudaCall,
    CudaDriverCheck,
    DeepInfo,
    GemmRun,
    GpuHealth,
    NvmlHealth,
    P2PLink,
    PcieTopology,
    Step,
    TorchSmoke,
)
from envcheck.model.section import Section
from envcheck.probes.child import ChildResult, run_child
from envcheck.probes.context import ProbeContext

# GEMMs of the torch smoke test: (dtype, m, k, n, why). The known crash comes last: it kills the
# child when it reproduces. pytorch#152017 states the exact shape ("The args must be that exact
# size"): torch.matmul of fp16 (64, 14688) x (14688, 1536) dies with SIGFPE on H20 with torch
# 2.1.0+cu121, whose pinned cuBLAS is 12.1.3.1 (CUD102 in matrices/cuda/known_bad.toml).
SMOKE_GEMMS: tuple[tuple[str, int, int, int, str], ...] = (
    ("float16", 1024, 1024, 1024, "smoke"),
    ("bfloat16", 1024, 1024, 1024, "smoke"),
    ("float32", 1024, 1024, 1024, "smoke"),
    ("tf32", 1024, 1024, 1024, "smoke"),
)
KNOWN_CRASH_GEMMS: tuple[tuple[str, int, int, int, str], ...] = (
    ("float16", 64, 14688, 1536, "CUD102: https://github.com/pytorch/pytorch/issues/152017"),
)
_LIBCUDA_VERSION = re.compile(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$")


def _child_env(ctx: ProbeContext, *, with_pynvml: bool = False) -> dict[str, str]:
    """The children's environment: the libraries they load named by absolute path
    (``ENVCHECK_LIBCUDA``, ``ENVCHECK_LIBNVML``; a relative one given is dropped) and an
    ``LD_LIBRARY_PATH`` without empty or relative components (``probes.libpath``)."""
    from envcheck.probes.libpath import find_library, safe_library_path

    env = dict(ctx.env)
    for var, soname in (
        ("ENVCHECK_LIBCUDA", "libcuda.so.1"),
        ("ENVCHECK_LIBNVML", "libnvidia-ml.so.1"),
    ):
        given = env.get(var, "")
        if given and os.path.isabs(given):
            continue  # named by the caller (tests, a site's driver location): kept as given
        found = find_library(soname, ctx.env)
        if found is None:
            env.pop(var, None)
        else:
            env[var] = found
    if "LD_LIBRARY_PATH" in env:
        env["LD_LIBRARY_PATH"] = safe_library_path(env)
    if with_pynvml:
        # the child must import the same nvidia-ml-py envcheck uses; the node's PYTHONPATH
        # stays first (tests put a fake pynvml there)
        spec = importlib.util.find_spec("pynvml")
        if spec is not None and spec.origin:
            extra = os.path.dirname(spec.origin)
            parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
            env["PYTHONPATH"] = os.pathsep.join([*parts, extra])
    return env


# --- CUDA driver -----------------------------------------------------------------------------


def cuda_from_child(result: ChildResult, timeout: float) -> tuple[CudaDriverCheck, Step]:
    library = realpath = None
    calls: list[CudaCall] = []
    values: dict[str, Any] = {}
    names: dict[int, str] = {}
    pending: dict[str, Any] | None = None
    for event in result.events:
        kind = event.get("event")
        if kind == "load_error":
            reason = f"no NVIDIA driver: {event.get('library')} could not be loaded ({event.get('error')})"
            check = CudaDriverCheck(outcome="no_driver", reason=reason)
            return check, Step("cuda", "unavailable", result.duration_ms, reason)
        if kind == "loaded":
            library, realpath = event.get("library"), event.get("realpath")
        elif kind == "begin":
            pending = event
        elif kind == "end":
            pending = None
            calls.append(
                CudaCall(
                    call=str(event.get("call")),
                    result=int(event["result"]),
                    name=event.get("name"),
                    device=event.get("device"),
                    duration_ms=event.get("ms"),
                )
            )
        elif kind == "value" and event.get("key") == "device_name":
            names[int(event.get("device", 0))] = str(event.get("value"))
        elif kind == "value":
            values[str(event.get("key"))] = event.get("value")
    version = _LIBCUDA_VERSION.search(os.path.basename(realpath or library or ""))
    fields: dict[str, Any] = {
        "library": library,
        "library_version": version.group(1) if version else None,
        "compat": ("compat" in (realpath or library or "").split("/")) if library else None,
        "driver_api_version": values.get("driver_api_version"),
        "device_count": values.get("device_count"),
        "device_names": tuple(names[i] for i in sorted(names)),
    }
    if pending is not None:
        calls.append(
            CudaCall(call=str(pending.get("call")), result=None, device=pending.get("device"))
        )
    if result.start_error:
        check = CudaDriverCheck(outcome="crashed", reason=result.start_error, **fields)
        return check, Step("cuda", "error", result.duration_ms, result.start_error)
    if result.timed_out:
        where = f"{pending.get('call')}" if pending else "the CUDA driver"
        reason = f"{where} did not return within {timeout:g} s; the child was killed"
        check = CudaDriverCheck(outcome="hung", calls=tuple(calls), reason=reason, **fields)
        return check, Step("cuda", "hung", result.duration_ms, reason)
    if result.signal_name or (result.returncode and not calls):
        where = f" in {pending.get('call')}" if pending else ""
        tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
        why = result.signal_name or f"exit code {result.returncode}" + (
            f": {tail[0][:200]}" if tail else ""
        )
        reason = f"the CUDA probe died{where} ({why})"
        check = CudaDriverCheck(outcome="crashed", calls=tuple(calls), reason=reason, **fields)
        return check, Step("cuda", "crashed", result.duration_ms, reason)
    failed = next((c for c in calls if c.result != 0), None)
    if failed is not None:
        reason = f"{failed.call} returned {failed.result} ({failed.name or 'unnamed'})"
        check = CudaDriverCheck(outcome="failed", calls=tuple(calls), reason=reason, **fields)
        return check, Step("cuda", "failed", result.duration_ms, reason)
    check = CudaDriverCheck(outcome="ok", calls=tuple(calls), **fields)
    return check, Step("cuda", "ok", result.duration_ms)


def probe_cuda(ctx: ProbeContext) -> tuple[CudaDriverCheck, Step]:
    result = run_child(
        sys.executable, "cuda_child.py", [], env=_child_env(ctx), timeout=ctx.timeout
    )
    return cuda_from_child(result, ctx.timeout)


# --- NVML health -----------------------------------------------------------------------------


def _nvswitches(ctx: ProbeContext) -> int | None:
    """NVSwitches: the nvswitch driver's device list, else NVIDIA bridges of class 0x0680."""
    try:
        return sum(1 for _ in ctx.path("/proc/driver/nvidia-nvswitch/devices").iterdir())
    except OSError:
        pass
    from envcheck.probes.pcie import nvidia_devices

    found = nvidia_devices(ctx, ("0x0680",))
    return len(found) if found else None


def health_from_child(
    result: ChildResult, timeout: float, nvswitches: int | None
) -> tuple[NvmlHealth | None, str | None, Step]:
    gpus: list[GpuHealth] = []
    links: list[P2PLink] = []
    problems: list[str] = []
    for event in result.events:
        kind = event.get("event")
        if kind == "unavailable":
            reason = str(event.get("reason"))
            return None, reason, Step("nvml_health", "unavailable", result.duration_ms, reason)
        if kind == "gpu":
            try:
                gpus.append(from_dict(GpuHealth, event.get("health"), strict=False))
            except CodecError as exc:
                problems.append(f"GPU health record: {exc.message} at {exc.path}")
        elif kind == "p2p":
            links.append(P2PLink(a=int(event["a"]), b=int(event["b"]), status=str(event["status"])))
        elif kind == "error":
            problems.append(str(event.get("reason")))
    health = NvmlHealth(gpus=tuple(gpus), p2p=tuple(links), nvswitch_count=nvswitches)
    if result.start_error:
        return (
            None,
            result.start_error,
            Step("nvml_health", "error", result.duration_ms, result.start_error),
        )
    if result.timed_out:
        reason = f"NVML did not answer within {timeout:g} s (the child was killed after {len(gpus)} GPU(s))"
        return health, reason, Step("nvml_health", "hung", result.duration_ms, reason)
    if result.signal_name:
        reason = f"the NVML probe died ({result.signal_name})"
        return health, reason, Step("nvml_health", "crashed", result.duration_ms, reason)
    if problems:
        reason = "; ".join(problems)
        return health, reason, Step("nvml_health", "error", result.duration_ms, reason)
    return health, None, Step("nvml_health", "ok", result.duration_ms)


def probe_health(ctx: ProbeContext) -> tuple[NvmlHealth | None, str | None, Step]:
    env = _child_env(ctx, with_pynvml=True)
    result = run_child(sys.executable, "nvml_child.py", [], env=env, timeout=ctx.timeout)
    return health_from_child(result, ctx.timeout, _nvswitches(ctx))


# --- PCIe ------------------------------------------------------------------------------------


def probe_topology(ctx: ProbeContext) -> tuple[PcieTopology | None, Step]:
    from envcheck.probes.pcie import probe_pcie

    start = time.perf_counter()
    try:
        topology = probe_pcie(ctx)
    except Exception as exc:  # a probe never raises
        ms = round((time.perf_counter() - start) * 1000, 2)
        return None, Step("pcie", "error", ms, f"{type(exc).__name__}: {exc}")
    ms = round((time.perf_counter() - start) * 1000, 2)
    note = f"{topology.unreadable} bridge(s) need root to read ACS" if topology.unreadable else None
    return topology, Step("pcie", "ok", ms, note)


# --- torch -----------------------------------------------------------------------------------


def torch_from_child(result: ChildResult, timeout: float) -> tuple[TorchSmoke, Step]:
    info: dict[str, Any] = {}
    gemms: list[GemmRun] = []
    allreduce: dict[str, Any] = {}
    pending: dict[str, Any] | None = None
    for event in result.events:
        kind = event.get("event")
        if kind == "no_torch":
            reason = f"torch not importable: {event.get('detail')}"
            return TorchSmoke(outcome="no_torch", reason=reason), Step(
                "torch", "unavailable", result.duration_ms, reason
            )
        if kind == "begin":
            pending = event
        elif kind == "torch":
            pending, info = None, event
        elif kind == "gemm" and pending is not None:
            gemms.append(
                _gemm_run(
                    pending, event.get("outcome", "error"), event.get("detail"), event.get("ms")
                )
            )
            pending = None
        elif kind == "allreduce":
            pending, allreduce = None, event
    signal = result.signal_name
    if pending is not None and pending.get("step") == "gemm":
        outcome = "signal" if signal else ("hung" if result.timed_out else "error")
        detail = signal or (
            f"no result in {timeout:g} s" if result.timed_out else result.stderr[-300:]
        )
        gemms.append(_gemm_run(pending, outcome, detail, None))
    if pending is not None and pending.get("step") == "allreduce" and not allreduce:
        allreduce = {"outcome": "hung" if result.timed_out else "error", "detail": signal}
    smoke: dict[str, Any] = {
        "torch_version": info.get("version"),
        "cuda_available": info.get("cuda_available"),
        "device_count": info.get("count"),
        "gemms": tuple(gemms),
        "signal": signal,
        "allreduce": allreduce.get("outcome") if allreduce else None,
        "allreduce_detail": allreduce.get("detail") if allreduce else None,
        "nccl_warnings": tuple(str(w)[:300] for w in allreduce.get("warn", ()))[:20]
        if allreduce
        else (),
    }
    if result.start_error:
        return TorchSmoke(outcome="failed", reason=result.start_error, **smoke), Step(
            "torch", "error", result.duration_ms, result.start_error
        )
    if info.get("error"):
        reason = f"torch could not initialise CUDA: {info['error']}"
        return TorchSmoke(outcome="failed", reason=reason, **smoke), Step(
            "torch", "failed", result.duration_ms, reason
        )
    if result.timed_out:
        step = pending.get("step") if pending else "torch"
        reason = f"{step} did not finish within {timeout:g} s; the child was killed"
        return TorchSmoke(outcome="hung", reason=reason, **smoke), Step(
            "torch", "hung", result.duration_ms, reason
        )
    if signal or (result.returncode and not info):
        why = signal or f"exit code {result.returncode}: {result.stderr.strip()[-300:]}"
        reason = f"the torch child died ({why})"
        return TorchSmoke(outcome="crashed", reason=reason, **smoke), Step(
            "torch", "crashed", result.duration_ms, reason
        )
    bad = any(g.outcome != "ok" for g in gemms) or smoke["allreduce"] in ("error", "hung")
    if bad:
        return TorchSmoke(outcome="failed", **smoke), Step("torch", "failed", result.duration_ms)
    return TorchSmoke(outcome="ok", **smoke), Step("torch", "ok", result.duration_ms)


def _gemm_run(begin: dict[str, Any], outcome: Any, detail: Any, ms: Any) -> GemmRun:
    m, k, n = (int(v) for v in begin.get("shape", (0, 0, 0)))
    source = str(begin.get("source") or "smoke")
    return GemmRun(
        dtype=str(begin.get("dtype")),
        shape=(m, k, n),
        outcome=outcome if outcome in ("ok", "error", "signal", "hung") else "error",
        detail=str(detail) if detail else None,
        source=None if source == "smoke" else source,
        duration_ms=ms,
    )


def probe_torch_smoke(ctx: ProbeContext) -> tuple[TorchSmoke, Step]:
    gemms = [*SMOKE_GEMMS, *KNOWN_CRASH_GEMMS]
    plan = {
        "gemms": [list(g) for g in gemms],
        "allreduce_after": list(SMOKE_GEMMS[-1][:4]),
        "allreduce_timeout": max(1.0, ctx.torch_timeout / 2),
    }
    python = ctx.python or sys.executable
    env = _child_env(ctx)
    result = run_child(
        python, "torch_child.py", [json.dumps(plan)], env=env, timeout=ctx.torch_timeout
    )
    return torch_from_child(result, ctx.torch_timeout)


# --- all of it -------------------------------------------------------------------------------


def probe_deep(ctx: ProbeContext) -> Section[DeepInfo]:
    """The --deep facts; the steps run concurrently, each in its own bounded child."""
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="envcheck-deep") as pool:
        cuda_f = pool.submit(probe_cuda, ctx)
        health_f = pool.submit(probe_health, ctx)
        torch_f = pool.submit(probe_torch_smoke, ctx) if "torch" in ctx.deep else None
        topology, pcie_step = probe_topology(ctx)
        cuda, cuda_step = cuda_f.result()
        health, health_reason, health_step = health_f.result()
        smoke, torch_step = torch_f.result() if torch_f else (None, None)
    steps = [cuda_step, health_step, pcie_step] + ([torch_step] if torch_step else [])
    info = DeepInfo(
        cuda=cuda,
        health=health,
        health_reason=health_reason,
        pcie=topology,
        torch=smoke,
        steps=tuple(steps),
    )
    return Section.ok(info, source="libcuda (ctypes), NVML, /sys" + (", torch" if smoke else ""))
