"""The node a stack is built for, as a Target and as a declared NodeReport the rules can read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from envcheck.errors import UsageError
from envcheck.ingest.spec import SpecGpu, SpecPython, SpecSystem, StackSpec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.model.plan import Choice, Target
from envcheck.model.report import NodeReport, Origin


def stated_arch(report: NodeReport | None) -> str | None:
    """The CPU a report states (x86_64 or aarch64), or None."""
    data = report.system.data if report is not None and report.system.is_ok else None
    arch = getattr(data, "arch", None)
    return str(arch) if arch in ("x86_64", "aarch64") else None


def arch_from_gpus(target: Target, matrix: Matrix) -> Choice | None:
    """The CPU a target's GPUs imply when nothing states it: a superchip's GPU (GH200, GB200,
    GB10: a Grace CPU) is on an aarch64 host (``host_arch`` of matrices/hardware/gpus.toml,
    with its source), as the choice that says so; None when no GPU implies one."""
    for name in dict.fromkeys(target.gpus):
        model = matrix.gpu_model(name)
        if model is not None and model.host_arch:
            source = f"; source: {model.host_arch_source}" if model.host_arch_source else ""
            return Choice(
                "arch",
                model.host_arch,
                f"no --arch and no [system] arch: the CPU of {model.name}, a superchip whose "
                f"host is {model.host_arch} (matrices/hardware/gpus.toml host_arch{source}); "
                "pass --arch to lock for another CPU",
            )
    return None


def target_from_report(report: NodeReport, *, python: str | None = None) -> Target:
    """Hardware and interpreter of a declared (or probed) node; ``python`` overrides its Python."""
    version = python
    if version is None and report.python.is_ok and report.python.data is not None:
        version = report.python.data.version
    if not version:
        raise UsageError(
            "the target's Python is unknown: declare [python] version in the spec or pass --python X.Y"
        )
    gpu = report.gpu.data if report.gpu.is_ok else None
    system = report.system.data if report.system.is_ok else None
    names = tuple(g.name for g in gpu.gpus or () if g.name) if gpu else ()
    ccs = {g.compute_capability for g in gpu.gpus or () if g.compute_capability} if gpu else set()
    return Target(
        python=version,
        arch=(system.arch if system and system.arch else "x86_64"),
        glibc=system.glibc if system else None,
        driver=gpu.driver_version if gpu else None,
        max_cuda=gpu.cuda_driver_version if gpu else None,
        gpus=names,
        compute_capability=next(iter(ccs)) if len(ccs) == 1 else None,
    )


def _spec(target: Target, packages: Mapping[str, str] | None, node: str | None) -> StackSpec:
    gpu = None
    if target.driver or target.gpus or target.max_cuda:
        gpu = SpecGpu(
            driver=target.driver,
            cuda=target.max_cuda,
            models=target.gpus,
            compute_capability=target.compute_capability,
        )
    return StackSpec(
        node=node,
        gpu=gpu,
        python=SpecPython(version=target.python),
        packages=dict(packages) if packages is not None else None,
        system=SpecSystem(arch=target.arch, glibc=target.glibc),
    )


def target_report(
    target: Target, packages: Mapping[str, str] | None = None, *, node: str = "target"
) -> NodeReport:
    """A declared report of the target holding ``packages`` (name -> version) as installed."""
    return spec_to_report(_spec(target, packages, node), node)


def with_packages(
    report: NodeReport, packages: Mapping[str, str], *, origin: str | None = None
) -> NodeReport:
    """``report`` with its packages and torch build replaced by ``packages`` (a resolved set),
    read the way a declared spec's ``[packages]`` is (a torch without ``+cuXYZ`` is the PyPI
    wheel)."""
    spec = StackSpec(node=report.node, packages=dict(packages))
    declared = spec_to_report(spec, origin or report.node)
    kind = report.origin.kind if report.origin.kind != "probe" else "declared"
    return replace(
        report,
        packages=declared.packages,
        torch=declared.torch,
        origin=Origin(kind=kind, detail=origin or report.origin.detail),
    )
