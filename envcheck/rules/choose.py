"""Pure decisions over the matrix shared by rules and fix plans: which GPUs a torch build has
kernels for, whether a driver runs a CUDA version, which torch build to move to."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix, major_minor, variant_cuda
from envcheck.matrix.schema import CudaToolkit, TorchRelease
from envcheck.patterns import lazy

Support = Literal["full", "minor-compat", "no"]


@dataclass(frozen=True)
class Arch:
    """A compute capability, as a cubin or as PTX."""

    cc: Version
    ptx: bool


def parse_arch_list(text: str) -> list[Arch]:
    archs = []
    for item in re.split(r"[;\s]+", text.strip()):
        if not item:
            continue
        ptx = item.endswith("+PTX")
        archs.append(Arch(Version(item.removesuffix("+PTX")), ptx))
    return archs


_TORCH_ARCH = lazy(r"\b(sm|compute)_([0-9]+)[af]?\b")


def arch_list_from_torch(text: str) -> str | None:
    """torch's own names for its architectures (``get_arch_list()`` or its warning: ``sm_50 sm_60
    ... sm_120 compute_120``) in the matrix's form (``5.0;6.0;...;12.0+PTX``); None when the text
    names none. ``compute_XY`` is PTX of that architecture."""
    sass: dict[Version, bool] = {}
    for kind, digits in _TORCH_ARCH.findall(text):
        if len(digits) < 2:
            continue
        cc = Version(f"{int(digits[:-1])}.{digits[-1]}")
        sass[cc] = sass.get(cc, False) or kind == "compute"
    if not sass:
        return None
    return ";".join(
        f"{cc.major}.{cc.minor}{'+PTX' if ptx else ''}" for cc, ptx in sorted(sass.items())
    )


def sm(cc: Version) -> str:
    return f"sm_{cc.major}{cc.minor}"


def covers(archs: Iterable[Arch], cc: Version) -> bool:
    """A GPU runs a build that has SASS for its major at an equal or lower minor (binary
    compatibility within a major), or PTX for any lower or equal architecture (JIT)."""
    for arch in archs:
        if arch.cc.major == cc.major and arch.cc.minor <= cc.minor:
            return True
        if arch.ptx and arch.cc <= cc:
            return True
    return False


def arch_list(release: TorchRelease, variant: str) -> tuple[list[Arch], bool] | None:
    """(archs, verified) compiled into a release's variant, or None when the matrix lacks it."""
    text = release.arch_list.get(variant)
    if not text:
        return None
    return parse_arch_list(text), release.arch_list_verified.get(variant, True)


def arch_driver_problem(matrix: Matrix, name: str, cc: Version, driver: Version) -> str | None:
    """Why a driver cannot run a GPU of compute capability ``cc`` at all, or None.

    A driver older than the branch of the first CUDA toolkit that supports the architecture does
    not know the GPU (an RTX 5090 needs CUDA 12.8's R570, an H100 CUDA 11.8's R520); one newer
    than the architecture's last driver branch has dropped it (Volta after R580). Forward
    compatibility (cuda-compat on datacenter GPUs) runs a newer CUDA on an old driver; it does
    not teach an old driver a new GPU."""
    support = matrix.sm(sm(cc))
    if support is None:
        return None
    label = f"{name} ({sm(cc)})"
    last = support.last_driver_branch
    if last is not None and driver.major > last:
        return f"{label} is not supported by drivers after R{last}"
    toolkit = matrix.toolkit(support.first_cuda)
    floor = toolkit.min_driver if toolkit is not None else None
    if floor is not None and driver.major < floor.major:
        return (
            f"{label} needs a driver of R{floor.major} or newer (CUDA {support.first_cuda}, the "
            f"first toolkit for {sm(cc)}, ships {driver_text(floor)})"
        )
    return None


def driver_support(toolkit: CudaToolkit, driver: Version, max_cuda: Version | None) -> Support:
    """Whether a driver runs binaries built with this CUDA toolkit.

    Full support: the driver is at least the toolkit's GA driver (or reports a newer CUDA).
    Minor-version compatibility: same CUDA major and at least that major's floor.
    """
    cuda = major_minor(toolkit.cuda)
    if max_cuda is not None and major_minor(max_cuda) >= cuda:
        return "full"
    if max_cuda is None and toolkit.min_driver is not None and driver >= toolkit.min_driver:
        return "full"
    floor = toolkit.minor_compat_min_driver
    same_major = max_cuda is None or max_cuda.major == cuda.major
    if floor is not None and same_major and driver >= floor:
        return "minor-compat"
    return "no"


@dataclass(frozen=True)
class TorchChoice:
    """A torch release and variant for the node, and how well it supports it."""

    release: TorchRelease
    variant: str
    support: Support | None  # None when the driver is unknown
    reason: str


def torch_choices(
    matrix: Matrix,
    *,
    ccs: Iterable[Version] = (),
    driver: Version | None = None,
    max_cuda: Version | None = None,
    python: Version | None = None,
    releases: Iterable[TorchRelease] | None = None,
    allow_minor_compat: bool = True,
) -> list[TorchChoice]:
    """Every (release, variant) that has kernels for all GPUs, runs on the driver and supports
    the Python; newest release first, and within a release the newest CUDA first."""
    ccs = list(ccs)
    out: list[TorchChoice] = []
    if driver is not None and any(arch_driver_problem(matrix, "", cc, driver) for cc in ccs):
        return out
    pool = list(releases) if releases is not None else list(matrix.torch_releases)
    for release in sorted(pool, key=lambda r: r.version, reverse=True):
        if python is not None and f"{python.major}.{python.minor}" not in release.python:
            continue
        for variant in sorted(
            release.variants, key=lambda v: variant_cuda(v) or Version("0"), reverse=True
        ):
            cuda = variant_cuda(variant)
            if cuda is None:
                continue
            if ccs:
                archs = arch_list(release, variant)
                if archs is None or not archs[1] or not all(covers(archs[0], cc) for cc in ccs):
                    continue
            support: Support | None = None
            if driver is not None:
                toolkit = matrix.toolkit(cuda)
                if toolkit is None:
                    continue
                support = driver_support(toolkit, driver, max_cuda)
                if support == "no" or (support == "minor-compat" and not allow_minor_compat):
                    continue
            reason = f"torch {release.version}+{variant}"
            out.append(TorchChoice(release, variant, support, reason))
    return out


# --- judging one build for a target (used by fix plans and `envcheck lock`) --------------------


def driver_max_cuda(
    matrix: Matrix, driver: Version, reported: Version | None = None
) -> tuple[Version | None, str]:
    """Newest CUDA a driver runs and where that figure comes from (as Facts.max_cuda does)."""
    if reported is not None:
        return reported, "reported by the driver"
    branch = matrix.max_cuda_for_driver(driver)
    if branch is not None:
        return branch.max_cuda, f"driver branch {branch.branch}"
    newest = matrix.newest_cuda_supported(driver)
    if newest is not None:
        return newest.cuda, "newest toolkit whose driver it meets"
    return None, "unknown"


def driver_text(version: Version) -> str:
    """A driver version as NVIDIA writes it: 535.104.05, not packaging's 535.104.5."""
    parts = [str(p) for p in version.release]
    if len(parts) == 3:
        parts[2] = parts[2].zfill(2)
    return ".".join(parts)


def driver_needed(toolkit: CudaToolkit) -> str:
    """'>= 550.54.14 (or >= 525.60.13 through CUDA 12.x minor-version compatibility)'."""
    parts = []
    if toolkit.min_driver is not None:
        parts.append(f">= {driver_text(toolkit.min_driver)}")
    if toolkit.minor_compat_min_driver is not None:
        floor = f">= {driver_text(toolkit.minor_compat_min_driver)}"
        text = f"{floor} through CUDA {toolkit.cuda.major}.x minor-version compatibility"
        parts.append(f"(or {text})" if parts else text)
    return " ".join(parts) or "a newer driver (minimum UNVERIFIED)"


@dataclass(frozen=True)
class BuildVerdict:
    """Whether one torch build (release + CUDA variant) fits a target, and why (not)."""

    release: TorchRelease
    variant: str
    support: Support | None  # None: the driver is unknown
    problems: tuple[str, ...]

    @property
    def fits(self) -> bool:
        return not self.problems

    @property
    def label(self) -> str:
        return f"{self.release.version}+{self.variant}"


def judge_build(
    matrix: Matrix,
    release: TorchRelease,
    variant: str,
    *,
    ccs: Iterable[tuple[str, Version]] = (),
    driver: Version | None = None,
    max_cuda: Version | None = None,
    accept_unverified: bool = False,
) -> BuildVerdict:
    """Does this build have kernels for every GPU (``(name, cc)`` pairs) and run on the driver?
    An arch list the matrix marks UNVERIFIED counts only with ``accept_unverified``."""
    problems: list[str] = []
    cuda = variant_cuda(variant)
    if cuda is None:
        return BuildVerdict(release, variant, None, (f"{variant} is not a CUDA build",))
    pairs = list(ccs)
    if driver is not None:
        problems += [p for n, c in pairs if (p := arch_driver_problem(matrix, n, c, driver))]
    if pairs:
        found = arch_list(release, variant)
        if found is None:
            problems.append("its arch list is not in the matrix")
        else:
            archs, verified = found
            missing = sorted({f"{name} ({sm(cc)})" for name, cc in pairs if not covers(archs, cc)})
            if missing:
                problems.append(f"no kernels for {', '.join(missing)}")
            elif not verified and not accept_unverified:
                problems.append("its arch list is UNVERIFIED")
    support: Support | None = None
    if driver is not None:
        toolkit = matrix.toolkit(cuda)
        if toolkit is None:
            problems.append(f"CUDA {cuda} is not in the matrix")
        else:
            support = driver_support(toolkit, driver, max_cuda)
            if support == "no":
                problems.append(f"needs driver {driver_needed(toolkit)} for CUDA {cuda}")
    return BuildVerdict(release, variant, support, tuple(problems))


# --- real upper bounds (matrix [[bound]]) for the requirements a lock resolves -----------------


def bound_constraints(matrix: Matrix, wanted: Mapping[str, Requirement]) -> list[tuple[str, str]]:
    """The ``[[bound]]`` entries of exactly pinned requirements (vllm==0.8.5.post1 needs
    transformers<5), as (constraint, reason): constraints, not requirements, so they bound the
    dependency when something pulls it in and add nothing otherwise."""
    out: list[tuple[str, str]] = []
    for req in wanted.values():
        pins = [s.version for s in req.specifier if s.operator == "=="]
        if not pins:
            continue
        try:
            version = Version(pins[0])
        except InvalidVersion:
            continue
        for bound in matrix.bounds_for(req.name, version):
            out.append(
                (
                    f"{bound.dependency}{bound.allowed}",
                    f"{req.name} {version} breaks on {bound.dependency} outside "
                    f"{bound.allowed} although its metadata allows it: "
                    f"{bound.reason.split('. ')[0]}",
                )
            )
    return out


def torch_build_for_cuda(
    matrix: Matrix, cuda: Version, current: Version | None = None
) -> tuple[Version, str] | None:
    """The torch build of CUDA ``cuda`` (its cuXY variant) the matrix knows, with its index URL:
    the ``current`` release where it has that variant, else the newest release that has it."""
    variant = f"cu{cuda.major}{cuda.minor}"
    having = [r for r in matrix.torch_releases if variant in r.variants]
    url = matrix.torch_index_url(variant)
    if not having or url is None:
        return None
    same = next((r for r in having if current is not None and r.version == current), None)
    return (same or max(having, key=lambda r: r.version)).version, url


def variant_newest(choices: Iterable[TorchChoice], best: TorchChoice) -> list[tuple[str, Version]]:
    """Each CUDA variant of ``choices`` besides ``best``'s with its newest torch release, the
    newest CUDA first: the pin a project that needs an older torch installs (threads pin
    torch==1.13.1 on a 470 driver rather than the newest build the driver runs)."""
    newest: dict[str, Version] = {}
    for choice in choices:
        if choice.variant != best.variant:
            known = newest.get(choice.variant)
            if known is None or choice.release.version > known:
                newest[choice.variant] = choice.release.version
    order = sorted(newest, key=lambda v: variant_cuda(v) or Version("0"), reverse=True)
    return [(v, newest[v]) for v in order]


def variant_spans(choices: Iterable[TorchChoice], best: TorchChoice) -> str | None:
    """The CUDA variants of ``choices`` besides ``best``, each with the torch releases that have
    it, from the matrix's torch table: '+cu116 (torch 1.13.0-1.13.1), +cu117 (torch 1.13.1-2.0.1),
    ...'; None when there is no other."""
    spans: dict[str, list[Version]] = {}
    for choice in choices:
        if choice.variant != best.variant or choice.release.version != best.release.version:
            spans.setdefault(choice.variant, []).append(choice.release.version)
    if not spans:
        return None
    order = sorted(spans, key=lambda v: variant_cuda(v) or Version("0"))
    return ", ".join(
        f"+{v} (torch {min(spans[v])}"
        + (f"-{max(spans[v])})" if max(spans[v]) != min(spans[v]) else ")")
        for v in order
    )
