"""Locked (page-locked, pinned) host memory: the memlock limit (SYS180) and pinned buffers that
could not be allocated (SYS181), matrices/signatures/memory.toml.

RDMA transports (NCCL over InfiniBand/RoCE, UCX, MPI) register their buffers with the NIC, which
locks them in RAM: a process may lock at most `ulimit -l` (RLIMIT_MEMLOCK), and a container's
default is 64 KiB or 8 MiB. CUDA's pinned host memory (`pin_memory=True`, `cudaHostAlloc`) is
page-locked too, and fails under the same limits, in WSL, or when host RAM is short."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.model.report import UNLIMITED
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# the fix NCCL's, Open MPI's and UCX's documentation give, most common first
_RAISE = (
    "ulimit -l unlimited  (in the job's shell, before the launcher; a non-root user needs the "
    "hard limit raised first)",
    "docker run --ulimit memlock=-1:-1 --cap-add=IPC_LOCK ...  (docker compose: ulimits: "
    "memlock: -1 and cap_add: [IPC_LOCK]; Kubernetes: the runtime's default memlock and the "
    "IPC_LOCK capability)",
    "for good: '* soft memlock unlimited' and '* hard memlock unlimited' in "
    "/etc/security/limits.conf (systemd services and the Docker daemon: LimitMEMLOCK=infinity), "
    "then log in again",
    "Slurm: PropagateResourceLimitsExcept=MEMLOCK in slurm.conf, or srun --propagate=MEMLOCK "
    "from a shell whose ulimit -l is unlimited",
)
# libibverbs states the limit in bytes, UCX (1.14+) in KiB after a verbs call it refused
_STATED = lazy(r"RLIMIT_MEMLOCK is (?P<bytes>[0-9]+) bytes|\(current: (?P<kbytes>[0-9]+) kbytes\)")


def _stated_bytes(text: str) -> int | None:
    """The memlock limit a libibverbs or UCX line states, in bytes."""
    found = _STATED.search(text)
    if found is None:
        return None
    if found.group("bytes") is not None:
        return int(found.group("bytes"))
    return int(found.group("kbytes")) * 1024


def _size(n: int) -> str:
    if n >= 1024**2:
        return f"{n / 1024**2:.0f} MiB"
    return f"{n / 1024:.0f} KiB"


@rule("SYS180", "memlock-limit-too-low", Severity.WARNING)
def memlock_limit_too_low(facts: Facts) -> Iterable[Hit]:
    """The locked-memory limit (ulimit -l) is too low for RDMA (InfiniBand/RoCE) and pinned memory

    ## What it checks
    On a node with InfiniBand/RoCE devices: the soft `ulimit -l` (RLIMIT_MEMLOCK, from
    /proc/self/limits) against NCCL's advice, unlimited. In `triage`: libibverbs' own warning
    (`RLIMIT_MEMLOCK is 65536 bytes. This will severely limit memory registrations.`) and a
    memory registration refused for lack of memory (`Call to ibv_reg_mr failed with error
    Cannot allocate memory`, `ibv_create_cq() failed: Cannot allocate memory`).

    ## Why it matters
    NCCL, UCX and MPI register (lock) their communication buffers with the NIC. Under a low
    memlock limit (Docker's default is 64 KiB or 8 MiB) the registration fails: NCCL falls back
    or fails with `unhandled system error`, multi-node jobs hang at start-up, and pinned host
    buffers cannot be allocated.

    ## Example
    `NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory` with
    `ulimit -l` showing 8192 (KiB) inside the job; UCX's `ibv_create_cq() failed: Cannot
    allocate memory. Please set max locked memory (ulimit -l) to 'unlimited' (current: 64
    kbytes)`.

    ## Fix
    Raise the limit to unlimited for the job: `ulimit -l unlimited` (hard limit first), in a
    container `docker run --ulimit memlock=-1:-1` (a container without `--privileged` also
    needs `--cap-add=IPC_LOCK`), for good `* soft memlock unlimited` and
    `* hard memlock unlimited` in /etc/security/limits.conf (services: `LimitMEMLOCK=infinity`),
    and check with `ulimit -l` inside the launcher (mpirun, srun).

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://github.com/tarickb/the-geek-in-the-corner/issues/6
    - https://github.com/open-mpi/ompi/issues/6468
    - https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/init.c
    - https://github.com/microsoft/mscclpp/issues/335
    """
    system = facts.system()
    limit = system.ulimits.get("memlock")
    if limit is None:
        raise Skip("the memlock limit is unknown", "system.ulimits")
    if not facts.network().infiniband:
        return []  # no RDMA device: nothing registers memory with a NIC
    if limit.soft == UNLIMITED:
        return []
    return [
        Hit(
            f"ulimit -l is {_size(limit.soft)} on a node with InfiniBand/RoCE devices: NCCL's and "
            "UCX's memory registrations (ibv_reg_mr) fail or are limited; NCCL asks for "
            "unlimited",
            evidence={"memlock_soft_bytes": limit.soft, "memlock_hard_bytes": limit.hard},
            fix=fix(
                "Raise the locked-memory limit to unlimited (ulimit -l unlimited; in a container "
                "docker run --ulimit memlock=-1:-1; for good: memlock unlimited in "
                "/etc/security/limits.conf)",
                "manual",
                *(manual(step) for step in _RAISE),
            ),
        )
    ]


@from_log("SYS180")
def memlock_limit_in_log(facts: Facts, line: LogLine) -> Hit:
    """The limit libibverbs states, or the registration it refused; the commands that raise
    the limit, the container's flag and limits.conf first (what the threads establish)."""
    stated = _stated_bytes(line.text)
    what = (
        f"the process may lock only {_size(stated)} (RLIMIT_MEMLOCK, line {line.line})"
        if stated is not None
        else f"an RDMA memory registration was refused for lack of lockable memory (line "
        f"{line.line}): the locked-memory limit (ulimit -l) is too low"
    )
    return Hit(
        what + ": InfiniBand/RoCE transports (NCCL, UCX, MPI) cannot register their buffers "
        "(a container's default limit is 64 KiB or 8 MiB)",
        evidence={"line": line.line, "memlock_bytes": stated},
        fix=fix(
            "Raise the locked-memory limit to unlimited: ulimit -l unlimited (in a container: "
            "docker run --ulimit memlock=-1:-1 --cap-add=IPC_LOCK; for good: memlock unlimited "
            "in /etc/security/limits.conf), and check ulimit -l inside the launcher",
            "manual",
            *(manual(step) for step in _RAISE),
        ),
        severity=Severity.ERROR,
    )


# a single pinned request this large is a buffer the job sized (a batch, a dataset, an
# offload or cache buffer), not a DataLoader pinning batch by batch
_ONE_BUFFER = 1024**3


@rule("SYS181", "pinned-host-memory-failed", Severity.WARNING)
def pinned_host_memory_failed(facts: Facts) -> Iterable[Hit]:
    """Pinned (page-locked) host memory could not be allocated

    ## What it checks
    Only a log states it: `Pin memory thread exited unexpectedly` (torch's DataLoader with
    `pin_memory=True`), `cudaHostAlloc failed` (Paddle), `could not allocate pinned host
    memory` / `failed to alloc N bytes on host` (TensorFlow), `cudaHostRegister failed`.

    ## Why it matters
    Pinned memory is host RAM the driver locks for fast copies to the GPU. It counts against
    the locked-memory limit (`ulimit -l`), is capped in containers and WSL, and comes out of
    host RAM, so a job that pins every batch (or a large offload buffer) dies where the same
    job without pinning runs.

    ## Example
    `RuntimeError: Pin memory thread exited unexpectedly` after the first epoch with
    `DataLoader(..., num_workers=8, pin_memory=True)`.

    ## Fix
    Turn pinning off (`DataLoader(..., pin_memory=False)`; in configs `pin_memory=False`), or
    give the job more lockable memory (`ulimit -l unlimited`, `docker run --ulimit
    memlock=-1:-1`) and host RAM; fewer DataLoader workers pin fewer batches at once. Where the
    line names one request of a gibibyte or more (`failed to alloc 4294967296 bytes on host`),
    the job sized that buffer: a smaller batch or fewer samples per step come first.

    ## References
    - https://github.com/open-mmlab/mmpretrain/issues/392
    - https://github.com/open-mmlab/mmagic/issues/508
    - https://github.com/NVIDIA/nvidia-container-toolkit/issues/226
    """
    raise Skip("only a log line states a failed pinned-memory allocation", "log.pinned_memory")


def pinned_oom_fix(call: str, line: int) -> tuple[str, tuple[Action, ...], str]:
    """The fix for CUDA's 'out of memory' raised where the traceback's last frame pins host
    memory (``call``: pin_memory, cudaHostAlloc): torch's pinned allocator reports a failed
    cudaHostAlloc in the GPU's words; what to say of it, for DRV150's message."""
    said = (
        f"; the traceback's last frame above line {line} pins host memory ({call.rstrip('(')}): "
        "the allocation that failed was pinned (page-locked) host RAM, not the GPU's memory "
        "(the locked-memory limit, a container's or WSL's cap on pinned memory, or host RAM)"
    )
    summary = (
        "Turn off pinned memory where the traceback pins it (pin_memory=False in the DataLoader "
        "or the offload config, .pin_memory() dropped); or raise the locked-memory limit "
        "(ulimit -l unlimited, docker run --ulimit memlock=-1:-1) and give the job more host RAM"
    )
    steps = (
        manual(
            "pin_memory=False  (DataLoader(..., pin_memory=False); DeepSpeed offload_optimizer / "
            'offload_param: "pin_memory": false; a tensor\'s .pin_memory() call removed)'
        ),
        manual(_RAISE[0]),
        manual(_RAISE[1]),
        manual(
            "WSL 2 caps pinned memory below the host's RAM: pin_memory=False there, or run on "
            "native Linux"
        ),
    )
    return summary, steps, said


@from_log("SYS181")
def pinned_host_memory_in_log(facts: Facts, line: LogLine) -> Hit:
    """pin_memory=False first (what the threads establish), then the limits. One request of a
    gibibyte or more (TensorFlow's and XLA's host allocator name its size) is a buffer the job
    sized itself: making the job smaller comes first there."""
    text = line.text
    size: int | None = None
    if "Pin memory thread" in text:
        what = "the DataLoader's pin-memory thread died"
    else:
        found = re.search(r"(?:size: |alloc )([0-9]+)(?: bytes)?", text)
        mib = re.search(r"allocate ([0-9]+(?:\.[0-9]+)?) MiB of pinned", text)
        size = int(found.group(1)) if found else int(float(mib.group(1)) * 1024**2) if mib else None
        amount = f" ({size / 1024**3:.1f} GiB)" if size is not None else ""
        what = f"pinned (page-locked) host memory could not be allocated{amount}"
    summary = (
        "Turn off pinned memory: DataLoader(..., pin_memory=False) (pin_memory=False in the "
        "config); or raise the locked-memory limit (ulimit -l unlimited, docker run "
        "--ulimit memlock=-1:-1) and give the job more host RAM"
    )
    steps = [
        manual(
            "DataLoader(..., pin_memory=False)  (train and val loaders; configs: pin_memory=False)"
        ),
        manual(_RAISE[0]),
        manual(_RAISE[1]),
        manual("fewer DataLoader workers / a smaller prefetch_factor pin fewer batches at once"),
    ]
    if "of pinned memory" in text:  # ggml's (llama.cpp) host buffer; it has its own switch
        steps.insert(
            0, manual("export GGML_CUDA_NO_PINNED=1  (llama.cpp / ggml: no pinned host buffers)")
        )
    if size is not None and size >= _ONE_BUFFER:
        one = f"{size / 1024**3:.1f} GiB"
        summary = (
            f"Make the job's pinned buffer smaller: the failed request was one {one} "
            "allocation, sized by the job (a smaller batch, fewer samples or a shorter "
            "sequence per step; an offload or cache buffer set smaller); or raise the "
            "locked-memory limit and give the job more host RAM"
        )
        steps.insert(
            0,
            manual(
                f"one {one} pinned buffer: a smaller batch / fewer samples per step (or the "
                "offload or cache buffer's size option set lower) shrinks it"
            ),
        )
    return Hit(
        f"{what} (line {line.line}): pinning host RAM for GPU copies failed (the locked-memory "
        "limit, a container's or WSL's cap on pinned memory, or host RAM running short)",
        evidence={"line": line.line, "bytes": size},
        fix=fix(summary, "manual", *steps),
        severity=Severity.WARNING,
    )
