"""Pure decisions over the matrix shared by rules and fix plans: which GPUs a torch build has
kernels for, whether a driver runs a CUDA version, which torch build to move to."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from packaging.version import Version

from envcheck.matrix.model import Matrix, major_minor, variant_cuda
from envcheck.matrix.schema import CudaToolkit, TorchRelease

Support = Literal["full", "minor-compat", "no"]


@dataclass(frozen=True)
class Arch:
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
