"""Probe this node into a NodeReport. Probes run concurrently; none can sink the others."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from envcheck.model.report import NodeReport, Origin
from envcheck.model.section import Section
from envcheck.probes.context import ProbeContext
from envcheck.version import __version__

T = TypeVar("T")


def guarded(name: str, fn: Callable[..., Section[Any]], *args: Any) -> Section[Any]:
    """Run one probe, time it, and turn any unexpected exception into an error section."""
    start = time.perf_counter()
    try:
        section = fn(*args)
    except Exception as exc:  # a probe must never raise to its caller
        section = Section.error(f"{name} probe failed: {type(exc).__name__}: {exc}")
    elapsed = round((time.perf_counter() - start) * 1000, 2)
    return replace(section, duration_ms=elapsed)


def _python_chain(ctx: ProbeContext) -> tuple[Section[Any], Section[Any], Section[Any]]:
    from envcheck.probes.python_env import interpreter_facts, probe_packages, probe_python
    from envcheck.probes.torch_build import probe_torch

    start = time.perf_counter()
    try:
        facts: dict[str, Any] | str = interpreter_facts(ctx)
    except Exception as exc:
        facts = f"interpreter facts failed: {type(exc).__name__}: {exc}"
    facts_ms = (time.perf_counter() - start) * 1000
    python = guarded("python", probe_python, facts)
    python = replace(python, duration_ms=round((python.duration_ms or 0) + facts_ms, 2))
    packages = guarded("packages", probe_packages, facts)
    markers = python.data.markers if python.is_ok and python.data else {}
    torch = guarded("torch", probe_torch, packages, markers)
    return python, packages, torch


def _deep(ctx: ProbeContext) -> Section[Any]:
    from envcheck.probes.deep import probe_deep

    return probe_deep(ctx)


def _binaries(ctx: ProbeContext, python: Section[Any], packages: Section[Any]) -> Section[Any]:
    """The installed packages' ELF files and the driver's files (envcheck/binaries/)."""
    import platform
    from dataclasses import replace as with_fields

    from envcheck.binaries.warm import lookup
    from envcheck.probes.driver_files import probe_driver_files

    driver = probe_driver_files(ctx)
    if not ctx.binaries or ctx.env.get("ENVCHECK_NO_BINARIES", "") not in ("", "0"):
        from envcheck.model.binaries import BinariesInfo

        return Section.ok(BinariesInfo(driver=driver), source="driver files (ELF reading off)")
    if not python.is_ok or python.data is None:
        return Section.unavailable(f"interpreter unknown: {python.describe()}", source="elf")
    dists = None
    if packages.is_ok and packages.data is not None:
        dists = [(d.name, d.requires) for d in packages.data.distributions]
    info, pending = lookup(ctx, python.data.sys_path, platform.machine(), dists)
    if info is None:  # something the last scan looked at changed: scan (binaries/warm.py)
        from envcheck.binaries.scan import scan

        info = scan(ctx, pending.sys_path, platform.machine(), dists, pending)
    return Section.ok(with_fields(info, driver=driver), source="elf")


def installed_binaries(ctx: ProbeContext) -> tuple[Section[Any], Section[Any], Section[Any]]:
    """(python, packages, binaries) of ``ctx``'s interpreter, without the rest of a probe: the
    files an image holds, for a declared stack checked on it (``check --spec`` in an image)."""
    python, packages, _torch = _python_chain(ctx)
    return python, packages, guarded("binaries", _binaries, ctx, python, packages)


def _workload(_ctx: ProbeContext) -> Section[Any]:
    return Section.unavailable(
        "a node probe cannot know the job's settings: declare them in a spec's [workload] "
        "(--spec) or let triage read them from the job's log",
        source="probe",
    )


def collect(ctx: ProbeContext | None = None) -> NodeReport:
    """Probe the node described by ``ctx`` (this one by default)."""
    # here, not at the top: readers of a spec or a lock import probe helpers (torch_build,
    # storage) through this package and need no thread pool (concurrent.futures, logging)
    from envcheck.probes.environment import probe_env
    from envcheck.probes.gpu import probe_gpu
    from envcheck.probes.graphics import probe_graphics
    from envcheck.probes.libraries import probe_libraries
    from envcheck.probes.network import probe_network
    from envcheck.probes.storage import probe_storage
    from envcheck.probes.system import probe_system

    ctx = ctx or ProbeContext()
    # the ones that wait (NVML / nvidia-smi, the hostname lookup) start first
    simple: dict[str, Callable[[ProbeContext], Section[Any]]] = {
        "gpu": probe_gpu,
        "network": probe_network,
        "system": probe_system,
        "storage": probe_storage,
        "libraries": probe_libraries,
        "env": probe_env,
        "graphics": probe_graphics,
    }
    from envcheck.probes.run import worker_pool

    # a signal ends the children the workers wait on before the pool joins them
    with worker_pool(7, "envcheck-probe") as pool:
        chain = pool.submit(_python_chain, ctx)
        futures = {name: pool.submit(guarded, name, fn, ctx) for name, fn in simple.items()}
        deep_f = pool.submit(guarded, "deep", _deep, ctx) if ctx.deep else None
        # the ELF files are read once the interpreter's packages are known, while the other
        # probes may still wait (NVML, nvcc --version, the hostname lookup)
        python, packages, torch = chain.result()
        binaries = guarded("binaries", _binaries, ctx, python, packages)
        sections = {name: f.result() for name, f in futures.items()}
        deep = deep_f.result() if deep_f is not None else None
    network = sections["network"]
    node = network.data.hostname if network.is_ok and network.data else None
    report = NodeReport(
        node=node or "unknown",
        envcheck_version=__version__,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        origin=Origin(kind="probe", detail=ctx.python),
        python=python,
        packages=packages,
        torch=torch,
        gpu=sections["gpu"],
        system=sections["system"],
        storage=sections["storage"],
        libraries=sections["libraries"],
        network=sections["network"],
        env=sections["env"],
        graphics=sections["graphics"],
        workload=guarded("workload", _workload, ctx),
        binaries=binaries,
    )
    if deep is not None:
        report = report.with_sections(deep=deep)
    if ctx.redact:
        from envcheck.model.scrub import anonymize

        report = anonymize(report)
    return report
