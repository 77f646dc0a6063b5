"""SYS192: an address-space limit (``ulimit -v``, RLIMIT_AS) below what CUDA reserves when it
creates a context. The driver reserves one virtual range for Unified Virtual Addressing as the
first context is created (NVIDIA's MPS documentation: 'the client tries to reserve virtual
address space for the Unified Virtual Addressing memory range' and fails with
ERROR_OUT_OF_MEMORY); under a limit smaller than that range every CUDA runtime fails at its
first call with an out-of-memory error, whatever the GPU holds. Measured on one H200 node
(docs/gpu.md): torch failed to initialise under `ulimit -v` 16 GiB and started under 32 GiB;
a CuPy process reached 15 GB of address space, a JAX process 134 GB."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.model.report import UNLIMITED
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NodeDecides, StatedOtherwise, from_log, rule
from envcheck.rules.fixes import fix, manual

GIB = 1024**3
# CUresult CUDA_ERROR_OUT_OF_MEMORY (cuda.h), and the --deep check's calls that allocate no
# memory of the job's: an out-of-memory answer there is the driver's own reservation
OUT_OF_MEMORY = 2
START_CALLS = frozenset({"cuInit", "cuDevicePrimaryCtxRetain", "cuCtxCreate"})


def _limit(facts: Facts) -> int | None:
    """The soft address-space limit in bytes; None when unlimited. Skip when unknown."""
    limit = facts.system().ulimits.get("as")
    if limit is None:
        raise Skip("the address-space limit (ulimit -v) is unknown", "system.ulimits")
    return None if limit.soft == UNLIMITED else limit.soft


def _size(value: int) -> str:
    return f"{value / GIB:.1f} GiB" if value >= GIB else f"{value // 1024**2} MiB"


def _fix() -> Fix:
    return fix(
        "Lift the address-space limit for the job: ulimit -v unlimited in the shell that starts "
        "it; a scheduler's virtual-memory limit (PBS vmem, SGE h_vmem, LSF -v) is the usual "
        "source: limit resident memory (cgroups, --mem) instead",
        "manual",
        manual("ulimit -v unlimited   (before the job starts; `ulimit -v` shows the limit)"),
        manual(
            "scheduler: drop the virtual-memory request (PBS -l vmem=, SGE -l h_vmem=) for GPU "
            "jobs; Slurm's --mem and cgroups limit resident memory, which CUDA's reservation "
            "does not use"
        ),
    )


@rule("SYS192", "address-space-limit-under-cuda", Severity.WARNING)
def address_space_limit(facts: Facts) -> Iterable[Hit]:
    """An address-space limit (ulimit -v) is set on a node whose jobs use CUDA

    ## What it checks
    The soft `ulimit -v` (RLIMIT_AS, from /proc/self/limits' `Max address space`) of the
    process, on a node with NVIDIA GPUs. Any finite limit is named with its size; where a log
    states an out-of-memory error from CUDA's initialisation (a bare `CUDA error: out of
    memory`, `cuInit ... CUDA_ERROR_OUT_OF_MEMORY`, XLA's `Failed to create stream executor
    ... CUDA_ERROR_OUT_OF_MEMORY`), the limit is its cause. With `--deep`, the CUDA check's
    own `cuInit` (or primary context) answering 2, `CUDA_ERROR_OUT_OF_MEMORY`, under a finite
    limit confirms it: an error, not a warning (those calls allocate nothing of a job's).

    ## Why it matters
    When CUDA creates its first context the driver reserves one virtual address range for
    Unified Virtual Addressing, larger than the GPUs' memory; under a smaller address-space
    limit the reservation fails and every runtime reports it as out of memory at its first
    call, however empty the GPU is. Schedulers set the limit from a job's virtual-memory
    request (PBS `vmem`, SGE `h_vmem`).

    ## Example
    `ulimit -v 16777216` (16 GiB) on an H200 node: `torch.zeros(1, device='cuda')` fails with
    `torch.AcceleratorError: CUDA error: out of memory`, and JAX with `Failed to create stream
    executor for device CUDA:0: : CUDA_ERROR_OUT_OF_MEMORY`; under 32 GiB torch starts.

    ## Fix
    `ulimit -v unlimited` in the shell that starts the job; ask the scheduler for resident
    memory (`--mem`, cgroups) rather than virtual memory.

    ## References
    - https://docs.nvidia.com/deploy/mps/index.html
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#unified-virtual-address-space
    - https://man7.org/linux/man-pages/man2/getrlimit.2.html
    """
    limit = _limit(facts)
    if limit is None:
        return []
    refused = cuda_refused_under_limit(facts)
    if refused is not None:
        return [
            Hit(
                f"the address-space limit (ulimit -v) is {_size(limit)} and the --deep CUDA "
                f"check's {refused} returned 2 (CUDA_ERROR_OUT_OF_MEMORY): CUDA could not "
                "reserve its virtual address range under the limit, so every CUDA program on "
                "this node fails at its first call (confirmed by the driver)",
                evidence={"as_soft_bytes": limit, "call": refused, "result": OUT_OF_MEMORY},
                fix=_fix(),
                severity=Severity.ERROR,
            )
        ]
    if not facts.gpus():
        return []
    return [
        Hit(
            f"the address-space limit (ulimit -v) is {_size(limit)}: CUDA reserves a virtual "
            "range larger than the GPUs' memory when it creates a context, so under a limit "
            "this size CUDA may fail at its first call with 'out of memory' (on an H200 node "
            "torch failed under 16 GiB)",
            evidence={"as_soft_bytes": limit},
            fix=_fix(),
        )
    ]


def address_space_limited(facts: Facts) -> bool:
    """Whether the node states a finite address-space limit (unknown counts as not)."""
    try:
        return _limit(facts) is not None
    except Skip:
        return False


def cuda_refused_under_limit(facts: Facts) -> str | None:
    """The call of the --deep CUDA check (cuInit, or a context on a GPU) that answered
    CUDA_ERROR_OUT_OF_MEMORY; with an address-space limit set, that is the driver's own
    reservation failing, not the GPU's memory (the check's calls allocate nothing of a
    job's). None when the check did not run or no such call failed."""
    try:
        check = facts.cuda_check()
    except Skip:
        return None
    for call in check.calls:
        if call.result == OUT_OF_MEMORY and call.call in START_CALLS:
            on = f" on GPU {call.device}" if call.device is not None else ""
            return f"{call.call}{on}"
    return None


# the caching allocator's own exception and words: an allocation the job made, after CUDA had
# initialised (c10/cuda/CUDACachingAllocator.cpp; CuPy's and JAX's allocators alike)
_ALLOCATION = lazy(
    r"CUDA out of memory|OutOfMemoryError|Tried to allocate|allocating [0-9,]+ bytes"
)


@from_log("SYS192")
def address_space_limit_in_log(facts: Facts, line: LogLine) -> Hit:
    """The node's limit decides: a finite one is the cause of an out-of-memory error at CUDA's
    initialisation, an unlimited one rules it out. An allocator's own out-of-memory line (or a
    pinned host allocation) is a failed allocation after initialisation, not this."""
    if _ALLOCATION.search(line.text) or line.stated.get("pinned_call"):
        raise StatedOtherwise(
            f"line {line.line} is an allocation the job made after CUDA initialised, not "
            "CUDA's own start-up",
            "log.cuda_error",
        )
    raise NodeDecides(
        f"line {line.line} is an out-of-memory error from CUDA's initialisation; whether an "
        "address-space limit (ulimit -v) caused it is the node's to say",
        "system.ulimits",
    )
