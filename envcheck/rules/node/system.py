"""SYS: node settings that break collectives before any package does."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, Skip, rule
from envcheck.rules.facts import Facts
from envcheck.rules.fixes import fix
from envcheck.rules.node.ray import shm_step


@rule("SYS101", "dev-shm-too-small-for-nccl", Severity.WARNING)
def shm_too_small(facts: Facts) -> Iterable[Hit]:
    """/dev/shm is too small for NCCL (Docker's 64 MB default)

    ## What it checks
    With torch installed: the size of /dev/shm against Docker's 64 MiB default (an error when
    the node has several GPUs or their number is unknown) and NCCL's recommended 1 GiB (a
    warning).

    ## Why it matters
    NCCL's intra-node transport and torch's DataLoader workers use /dev/shm. At 64 MiB NCCL
    fails during communicator setup: `NCCL WARN Error: failed to extend /dev/shm/nccl-... to N
    bytes`, `posix_fallocate failed`, `ncclShmOpen` segfaults, or `unhandled system error`.

    ## Example
    A container started without `--shm-size` on an 8-GPU node.

    ## Fix
    Start the container with `--shm-size=1g` or more (or `--ipc=host`); on Kubernetes mount an
    `emptyDir` with `medium: Memory` at /dev/shm.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://github.com/pytorch/tutorials/pull/2475
    """
    if facts.version("torch") is None:
        return []
    shm = facts.storage().by_role("dev_shm")
    if shm is None or shm.total_bytes is None:
        raise Skip("/dev/shm size unknown")
    docker_default = facts.matrix.constant("docker.default_shm_bytes") or 64 * 1024**2
    recommended = facts.matrix.constant("nccl.recommended_shm_bytes") or 1024**3
    if shm.total_bytes >= recommended:
        return []
    try:
        several = len(facts.gpus()) != 1
    except Skip:
        several = True
    severity = Severity.ERROR if shm.total_bytes <= docker_default and several else Severity.WARNING
    size = f"{shm.total_bytes / 1024**2:.0f} MiB"
    default = " (Docker's default)" if shm.total_bytes <= docker_default else ""
    return [
        Hit(
            f"/dev/shm is {size}{default}; NCCL needs more for its shared-memory transport "
            "('failed to extend /dev/shm', 'unhandled system error'): give it at least 1 GiB",
            evidence={"dev_shm_bytes": shm.total_bytes, "recommended_bytes": int(recommended)},
            fix=fix(
                "Give the container a larger /dev/shm",
                "manual",
                shm_step(facts),
            ),
            severity=severity,
        )
    ]
