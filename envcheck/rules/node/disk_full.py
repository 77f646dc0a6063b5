"""A file system the job writes to is full: SYS210, read from the line that says so (the
signatures in matrices/signatures/storage.toml). /dev/shm (SYS101) and Ray's temp directory
(RAY103) have rules of their own; this one is every other disk: checkpoints, caches, pip's
build directory, the container's layer."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# the path a line names: "[Errno 28] No space left on device: '/ckpt/step_100/model.pt'"
_PATH = lazy(r"No space left on device: '(?P<path>/[^']*)'")
_OWN_RULES = ("/dev/shm", "/tmp/ray")  # SYS101, RAY103
# lines that say a file write came up short by themselves (a checkpoint, not shared memory)
_WRITER_LINES = frozenset({"torch-save-write-failed"})


@rule("SYS210", "disk-full", Severity.ERROR)
def disk_full(facts: Facts) -> Iterable[Hit]:
    """A file system the job writes to is full (no space left on device)

    ## What it checks
    Only a log says it: torch.save's `PytorchStreamWriter failed writing file ...: file write
    failed` and `unexpected pos N vs M` (PyTorch's zip writer, caffe2/serialize/
    inline_container.cc, when a write comes up short), and `No space left on device` as
    CPython, Rust's standard library (`(os error 28)`: safetensors, tokenizers, uv) and the
    shell print it, on a path other than /dev/shm (SYS101) and Ray's temp directory (RAY103).

    ## Why it matters
    A checkpoint, a model download or a wheel build stops half-written: the job dies at its
    first save, hours in, and a checkpoint cut short cannot be loaded later.

    ## Example
    `torch.save(state, "/ckpt/step_4000.pt")` on a full disk: `RuntimeError: [enforce fail at
    inline_container.cc:626] . unexpected pos 1634368 vs 1634256`.

    ## Fix
    See which disk is full (`df -h` on the path the line names, `du -sh` of the directory),
    free space (old checkpoints, `~/.cache/huggingface`, `pip cache purge`, `docker system
    prune`), or write to a bigger disk: the trainer's output directory, `HF_HOME` for model
    downloads, `TMPDIR` for pip's builds.

    ## References
    - https://github.com/pytorch/pytorch/blob/main/caffe2/serialize/inline_container.cc
      (`unexpected pos `, `PytorchStreamWriter failed writing file `)
    - https://github.com/pytorch/pytorch/issues/76108 (PytorchStreamWriter's failed write: "my disk
      was full")
    - https://github.com/pytorch/pytorch/issues/156955 (`unexpected pos 64 vs 0` when /tmp is full)
    - https://man7.org/linux/man-pages/man3/errno.3.html (ENOSPC; EDQUOT, a quota used up:
      the fix names the quota tool and moves the caches to a scratch file system)
    """
    raise Skip("only a log line states that a disk is full", "log.system")


_QUOTA = lazy(r"Disk quota exceeded|\(os error 122\)")


def _quota_hit(line: LogLine) -> Hit:
    """EDQUOT: the user's quota, not the disk; df shows room, the site's quota tool does not."""
    return Hit(
        f"The file system's quota for this user or group is used up (line {line.line}): the "
        "write was refused though the disk may have room (EDQUOT)",
        evidence={"line": line.line},
        fix=fix(
            "Free space within the quota or write elsewhere: quota -s (Lustre: lfs quota -h "
            "-u $USER <mount>, or the site's quota tool) shows it; pip cache purge and remove "
            "old caches and checkpoints, or point PIP_CACHE_DIR, HF_HOME, TORCH_HOME and TMPDIR "
            "at a scratch or project file system",
            "manual",
            manual("quota -s  (Lustre: lfs quota -h -u $USER <mount>; GPFS: the site's tool)"),
            manual("du -sh ~/.cache/* 2>/dev/null | sort -h | tail  (the largest caches)"),
            manual("pip cache purge"),
            manual(
                "export PIP_CACHE_DIR=/scratch/$USER/pip HF_HOME=/scratch/$USER/hf "
                "TORCH_HOME=/scratch/$USER/torch TMPDIR=/scratch/$USER/tmp"
            ),
        ),
    )


@from_log("SYS210")
def disk_full_in_log(facts: Facts, line: LogLine) -> Hit | None:
    if _QUOTA.search(line.text):
        return _quota_hit(line)
    found = _PATH.search(line.text)
    path = found.group("path") if found else None
    if path is not None and path.startswith(_OWN_RULES):
        return None  # /dev/shm or Ray's temp directory: their own rules say it
    if path is None and line.signature not in _WRITER_LINES:
        # ENOSPC without a path may be /dev/shm or Ray's spill directory: left open
        raise NotStated("the line names no path, so not which file system is full", "log.system")
    where = f"the disk holding {path}" if path else "the disk the job writes to"
    target = (path.rsplit("/", 1)[0] or "/") if path else "."
    return Hit(
        f"{where[0].upper()}{where[1:]} is full (line {line.line}): the write came up short, "
        "so the file (a checkpoint, a download, a build) is cut off",
        evidence={"line": line.line, **({"path": path} if path else {})},
        fix=fix(
            f"Free space on {where} or write to a bigger disk: df -h {target}; remove old "
            "checkpoints and caches (du -sh ~/.cache/* | sort -h; pip cache purge; docker "
            "system prune), or point the job's output dir, HF_HOME and TMPDIR at a disk with room",
            "manual",
            manual(f"df -h {target}"),
            manual("du -sh ~/.cache/* 2>/dev/null | sort -h | tail  (the largest caches)"),
            manual("pip cache purge; docker system prune  (where they apply)"),
            manual("export HF_HOME=/path/on/bigger/disk TMPDIR=/path/on/bigger/disk"),
        ),
    )
