"""Kernel-wide limits a job reaches before RAM runs out (matrices/signatures/memory.toml): the
per-process map count, vm.max_map_count, and the node's table of open files, fs.file-max
(SYS188). Both are sysctl settings of the host, not the process's ulimits or a container's
own: only a log states that one was reached, and the line's words say which."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# the value a program's start-up check asks for: Elasticsearch's "increase to at least [262144]"
_AT_LEAST = lazy(r"increase to at least \[(?P<value>[0-9]+)\]")
# Elasticsearch's MaxMapCountCheck LIMIT (1 << 18) and its documentation's command: the value
# to name where the line states none (torch's refused mapping)
MAP_COUNT_TARGET = 262144
# a larger fs.file-max to name: 2**21 (the value is the operator's choice; systemd 240+ sets
# the kernel's maximum, so a node still at a small one was set by its image)
FILE_MAX_TARGET = 2097152
# the lines that say the system's file table is full (memory.toml's system-file-table-full)
_FILE_TABLE_LINES = frozenset({"system-file-table-full"})


@dataclass(frozen=True)
class KernelLimit:
    """One sysctl limit as a line states it: its name, what it counts and the value to set."""

    name: str
    counts: str
    value: int


def limit_of(line: LogLine) -> KernelLimit:
    """The limit the line names: the file table for ENFILE's words, else the map count (with the
    value the line asks for, where it states one)."""
    if line.signature in _FILE_TABLE_LINES:
        return KernelLimit(
            "fs.file-max", "open files of all processes on the node", FILE_MAX_TARGET
        )
    found = _AT_LEAST.search(line.text)
    value = int(found.group("value")) if found else MAP_COUNT_TARGET
    return KernelLimit("vm.max_map_count", "memory mappings of one process", value)


@rule("SYS188", "kernel-limit-too-low", Severity.WARNING)
def kernel_limit_too_low(facts: Facts) -> Iterable[Hit]:
    """A kernel-wide limit (sysctl) is too low: vm.max_map_count or fs.file-max

    ## What it checks
    Only a log states it: Elasticsearch's and OpenSearch's bootstrap check `max virtual memory
    areas vm.max_map_count [65530] is too low, increase to at least [262144]` (5.x: `likely
    too low`), MongoDB's `vm.max_map_count is too low`; torch refusing to map a shared tensor
    with ENOMEM, `unable to mmap 4096 bytes from file </torch_...>: Cannot allocate memory
    (12)`; and the node's file table full, ENFILE: `OSError: [Errno 23] Too many open files
    in system`, Node.js' `ENFILE: file table overflow`.

    ## Why it matters
    vm.max_map_count caps the memory mappings one process may hold (65530 by default); a search
    engine's index files, or DataLoader workers handing back many small shared tensors (each
    one a mapping under torch's file_system strategy), pass it while RAM is still free, and
    mmap fails with ENOMEM, which reads like out of memory. fs.file-max caps the open files of
    all processes together: ENFILE (errno 23) is that node-wide table, not the process's
    `ulimit -n` (EMFILE, errno 24). Both are the host's settings: a container cannot raise
    them from inside.

    ## Example
    A Stable Diffusion fine-tune over 52k images with DataLoader workers: `RuntimeError: unable
    to mmap 4096 bytes from file </torch_362873_3123855485_63350>: Cannot allocate memory
    (12)`; num_workers=0 runs, and raising vm.max_map_count fixes it.

    ## Fix
    On the host (for a container: the Docker host, Docker Desktop's VM `wsl -d docker-desktop`,
    the Kubernetes node): `sudo sysctl -w vm.max_map_count=262144` (or the value the line asks
    for), made permanent with a file in /etc/sysctl.d; for ENFILE `sudo sysctl -w
    fs.file-max=2097152`, and find the process holding the files (`cat /proc/sys/fs/file-nr`).

    ## References
    - https://github.com/elastic/elasticsearch/blob/main/server/src/main/java/org/elasticsearch/bootstrap/BootstrapChecks.java
    - https://www.elastic.co/guide/en/elasticsearch/reference/current/vm-max-map-count.html
    - https://docs.kernel.org/admin-guide/sysctl/vm.html (max_map_count)
    - https://docs.kernel.org/admin-guide/sysctl/fs.html (file-max, file-nr)
    - https://man7.org/linux/man-pages/man2/mmap.2.html (ENOMEM: the maximum number of mappings)
    - https://github.com/kohya-ss/sd-scripts/issues/1790
    - https://github.com/spujadas/elk-docker/issues/92
    """
    raise Skip("only a log line states that a kernel-wide limit was reached", "log.sysctl_limit")


@from_log("SYS188")
def kernel_limit_in_log(facts: Facts, line: LogLine) -> Hit:
    """The sysctl on the host first (what the threads ran), made permanent second."""
    limit = limit_of(line)
    setting = f"{limit.name}={limit.value}"
    torch_map = line.signature == "torch-shared-mmap-refused"
    why = (
        "torch maps every shared tensor the DataLoader workers hand back, and mmap refused one "
        "more mapping (ENOMEM): the process passed the kernel's map count"
        if torch_map
        else f"the kernel's limit on the {limit.counts} is reached or below what the program needs"
    )
    extra = (
        (
            manual("DataLoader(..., num_workers=0) maps nothing (to confirm)"),
            manual("wc -l /proc/<pid>/maps  (near 65530 while it fails: the map count)"),
        )
        if torch_map
        else (
            (manual("cat /proc/sys/fs/file-nr  (allocated, free, max; lsof: who)"),)
            if limit.name == "fs.file-max"
            else ()
        )
    )
    return Hit(
        f"{limit.name} is too low (line {line.line}): {why}; it is a setting of the host "
        "(a container cannot raise it from inside)",
        evidence={"line": line.line, "sysctl": limit.name},
        fix=fix(
            f"Raise {limit.name} on the host: sudo sysctl -w {setting} (for a container: on "
            "the Docker host or the Kubernetes node); keep it in /etc/sysctl.d",
            "manual",
            manual(f"sudo sysctl -w {setting}"),
            manual(f"echo '{setting}' | sudo tee /etc/sysctl.d/99-{limit.name}.conf"),
            *extra,
        ),
    )
