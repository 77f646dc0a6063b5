"""RAY: Ray against Python, and the node resources Ray fails on (temp disk, /dev/shm, memory)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Fix, Severity
from envcheck.model.report import DiskUsage
from envcheck.probes.storage import ray_temp_dir
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, set_env
from envcheck.rules.node.pip_offered import linux_wheels_only

GIB = 1024**3
RAY_USERS = ("ray", "vllm", "verl", "openrlhf", "rlinf")
# <ray temp>/session_<YYYY-MM-DD_HH-MM-SS_ffffff>_<pid>/sockets/plasma_store
_SESSION_SUFFIX = "/session_2026-01-01_00-00-00_000000_{pid}/sockets/plasma_store"


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n / 1024**2:.0f} MiB"


def uses_ray(facts: Facts) -> bool:
    return any(facts.version(name) is not None for name in RAY_USERS)


def _const(facts: Facts, name: str) -> float:
    value = facts.matrix.constant(name)
    if value is None:
        raise Skip(f"matrix constant {name} missing")
    return value


def _env_float(facts: Facts, name: str) -> float | None:
    try:
        return float(facts.env()[name])
    except (KeyError, ValueError, Skip):
        return None


def _ray_disk(facts: Facts) -> DiskUsage:
    disk = facts.storage().by_role("ray_tmp")
    if disk is None or disk.total_bytes is None or disk.free_bytes is None:
        raise Skip("size of Ray's temp dir disk unknown")
    return disk


def _temp_dir_fix(facts: Facts) -> Fix:
    return fix(
        "Free space, or point Ray's temp dir at a bigger disk (ray start --temp-dir / RAY_TMPDIR)",
        "manual",
        manual("free space on the disk, or start Ray with --temp-dir=/path/on/a/bigger/disk"),
    )


@rule("RAY101", "ray-python-unsupported", Severity.ERROR)
def ray_python(facts: Facts) -> Iterable[Hit]:
    """The Ray release has no wheels for this Python

    ## What it checks
    The Python minor version against the CPython tags of the Ray release's Linux wheels (a node
    declared as macOS or Windows is not judged by them). From a log, pip's `Could not find a
    version that satisfies the requirement ray==X (from versions: ...)` lists the releases that
    have a wheel for that interpreter and platform: a pinned release missing from it is confirmed,
    and the newest listed is the one to install (ray#34666).

    ## Why it matters
    pip cannot install that Ray for this Python (it falls back to an older Ray that pins
    something else), or a declared cluster image cannot be built. Ray added Python 3.12 in 2.31,
    3.13 in 2.45 and 3.14 in 2.55, and dropped 3.9 after 2.51.

    ## Example
    ray 2.40.0 with Python 3.13.

    ## Fix
    Use a Python the release has wheels for, or a Ray release with wheels for this Python.

    ## References
    - PyPI simple index of ray (cpXY tags of the Linux wheels)
    """
    version = facts.version("ray")
    if version is None:
        return []
    release = facts.matrix.ray_release(version)
    if release is None:
        raise Skip(f"ray {version} is not in the matrix")
    linux_wheels_only(facts)
    py = facts.python_version()
    if f"{py.major}.{py.minor}" in release.python:
        return []
    return [
        Hit(
            f"ray {version} has no wheels for Python {py.major}.{py.minor} (it has {', '.join(release.python)})",
            evidence={"ray": str(version), "python": str(py), "supported": list(release.python)},
            fix=fix(
                f"Use one of Python {', '.join(release.python)} with ray {version}",
                "manual",
                manual("recreate the environment with a supported Python"),
            ),
        )
    ]


@rule("RAY103", "ray-temp-disk-full", Severity.ERROR)
def ray_disk_full(facts: Facts) -> Iterable[Hit]:
    """The disk holding Ray's temp dir is over Ray's capacity threshold

    ## What it checks
    Usage of the filesystem under Ray's temp dir (`$RAY_TMPDIR`, else `$TMPDIR`, else `/tmp`,
    plus `/ray`), measured as Ray does (1 - available / capacity), against
    `RAY_local_fs_capacity_threshold` (0.95 by default).

    ## Why it matters
    Above the threshold Ray refuses to create objects that need spilling:
    `(raylet) file_system_monitor.cc:116: /tmp/ray/session_... is over 95% full` and
    `ray.exceptions.OutOfDiskError: Local disk is full`. Rollouts stall or actors die.

    ## Example
    /tmp/ray on a 100 GiB disk with 3 GiB free: 97% full.

    ## Fix
    Free space, or start Ray with `--temp-dir` (or `RAY_TMPDIR`) on a bigger disk.

    ## References
    - ray-project/ray src/ray/common/ray_config_def.h (local_fs_capacity_threshold = 0.95)
    - https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html
    """
    disk = _ray_disk(facts)
    threshold = _env_float(facts, "RAY_local_fs_capacity_threshold") or _const(
        facts, "ray.local_fs_capacity_threshold"
    )
    used = disk.used_fraction
    if used is None or used < threshold:
        return []
    return [
        Hit(
            f"{disk.path}: its disk is {used:.0%} full ({_gib(disk.free_bytes or 0)} free of "
            f"{_gib(disk.total_bytes or 0)}); Ray stops creating objects above {threshold:.0%}: "
            "'is over 95% full ... Object creation will fail if spilling is required'",
            evidence={
                "path": disk.path,
                "used_fraction": round(used, 4),
                "free_bytes": disk.free_bytes,
                "threshold": threshold,
            },
            fix=_temp_dir_fix(facts),
        )
    ]


@rule("RAY104", "ray-temp-disk-low", Severity.WARNING)
def ray_disk_low(facts: Facts) -> Iterable[Hit]:
    """Little free space left under Ray's temp dir

    ## What it checks
    Free bytes on the filesystem under Ray's temp dir against 10 GiB (envcheck's own threshold,
    a matrix constant a site overlay can change). Disks already over Ray's capacity threshold
    are reported by RAY103 instead.

    ## Why it matters
    Object spilling, session logs and runtime environments fill it during a long run; a large
    disk can pass the percentage check and still have too few bytes left.

    ## Example
    /tmp/ray with 4.2 GiB free on a 500 GiB disk.

    ## Fix
    Free space, or move Ray's temp dir to a bigger disk.

    ## References
    - https://docs.ray.io/en/latest/ray-core/objects/object-spilling.html
    """
    disk = _ray_disk(facts)
    threshold = _env_float(facts, "RAY_local_fs_capacity_threshold") or _const(
        facts, "ray.local_fs_capacity_threshold"
    )
    minimum = _const(facts, "envcheck.ray_tmp_min_free_bytes")
    if (disk.used_fraction or 0) >= threshold or (disk.free_bytes or 0) >= minimum:
        return []
    return [
        Hit(
            f"{disk.path}: only {_gib(disk.free_bytes or 0)} free (under {_gib(minimum)}); spilling and "
            "session logs will fill it during a long run",
            evidence={"path": disk.path, "free_bytes": disk.free_bytes, "minimum_bytes": minimum},
            fix=_temp_dir_fix(facts),
        )
    ]


def object_store_bytes(facts: Facts) -> float:
    """The size of Ray's default object store on this node: 30% of available memory, capped
    (raises Skip when the memory is unknown)."""
    total, available = _memory(facts)
    return min(
        _const(facts, "ray.object_store_fraction")
        * (available if available is not None else total),
        _const(facts, "ray.object_store_max_bytes"),
    )


def shm_step(facts: Facts) -> Action:
    """The one /dev/shm size a plan advises, whichever rule asks: NCCL's 16 GiB, or more when
    Ray's object store needs more (two rules once advised two sizes in one plan)."""
    gib = 16
    if uses_ray(facts):
        with contextlib.suppress(Skip):  # memory unknown: NCCL's size
            gib = max(gib, int(object_store_bytes(facts) / GIB) + 1)
    return manual(
        f"docker run --shm-size={gib}g (or --ipc=host); on Kubernetes an emptyDir with "
        "medium: Memory at /dev/shm"
    )


def _memory(facts: Facts) -> tuple[int, int | None]:
    """(total, available) memory as Ray sees it: the cgroup limit caps the host's."""
    system = facts.system()
    total = system.memory_total_bytes
    if total is None:
        raise Skip("memory size unknown", "system.memory")
    limit = system.cgroup.memory_limit_bytes if system.cgroup else None
    available = system.memory_available_bytes
    if limit is not None and limit < total:
        total = limit
        available = min(available, limit) if available is not None else None
    return total, available


@rule("RAY105", "dev-shm-smaller-than-object-store", Severity.WARNING)
def shm_smaller_than_object_store(facts: Facts) -> Iterable[Hit]:
    """/dev/shm is smaller than Ray's default object store

    ## What it checks
    When Ray (or vLLM, verl, OpenRLHF, RLinf) is installed: /dev/shm's size against Ray's
    default object store (30% of memory, at most 200 GB).

    ## Why it matters
    Ray then puts the object store in /tmp: `WARNING: The object store is using /tmp instead of
    /dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!`
    Rollout transfers go through disk.

    ## Example
    A container with Docker's default 64 MiB /dev/shm on a 1 TiB node.

    ## Fix
    Give the container a larger /dev/shm: `docker run --shm-size=<more than 30% of RAM>` or
    `--ipc=host`; on Kubernetes mount an `emptyDir` with `medium: Memory` at /dev/shm.

    ## References
    - https://docs.ray.io/en/latest/ray-core/scheduling/memory-management.html
    - https://github.com/vllm-project/vllm/issues/1116
    - ray-project/ray python/ray/_private/ray_constants.py (DEFAULT_OBJECT_STORE_MEMORY_PROPORTION = 0.3)
    """
    if not uses_ray(facts):
        return []
    shm = facts.storage().by_role("dev_shm")
    if shm is None or shm.total_bytes is None:
        raise Skip("/dev/shm size unknown")
    total, available = _memory(facts)
    store = object_store_bytes(facts)
    shm_size = shm.free_bytes if shm.free_bytes is not None else shm.total_bytes
    if shm_size >= store:
        return []
    fraction = _const(facts, "ray.object_store_fraction")
    cap = _const(facts, "ray.object_store_max_bytes")
    memory = available if available is not None else total
    if store >= cap:  # Ray's cap, not the fraction, sets the size
        why = f"its cap of {cap / 1e9:.0f} GB, below {fraction:.0%} of {_gib(memory)}"
    else:
        why = f"{fraction:.0%} of {_gib(memory)}"
    return [
        Hit(
            f"/dev/shm has {_gib(shm_size)} but Ray's default object store is {_gib(store)} "
            f"({why}): Ray will put it in /tmp ('The object store is using /tmp "
            "instead of /dev/shm')",
            evidence={"dev_shm_bytes": shm_size, "object_store_bytes": int(store)},
            fix=fix(
                "Give the container a larger /dev/shm",
                "manual",
                shm_step(facts),
            ),
        )
    ]


@from_log("RAY105")
def object_store_in_tmp_in_log(facts: Facts, line: LogLine) -> Hit:
    """Ray's own warning: it put the object store in /tmp because /dev/shm had less room than
    the store (python/ray/_private/services.py: the warning's --shm-size is
    ``object_store_memory * 1.1 / 2**30``). Ray's refusal to start (a store over 10 GB that
    /dev/shm cannot hold, 'The configured object store size exceeds /dev/shm size') is
    ``_store_refused``."""
    if "exceeds" in line.text:
        return _store_refused(line)
    shm = line.number("shm_bytes")
    asked = line.number("ray_shm_suggest_gib")
    if asked is not None and shm is not None and asked * GIB < 2 * shm:
        asked = None  # Ray capped its store to /dev/shm (Ray 1.x): its figure is no target
    have = f"/dev/shm has {_gib(shm)}" if shm is not None else "/dev/shm is too small"
    size = f"{math.ceil(asked)}g" if asked else "<more than 30% of RAM>"
    wanted = (
        f" (Ray asks for {asked:.2f} GiB, 1.1 times its object store, and advises more than "
        "30% of the node's RAM)"
        if asked
        else " (Ray advises more than 30% of the node's RAM)"
    )
    return Hit(
        f"{have} and Ray put its object store in /tmp instead (line {line.line}): object "
        "transfers go through disk",
        evidence={"line": line.line, "dev_shm_bytes": shm, "ray_asks_gib": asked},
        fix=fix(
            "Give the container a larger /dev/shm" + wanted,
            "manual",
            manual(
                f"docker run --shm-size={size} (or --ipc=host); on Kubernetes an emptyDir with "
                "medium: Memory at /dev/shm; in a Ray cluster config, add it to run_options"
            ),
        ),
    )


def _store_refused(line: LogLine) -> Hit:
    """Ray's ValueError: the store (its size in GB, 10**9 bytes, where Ray 1.3+ states it) does
    not fit /dev/shm and is too large for Ray to put in /tmp; /dev/shm sized for the store
    first (what the threads establish), then a smaller store, then slow storage."""
    store = line.number("ray_store_gb")
    shm = line.number("ray_shm_gb")
    sizes = (
        f" ({store:.1f} GB asked, /dev/shm {shm:.1f} GB)"
        if store is not None and shm is not None
        else ""
    )
    size = f"{math.ceil(store * 1e9 * 1.1 / GIB)}g" if store is not None else "<the store + 10%>"
    return Hit(
        f"Ray refused to start (line {line.line}): its object store is larger than /dev/shm"
        f"{sizes}, and Ray keeps a store over 10 GB out of /tmp",
        evidence={"line": line.line, "object_store_gb": store, "dev_shm_gb": shm},
        fix=fix(
            "Give the container a /dev/shm larger than the object store; or ask Ray for a "
            "smaller store; RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE=1 starts it in /tmp (slow)",
            "manual",
            manual(
                f"docker run --shm-size={size} (or --ipc=host); on Kubernetes an emptyDir with "
                "medium: Memory at /dev/shm, its sizeLimit above the store; in a Ray cluster "
                "config, add --shm-size to run_options"
            ),
            manual(
                "a smaller store: ray start --object-store-memory=<bytes below /dev/shm's size> "
                "(ray.init(object_store_memory=...))"
            ),
            manual("export RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE=1  (the store in /tmp: slower)"),
        ),
        severity=Severity.ERROR,
    )


@rule("RAY106", "memory-above-ray-threshold", Severity.ERROR)
def memory_above_threshold(facts: Facts) -> Iterable[Hit]:
    """The node already uses more memory than Ray's memory monitor allows

    ## What it checks
    Used memory (1 - available / total, within the cgroup limit when there is one) against
    `RAY_memory_usage_threshold` (0.95 by default), before the job starts.

    ## Why it matters
    Ray's memory monitor kills workers as soon as usage is above the threshold:
    `Task was killed due to the node running low on memory`; with the monitor disabled the
    kernel's OOM killer does it instead. Either way actors die with SYSTEM_ERROR.

    ## Example
    120 GiB of 124 GiB in use on a node whose last job left processes behind.

    ## Fix
    Stop leftover processes; reduce per-task memory or parallelism; raise the threshold only
    if you know the memory is reclaimable.

    ## References
    - https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html
    """
    total, available = _memory(facts)
    if available is None:
        raise Skip("available memory unknown")
    threshold = _env_float(facts, "RAY_memory_usage_threshold") or _const(
        facts, "ray.memory_usage_threshold"
    )
    used = 1 - available / total if total else 0
    if used < threshold:
        return []
    evidence = {
        "used_fraction": round(used, 4),
        "threshold": threshold,
        "available_bytes": available,
        "total_bytes": total,
    }
    source = facts.report.system.source or ""
    if source.startswith("log ("):
        # the figures of Ray's kill report: the memory was used while the job ran, typically by
        # its own workers (the report's "Top 10 memory users": ray::WorkerDict ...), not
        # left over from before it; the fix is what Ray's OOM-prevention guide advises
        return [
            Hit(
                f"Ray's memory monitor saw {used:.0%} of {_gib(total)} in use while the job ran, "
                f"above its {threshold:.0%} threshold, and killed workers",
                evidence=evidence,
                fix=fix(
                    "Make the job fit the node's memory: run fewer workers/actors at once or "
                    "smaller ones (request more CPUs or memory per task so that fewer are "
                    "scheduled together; smaller batches or model shards), or give the node more "
                    "memory; RAY_memory_usage_threshold (set when Ray starts) moves the kill "
                    "point only where the memory is reclaimable. If the kill report's top memory "
                    "users are not the job's ray:: workers, stop those processes first.",
                    "manual",
                    manual(
                        "fewer or smaller workers per node, or more memory "
                        "(docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html)"
                    ),
                ),
            )
        ]
    return [
        Hit(
            f"memory is already {used:.0%} used ({_gib(available)} available of {_gib(total)}); Ray's "
            f"memory monitor kills workers above {threshold:.0%}",
            evidence=evidence,
            fix=fix(
                "Free memory before the job starts",
                "manual",
                manual("stop leftover processes (ray stop --force) and check `free -g`"),
            ),
        )
    ]


@rule("RAY107", "cgroup-memory-below-host", Severity.WARNING)
def cgroup_below_host(facts: Facts) -> Iterable[Hit]:
    """The container's memory limit is below the host's memory

    ## What it checks
    The cgroup (v1 or v2) memory limit against the host memory `/proc/meminfo` reports.

    ## Why it matters
    Processes that size themselves from host memory (data loaders, vLLM's CPU swap space,
    libraries reading /proc/meminfo) plan for memory the container cannot have, and the cgroup's
    OOM killer ends them; under Ray the actor dies with SYSTEM_ERROR. Ray's own memory monitor
    is cgroup-aware, the rest often is not.

    ## Example
    A 64 GiB container limit on a 1 TiB host.

    ## Fix
    Size the job for the limit (or raise the limit); set explicit memory sizes instead of
    fractions of host memory.

    ## References
    - https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html
    - https://docs.kernel.org/admin-guide/cgroup-v2.html
    """
    system = facts.system()
    if system.cgroup is None:
        raise Skip("cgroup limits unknown", "system.cgroup")
    limit = system.cgroup.memory_limit_bytes
    host = system.memory_total_bytes
    if limit is None or host is None or limit >= host:
        return []
    return [
        Hit(
            f"the container may use {_gib(limit)} but the host has {_gib(host)}: tools that size "
            "themselves from /proc/meminfo will be OOM-killed by the cgroup",
            evidence={
                "cgroup_limit_bytes": limit,
                "host_memory_bytes": host,
                "cgroup_version": system.cgroup.version,
            },
            fix=fix(
                "Size memory-hungry settings for the container limit",
                "manual",
                manual("set explicit memory sizes (object store, swap space) within the limit"),
            ),
        )
    ]


@rule("RAY108", "ray-temp-path-too-long", Severity.ERROR)
def ray_temp_path_too_long(facts: Facts) -> Iterable[Hit]:
    """Ray's temp dir path is too long for its Unix sockets

    ## What it checks
    The length of Ray's socket path, `<temp dir>/session_<26-character timestamp>_<pid>/sockets/plasma_store`
    with a 7-digit pid, against the 107 bytes a Unix socket path may have.

    ## Why it matters
    `ray.init()` / `ray start` fail at once with `OSError: AF_UNIX path length cannot exceed 107
    bytes`, typically when `TMPDIR` or `RAY_TMPDIR` points into a deep job or scratch directory
    (Slurm, PBS).

    ## Example
    TMPDIR=/var/tmp/pbs.5513403.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov gives a 125-byte
    socket path.

    ## Fix
    Point `RAY_TMPDIR` (or `--temp-dir`) at a short path such as /tmp/ray-$USER.

    ## References
    - ray-project/ray python/ray/_private/node.py (_prepare_socket_file)
    - https://man7.org/linux/man-pages/man7/unix.7.html
    """
    try:
        disk = facts.storage().by_role("ray_tmp")
    except Skip:
        disk = None
    path = disk.path if disk is not None else ray_temp_dir(dict(facts.env()))
    socket = path.rstrip("/") + _SESSION_SUFFIX.format(pid="1234567")
    limit = int(_const(facts, "unix.socket_path_max_bytes"))
    if len(socket.encode()) <= limit:
        return []
    return [
        Hit(
            f"Ray's temp dir {path} is {len(path)} characters: its socket paths reach "
            f"{len(socket.encode())} bytes, over the {limit}-byte limit ('AF_UNIX path length cannot exceed {limit} bytes')",
            evidence={
                "ray_temp_dir": path,
                "socket_path_bytes": len(socket.encode()),
                "limit": limit,
            },
            fix=fix("Use a short Ray temp dir", "safe", set_env(RAY_TMPDIR="/tmp/ray-tmp")),
        )
    ]


@rule("RAY109", "slurm-cpus-vs-ray", Severity.WARNING)
def slurm_cpus(facts: Facts) -> Iterable[Hit]:
    """Ray would start a worker per host CPU inside a smaller Slurm allocation

    ## What it checks
    Inside a Slurm job (`SLURM_JOB_ID` set) with Ray in use: the CPUs this process may run on
    against the host's CPU count.

    ## Why it matters
    `ray.init()` defaults `num_cpus` to the host's cores and starts that many workers inside a
    smaller CPU allocation: `Unable to register worker with raylet` and start-up timeouts.

    ## Example
    Slurm gives the job 16 CPUs on a 128-core host.

    ## Fix
    Pass the allocation to Ray: `ray.init(num_cpus=<allocated>)` or `ray start --num-cpus`
    (verl: `ray_init.num_cpus`).

    ## References
    - volcengine/verl docs/faq/faq.rst (Unable to register worker with raylet)
    """
    env = facts.env()
    if not (env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")) or not uses_ray(facts):
        return []
    system = facts.system()
    if system.cpu_count is None or system.cpu_affinity is None:
        raise Skip("CPU counts unknown")
    if system.cpu_affinity >= system.cpu_count:
        return []
    return [
        Hit(
            f"Slurm gives this job {system.cpu_affinity} of {system.cpu_count} CPUs, but ray.init() "
            f"defaults num_cpus to {system.cpu_count}: 'Unable to register worker with raylet'",
            evidence={"cpu_count": system.cpu_count, "cpu_affinity": system.cpu_affinity},
            fix=fix(
                f"Start Ray with num_cpus={system.cpu_affinity}",
                "manual",
                manual(
                    f"ray.init(num_cpus={system.cpu_affinity}) or ray start --num-cpus={system.cpu_affinity} (verl: ray_init.num_cpus={system.cpu_affinity})"
                ),
            ),
        )
    ]
