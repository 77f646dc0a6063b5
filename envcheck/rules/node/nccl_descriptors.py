"""NET124: NCCL out of file descriptors, its sockets and proxy connections past the process's
open-files limit (the signature in matrices/signatures/nccl_transports.toml). torch's own
descriptor exhaustion (shared tensors of DataLoader workers) is SYS184."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.worker_limits import open_files_limit

# NCCL's troubleshooting guide raises the limits of the job's processes; 1048576 is systemd's
# and Docker's usual hard limit, 65536 fits any one node's ranks
_STEPS = (
    "ulimit -n 1048576   # in the shell (or job script) that starts the ranks; `ulimit -Hn` is "
    "the most a user may set",
    "docker run --ulimit nofile=1048576:1048576 ...   # containers (Kubernetes: the runtime's "
    "default LimitNOFILE)",
    "srun --propagate=NOFILE ...   # Slurm passes the submitting shell's limit; the nodes' own "
    "ceiling is the slurmd unit's LimitNOFILE",
)


@rule("NET124", "nccl-open-files-limit", Severity.WARNING)
def nccl_open_files(facts: Facts) -> Iterable[Hit]:
    """NCCL ran out of file descriptors: the process's open-files limit is below what its connections need

    ## What it checks
    A log's NCCL line with EMFILE: `socketTryAccept: Accept failed: Too many open files`,
    `[Service thread] Accept failed Too many open files` (the proxy's service thread),
    `Net : Socket creation failed : Too many open files`. On a node, `ulimit -n` itself is
    not a finding: what a job needs depends on its ranks.

    ## Why it matters
    Every NCCL peer connection (bootstrap, each channel's socket, the proxy's connections from
    the local ranks) and every shared-memory segment is a file descriptor. Jobs with many ranks
    or channels per node pass a soft limit of 1024, and NCCL fails at communicator setup with
    `unhandled system error` or hangs in its proxy.

    ## Example
    64 nodes of 8 GPUs under a login shell's `ulimit -n 1024`:
    `NCCL WARN [Service thread] Accept failed Too many open files`.

    ## Fix
    Raise the open-files limit of the processes that run the ranks: `ulimit -n 1048576` in the
    job script, `docker run --ulimit nofile=1048576:1048576`, or the launcher's and
    scheduler's limits (Slurm's LimitNOFILE).

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/misc/socket.cc
    - https://github.com/NVIDIA/nccl/blob/master/src/proxy.cc
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    """
    raise Skip("only a log line states NCCL ran out of descriptors", "log.open_files")


@from_log("NET124")
def nccl_open_files_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The node's limit, where known, is named beside the line. NCCL's proxy failures that
    state another error are not this cause."""
    if "Too many open files" not in line.text and "EMFILE" not in line.text:
        return None
    limit = open_files_limit(facts)
    return Hit(
        f"NCCL could not open another socket: the process reached its open-files limit (line "
        f"{line.line}, EMFILE){limit}",
        evidence={"line": line.line},
        fix=fix(
            "Raise the open-files limit of the ranks' processes: ulimit -n 1048576 (docker run "
            "--ulimit nofile=1048576:1048576)",
            "manual",
            *(manual(s) for s in _STEPS),
        ),
    )
