"""Free space where training jobs write: temp dir, Ray's temp dir, model caches, /dev/shm."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from envcheck.model.report import DiskUsage, StorageInfo
from envcheck.model.section import Section
from envcheck.probes.context import ProbeContext


def ray_temp_dir(env: dict[str, str] | os._Environ[str]) -> str:
    """Where Ray puts its sessions: $RAY_TMPDIR, else $TMPDIR, else /tmp, plus ``/ray``."""
    base = env.get("RAY_TMPDIR") or env.get("TMPDIR") or "/tmp"
    return str(Path(base) / "ray")


def _home(ctx: ProbeContext) -> Path:
    home = ctx.env.get("HOME")
    return Path(home) if home else Path.home()


def storage_paths(ctx: ProbeContext) -> list[tuple[str, str, bool]]:
    """(role, path, staged) in report order; staged paths live under ``ctx.root``."""
    env = dict(ctx.env)
    cache = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else _home(ctx) / ".cache"
    return [
        ("tmp", env.get("TMPDIR") or "/tmp", "TMPDIR" not in env),
        ("ray_tmp", ray_temp_dir(env), not (env.get("RAY_TMPDIR") or env.get("TMPDIR"))),
        ("hf_cache", env.get("HF_HOME") or str(cache / "huggingface"), False),
        ("torch_cache", env.get("TORCH_HOME") or str(cache / "torch"), False),
        ("dev_shm", "/dev/shm", True),
    ]


def _mounts(ctx: ProbeContext) -> list[tuple[str, str]]:
    """(mount point, fs type), longest mount point first."""
    text = ctx.read_text("/proc/self/mounts") or ""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            mounts.append((fields[1].replace("\\040", " "), fields[2]))
    return sorted(mounts, key=lambda m: len(m[0]), reverse=True)


def _fs_type(path: str, mounts: list[tuple[str, str]]) -> str | None:
    for point, fstype in mounts:
        if path == point or path.startswith(point.rstrip("/") + "/"):
            return fstype
    return None


def _total_and_free(path: Path) -> tuple[int, int]:
    """``shutil.disk_usage(path)``'s total and free bytes, from ``os.statvfs`` as it reads them
    on POSIX (importing shutil loads the bz2 and lzma modules, about 1% of a `check`)."""
    if not hasattr(os, "statvfs"):  # Windows
        import shutil

        usage = shutil.disk_usage(path)
        return usage.total, usage.free
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def measure(
    role: str, path: str, locate: Callable[[str], Path], mounts: list[tuple[str, str]]
) -> DiskUsage:
    """Usage of the filesystem that holds ``path`` (or would hold it: nearest existing parent)."""
    logical = Path(path)
    while not locate(str(logical)).exists() and logical != logical.parent:
        logical = logical.parent
    exists = locate(path).exists()
    try:
        total, free = _total_and_free(locate(str(logical)))
    except OSError:
        return DiskUsage(role=role, path=path, exists=exists)
    return DiskUsage(
        role=role,
        path=path,
        measured_path=str(logical),
        exists=exists,
        total_bytes=total,
        free_bytes=free,
        fs_type=_fs_type(str(logical), mounts),
    )


def probe_storage(ctx: ProbeContext) -> Section[StorageInfo]:
    mounts = _mounts(ctx)
    disks = []
    for role, path, staged in storage_paths(ctx):
        disks.append(measure(role, path, ctx.path if staged else Path, mounts))
    return Section.ok(StorageInfo(disks=tuple(disks)), source="statvfs")
