"""A NodeReport as grouped, human-readable rows. Table and Markdown both render these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envcheck.formats.rows import Group, Row, Tone
from envcheck.model.finding import CheckResult, Skipped
from envcheck.model.report import ContainerEngine, GpuInfo, NodeReport
from envcheck.model.section import Section

KEY_PACKAGES = (
    "torch",
    "torchvision",
    "torchaudio",
    "vllm",
    "sglang",
    "ray",
    "flash-attn",
    "xformers",
    "flashinfer-python",
    "triton",
    "numpy",
    "transformers",
    "deepspeed",
    "pydantic",
    "isaacsim",
    "omnigibson",
)


def gib(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1024**3:.1f} GiB"


def _mib_to_gib(n: int | None) -> str:
    return "?" if n is None else f"{n / 1024:.1f} GiB"


def _unavailable(section: Section[Any], what: str) -> Row:
    tone: Tone = "bad" if section.status.value == "error" else "warn"
    return Row(what, f"{section.status.value}: {section.reason or 'no reason given'}", tone)


def _gpu_rows(report: NodeReport) -> list[Row]:
    section = report.gpu
    if not section.is_ok or section.data is None:
        return [_unavailable(section, "GPU")]
    info = section.data
    driver = info.driver_version or "unknown"
    cuda = f" (supports CUDA ≤ {info.cuda_driver_version})" if info.cuda_driver_version else ""
    rows = [Row("driver", f"{driver}{cuda} · via {info.driver_source or section.source}")]
    if info.gpus is None:
        rows.append(Row("GPUs", f"unknown: {info.gpus_reason or 'not reported'}", "warn"))
    elif not info.gpus:
        rows.append(Row("GPUs", "none visible", "warn"))
    for gpu in info.gpus or ():
        cc = f"sm_{gpu.compute_capability.replace('.', '')}" if gpu.compute_capability else "sm_?"
        used = (
            f"{_mib_to_gib(gpu.memory_used_mib)} of {_mib_to_gib(gpu.memory_total_mib)} used"
            if gpu.memory_total_mib is not None
            else "memory ?"
        )
        procs = ""
        tone: Tone = "normal"
        if gpu.process_count:
            procs = f" · {gpu.process_count} process(es) hold {_mib_to_gib(gpu.process_memory_mib)}"
            tone = "warn"
        persistence = {True: " · persistence on", False: " · persistence off", None: ""}[
            gpu.persistence_mode
        ]
        rows.append(
            Row(f"GPU {gpu.index}", f"{gpu.name or '?'} · {cc} · {used}{persistence}{procs}", tone)
        )
    rows.extend(Row("note", n, "muted") for n in section.notes)
    return rows


def _python_rows(report: NodeReport) -> list[Row]:
    rows: list[Row] = []
    py = report.python
    if py.is_ok and py.data is not None:
        d = py.data
        env = f"{d.env_kind} {d.env_name!r}" if d.env_name else d.env_kind
        rows.append(Row("Python", f"{d.version} ({d.implementation}) · {env} · {d.executable}"))
    else:
        rows.append(_unavailable(py, "Python"))
    torch = report.torch
    if torch.is_ok and torch.data is not None:
        t = torch.data
        cuda = f"CUDA {t.cuda}" if t.cuda else ("ROCm " + t.hip if t.hip else "CPU build")
        if t.variant is None:
            cuda = "build unknown"
        rows.append(Row("torch", f"{t.version} · {cuda} · variant {t.variant or '?'}"))
        listed = report.packages.data if report.packages.is_ok else None
        for name in sorted(set(t.requires_cuda) | set(t.installed_cuda)):
            pin = t.requires_cuda.get(name)
            # torch's pins name packages other than the CUDA wheels too (triton)
            have = t.installed_cuda.get(name) or (listed.version(name) if listed else None)
            tone: Tone = "normal"
            text = f"{have or 'not installed'}"
            if pin:
                text += f" (torch pins {pin})"
            if pin and have and pin.startswith("==") and pin[2:] != have:
                tone = "warn"
            rows.append(Row(f"  {name}", text, tone))
    else:
        rows.append(Row("torch", torch.reason or torch.status.value, "muted"))
    pkgs = report.packages
    if pkgs.is_ok and pkgs.data is not None:
        data = pkgs.data
        for name in KEY_PACKAGES[1:]:
            version = data.version(name)
            if version:
                rows.append(Row(name, version))
        dupes = data.duplicates()
        for name, copies in dupes.items():
            where = "; ".join(f"{d.version} in {d.location}" for d in copies)
            rows.append(Row(f"duplicate {name}", where, "warn"))
        for broken in data.broken:
            rows.append(Row("broken dist-info", f"{broken.path}: {broken.reason}", "warn"))
        rows.append(Row("distributions", f"{len(data.distributions)} installed", "muted"))
    else:
        rows.append(_unavailable(pkgs, "packages"))
    return rows


def _system_rows(report: NodeReport) -> list[Row]:
    sec = report.system
    if not sec.is_ok or sec.data is None:
        return [_unavailable(sec, "system")]
    s = sec.data
    rows = [
        Row("OS", f"{s.os_pretty or s.os_id or '?'} · kernel {s.kernel or '?'} · {s.arch or '?'}"),
        Row("glibc", s.glibc or "unknown"),
        Row("CPUs", f"{s.cpu_count} ({s.cpu_affinity} usable by this process)"),
        Row(
            "memory",
            f"{gib(s.memory_total_bytes)} total · {gib(s.memory_available_bytes)} available",
        ),
    ]
    if s.cgroup and (s.cgroup.memory_limit_bytes or s.cgroup.cpu_limit):
        limit = []
        if s.cgroup.memory_limit_bytes:
            limit.append(f"memory {gib(s.cgroup.memory_limit_bytes)}")
        if s.cgroup.cpu_limit:
            limit.append(f"{s.cgroup.cpu_limit:g} CPUs")
        rows.append(Row(f"cgroup v{s.cgroup.version}", " · ".join(limit)))
    rows.append(Row("container", f"{s.container} ({s.container_evidence})"))
    for key, lim in sorted(s.ulimits.items()):
        soft = "unlimited" if lim.soft < 0 else str(lim.soft)
        hard = "unlimited" if lim.hard < 0 else str(lim.hard)
        rows.append(Row(f"ulimit {key}", f"{soft} (hard {hard})", "muted"))
    graphics = report.graphics
    if graphics.is_ok and graphics.data is not None:
        g = graphics.data
        vulkan = "NVIDIA Vulkan ICD" if g.nvidia_vulkan else "no NVIDIA Vulkan ICD"
        egl = "NVIDIA EGL" if g.nvidia_egl else "no NVIDIA EGL"
        rows.append(Row("rendering", f"{vulkan} · {egl} (needed by headless simulators)", "muted"))
    if s.nvcc:
        rows.append(
            Row(
                "CUDA toolkit",
                f"nvcc {s.nvcc.version or '?'} at {s.nvcc.nvcc_path} (not torch's runtime)",
            )
        )
    else:
        rows.append(
            Row("CUDA toolkit", "no nvcc on PATH (pip wheels bring their own runtime)", "muted")
        )
    return rows


def _storage_rows(report: NodeReport) -> list[Row]:
    sec = report.storage
    if not sec.is_ok or sec.data is None:
        return [_unavailable(sec, "storage")]
    rows = []
    for disk in sec.data.disks:
        frac = disk.used_fraction
        tone: Tone = "normal"
        if frac is not None and frac >= 0.95:
            tone = "bad"
        elif frac is not None and frac >= 0.85:
            tone = "warn"
        used = f"{frac * 100:.0f}% full" if frac is not None else "usage unknown"
        where = "" if disk.exists else f" (not created yet; measured at {disk.measured_path})"
        fs = f" · {disk.fs_type}" if disk.fs_type else ""
        space = f"{gib(disk.free_bytes)} free of {gib(disk.total_bytes)}"
        rows.append(Row(disk.role, f"{disk.path}{where} · {space} · {used}{fs}", tone))
    return rows


def _network_rows(report: NodeReport) -> list[Row]:
    sec = report.network
    if not sec.is_ok or sec.data is None:
        return [_unavailable(sec, "network")]
    n = sec.data
    resolved = ", ".join(n.hostname_addresses) or (n.resolve_error or "nothing")
    loop = any(a.startswith("127.") or a == "::1" for a in n.hostname_addresses)
    rows = [
        Row(
            "hostname",
            f"{n.hostname} → {resolved}",
            "warn" if loop or n.resolve_error else "normal",
        )
    ]
    for iface in n.interfaces:
        addrs = ", ".join(iface.ipv4 + iface.ipv6) or "no address"
        tone: Tone = "muted" if iface.state != "up" else "normal"
        rows.append(
            Row(
                iface.name,
                f"{iface.state or '?'} · {iface.kind or '?'} · mtu {iface.mtu or '?'} · {addrs}",
                tone,
            )
        )
    for dev in n.infiniband:
        ports = ", ".join(
            f"port {p.port} {p.state or '?'} {p.rate or ''}".strip() for p in dev.ports
        )
        rows.append(Row(f"IB {dev.name}", ports or "no ports"))
    return rows


def _env_rows(report: NodeReport) -> list[Row]:
    sec = report.env
    if not sec.is_ok or sec.data is None:
        return [_unavailable(sec, "environment")]
    rows = [Row(k, v, "muted" if k == "PATH" else "normal") for k, v in sec.data.variables.items()]
    libs = report.libraries
    if libs.is_ok and libs.data is not None:
        for lib in libs.data.cuda_libraries:
            rows.append(
                Row(f"{lib.via} lib", f"{lib.name} {lib.version or '?'} at {lib.path}", "warn")
            )
    return rows or [Row("variables", "none of the steering variables are set", "muted")]


def _deep_rows(report: NodeReport) -> list[Row] | None:
    from envcheck.model.report import DEEP_NOT_RUN

    section = report.deep
    if section.reason == DEEP_NOT_RUN:
        return None
    if not section.is_ok or section.data is None:
        return [_unavailable(section, "--deep")]
    from envcheck.formats.deep_rows import deep_rows

    return deep_rows(section.data, Row)


def _cc_number(text: str | None) -> int | None:
    major, _, minor = (text or "").partition(".")
    return int(major) * 10 + int(minor) if major.isdigit() and minor.isdigit() else None


def _short(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _named(names: Sequence[str], limit: int = 2) -> str:
    more = f", +{len(names) - limit}" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def binaries_rows(report: NodeReport) -> list[Row]:
    """The installed ELF files in a few rows: how many were read, the GPU code per GPU (runs
    natively, by PTX JIT, or not at all) and the libraries that will not load as meant."""
    section = report.binaries
    if not section.is_ok or section.data is None:
        return [_unavailable(section, "ELF files")]
    info = section.data
    cached = f" ({info.from_cache} from cache)" if info.from_cache else ""
    sites = len(info.site_dirs)
    rows = [Row("files read", f"{info.scanned} ELF files{cached} in {sites} site dir(s)")]
    gpu_files = [(f, f.kernels) for f in info.files if f.kernels is not None]
    gpus: dict[tuple[str, int], int] = {}
    if report.gpu.is_ok and report.gpu.data is not None:
        for gpu in report.gpu.data.gpus or ():
            cc = _cc_number(gpu.compute_capability)
            if cc is not None:
                key = (gpu.name or "GPU", cc)
                gpus[key] = gpus.get(key, 0) + 1
    if not gpu_files:
        rows.append(Row("GPU code", "no installed file carries GPU kernels", "muted"))
    elif not gpus:
        sass = sorted({a for _, k in gpu_files for a in k.sass})
        ptx = sorted({a for _, k in gpu_files for a in k.ptx})
        arches = f"sm_{sass[0]}-sm_{sass[-1]}" if sass else "no SASS"
        ptx_text = f", PTX sm_{ptx[0]}-sm_{ptx[-1]}" if ptx else ", no PTX"
        rows.append(
            Row("GPU code", f"{len(gpu_files)} files: {arches}{ptx_text} (no GPU to judge)")
        )
    for (name, cc), count in sorted(gpus.items(), key=lambda item: -item[0][1]):
        verdicts: dict[str, list[str]] = {"native": [], "ptx": [], "none": []}
        for f, kernels in gpu_files:
            verdicts[kernels.runs_on(cc)].append(_short(f.path))
        parts = [f"{len(verdicts['native'])} native", f"{len(verdicts['ptx'])} PTX JIT"]
        tone: Tone = "normal"
        if verdicts["ptx"]:
            tone = "warn"
        if verdicts["none"]:
            parts.append(f"{len(verdicts['none'])} none ({_named(verdicts['none'])})")
            tone = "bad"
        model = name.removeprefix("NVIDIA ")
        gpu_label = f"{count}x {model}" if count > 1 else model
        rows.append(Row(f"sm_{cc} kernels", f"{gpu_label}: " + ", ".join(parts), tone))
    missing = sorted({n.name for f in info.files for n in f.needs if n.path is None})
    shadowed = sorted({n.name for f in info.files for n in f.needs if n.meant})
    lacking = sorted({v for f in info.files for n in f.needs for v in n.lacking})
    if missing:
        rows.append(Row("unresolved libs", f"{len(missing)}: {_named(missing, 3)}", "bad"))
    else:
        rows.append(Row("unresolved libs", "none", "muted"))
    if shadowed:
        rows.append(Row("shadowed libs", f"{len(shadowed)}: {_named(shadowed, 3)}", "warn"))
    if lacking:
        rows.append(Row("symbol versions", f"lacking {_named(lacking, 3)}", "bad"))
    torch_missing = [f for f in info.files if f.torch_missing]
    if torch_missing:
        names = [_short(f.path) for f in torch_missing]
        rows.append(Row("torch symbols", f"missing for {_named(names)}", "bad"))
    errors = [f for f in info.files if f.error]
    if errors:
        rows.append(
            Row("unreadable", f"{len(errors)}: {_named([_short(f.path) for f in errors])}", "warn")
        )
    return rows


def inventory(report: NodeReport) -> list[Group]:
    deep = _deep_rows(report)
    return [
        Group("GPU / driver", tuple(_gpu_rows(report))),
        Group("Python & key packages", tuple(_python_rows(report))),
        Group("System", tuple(_system_rows(report))),
        Group("Storage", tuple(_storage_rows(report))),
        Group("Network", tuple(_network_rows(report))),
        Group("Environment", tuple(_env_rows(report))),
        *([Group("GPU health", tuple(deep))] if deep is not None else []),
    ]


def headline(report: NodeReport) -> str:
    origin = report.origin.kind + (f" {report.origin.detail}" if report.origin.detail else "")
    return (
        f"node {report.node} · {origin} · {report.created_at} · envcheck {report.envcheck_version}"
    )


def summary_line(report: NodeReport) -> str:
    """One line of the facts a reader needs to judge the findings."""
    return " · ".join(summary_parts(report))


def summary_parts(report: NodeReport) -> list[str]:
    """The facts a reader needs to judge the findings: GPUs, driver, Python, torch, key packages."""
    parts: list[str] = []
    gpu = report.gpu
    if gpu.is_ok and gpu.data is not None:
        names: dict[str, int] = {}
        for g in gpu.data.gpus or ():
            names[g.name or "GPU"] = names.get(g.name or "GPU", 0) + 1
        listed = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in names.items())
        parts.append(listed or ("GPUs unknown" if gpu.data.gpus is None else "no GPUs"))
        if gpu.data.driver_version:
            cuda = (
                f" (CUDA <= {gpu.data.cuda_driver_version})" if gpu.data.cuda_driver_version else ""
            )
            parts.append(f"driver {gpu.data.driver_version}{cuda}")
        parts.extend(_driver_listing_parts(gpu.data))
    else:
        parts.append("no GPU facts")
    system = report.system
    if system.is_ok and system.data is not None and system.data.secure_boot:
        parts.append(f"Secure Boot {system.data.secure_boot}")
    if system.is_ok and system.data is not None and system.data.container_engine is not None:
        parts.extend(_engine_parts(system.data.container_engine))
    if report.python.is_ok and report.python.data is not None:
        parts.append(f"Python {report.python.data.version}")
    if report.torch.is_ok and report.torch.data is not None:
        t = report.torch.data
        build = f" ({t.variant})" if t.variant and "+" not in t.version else ""
        parts.append(f"torch {t.version}{build}")
    if report.packages.is_ok and report.packages.data is not None:
        for name in ("vllm", "ray", "flash-attn", "numpy"):
            version = report.packages.data.version(name)
            if version:
                parts.append(f"{name} {version}")
    deep = report.deep
    if deep.is_ok and deep.data is not None and deep.data.steps:
        steps = ", ".join(f"{st.name} {st.status}" for st in deep.data.steps)
        took = f" in {deep.duration_ms / 1000:.1f} s" if deep.duration_ms is not None else ""
        parts.append(f"--deep: {steps}{took}")
    return parts


def _engine_parts(engine: ContainerEngine) -> list[str]:
    """The host's container engine as pasted dumps state it (docker info, daemon.json, the
    NVIDIA Container Toolkit)."""
    parts: list[str] = []
    if engine.runtimes is not None:
        default = f", default {engine.default_runtime}" if engine.default_runtime else ""
        parts.append(f"Docker runtimes {' '.join(engine.runtimes)}{default}")
    if engine.configured_runtimes is not None:
        configured = " ".join(engine.configured_runtimes) or "none"
        parts.append(f"daemon.json runtimes {configured}")
    if engine.cgroup_version is not None:
        parts.append(f"cgroup v{engine.cgroup_version}")
    if engine.toolkit_version:
        parts.append(f"NVIDIA Container Toolkit {engine.toolkit_version}")
    if engine.no_cgroups is not None:
        parts.append(f"no-cgroups = {'true' if engine.no_cgroups else 'false'}")
    return parts


def _driver_listing_parts(info: GpuInfo) -> list[str]:
    """The device files and the loader's libcuda a pasted listing states (ls -l /dev/nvidia*,
    ldconfig -p)."""
    parts: list[str] = []
    if info.device_nodes is not None:
        names = {n.removeprefix("/dev/") for n in info.device_nodes}
        gpus = sum(1 for n in names if n.startswith("nvidia") and n[6:].isdigit())
        listed = f"/dev/nvidia*: {gpus} GPU file(s)"
        listed += ", nvidiactl" if "nvidiactl" in names else ", no nvidiactl"
        listed += ", nvidia-uvm" if "nvidia-uvm" in names else ", no nvidia-uvm"
        parts.append(listed)
    if info.libcuda_cached is not None:
        first = next(iter(info.libcuda_cached), None)
        if first is None or not first.endswith("libcuda.so.1"):
            parts.append("no libcuda.so.1 in the loader's cache")
        else:
            parts.append(f"libcuda.so.1: {first}")
    return parts


def coverage_line(result: CheckResult, nodes: int = 1) -> str:
    """What was checked: '25 of 113 rules ran; 88 skipped for unknown facts (packages 40, env
    30, ...)', so that "no problems" is never read as "everything was checked"."""
    from envcheck.model.finding import skip_kinds

    total = result.rules_run * max(nodes, 1)
    skipped = len(result.skipped)
    what = "rules" if nodes <= 1 else "rule checks"
    line = f"{total - skipped} of {total} {what} ran"
    if skipped:
        kinds = ", ".join(f"{k} {n}" for k, n in skip_kinds(result.skipped).items())
        line += f"; {skipped} skipped for unknown facts ({kinds})"
    return line


def strict_line(gaps: Sequence[Skipped]) -> str:
    """Why ``--strict`` fails a run without findings."""
    by_fact: dict[str, list[str]] = {}
    for s in gaps:
        by_fact.setdefault(s.fact or "unnamed", []).append(s.code)
    parts = []
    for fact, codes in sorted(by_fact.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(codes[:4]) + (f", +{len(codes) - 4} more" if len(codes) > 4 else "")
        parts.append(f"{fact} unknown for {len(codes)} ({shown})")
    return (
        f"--strict: exit 1 because {len(gaps)} rule(s) that matter for the node were skipped "
        f"for unknown facts ({'; '.join(parts)}); --verbose lists them"
    )
