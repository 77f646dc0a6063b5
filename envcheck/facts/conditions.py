"""Evaluate the matrix's structured conditions against a node's facts.

A condition is false as soon as one part is false, even if another part is unknown; it is
unknown (Skip) only when no part is false and some part could not be decided.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.facts.node import Facts, name_matches
from envcheck.facts.skip import Skip
from envcheck.matrix.model import parse_version
from envcheck.matrix.schema import Condition, GpuCondition
from envcheck.model.report import Gpu


def _contains(spec: SpecifierSet, version: Version) -> bool:
    return spec.contains(version, prereleases=True)


def _gpu_matches(cond: GpuCondition, gpu: Gpu, facts: Facts) -> bool:
    if cond.names and not any(name_matches(n, gpu.name) for n in cond.names):
        return False
    if cond.compute_capability is not None and not _contains(
        cond.compute_capability, facts.compute_capability(gpu)
    ):
        return False
    if cond.rt_cores is not None:
        model = facts.gpu_model(gpu)
        if model is None or model.rt_cores is None:
            raise Skip(f"whether {gpu.name or 'the GPU'} has RT cores is unknown")
        if model.rt_cores != cond.rt_cores:
            return False
    return True


def matching_gpus(cond: GpuCondition, facts: Facts) -> tuple[Gpu, ...]:
    return tuple(g for g in facts.gpus() if _gpu_matches(cond, g, facts))


def _package_in(facts: Facts, name: str, spec: SpecifierSet) -> bool:
    version = facts.version(name)
    return version is not None and _contains(spec, version)


def _absent(facts: Facts, name: str) -> bool:
    return facts.version(name) is None


def _absent_or_unlisted(facts: Facts, name: str) -> bool:
    packages = facts.packages()
    if packages.get(name) is not None:
        return False
    try:
        return facts.dist(name) is None
    except Skip:
        return True  # a partial list that does not show it


def _env_ok(cond: Condition, facts: Facts) -> bool:
    env = facts.env()
    return all(v in env for v in cond.env_set) and not any(v in env for v in cond.env_unset)


def _python_in(facts: Facts, spec: SpecifierSet) -> bool:
    return _contains(spec, facts.python_version())


def _driver_in(facts: Facts, spec: SpecifierSet) -> bool:
    return _contains(spec, facts.driver())


def _torch_cuda_in(facts: Facts, spec: SpecifierSet) -> bool:
    cuda = facts.torch_cuda()
    return cuda is not None and _contains(spec, cuda)


def _torch_cpu_is(facts: Facts, wanted: bool) -> bool:
    cpu = facts.torch_is_cpu()
    if cpu is None:
        if wanted:
            raise Skip("whether torch is a CPU-only build is unknown")
        return True  # false means "not known to be CPU-only"
    return cpu == wanted


def torch_cuda_stated(facts: Facts) -> Version | None:
    """torch's CUDA; where the package list cannot say (a log), the CUDA a line states torch was
    built with ('... used to compile PyTorch (11.8)')."""
    try:
        return facts.torch_cuda()
    except Skip:
        section = facts.report.torch
        if section.is_ok and section.data is not None and section.data.cuda:
            stated = parse_version(section.data.cuda)
            if stated is not None:
                return stated
        raise


def _nvcc_matches_torch_is(facts: Facts, wanted: bool) -> bool:
    cuda = torch_cuda_stated(facts)
    if cuda is None:
        return False  # no CUDA torch: nothing to match
    toolkit = facts.system().nvcc
    nvcc = parse_version(toolkit.version) if toolkit is not None else None
    if nvcc is None:
        raise Skip("the CUDA toolkit (nvcc) on this node is unknown")
    return (nvcc.major == cuda.major) == wanted


def _glibc_in(facts: Facts, spec: SpecifierSet) -> bool:
    text = facts.system().glibc
    glibc = parse_version(text) if text else None
    if glibc is None:
        raise Skip("the system glibc is unknown", "system.glibc")
    return _contains(spec, glibc)


def _nvcc_in_use_is(facts: Facts, wanted: bool) -> bool:
    try:
        toolkit = facts.system().nvcc
    except Skip:
        toolkit = None  # nothing known of the system: no log showed a build either
    in_use = toolkit is not None and bool(toolkit.in_use)
    return in_use == wanted


def _nvcc_found_is(facts: Facts, wanted: bool) -> bool:
    info = facts.system()
    if info.nvcc is None and not info.nvcc_searched:
        raise Skip("whether this node has a CUDA toolkit (nvcc) is unknown", "system.nvcc")
    return (info.nvcc is not None) == wanted


def _nccl_loaded_in(facts: Facts, spec: SpecifierSet, cuda: bool) -> bool:
    """The loaded NCCL (or the CUDA it was built for) a log states; not stated is false."""
    try:
        libs = facts.libraries()
    except Skip:
        return False
    stated = libs.nccl_loaded_cuda if cuda else libs.nccl_loaded
    version = parse_version(stated) if stated else None
    return version is not None and _contains(spec, version)


_ARCH_ALIASES = {"arm64": "aarch64", "amd64": "x86_64", "x64": "x86_64"}


def _arch(value: str) -> str:
    value = value.strip().lower()
    return _ARCH_ALIASES.get(value, value)


def _arch_in(facts: Facts, wanted: tuple[str, ...]) -> bool:
    arch = None
    with contextlib.suppress(Skip):
        arch = facts.system().arch
    if not arch:
        try:
            arch = facts.markers().get("platform_machine")
        except Skip:
            arch = None
    if not arch:
        raise Skip("the node's CPU architecture is unknown", "system.arch")
    return _arch(arch) in {_arch(a) for a in wanted}


def _gpu_count_ok(cond: GpuCondition, facts: Facts) -> bool:
    return len(matching_gpus(cond, facts)) >= cond.min_count


def _parts(cond: Condition, facts: Facts) -> list[Callable[[], bool]]:
    parts: list[Callable[[], bool]] = []
    parts += [functools.partial(_package_in, facts, n, s) for n, s in cond.packages.items()]
    parts += [functools.partial(_absent, facts, n) for n in cond.absent]
    parts += [functools.partial(_absent_or_unlisted, facts, n) for n in cond.absent_or_unlisted]
    parts += [functools.partial(_installer_is, facts, n, i) for n, i in cond.installer.items()]
    if cond.env_set or cond.env_unset:
        parts.append(functools.partial(_env_ok, cond, facts))
    if cond.python is not None:
        parts.append(functools.partial(_python_in, facts, cond.python))
    if cond.torch_cuda is not None:
        parts.append(functools.partial(_torch_cuda_in, facts, cond.torch_cuda))
    if cond.torch_cpu is not None:
        parts.append(functools.partial(_torch_cpu_is, facts, cond.torch_cpu))
    if cond.nvcc_matches_torch is not None:
        parts.append(functools.partial(_nvcc_matches_torch_is, facts, cond.nvcc_matches_torch))
    if cond.nvcc_in_use is not None:
        parts.append(functools.partial(_nvcc_in_use_is, facts, cond.nvcc_in_use))
    if cond.nvcc_found is not None:
        parts.append(functools.partial(_nvcc_found_is, facts, cond.nvcc_found))
    if cond.nccl_loaded is not None:
        parts.append(functools.partial(_nccl_loaded_in, facts, cond.nccl_loaded, False))
    if cond.nccl_loaded_cuda is not None:
        parts.append(functools.partial(_nccl_loaded_in, facts, cond.nccl_loaded_cuda, True))
    if cond.arch:
        parts.append(functools.partial(_arch_in, facts, cond.arch))
    if cond.driver is not None:
        parts.append(functools.partial(_driver_in, facts, cond.driver))
    if cond.glibc is not None:
        parts.append(functools.partial(_glibc_in, facts, cond.glibc))
    if cond.gpu is not None:
        parts.append(functools.partial(_gpu_count_ok, cond.gpu, facts))
    if cond.any:
        parts.append(functools.partial(_any, cond.any, facts))
    return parts


def _installer_is(facts: Facts, name: str, installer: str) -> bool:
    dist = facts.dist(name)
    if dist is None:
        return False
    if dist.installer is None:
        raise Skip(f"installer of {name} unknown")
    return dist.installer.strip().lower() == installer.lower()


def _any(conditions: tuple[Condition, ...], facts: Facts) -> bool:
    unknown: Skip | None = None
    for cond in conditions:
        try:
            if evaluate(cond, facts):
                return True
        except Skip as skip:
            unknown = unknown or skip
    if unknown is not None:
        raise unknown
    return False


def evaluate(cond: Condition, facts: Facts) -> bool:
    unknown: Skip | None = None
    for part in _parts(cond, facts):
        try:
            if not part():
                return False
        except Skip as skip:
            unknown = unknown or skip
    if unknown is not None:
        raise unknown
    return True


def describe(cond: Condition) -> str:
    """A one-line description of when a condition holds, for the rule catalogue."""
    bits: list[str] = []
    for name, spec in cond.packages.items():
        bits.append(f"{name}{spec}" if str(spec) else f"{name} installed")
    bits += [f"{name} not installed" for name in cond.absent]
    bits += [f"{name} not installed (or not listed)" for name in cond.absent_or_unlisted]
    bits += [f"{name} installed by {inst}" for name, inst in cond.installer.items()]
    if cond.gpu is not None:
        g = cond.gpu
        what = []
        if g.names:
            what.append(" or ".join(g.names))
        if g.compute_capability is not None:
            what.append(f"compute capability {g.compute_capability}")
        if g.rt_cores is not None:
            what.append("with RT cores" if g.rt_cores else "without RT cores")
        count = f"at least {g.min_count} " if g.min_count > 1 else ""
        bits.append(f"{count}GPU {' '.join(what)}".strip())
    if cond.driver is not None:
        bits.append(f"driver {cond.driver}")
    if cond.python is not None:
        bits.append(f"Python {cond.python}")
    if cond.glibc is not None:
        bits.append(f"glibc {cond.glibc}")
    if cond.torch_cuda is not None:
        bits.append(f"torch CUDA {cond.torch_cuda}")
    if cond.nvcc_matches_torch is not None:
        same = "the same" if cond.nvcc_matches_torch else "another"
        bits.append(f"nvcc of {same} CUDA major as torch")
    if cond.nvcc_in_use is not None:
        bits.append(
            "a log shows nvcc compiling" if cond.nvcc_in_use else "no log shows nvcc compiling"
        )
    if cond.nvcc_found is not None:
        bits.append("an nvcc on PATH" if cond.nvcc_found else "no nvcc on PATH or under CUDA_HOME")
    if cond.nccl_loaded is not None:
        bits.append(f"a log states NCCL {cond.nccl_loaded} loaded")
    if cond.nccl_loaded_cuda is not None:
        bits.append(f"built for CUDA {cond.nccl_loaded_cuda}")
    if cond.arch:
        bits.append("CPU " + " or ".join(cond.arch))
    if cond.torch_cpu is not None:
        bits.append("torch is a CPU-only build" if cond.torch_cpu else "torch not a CPU-only build")
    bits += [f"${v} set" for v in cond.env_set]
    bits += [f"${v} unset" for v in cond.env_unset]
    if cond.any:
        bits.append("one of: " + " | ".join(f"({describe(c)})" for c in cond.any))
    return "; ".join(bits)
