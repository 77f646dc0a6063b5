"""SYS: node settings that break collectives before any package does."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.ingest.sizes import size_bytes
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.memory import SHM_SIGNATURES, shm_hit
from envcheck.rules.node.ray import shm_step


@rule("SYS101", "dev-shm-too-small-for-nccl", Severity.WARNING)
def shm_too_small(facts: Facts) -> Iterable[Hit]:
    """/dev/shm is too small for NCCL and DataLoader workers (Docker's 64 MB default)

    ## What it checks
    With torch installed: the size of /dev/shm against Docker's 64 MiB default (an error when
    the node has several GPUs or their number is unknown) and NCCL's recommended 1 GiB (a
    warning). In `triage`: NCCL's shared-memory lines and torch's (a DataLoader worker's
    `Unexpected bus error encountered in worker`, `unable to write to file </torch_...>`);
    NCCL's bare `unhandled system error` on one node where the log shows a container, a
    `docker run` command deciding it by its `--shm-size` / `--ipc=host`.

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


# NCCL's line when creating a segment failed, the reason not stated (shmutils.cc of NCCL 2.12 to
# 2.21: fallocate's ENOSPC is logged only as 'failed to extend ...', often cut from the excerpt)
# lines that name no reason for the failed segment (NCCL's bare WARN of its shm transport)
_UNSTATED = frozenset({"nccl-shm-allocation", "nccl-warn-shm", "nccl-shm-open-failed"})
_SHM_OPEN = "nccl-shm-open-failed"  # 'Call to shm_open failed : <strerror>'
# the line names the segment NCCL creates (or grows) in /dev/shm: 'Error while creating shared
# memory segment /dev/shm/nccl-XXXX (size N)', 'failed to extend /dev/shm/nccl-X to N bytes'
# (NCCL <= 2.11: shm_open's name 'nccl-shm-...'); attaching to another rank's is not a size
_NAMED_SEGMENT = lazy(
    r"creating shared memory segment (?:/dev/shm/)?nccl-|failed to extend /dev/shm/nccl-"
)
_DEFAULT_STEP = manual(
    "docker run --shm-size=16g (or --ipc=host); on Kubernetes an emptyDir with "
    "medium: Memory at /dev/shm"
)


@from_log("SYS101")
def shm_full_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """NCCL's own line says /dev/shm had no room for its segment (ENOSPC): `Call to
    posix_fallocate failed : No space left on device` (NCCL <= 2.18, include/shm.h) or `Error:
    failed to extend /dev/shm/nccl-... to N bytes, error: No space left on device` (shmutils.cc).
    NCCL's bare `Error while creating shared memory segment /dev/shm/nccl-...` does not say
    why, but names the segment NCCL creates in /dev/shm: it establishes the cause unless the
    node is known not to be a container (a bare host's /dev/shm is half its RAM) or /dev/shm is
    known to be 1 GiB or more (which rules it out); a container's is 64 MiB unless started with
    --shm-size or --ipc=host (video-diffusion-speedrun#2, MiniMax-01#42). NCCL's other bare
    shared-memory lines (attaching to another rank's segment) confirm it only in a container. torch's DataLoader and
    multiprocessing lines (a worker's bus error, `unable to write to file </torch_...>`) are
    worded by memory.py."""
    from envcheck.rules.node.rank_hosts import GENERIC_NCCL_LINES
    from envcheck.rules.signals import SIGNAL_SIGNATURES, routes_elsewhere

    if routes_elsewhere(line.signature, line.stated, "SYS101"):
        return None  # a signal line that states another signal than SIGBUS
    if line.signature in SHM_SIGNATURES or line.signature in SIGNAL_SIGNATURES:
        try:
            return shm_hit(facts, line, shm_step(facts))
        except Skip:  # packages unknown: NCCL's size
            return shm_hit(facts, line, _DEFAULT_STEP)
    if line.signature == _SHM_OPEN and "Permission denied" in line.text:
        return _shm_not_writable(line)
    if line.signature in GENERIC_NCCL_LINES:
        return _generic_line_in_container(facts, line)
    size = line.number("shm_request_bytes")
    segment = f"a {size / 1024**2:.1f} MiB segment" if size else "its segment"
    shm = _dev_shm_bytes(facts, line)
    known = f" (/dev/shm is {shm / 1024**2:.0f} MiB)" if shm else ""
    reason = "No space left on device"
    # NCCL 2.22 on appends the errno: ', error: No space left on device (28)'
    stated = re.search(r"\(size [0-9]+\), error: ([^(]+?) ?\(([0-9]+)\)", line.text)
    if stated is not None and stated.group(2) != "28":
        raise NotStated(
            f"line {line.line} states {stated.group(1)} ({stated.group(2)}), not a full /dev/shm"
        )
    if (
        line.signature in _UNSTATED
        and stated is None
        and "No space left on device" not in line.text
    ):
        recommended = facts.matrix.constant("nccl.recommended_shm_bytes") or 1024**3
        if shm is not None and shm >= recommended:
            return None
        container = None
        with contextlib.suppress(Skip):
            container = facts.system().container
        named = _NAMED_SEGMENT.search(line.text) is not None
        if shm is None and line.stated.get("container_ipc") == "host":
            raise NotStated(
                f"line {line.line} does not say why NCCL could not create its segment, and the "
                "container shares the host's /dev/shm (docker run --ipc=host)"
            )
        if shm is None and (container == "none" or (container is None and not named)):
            raise NotStated(
                f"line {line.line} does not say why NCCL could not create its segment, and "
                "/dev/shm's size is unknown"
                + (" (the node is not a container)" if container == "none" else "")
            )
        kind = f" ({container})" if container and container != "declared container" else ""
        reason = (
            "the line states no reason, but names the segment NCCL creates in /dev/shm: "
            "/dev/shm is full or too small (a container's is 64 MiB unless it was started with "
            "--shm-size or --ipc=host)"
            if shm is None and container is None
            else f"the line states no reason; the node is a container{kind}, whose /dev/shm is "
            "64 MiB unless it was started with --shm-size or --ipc=host"
            if shm is None
            else "the line states no reason; /dev/shm is smaller than NCCL's recommended 1 GiB"
        )
    try:
        step = shm_step(facts)
    except Skip:  # packages unknown: NCCL's size
        step = _DEFAULT_STEP
    return Hit(
        f"NCCL could not create {segment} in /dev/shm{known} (line {line.line}): {reason}"
        + (
            "; the container's /dev/shm (Docker's default is 64 MiB) is too small for NCCL's "
            "shared-memory transport"
            if reason.startswith("No space")
            else " (too small for NCCL's shared-memory transport)"
        ),
        evidence={
            "line": line.line,
            "segment_bytes": int(size) if size else None,
            "dev_shm_bytes": shm,
        },
        fix=fix(
            "Give the container a larger /dev/shm (NCCL_SHM_DISABLE=1, which stops NCCL's "
            "shared-memory transport, is the workaround the NCCL threads report)",
            "manual",
            step,
        ),
        severity=Severity.ERROR,
    )


def _dev_shm_bytes(facts: Facts, line: LogLine) -> int | None:
    """/dev/shm's size as the node or the log states it (df's line), else the size a `docker
    run --shm-size` command in the log gives the container; None when neither says."""
    with contextlib.suppress(Skip):
        disk = facts.storage().by_role("dev_shm")
        if disk is not None and disk.total_bytes is not None:
            return disk.total_bytes
    passed = line.stated.get("container_shm_size")
    return size_bytes(passed.upper()) if passed else None


def _generic_line_in_container(facts: Facts, line: LogLine) -> Hit | None:
    """NCCL's `unhandled system error` (or its proxy's failure) from a job in a Docker container
    whose log says nothing of another node: the shared-memory transport in the container's
    /dev/shm (Docker's default 64 MiB) is the system call NCCL's troubleshooting guide names
    for containers; /dev/shm known to be 1 GiB or more rules it out (nccl_scope.py). A `docker
    run` command in the log decides it by its options: `--ipc=host` (the host's /dev/shm) or a
    `--shm-size` of 1 GiB or more rules it out, a smaller one is the size, neither is Docker's
    64 MiB default."""
    from envcheck.rules.node.rank_hosts import ranks_span_nodes

    spans = ranks_span_nodes(line.stated)
    if spans:
        raise NotStated(f"{spans}: the interface between the nodes (NET104) is the likelier call")
    if line.stated.get("container_ipc") == "host":
        return None  # `docker run --ipc=host`: the container has the host's /dev/shm
    shm = _dev_shm_bytes(facts, line)
    passed = line.stated.get("container_shm_size")
    recommended = facts.matrix.constant("nccl.recommended_shm_bytes") or 1024**3
    if shm is not None:
        if shm >= recommended:
            return None
        where = f"/dev/shm is {shm / 1024**2:.0f} MiB" + (
            f" (docker run --shm-size={passed})" if passed else ""
        )
    else:
        container = None
        with contextlib.suppress(Skip):
            container = facts.system().container
        if container in (None, "none"):
            raise NotStated(
                f"line {line.line} names no subsystem, and neither /dev/shm's size nor a "
                "container is known"
            )
        run = line.stated.get("container_run")
        where = (
            f"the job's container was started by `{run} run` without --shm-size or --ipc=host, "
            "so its /dev/shm is the default 64 MiB"
            if run
            else "the job ran in a Docker container, whose /dev/shm is 64 MiB unless it was "
            "started with --shm-size or --ipc=host"
        )
    try:
        step = shm_step(facts)
    except Skip:
        step = _DEFAULT_STEP
    return Hit(
        f"NCCL failed on a system call (line {line.line}) on one node: {where}, too small for "
        "the segments of NCCL's shared-memory transport",
        evidence={"line": line.line, "dev_shm_bytes": shm},
        fix=fix(
            "Give the container a larger /dev/shm (--shm-size=16g or --ipc=host); "
            "NCCL_SHM_DISABLE=1 is the workaround",
            "manual",
            step,
        ),
        severity=Severity.WARNING,
    )


def _shm_not_writable(line: LogLine) -> Hit:
    """NCCL's `Call to shm_open failed : Permission denied` (EACCES): /dev/shm is there but not
    writable for this user (its mode is not 1777, or a read-only or foreign mount), so no size
    helps; pytorch/pytorch#37004 and NVIDIA/nccl#328 fixed it with `chmod` on /dev/shm."""
    return Hit(
        f"NCCL could not create its segment in /dev/shm (line {line.line}): shm_open: Permission "
        "denied; /dev/shm is not writable for this user (mode not drwxrwxrwt, or a read-only "
        "mount)",
        evidence={"line": line.line, "errno": "EACCES"},
        fix=fix(
            "Make /dev/shm writable for every user (mode 1777), or give the container a "
            "writable /dev/shm",
            "manual",
            manual("ls -ld /dev/shm   # must show drwxrwxrwt"),
            manual("sudo chmod 1777 /dev/shm"),
            manual("in a container: docker run --ipc=host (or --shm-size=16g) ..."),
        ),
        severity=Severity.ERROR,
    )
