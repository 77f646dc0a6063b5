"""Limits DataLoader workers run into before RAM does (matrices/signatures/memory.toml): Windows'
commit limit (the paging file, SYS183) and the open-files limit that torch.multiprocessing's
file_descriptor sharing strategy exhausts (SYS184). Only a log states either."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual


@rule("SYS183", "windows-paging-file-too-small", Severity.WARNING)
def windows_paging_file(facts: Facts) -> Iterable[Hit]:
    """Windows' paging file is too small for the DataLoader workers (WinError 1455)

    ## What it checks
    Only a log states it: `OSError: [WinError 1455] The paging file is too small for this
    operation to complete. Error loading "...\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of
    its dependencies.` (localized: `页面文件太小`).

    ## Why it matters
    On Windows every DataLoader worker is a spawned process that imports torch again and maps
    its CUDA DLLs (cuDNN, cuBLAS: gigabytes of reserved address space each). Windows commits
    that memory against RAM plus the paging file, so eight workers fail before the job uses
    any real memory.

    ## Example
    `DataLoader(..., num_workers=12)` on a 16 GB Windows PC: each worker dies with WinError
    1455 while loading torch's DLLs.

    ## Fix
    Lower DataLoader `num_workers` (2, or 0 to confirm), or let Windows grow the paging file
    (System Properties > Advanced > Performance > Virtual memory: system managed size, or a
    larger custom size on a drive with room).

    ## References
    - https://github.com/cszn/KAIR/issues/127
    - https://github.com/JingyunLiang/SwinIR/issues/78
    - https://github.com/Comfy-Org/ComfyUI/issues/7069
    """
    raise Skip("only a log line states the paging file's limit", "log.windows_commit")


@from_log("SYS183")
def windows_paging_file_in_log(facts: Facts, line: LogLine) -> Hit:
    """Fewer workers first (what the threads establish), the paging file second."""
    return Hit(
        f"Windows could not commit memory (WinError 1455, line {line.line}): each DataLoader "
        "worker loads torch's CUDA DLLs again, and together they exceed RAM plus the paging file",
        evidence={"line": line.line},
        fix=fix(
            "Lower DataLoader num_workers (num_workers=2, or num_workers=0 to confirm), or let "
            "Windows grow the paging file (Virtual memory: system managed size)",
            "manual",
            manual("DataLoader(..., num_workers=0)  (or 2; the script's --workers / num_workers)"),
            manual(
                "System Properties > Advanced > Performance > Settings > Advanced > Virtual "
                "memory: 'System managed size' (or a larger custom size), then reboot"
            ),
            manual("DataLoader(..., pin_memory=False) also lowers what each batch commits"),
        ),
        severity=Severity.ERROR,
    )


@rule("SYS184", "torch-shared-tensors-exhaust-open-files", Severity.WARNING)
def shared_tensors_exhaust_files(facts: Facts) -> Iterable[Hit]:
    """DataLoader workers' shared tensors exhaust the open-files limit (file_descriptor strategy)

    ## What it checks
    Only a log states it: `RuntimeError: received 0 items of ancdata`, torch's `Too many open
    files. Communication with the workers is no longer possible.`, `unable to open shared memory
    object </torch_...> in read-write mode: Too many open files (24)`, `[Errno 24] Too many
    open files`.

    ## Why it matters
    torch.multiprocessing's default sharing strategy on Linux passes each shared tensor as an
    open file descriptor. A dataset that returns many small tensors (dicts, lists) from many
    workers holds thousands of them and passes `ulimit -n` (often 1024); the descriptor of the
    next batch is dropped and the loader fails.

    ## Example
    `DataLoader(dataset, num_workers=4)` whose `__getitem__` returns a dict of numpy arrays:
    `RuntimeError: received 0 items of ancdata` after some thousand batches.

    ## Fix
    `torch.multiprocessing.set_sharing_strategy('file_system')` at the top of the script (before
    the DataLoader is created), or raise the limit (`ulimit -n 65536`; in a container
    `docker run --ulimit nofile=65536:65536`); `num_workers=0` avoids sharing.

    ## References
    - https://github.com/pytorch/pytorch/pull/34768
    - https://github.com/pytorch/pytorch/issues/973
    - https://github.com/Peterande/D-FINE/issues/22
    """
    raise Skip("only a log line states the descriptor limit was reached", "log.open_files")


def open_files_limit(facts: Facts) -> str:
    """'; ulimit -n is N' where the node states its open-files limit, else nothing: named
    beside a line that says the limit ran out."""
    try:
        nofile = facts.system().ulimits.get("nofile")
    except Skip:
        return ""
    return f"; ulimit -n is {nofile.soft}" if nofile is not None and nofile.soft > 0 else ""


@from_log("SYS184")
def shared_tensors_exhaust_files_in_log(facts: Facts, line: LogLine) -> Hit:
    """The sharing strategy first (torch's own advice and the threads' fix), the limit second."""
    limit = open_files_limit(facts)
    return Hit(
        f"the open-files limit ran out while DataLoader workers passed shared tensors as file "
        f"descriptors (line {line.line}; torch.multiprocessing's file_descriptor strategy){limit}",
        evidence={"line": line.line},
        fix=fix(
            "torch.multiprocessing.set_sharing_strategy('file_system') at the top of the script; "
            "or raise the open-files limit (ulimit -n 65536)",
            "manual",
            manual(
                "import torch.multiprocessing; torch.multiprocessing.set_sharing_strategy("
                "'file_system')  (first lines of the script, before any DataLoader)"
            ),
            manual(
                "ulimit -n 65536  (in the shell that starts the job; in a container: docker run "
                "--ulimit nofile=65536:65536)"
            ),
            manual("DataLoader(..., num_workers=0) shares nothing (to confirm)"),
        ),
    )
