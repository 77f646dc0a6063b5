"""Run in a child process of the node's own Python (``python torch_child.py PLAN``): the
``--deep=torch`` smoke test. PLAN is JSON: {"gemms": [[dtype, m, k, n, source], ...],
"allreduce_timeout": seconds}.

One JSON line per event, flushed before every step, so a step that kills the process (SIGFPE in
cuBLAS) or hangs is named by the last ``begin`` line. GEMMs run in order; the parent puts the known
crashing shapes last. With two GPUs or more, a single-node NCCL all-reduce runs in one worker
process per GPU (``allreduce-worker`` mode) with NCCL_DEBUG=WARN; the workers share this process's
group, so the parent's kill of the group takes them too.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
import time
from typing import Any


def _emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _gemm(torch: Any, dtype_name: str, m: int, k: int, n: int) -> None:
    tf32 = dtype_name == "tf32"
    dtype = torch.float32 if tf32 else getattr(torch, dtype_name)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.zeros(m, k, dtype=dtype, device="cuda")
    b = torch.zeros(k, n, dtype=dtype, device="cuda")
    torch.matmul(a, b)
    torch.cuda.synchronize()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _allreduce(world: int, timeout: float) -> None:
    port = _free_port()
    env = dict(os.environ, NCCL_DEBUG="WARN")
    argv = [sys.executable, os.path.abspath(__file__), "allreduce-worker", str(world), str(port)]
    workers = [
        subprocess.Popen(
            [*argv, str(rank)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for rank in range(world)
    ]
    deadline = time.monotonic() + timeout
    outputs, codes = [], []
    hung = False
    for proc in workers:
        try:
            out, _ = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            hung = True
            for other in workers:
                other.kill()
            out, _ = proc.communicate()
        outputs.append(out or "")
        codes.append(proc.returncode)
    warnings = [line.strip() for o in outputs for line in o.splitlines() if "NCCL WARN" in line]
    detail = next((o.strip().splitlines()[-1] for o in outputs if o.strip()), None)
    if hung:
        _emit(
            event="allreduce", outcome="hung", detail=f"no result in {timeout:g} s", warn=warnings
        )
    elif any(codes):
        _emit(
            event="allreduce",
            outcome="error",
            detail=f"exit codes {codes}: {detail}",
            warn=warnings,
        )
    else:
        _emit(event="allreduce", outcome="ok", warn=warnings)


def _worker(world: int, port: int, rank: int) -> int:
    torch: Any = importlib.import_module("torch")
    dist: Any = importlib.import_module("torch.distributed")

    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    tensor = torch.ones(1024, device="cuda")
    dist.all_reduce(tensor)
    torch.cuda.synchronize()
    ok = float(tensor[0]) == float(world)
    dist.destroy_process_group()
    if not ok:
        sys.stdout.write(f"all-reduce gave {float(tensor[0])}, expected {world}\n")
    return 0 if ok else 1


def _drop_script_dir() -> None:
    """Running as ``python path/to/this.py`` puts envcheck/probes first on sys.path, where its
    modules (gpu, system, network...) would shadow what the code under test imports."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]


def main(argv: list[str]) -> int:
    _drop_script_dir()
    if argv and argv[0] == "allreduce-worker":
        return _worker(int(argv[1]), int(argv[2]), int(argv[3]))
    plan = json.loads(argv[0]) if argv else {}
    _emit(event="begin", step="import torch")
    try:
        torch: Any = importlib.import_module("torch")
    except Exception as exc:  # ImportError, or a broken install raising anything
        _emit(event="no_torch", detail=f"{type(exc).__name__}: {exc}")
        return 0
    _emit(event="begin", step="cuda init")
    try:
        available = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count()) if available else 0
        if available:
            torch.cuda.init()
    except Exception as exc:
        _emit(event="torch", version=str(torch.__version__), error=f"{type(exc).__name__}: {exc}")
        return 0
    _emit(event="torch", version=str(torch.__version__), cuda_available=available, count=count)
    if not available:
        return 0
    for dtype, m, k, n, source in plan.get("gemms", []):
        _emit(event="begin", step="gemm", dtype=dtype, shape=[m, k, n], source=source)
        start = time.perf_counter()
        try:
            _gemm(torch, dtype, m, k, n)
        except Exception as exc:
            detail = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
            _emit(event="gemm", outcome="error", detail=detail)
            continue
        _emit(event="gemm", outcome="ok", ms=round((time.perf_counter() - start) * 1000, 2))
        if plan.get("allreduce_after") == [dtype, m, k, n] and count >= 2:
            _emit(event="begin", step="allreduce", world=count)
            _allreduce(count, float(plan.get("allreduce_timeout", 30)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
