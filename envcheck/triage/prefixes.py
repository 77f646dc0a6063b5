"""The prefixes a launcher puts before every line a process prints, read off before a line is
named: a multi-node job's log is the launcher's copy of many processes' output, and the message
a signature is written for starts after the prefix.

Each prefix is the launcher's own format (its source beside it). Only a prefix at the start of a
line is read off, repeatedly (a Ray worker's line inside a Slurm task's output carries both);
the scanner names a candidate line by what follows its prefixes whenever the whole line names
nothing, or only a benign (noise) or generic line (Scanner._name): a prefix can add a match,
never take away a more specific one. The prefixes are only read on lines a signature may match
anywhere, so a log whose every line carries a prefix costs no more to scan.
"""

from __future__ import annotations

import re

# pdsh's host before a line of its output (see LAUNCHER_PREFIXES)
_PDSH_HOST = rb"(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z]*[0-9]+|[0-9]{1,3}(?:\.[0-9]{1,3}){3})"

# (what prints it, the prefix as a regex over bytes, the source of its format)
LAUNCHER_PREFIXES: tuple[tuple[str, bytes, str], ...] = (
    (
        "Ray: a task's or actor's line forwarded to the driver",
        rb"\((?:[A-Za-z_][\w.]*(?:\(\))? )?pid=[0-9]+(?:, ip=[0-9a-fA-F.:]+)?\) ",
        "ray-project/ray python/ray/_private/worker.py print_worker_logs: "
        "'({prefix_for}{pid}) {message}', with ', ip={ip}' when the worker is on another node, "
        "prefix_for = '<actor or task name> pid='",
    ),
    (
        "Ray: the raylet's and the autoscaler's lines",
        rb"\((?:raylet|autoscaler(?: \+[0-9hms]+)?)(?:, ip=[0-9a-fA-F.:]+)?\) ",
        "ray-project/ray python/ray/_private/worker.py print_worker_logs (pid 'raylet', "
        "'autoscaler +<time_string()>')",
    ),
    (
        "torchrun (torch.distributed.elastic): a local rank's line",
        rb"\[(?:[A-Za-z_][\w-]*)?[0-9]+\]: ?",
        "pytorch/pytorch torch/distributed/elastic/agent/server/local_elastic_agent.py: 'Each "
        "log line will be by default prefixed by [${role_name}${local_rank}]: (e.g. "
        "[trainer0]: foobar)'; log_line_prefix_template '[${rank}]:'; c10's '[rank0]:' prefix",
    ),
    (
        "Open MPI mpirun --tag-output",
        rb"\[[0-9]+,[0-9]+\]<std(?:out|err|diag)>: ?",
        "Open MPI mpirun(1) --tag-output: 'Tag each line of output to stdout, stderr, and "
        "stddiag with [jobid, MCW_rank]<stdxxx>'",
    ),
    (
        "Slurm srun --label",
        rb" *[0-9]+: ",
        "Slurm srun(1) -l, --label: 'Prepend task number to lines of stdout/err'",
    ),
    (
        "pdsh (DeepSpeed's multi-node launcher): a host's line",
        # a host name with a hyphen and a number (worker-0, gpu-node-07) or an IPv4 address:
        # a bare word with a digit would read a soname's line ('libcuda.so.1: cannot open')
        _PDSH_HOST + rb": ",
        "pdsh(1): each line of output is prefixed with the name of the host it came from; "
        "microsoft/DeepSpeed deepspeed/launcher/multinode_runner.py PDSHRunner runs 'pdsh -S -f "
        "1024 -w <hosts>'",
    ),
    (
        "a timestamp (kubectl logs --timestamps, docker logs -t, CI runners), and the level "
        "word a logger prints after it",
        rb"\[?[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"
        rb"(?:Z|[+-][0-9]{2}:?[0-9]{2})?\]? (?:-? ?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)"
        rb"(?: -)? )?",
        "RFC 3339 (kubectl logs --timestamps: RFC3339Nano; docker logs --timestamps); Python "
        "logging's default asctime '%Y-%m-%d %H:%M:%S,mmm' and its level names (logging "
        "module: DEBUG, INFO, WARNING, ERROR, CRITICAL) in '%(asctime)s %(levelname)s' and "
        "'%(asctime)s - %(levelname)s - %(message)s'",
    ),
    (
        "docker compose logs: a service's line",
        rb"[A-Za-z0-9][A-Za-z0-9_.-]*-[0-9]+ +\| ",
        "docker/compose (v2) logs: '<service>-<index>  | <line>', the name padded to the "
        "longest service's",
    ),
    (
        "Docker BuildKit's plain progress output",
        rb"#[0-9]+ [0-9]+\.[0-9]+ ",
        "moby/buildkit util/progress/progressui (plain mode: '#<step> <seconds> <line>')",
    ),
    (
        "Omniverse Kit (Isaac Sim, Isaac Lab, OmniGibson): a plugin's line, and the Python "
        "output Kit forwards through it",
        rb"(?:\[[0-9,]+ms\] )?\[(?:Info|Warning|Error|Fatal|Verbose)\] "
        rb"\[(?:gpu|omni|carb|isaacsim|isaaclab)\.[A-Za-z0-9_.-]+\] (?:\[py std(?:out|err)\]: ?)?",
        "NVIDIA Omniverse Kit log format ('<time> [<ms>] [<level>] [<plugin>] <message>', the "
        "time read by the timestamp prefix above; Python's stderr as '[py stderr]: <line>'): "
        "https://github.com/isaac-sim/IsaacLab/issues/4012 . Without it a Kit line was named "
        "only by the benign omniverse-kit-line, hiding the failure it carries "
        "('[Error] [omni.kit.app._impl] [py stderr]: ModuleNotFoundError: ...')",
    ),
    (
        "a Markdown block quote: a log quoted in an issue comment or a mail reply",
        rb"> ",
        "CommonMark spec 0.31.2, 5.1 Block quotes: 'a block quote marker consists of 0-3 spaces "
        "of initial indentation, plus (a) the character > together with a following space'",
    ),
    (
        "pytest's report of a failing test's error lines",
        rb"E {3,}",
        "pytest-dev/pytest src/_pytest/_code/code.py (FormattedExcinfo.fail_marker = 'E', the "
        "error's lines indented after it)",
    ),
)

_PREFIX = re.compile(rb"(?:" + rb"|".join(p for _, p, _ in LAUNCHER_PREFIXES) + rb")")
# Ray's log deduplication: '... [repeated 7x across cluster]' after a line it saw on other
# workers (ray-project/ray python/ray/_private/ray_logging: dedup's ' [repeated {}x across
# cluster]')
_REPEATED = re.compile(rb" \[repeated [0-9]+x across cluster\]\s*$")
_MAX_PREFIXES = 4  # a line carries at most a few (Ray inside srun inside a timestamped log)


def strip_prefixes(line: bytes) -> bytes | None:
    """``line`` without the launchers' prefixes at its start (and Ray's repeat count at its
    end), or None when it has none."""
    rest = line
    for _ in range(_MAX_PREFIXES):
        found = _PREFIX.match(rest)
        if found is None or not found.end():
            break
        rest = rest[found.end() :]
    rest = _REPEATED.sub(b"", rest)
    return rest if rest != line and rest.strip() else None


def unprefixed_text(text: str) -> str:
    """A line of text (a context line extractors read) without its launchers' prefixes."""
    rest = strip_prefixes(text.encode("utf-8", errors="surrogateescape"))
    return text if rest is None else rest.decode("utf-8", errors="surrogateescape")


# pdsh's host prefix on a line of a job's output (the first prefix of the line): the forms
# above, and a bare host name ending in two or more digits ('gpu003: ', 'worker02: ',
# 'ainode01: '), read only for the host (a line is not named by what follows it); the words a
# program numbers its own lines with are none ('rank10: ', 'epoch12: ', 'step100: ')
_LINE_HOST = re.compile(
    rb"(" + _PDSH_HOST + rb"|(?!(?:rank|step|epoch|iter|line|cuda|batch|layer|sample|test|sm|gfx)"
    rb"[0-9])[a-z][a-z-]*[0-9]{2,}): "
)
# NCCL's own prefix on each of its debug lines, after any launcher's: 'host:pid:tid [dev] '
# and 'NCCL INFO' or, for a WARN, the source file and line first (NVIDIA/nccl src/debug.cc
# ncclDebugLog: '%s:%d:%d [%d] NCCL INFO ' and '%s:%d:%d [%d] %s:%d NCCL WARN ', the hostname,
# pid, tid and CUDA device)
_NCCL_HOST = re.compile(
    r"([A-Za-z0-9][A-Za-z0-9._-]*):[0-9]+:[0-9]+ \[[0-9]+\] (?:[^ ]+:[0-9]+ )?NCCL (?:INFO|WARN)"
)


def line_host(text: str) -> str | None:
    """The host pdsh names before a line of the output it gathered (DeepSpeed's multi-node
    launcher: 'worker-1: ...'), or None for a line without that prefix."""
    found = _LINE_HOST.match(text.encode("utf-8", errors="surrogateescape"))
    return found.group(1).decode() if found else None


def nccl_host(text: str) -> str | None:
    """The host NCCL's own prefix names on one of its INFO or WARN lines (after any launcher's
    prefixes), or None for another line."""
    found = _NCCL_HOST.match(unprefixed_text(text))
    return found.group(1) if found else None
