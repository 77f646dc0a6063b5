"""Fill the curated tables' gaps from generated records; a curated entry always wins.

A release the curated tables do not list (a torch, vLLM or Ray released after the last hand
review) becomes an entry built from what the index's metadata says, with the generated file
as its origin, so rules and ``envcheck matrix show`` know it. Records whose facts are unknown
fill nothing.
"""

from __future__ import annotations

import dataclasses

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.matrix.generated import NOTE
from envcheck.matrix.model import Matrix, public, variant_cuda
from envcheck.matrix.schema import (
    Companion,
    IsaacSimRelease,
    RayRelease,
    TorchRelease,
    VllmRelease,
)


def source_of(record: object) -> str:
    """The source text of a generated record: the wheel read and the date."""
    file, sha = getattr(record, "file", None), getattr(record, "sha256", None)
    read = getattr(record, "read", "")
    if file:
        return f"index metadata of {file} (sha256 {sha or 'unknown'}), read {read}"
    wheels = getattr(record, "wheels", ())
    if wheels:
        return f"index file names ({', '.join(wheels)}), read {read}"
    return f"index project page, read {read}"


def note_of(record: object) -> str:
    if getattr(record, "yanked", False):
        reason = getattr(record, "yanked_reason", None)
        return f"{NOTE}; yanked on the index" + (f": {reason}" if reason else "")
    return NOTE


def _exact(spec: SpecifierSet) -> Version | None:
    pins = [s.version for s in spec if s.operator in ("==", "===")]
    if len(pins) != 1 or "*" in pins[0]:
        return None
    try:
        return Version(pins[0])
    except InvalidVersion:
        return None


def fill_in(matrix: Matrix) -> Matrix:
    gen = matrix.generated
    if not any(getattr(gen, f.name) for f in dataclasses.fields(gen)):
        return matrix
    origins = dict(matrix.origins)

    def adopt(entry: object, record: object) -> None:
        origin = matrix.origins.get(id(record))
        if origin is not None:
            origins[id(entry)] = origin

    torch = list(matrix.torch_releases)
    known = {t.version for t in torch}
    for wheel in gen.torch_wheel:
        python3 = tuple(p for p in wheel.python if p.startswith("3."))  # cp27 wheels of 1.x
        if wheel.arch != "x86_64" or wheel.unknown or wheel.version in known or not python3:
            continue
        release = TorchRelease(
            version=wheel.version,
            python=python3,
            variants=(wheel.variant,) if wheel.variant else (),
            source=source_of(wheel),
            pypi_default=wheel.variant,
            pins=dict(wheel.pins),
            note=note_of(wheel),
        )
        adopt(release, wheel)
        torch.append(release)
        known.add(wheel.version)
    defaults = {t.version: t.pypi_default for t in torch}

    vllm = list(matrix.vllm_releases)
    known = {v.version for v in vllm}
    for meta in gen.vllm_metadata:
        if meta.unknown or meta.version in known:
            continue
        pinned = _exact(meta.torch) if meta.torch else None
        entry = VllmRelease(
            version=meta.version,
            source=source_of(meta),
            requires_python=meta.requires_python,
            torch=meta.torch,
            torchvision=meta.torchvision,
            xformers=meta.xformers,
            ray=meta.ray,
            numpy=meta.numpy,
            flashinfer=meta.flashinfer,
            cuda=variant_cuda(defaults.get(pinned)) if pinned else None,
            note=note_of(meta),
        )
        adopt(entry, meta)
        vllm.append(entry)

    ray = list(matrix.ray_releases)
    known = {r.version for r in ray}
    for wheels in gen.ray_wheels:
        python3 = tuple(p for p in wheels.python if p.startswith("3."))
        if wheels.unknown or wheels.version in known or not python3:
            continue
        ray_entry = RayRelease(wheels.version, python3, source_of(wheels))
        adopt(ray_entry, wheels)
        ray.append(ray_entry)

    isaacsim = list(matrix.isaacsim_releases)
    for sim in gen.isaacsim_index:
        if sim.unknown or matrix.isaacsim_release(sim.version) is not None:
            continue
        sim_entry = IsaacSimRelease(
            sim.version, source_of(sim), python=sim.python, glibc=sim.glibc, note=note_of(sim)
        )
        adopt(sim_entry, sim)
        isaacsim.append(sim_entry)

    companions = list(matrix.companions)
    # matrix.companion(package, version) for each record, answered from one index of the
    # curated entries (the first of each package and version, as its linear search finds)
    curated: dict[tuple[str, Version], Companion] = {}
    for listed in matrix.companions:
        curated.setdefault((canonicalize_name(listed.package), listed.version), listed)
    for comp in gen.companion_metadata:
        target = _exact(comp.torch) if comp.torch else None
        if comp.unknown or target is None:
            continue
        if (canonicalize_name(comp.package), public(comp.version)) in curated:
            continue
        companion = Companion(
            canonicalize_name(comp.package), comp.version, target, source_of(comp)
        )
        adopt(companion, comp)
        companions.append(companion)

    return dataclasses.replace(
        matrix,
        torch_releases=tuple(torch),
        vllm_releases=tuple(vllm),
        ray_releases=tuple(ray),
        isaacsim_releases=tuple(isaacsim),
        companions=tuple(companions),
        origins=origins,
    )
