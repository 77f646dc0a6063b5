"""Thread creation refused (matrices/signatures/memory_threads.toml): the process and thread
limit reached, EAGAIN (SYS186), or a container's seccomp filter refusing the clone3 call of a
newer glibc, EPERM (SYS187). Only a log states either; the line's error name decides which."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# Docker's default seccomp profile answers clone3 with ENOSYS (glibc then falls back to clone)
# from Engine 20.10.10 on (moby/moby#42681); older engines answer EPERM.
DOCKER_CLONE3_RELEASE = "20.10.10"


@rule("SYS186", "thread-limit-reached", Severity.WARNING)
def thread_limit_reached(facts: Facts) -> Iterable[Hit]:
    """A new thread or process was refused: the process/thread limit is reached (EAGAIN)

    ## What it checks
    Only a log states it: `OpenBLAS blas_thread_init: pthread_create failed for thread 5 of
    64: Resource temporarily unavailable` (with `RLIMIT_NPROC 4096 current` beside it),
    `libgomp: Thread creation failed: Resource temporarily unavailable`, LLVM OpenMP's
    `OMP: System error #11: Resource temporarily unavailable`, `bash: fork: retry: Resource
    temporarily unavailable`, Python's `RuntimeError: can't start new thread`, Java's
    `unable to create native thread`, Rust's `failed to spawn thread` with `code: 11`
    (tokenizers' and rayon's thread pools). Also OpenBLAS's own cap: `OpenBLAS : Program is
    Terminated. Because you tried to allocate too many memory regions.` (more threads than
    the library was built for, its NUM_THREADS).

    ## Why it matters
    pthread_create and fork return EAGAIN when the user's process count (RLIMIT_NPROC,
    `ulimit -u`, which counts threads), the cgroup's pids.max (`docker run --pids-limit`,
    Kubernetes' podPidsLimit, systemd's TasksMax) or the kernel's threads-max is reached.
    Every BLAS and OpenMP runtime starts one thread per core in every process: 16 DataLoader
    workers on a 64-core node each starting 64 OpenBLAS threads pass a 1024 or 4096 limit
    before any memory runs short.

    ## Example
    nnU-Net on a 64-core node whose RLIMIT_NPROC is 4096: `OpenBLAS blas_thread_init:
    pthread_create failed for thread 50 of 64: Resource temporarily unavailable`, with
    `RLIMIT_NPROC 4096 current, 513046 max` beside it.

    ## Fix
    Fewer threads per process: `export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1` (or a small
    number) before the job starts; or raise the limit: `ulimit -u` (limits.conf `nproc`), a
    container's `--pids-limit` / podPidsLimit, systemd's TasksMax.

    ## References
    - https://github.com/OpenMathLib/OpenBLAS/blob/develop/driver/others/blas_server.c
    - https://github.com/willsheffler/worms/issues/2
    - https://github.com/muschellij2/fslr/issues/14
    - https://github.com/NOAA-EMC/global-workflow/issues/2211
    - https://github.com/podman-container-tools/podman/issues/17647
    """
    raise Skip("only a log line states that thread creation was refused", "log.thread_limit")


# OpenBLAS's buffers for a number of threads fixed when it was built (memory_threads.toml)
_OPENBLAS_BUFFERS = "openblas-thread-buffers-exhausted"


@from_log("SYS186")
def thread_limit_reached_in_log(facts: Facts, line: LogLine) -> Hit:
    """Fewer threads first (what the threads establish), the limit second."""
    if line.signature == _OPENBLAS_BUFFERS:
        return Hit(
            f"more threads called OpenBLAS than the library was built for (line {line.line}): "
            "its thread pool is sized to the node's cores, and a node with more cores than its "
            "NUM_THREADS (or BLAS called from many threads at once) runs out of its buffers",
            evidence={"line": line.line},
            fix=fix(
                "Cap OpenBLAS's threads below the number its message names: "
                "OPENBLAS_NUM_THREADS=8 (and OMP_NUM_THREADS) before the job starts",
                "manual",
                manual(
                    "export OPENBLAS_NUM_THREADS=8 OMP_NUM_THREADS=8  (below the 'maximum of N "
                    "threads' OpenBLAS prints; 1 where many processes or threads call BLAS)"
                ),
                manual(
                    "or an OpenBLAS built with a larger NUM_THREADS (make NUM_THREADS=256) for "
                    "a node with more cores"
                ),
            ),
            severity=Severity.ERROR,
        )
    return Hit(
        f"a new thread or process was refused (line {line.line}): the process/thread limit "
        "(ulimit -u, which counts threads, or the container's pids limit) is reached; BLAS "
        "and OpenMP runtimes start one thread per core in every process",
        evidence={"line": line.line},
        fix=fix(
            "Start fewer threads per process: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 (or "
            "a small number) before the job starts; or raise the process limit (ulimit -u, "
            "the container's --pids-limit)",
            "manual",
            manual(
                "export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1  (before "
                "the job; or 4, 8: the cores each process should use)"
            ),
            manual(
                "ulimit -u; cat /sys/fs/cgroup/pids.max  (the user's and the container's "
                "limit; raise with ulimit -u 65536 or nproc in /etc/security/limits.conf)"
            ),
            manual(
                "a container: docker run --pids-limit=-1 (podman --pids-limit, Kubernetes "
                "podPidsLimit, systemd TasksMax=infinity for the service)"
            ),
            manual("fewer DataLoader / multiprocessing workers (each one starts its own threads)"),
        ),
        severity=Severity.ERROR,
    )


@rule("SYS187", "thread-creation-refused-by-seccomp", Severity.WARNING)
def thread_creation_refused_by_seccomp(facts: Facts) -> Iterable[Hit]:
    """A container refused thread creation (EPERM): the host's Docker predates glibc's clone3

    ## What it checks
    Only a log states it: `OpenBLAS blas_thread_init: pthread_create failed for thread 1 of
    16: Operation not permitted` (with `RLIMIT_NPROC -1 current, -1 max`: no limit is
    reached), Go's `runtime/cgo: pthread_create failed: Operation not permitted`,
    `libgomp: Thread creation failed: Operation not permitted`.

    ## Why it matters
    glibc 2.34 and newer (Ubuntu 21.10+, Debian 12, Fedora 35 images) create threads with
    the clone3 system call and fall back to clone only on ENOSYS. Docker's default seccomp
    profile before Engine 20.10.10 (and hosts with an old libseccomp) answers clone3 with
    EPERM, so every new thread in the container fails: Python's `can't start new thread`,
    OpenBLAS, Go programs. The image runs on a newer Docker.

    ## Example
    label-studio 1.6.0's image on a host with an older Docker: `OpenBLAS blas_thread_init:
    pthread_create failed for thread 1 of 16: Operation not permitted`, `RuntimeError: can't
    start new thread`; it starts after Docker is updated (>= 20.10.12 in that thread).

    ## Fix
    Update Docker Engine on the host to 20.10.10 or newer (and libseccomp); until then
    `docker run --security-opt seccomp=unconfined` (compose: `security_opt:
    ["seccomp:unconfined"]`) or an image on an older distribution release.

    ## References
    - https://github.com/moby/moby/pull/42681
    - https://pkg.go.dev/github.com/AkihiroSuda/clone3-workaround
    - https://github.com/HumanSignal/label-studio/issues/3070
    - https://github.com/HumanSignal/label-studio/issues/3121
    - https://github.com/bytebase/bytebase/issues/3096
    """
    raise Skip("only a log line states that the container refused a thread", "log.thread_seccomp")


@from_log("SYS187")
def thread_creation_refused_by_seccomp_in_log(facts: Facts, line: LogLine) -> Hit:
    """Docker's update first (the cause), seccomp=unconfined as the stopgap the threads ran."""
    return Hit(
        f"thread creation was refused with EPERM (line {line.line}), not for a limit: the "
        "container's seccomp profile blocks clone3, which glibc 2.34+ uses for new threads "
        f"(Docker Engine before {DOCKER_CLONE3_RELEASE}, or an old libseccomp on the host)",
        evidence={"line": line.line},
        fix=fix(
            f"Update Docker Engine on the host to {DOCKER_CLONE3_RELEASE} or newer (and "
            "libseccomp); until then run the container with --security-opt "
            "seccomp=unconfined, or use an image on an older distribution release",
            "manual",
            manual(
                f"docker version  (Server: Engine < {DOCKER_CLONE3_RELEASE} blocks clone3); "
                "update docker-ce / containerd.io and libseccomp2 from the host's packages"
            ),
            manual(
                "docker run --security-opt seccomp=unconfined ...  (compose: security_opt: "
                '["seccomp:unconfined"]; a stopgap, it turns the filter off)'
            ),
            manual(
                "or an image on an older release (python:3.11-bullseye instead of bookworm, "
                "ubuntu:20.04) whose glibc predates clone3"
            ),
        ),
        severity=Severity.ERROR,
    )
