"""GPU13x (torch smoke test, ``--deep=torch``): what the node's own torch did when asked to run."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, from_spec, manual

CUBLAS_SIGFPE = "CUD102"


def _cud102_fix(facts: Facts) -> Fix | None:
    entry = next((k for k in facts.matrix.known_bad if k.code == CUBLAS_SIGFPE), None)
    return from_spec(entry.fix) if entry is not None and entry.fix is not None else None


def _generic_fix() -> Fix:
    return fix(
        "Read the error: it names the failing library",
        "manual",
        manual(
            "re-run with CUDA_LAUNCH_BLOCKING=1 and CUBLAS_LOGINFO_DBG=1 to see the failing cuBLAS call"
        ),
    )


@rule("GPU130", "torch-gemm-failed", Severity.ERROR)
def gemm_failed(facts: Facts) -> Iterable[Hit]:
    """A GEMM crashed or failed in the node's torch (confirmed by running it)

    ## What it checks
    With `--deep=torch`, a child process of the node's own Python imports torch, initialises
    CUDA and runs one matrix multiply per dtype (fp16, bf16, fp32, tf32), then the known crashing
    shapes from the matrix: fp16 (64 x 14688) @ (14688 x 1536), the exact shape pytorch#152017
    reports dying with SIGFPE on H20 with torch 2.1.0+cu121 (cuBLAS 12.1.3.1, CUD102). A signal
    or an exception is reported with the dtype and shape.

    ## Why it matters
    Version tables can only infer a cuBLAS bug; running the GEMM proves it. A SIGFPE here is the
    crash that reaches users as `Fatal Python error: Floating point exception` or a Ray
    `ActorDiedError` in the middle of a rollout.

    ## Example
    float16 GEMM (64, 14688, 1536) killed the process with SIGFPE; nvidia-cublas-cu12 12.1.3.1.

    ## Fix
    For SIGFPE with cuBLAS 12.1.3.1: install cuBLAS 12.3.4.1 (CUD102's fix). Otherwise the error
    names the cause (CUBLAS_STATUS_*, out of memory, no kernel image).

    ## References
    - https://github.com/pytorch/pytorch/issues/152017
    - https://github.com/vllm-project/vllm/issues/4392
    """
    smoke = facts.torch_smoke()
    if not smoke.gemms:
        raise Skip(f"no GEMM ran ({smoke.reason or smoke.outcome})", "deep.torch")
    cublas = facts.version("nvidia-cublas-cu12")
    hits = []
    for gemm in smoke.gemms:
        if gemm.outcome == "ok":
            continue
        shape = "x".join(str(v) for v in gemm.shape)
        source = f" [{gemm.source}]" if gemm.source else ""
        if (
            gemm.outcome == "signal"
            and gemm.detail == "SIGFPE"
            and gemm.dtype in ("float16", "bfloat16")
        ):
            lib = f"; nvidia-cublas-cu12 {cublas}" if cublas else ""
            if str(cublas or "").startswith("12.1.3"):
                verdict, confirms = " - confirms CUD102 (confirmed by running it)", True
            elif cublas is None and gemm.source:
                verdict = (
                    " - the crash CUD102 describes (cuBLAS 12.1.3.1); the cuBLAS version is unknown"
                )
                confirms = True
            else:
                verdict, confirms = " - not the cuBLAS version CUD102 names", False
            hits.append(
                Hit(
                    f"{gemm.dtype} GEMM (m, k, n = {shape}) killed the process with SIGFPE{lib}{verdict}{source}",
                    evidence={
                        "dtype": gemm.dtype,
                        "shape": list(gemm.shape),
                        "signal": "SIGFPE",
                        "cublas": str(cublas) if cublas else None,
                        "confirms": CUBLAS_SIGFPE if confirms else None,
                    },
                    fix=_cud102_fix(facts) if confirms else _generic_fix(),
                )
            )
            continue
        hits.append(
            Hit(
                f"{gemm.dtype} GEMM (m, k, n = {shape}) {gemm.outcome}: {gemm.detail or 'no detail'}{source}",
                evidence={
                    "dtype": gemm.dtype,
                    "shape": list(gemm.shape),
                    "outcome": gemm.outcome,
                    "detail": gemm.detail,
                },
                fix=_generic_fix(),
            )
        )
    return hits


@rule("GPU131", "nccl-allreduce-failed", Severity.ERROR)
def allreduce_failed(facts: Facts) -> Iterable[Hit]:
    """A single-node NCCL all-reduce across the local GPUs failed or hung

    ## What it checks
    With `--deep=torch` on a node with two GPUs or more: one process per GPU runs
    `torch.distributed.all_reduce` over NCCL on this node only, with `NCCL_DEBUG=WARN`, under a
    time limit; the NCCL warnings are kept.

    ## Why it matters
    If NCCL cannot all-reduce between GPUs of one node, no multi-GPU job will: the causes are
    local (P2P blocked by ACS or the IOMMU, /dev/shm too small, NVLink or fabric problems, a
    broken NCCL install) and the warnings name them.

    ## Example
    all-reduce hung: no result in 60 s; NCCL WARN ... Cuda failure 'peer access is not supported'.

    ## Fix
    Read the NCCL warnings; check GPU116-GPU118 and SYS101; try `NCCL_P2P_DISABLE=1` to confirm a
    P2P problem (as a diagnosis, not a fix).

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    """
    smoke = facts.torch_smoke()
    if smoke.allreduce in (None, "skipped"):
        raise Skip(
            "the all-reduce did not run (fewer than 2 GPUs, or an earlier step failed)",
            "deep.torch",
        )
    if smoke.allreduce == "ok":
        return []
    warns = "; ".join(smoke.nccl_warnings[:3])
    return [
        Hit(
            f"NCCL all-reduce across {smoke.device_count} local GPUs {smoke.allreduce}: "
            f"{smoke.allreduce_detail or 'no detail'}" + (f"; {warns}" if warns else ""),
            evidence={"outcome": smoke.allreduce, "warnings": list(smoke.nccl_warnings)},
            fix=fix(
                "Find what blocks NCCL between local GPUs",
                "manual",
                manual(
                    "NCCL_DEBUG=INFO and check P2P (GPU116-GPU118), /dev/shm (SYS101); NCCL_P2P_DISABLE=1 to confirm a P2P cause"
                ),
            ),
        )
    ]


@rule("GPU132", "torch-cuda-unusable", Severity.ERROR)
def torch_cuda_unusable(facts: Facts) -> Iterable[Hit]:
    """The node's torch cannot use CUDA, or its smoke test hung or crashed

    ## What it checks
    With `--deep=torch`: whether torch initialised CUDA in a child of the node's Python, whether
    `torch.cuda.is_available()` is True on a node whose driver lists GPUs, and whether the child
    finished within `--deep-timeout` (it is killed with its process group otherwise).

    ## Why it matters
    A CPU-only torch, a CUDA build newer than the driver, or a hung initialisation all surface
    later as jobs that silently run on CPU or never start.

    ## Example
    torch 2.4.0+cu121: torch.cuda.is_available() is False although NVML lists 8 GPUs.

    ## Fix
    Check TOR and DRV findings for the build and driver; the reason names the failing step.

    ## References
    - https://pytorch.org/get-started/locally/
    """
    smoke = facts.torch_smoke()
    gemm_broke = any(g.outcome in ("signal", "hung") for g in smoke.gemms)  # GPU130 says so
    if smoke.outcome in ("hung", "crashed") and not gemm_broke:
        return [
            Hit(
                f"torch smoke test {smoke.outcome}: {smoke.reason}",
                evidence={"outcome": smoke.outcome},
                fix=fix(
                    "Find the hanging step",
                    "manual",
                    manual("dmesg | grep -i xid; run the step by hand with CUDA_LAUNCH_BLOCKING=1"),
                ),
            )
        ]
    if smoke.reason and smoke.outcome == "failed" and smoke.cuda_available is None:
        return [
            Hit(
                smoke.reason,
                evidence={"outcome": smoke.outcome},
                fix=fix(
                    "Fix the torch build or the driver",
                    "manual",
                    manual("see the TOR and DRV findings"),
                ),
            )
        ]
    if smoke.cuda_available is False:
        try:
            count = len(facts.gpus())
        except Skip:
            count = 0
        if count:
            return [
                Hit(
                    f"torch {smoke.torch_version}: torch.cuda.is_available() is False although the driver lists {count} GPU(s)",
                    evidence={"torch": smoke.torch_version, "gpus": count},
                    fix=fix(
                        "Install a CUDA build of torch that this driver supports",
                        "manual",
                        manual("see the TOR and DRV findings for the build to install"),
                    ),
                )
            ]
    return []
