"""OS, kernel, glibc, CPUs, memory, cgroup limits, container, ulimits and the nvcc toolkit."""

from __future__ import annotations

import os
import platform
import shlex

from envcheck.model.report import UNLIMITED, CgroupInfo, Limit, SystemInfo, Toolkit
from envcheck.model.section import Section
from envcheck.patterns import lazy
from envcheck.probes.context import ProbeContext
from envcheck.probes.run import run, which

# cgroup v1 reports "no limit" as a page-rounded LONG_MAX; anything this large is unlimited.
_V1_NO_LIMIT = 1 << 60
_ULIMITS = {
    "Max open files": "nofile",
    "Max locked memory": "memlock",
    "Max stack size": "stack",
    "Max address space": "as",
}
_NVCC_RELEASE = lazy(r"release (\d+\.\d+)")


def parse_os_release(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        try:
            parts = shlex.split(raw)
        except ValueError:
            parts = [raw.strip("\"'")]
        values[key.strip()] = parts[0] if parts else ""
    return values


def parse_meminfo(text: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            scale = 1024 if len(fields) > 1 and fields[1].lower() == "kb" else 1
            values[key.strip()] = int(fields[0]) * scale
    return values


def parse_limits(text: str) -> dict[str, Limit]:
    limits: dict[str, Limit] = {}
    for line in text.splitlines():
        for label, key in _ULIMITS.items():
            if line.startswith(label):
                fields = line[len(label) :].split()
                if len(fields) >= 2:
                    soft, hard = (UNLIMITED if f == "unlimited" else int(f) for f in fields[:2])
                    limits[key] = Limit(soft=soft, hard=hard)
    return limits


def _int(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def _cgroup(ctx: ProbeContext) -> CgroupInfo | None:
    text = ctx.read_text("/proc/self/cgroup")
    if text is None:
        return None
    lines = [line.split(":", 2) for line in text.splitlines() if line.count(":") >= 2]
    unified = next((p for h, c, p in lines if h == "0" and c == ""), None)
    if unified is not None and ctx.path("/sys/fs/cgroup/cgroup.controllers").exists():
        base = "/sys/fs/cgroup" + unified.rstrip("/")
        if not ctx.path(base).is_dir():
            base = "/sys/fs/cgroup"
        mem = ctx.read_text(f"{base}/memory.max")
        cpu = ctx.read_text(f"{base}/cpu.max")
        memory = None if mem is None or mem.strip() == "max" else _int(mem)
        cpus = None
        if cpu and not cpu.startswith("max"):
            quota_text, _, period_text = cpu.strip().partition(" ")
            quota_us, period_us = _int(quota_text), _int(period_text)
            if quota_us and period_us:
                cpus = round(quota_us / period_us, 2)
        return CgroupInfo(version=2, memory_limit_bytes=memory, cpu_limit=cpus)
    paths = {c: p for _h, controllers, p in lines for c in controllers.split(",") if c}
    mem_v1 = _int(ctx.read_text(_v1_file(ctx, "memory", paths, "memory.limit_in_bytes")))
    quota = _int(ctx.read_text(_v1_file(ctx, "cpu", paths, "cpu.cfs_quota_us")))
    period = _int(ctx.read_text(_v1_file(ctx, "cpu", paths, "cpu.cfs_period_us")))
    if mem_v1 is None and quota is None:
        return CgroupInfo(version=1 if lines else None)
    return CgroupInfo(
        version=1,
        memory_limit_bytes=mem_v1 if mem_v1 is not None and mem_v1 < _V1_NO_LIMIT else None,
        cpu_limit=round(quota / period, 2) if quota and quota > 0 and period else None,
    )


def _v1_file(ctx: ProbeContext, controller: str, paths: dict[str, str], name: str) -> str:
    """The controller file for this process's cgroup, or the hierarchy root's when not visible."""
    own = f"/sys/fs/cgroup/{controller}{paths.get(controller, '/').rstrip('/')}/{name}"
    return own if ctx.path(own).exists() else f"/sys/fs/cgroup/{controller}/{name}"


def detect_container(ctx: ProbeContext) -> tuple[str, str]:
    """(kind, evidence); kind is "none" when nothing suggests a container."""
    if ctx.env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes", "KUBERNETES_SERVICE_HOST is set"
    if ctx.path("/.dockerenv").exists():
        return "docker", "/.dockerenv exists"
    if ctx.path("/run/.containerenv").exists():
        return "podman", "/run/.containerenv exists"
    if ctx.env.get("container"):
        return ctx.env["container"], "$container is set"
    cgroup = ctx.read_text("/proc/1/cgroup") or ""
    for marker, kind in (
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ):
        if marker in cgroup:
            return kind, f"/proc/1/cgroup mentions {marker}"
    return "none", "no container markers"


def _glibc() -> str | None:
    try:
        value = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):
        return None
    if value and value.startswith("glibc "):
        return value.split(" ", 1)[1]
    return None


def _nvcc(ctx: ProbeContext) -> Toolkit | None:
    exe = which("nvcc", ctx.env)
    if exe is None:
        cuda_home = ctx.env.get("CUDA_HOME") or ctx.env.get("CUDA_PATH")
        candidate = os.path.join(cuda_home, "bin", "nvcc") if cuda_home else None
        if candidate and os.access(candidate, os.X_OK):
            exe = candidate
    if exe is None:
        return None
    result = run([exe, "--version"], timeout=ctx.timeout, env=ctx.env)
    match = _NVCC_RELEASE.search(result.stdout) if result.ok else None
    return Toolkit(nvcc_path=exe, version=match.group(1) if match else None)


def probe_system(ctx: ProbeContext) -> Section[SystemInfo]:
    release = parse_os_release(
        ctx.read_text("/etc/os-release") or ctx.read_text("/usr/lib/os-release") or ""
    )
    meminfo = parse_meminfo(ctx.read_text("/proc/meminfo") or "")
    kernel = (ctx.read_text("/proc/sys/kernel/osrelease") or "").strip() or None
    container, evidence = detect_container(ctx)
    try:
        affinity: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    info = SystemInfo(
        os_id=release.get("ID"),
        os_version=release.get("VERSION_ID"),
        os_pretty=release.get("PRETTY_NAME"),
        kernel=kernel,
        arch=platform.machine() or None,
        glibc=_glibc(),
        cpu_count=os.cpu_count(),
        cpu_affinity=affinity,
        memory_total_bytes=meminfo.get("MemTotal"),
        memory_available_bytes=meminfo.get("MemAvailable"),
        cgroup=_cgroup(ctx),
        container=container,
        container_evidence=evidence,
        ulimits=parse_limits(ctx.read_text("/proc/self/limits") or ""),
        nvcc=_nvcc(ctx),
        nvcc_searched=True,
    )
    return Section.ok(info, source="/proc, /sys, /etc/os-release")
