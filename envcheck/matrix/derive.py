"""From a project's files and their core metadata to generated records (pure functions).

Which wheel speaks for a release, which requirements count and how each fact is named are
decided here; fetching is elsewhere (envcheck/matrix/refresh.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.index.files import (
    CoreMetadata,
    Dist,
    InvalidMetadata,
    applies,
    glibc_of,
    linux_arch,
    linux_wheels,
    parse_metadata,
    pick_wheel,
    pure_wheel,
    pythons,
    supported_minors,
)
from envcheck.index.metadata import Fetched
from envcheck.matrix.generated import (
    KEY_REQUIREMENTS,
    CompanionMetadata,
    FlashAttnIndex,
    IsaacSimIndex,
    RayWheels,
    TorchWheel,
    VllmMetadata,
)

FLASH_ATTN_NOTE = (
    "the index carries the sdist only; prebuilt wheels are attached to the project's GitHub "
    "releases (see the curated [[flash_attn]] table)"
)
VLLM_FIELDS = {
    "torch": "torch",
    "torchvision": "torchvision",
    "xformers": "xformers",
    "flashinfer-python": "flashinfer",
    "flashinfer": "flashinfer",
    "numpy": "numpy",
    "ray": "ray",
    "transformers": "transformers",
}
_TORCH_PIN_NAMES = ("cuda-toolkit", "cuda-bindings", "triton", "pytorch-triton")


@dataclass(frozen=True)
class Release:
    project: str
    version: Version
    dists: tuple[Dist, ...]
    read: str  # today's date

    @property
    def yanked(self) -> tuple[bool, str | None]:
        if not self.dists or not all(d.file.yanked for d in self.dists):
            return False, None
        return True, next((d.file.yanked_reason for d in self.dists if d.file.yanked_reason), None)

    @property
    def requires_python(self) -> SpecifierSet | None:
        for dist in self.dists:
            if dist.file.requires_python:
                try:
                    return SpecifierSet(dist.file.requires_python)
                except InvalidSpecifier:
                    return None
        return None


@dataclass(frozen=True)
class Read:
    """The metadata of the wheel that speaks for a release, or why it is unknown."""

    dist: Dist | None
    metadata: CoreMetadata | None
    how: str | None
    unknown: str | None


def read_metadata(release: Release, dist: Dist | None, fetched: Mapping[str, Fetched]) -> Read:
    if dist is None:
        only = (
            "only an sdist"
            if release.dists and not any(d.wheel for d in release.dists)
            else "no Linux wheel"
        )
        return Read(None, None, None, f"{only} on the index: no wheel metadata to read")
    got = fetched.get(dist.filename)
    if got is None or got.text is None:
        reason = got.unknown if got is not None else "not fetched"
        return Read(dist, None, None, reason or "no metadata")
    try:
        meta = parse_metadata(got.text, release.project, release.version)
    except InvalidMetadata as exc:
        return Read(dist, None, None, f"invalid metadata: {exc}")
    return Read(dist, meta, got.how, None)


def _spec(req: Requirement) -> SpecifierSet | None:
    return req.specifier if str(req.specifier) else None


def variant_of(pins: Mapping[str, SpecifierSet]) -> str | None:
    """cuXYZ from the CUDA runtime torch pins (cuda-toolkit==13.0.2, nvidia-cuda-runtime-cu12)."""
    runtimes = sorted(n for n in pins if re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", n))
    names = ["cuda-toolkit", *runtimes]
    for name in names:
        for spec in pins.get(name, SpecifierSet()):
            if spec.operator == "==" and "*" not in spec.version:
                try:
                    version = Version(spec.version)
                except InvalidVersion:
                    continue
                return f"cu{version.major}{version.minor}"
    return None


def _is_torch_pin(name: str) -> bool:
    return name.startswith("nvidia-") or name in _TORCH_PIN_NAMES


# --- one function per table -------------------------------------------------------------------


def torch_wanted(release: Release) -> list[Dist]:
    return [d for arch in ("x86_64", "aarch64") if (d := pick_wheel(release.dists, arch))]


def torch_records(release: Release, fetched: Mapping[str, Fetched]) -> list[TorchWheel]:
    out = []
    yanked, reason = release.yanked
    arches: tuple[Literal["x86_64"], Literal["aarch64"]] = ("x86_64", "aarch64")
    for arch in arches:
        wheels = linux_wheels(release.dists, arch)
        if not wheels:
            continue
        regular, threaded = pythons(wheels, arch)
        got = read_metadata(release, pick_wheel(wheels, arch), fetched)
        pins: dict[str, SpecifierSet] = {}
        markers: dict[str, str] = {}
        if got.metadata is not None and got.dist is not None:
            minors = _wheel_minors(got.dist, arch)
            for req in got.metadata.requires:
                name = canonicalize_name(req.name)
                if not _is_torch_pin(name) or not applies(req, arch=arch, pythons=minors):
                    continue
                pins[name] = req.specifier
                if req.marker is not None:
                    markers[name] = str(req.marker)
        out.append(
            TorchWheel(
                version=release.version,
                arch=arch,
                read=release.read,
                python=regular,
                free_threaded=threaded,
                wheels=tuple(sorted(d.filename for d in wheels)),
                requires_python=(got.metadata.requires_python if got.metadata else None)
                or release.requires_python,
                file=got.dist.filename if got.dist else None,
                sha256=got.dist.file.sha256 if got.dist else None,
                metadata=got.how,  # type: ignore[arg-type]
                pins=pins,
                markers=markers,
                variant=variant_of(pins),
                yanked=yanked,
                yanked_reason=reason,
                unknown=got.unknown,
            )
        )
    return out


def _wheel_minors(dist: Dist, arch: str) -> list[str]:
    regular, threaded = pythons([dist], arch)
    return list(regular or threaded) or ["3.11"]


def _x86_wanted(release: Release) -> list[Dist]:
    dist = pick_wheel(release.dists, "x86_64")
    return [dist] if dist else []


def companion_wanted(release: Release) -> list[Dist]:
    dist = pick_wheel(release.dists, "x86_64") or pure_wheel(release.dists)
    return [dist] if dist else []


vllm_wanted = _x86_wanted


def vllm_records(release: Release, fetched: Mapping[str, Fetched]) -> list[VllmMetadata]:
    got = read_metadata(release, pick_wheel(release.dists, "x86_64"), fetched)
    values: dict[str, SpecifierSet | None] = {}
    markers: dict[str, str] = {}
    if got.metadata is not None:
        minors = supported_minors(got.metadata.requires_python)
        for req in got.metadata.requires:
            field = VLLM_FIELDS.get(canonicalize_name(req.name))
            if field is None or field in values:
                continue
            if not applies(req, arch="x86_64", pythons=minors, extras=got.metadata.extras):
                continue
            values[field] = _spec(req)
            if req.marker is not None:
                markers[canonicalize_name(req.name)] = str(req.marker)
    yanked, reason = release.yanked
    return [
        VllmMetadata(
            version=release.version,
            read=release.read,
            file=got.dist.filename if got.dist else None,
            sha256=got.dist.file.sha256 if got.dist else None,
            metadata=got.how,  # type: ignore[arg-type]
            requires_python=(got.metadata.requires_python if got.metadata else None)
            or release.requires_python,
            markers=markers,
            yanked=yanked,
            yanked_reason=reason,
            unknown=got.unknown,
            **values,
        )
    ]


def companion_records(release: Release, fetched: Mapping[str, Fetched]) -> list[CompanionMetadata]:
    wheel = pick_wheel(release.dists, "x86_64") or pure_wheel(release.dists)
    got = read_metadata(release, wheel, fetched)
    requires: dict[str, SpecifierSet] = {}
    if got.metadata is not None:
        minors = supported_minors(got.metadata.requires_python)
        for req in got.metadata.requires:
            name = canonicalize_name(req.name)
            if name not in KEY_REQUIREMENTS or name in requires:
                continue
            if not applies(req, arch="x86_64", pythons=minors):
                continue
            spec = _spec(req)
            if spec is not None:
                requires[name] = spec
    torch = requires.get("torch")
    yanked, reason = release.yanked
    return [
        CompanionMetadata(
            package=canonicalize_name(release.project),
            version=release.version,
            read=release.read,
            file=got.dist.filename if got.dist else None,
            sha256=got.dist.file.sha256 if got.dist else None,
            metadata=got.how,  # type: ignore[arg-type]
            torch=torch,
            requires_python=(got.metadata.requires_python if got.metadata else None)
            or release.requires_python,
            requires={k: v for k, v in requires.items() if k != "torch"},
            yanked=yanked,
            yanked_reason=reason,
            unknown=got.unknown,
        )
    ]


def no_metadata(release: Release) -> list[Dist]:
    return []


def ray_records(release: Release, fetched: Mapping[str, Fetched]) -> list[RayWheels]:
    x86 = linux_wheels(release.dists, "x86_64")
    regular, _ = pythons(x86, "x86_64")
    arm, _ = pythons(linux_wheels(release.dists, "aarch64"), "aarch64")
    yanked, reason = release.yanked
    return [
        RayWheels(
            version=release.version,
            read=release.read,
            python=regular,
            python_aarch64=arm,
            wheels=tuple(sorted(d.filename for d in x86)),
            requires_python=release.requires_python,
            yanked=yanked,
            yanked_reason=reason,
            unknown=None if regular else "no Linux x86_64 CPython wheels on the index",
        )
    ]


def flash_attn_records(release: Release, fetched: Mapping[str, Fetched]) -> list[FlashAttnIndex]:
    sdist = next((d for d in release.dists if not d.wheel), None)
    tags = sorted({str(t) for d in release.dists if d.wheel for t in d.tags})
    yanked, reason = release.yanked
    return [
        FlashAttnIndex(
            version=release.version,
            read=release.read,
            files=tuple(sorted(d.filename for d in release.dists)),
            sdist=sdist.filename if sdist else None,
            sha256=sdist.file.sha256 if sdist else None,
            wheel_tags=tuple(tags),
            requires_python=release.requires_python,
            yanked=yanked,
            yanked_reason=reason,
            note=None if tags else FLASH_ATTN_NOTE,
        )
    ]


def _single_minor(spec: SpecifierSet | None) -> str | None:
    if spec is None:
        return None
    items = list(spec)
    if len(items) == 1 and items[0].operator == "==":
        match = re.fullmatch(r"(\d+\.\d+)(\.\*)?", items[0].version)
        if match:
            return match.group(1)
    return None


def isaacsim_records(release: Release, fetched: Mapping[str, Fetched]) -> list[IsaacSimIndex]:
    linux = [d for d in release.dists if d.wheel and any(linux_arch(t) for t in d.tags)]
    glibcs = [g for d in linux for t in d.tags if linux_arch(t) and (g := glibc_of(t))]
    spec = release.requires_python
    yanked, reason = release.yanked
    return [
        IsaacSimIndex(
            version=release.version,
            read=release.read,
            requires_python=spec,
            python=_single_minor(spec),
            glibc=min(glibcs) if glibcs else None,
            wheels=tuple(sorted(d.filename for d in linux)),
            yanked=yanked,
            yanked_reason=reason,
            unknown=None if spec is not None else "the index gives no requires-python",
        )
    ]


@dataclass(frozen=True)
class Kind:
    """How one package is refreshed: its table, which files' metadata it needs, its records."""

    table: str
    wanted: Callable[[Release], Sequence[Dist]]
    records: Callable[[Release, Mapping[str, Fetched]], Sequence[object]]


TORCH = Kind("torch_wheel", torch_wanted, torch_records)
VLLM = Kind("vllm_metadata", vllm_wanted, vllm_records)
RAY = Kind("ray_wheels", no_metadata, ray_records)
FLASH_ATTN = Kind("flash_attn_index", no_metadata, flash_attn_records)
ISAACSIM = Kind("isaacsim_index", no_metadata, isaacsim_records)
COMPANION = Kind("companion_metadata", companion_wanted, companion_records)

PACKAGES: dict[str, Kind] = {
    "torch": TORCH,
    "vllm": VLLM,
    "ray": RAY,
    "xformers": COMPANION,
    "flash-attn": FLASH_ATTN,
    "isaacsim": ISAACSIM,
    "torchvision": COMPANION,
    "torchaudio": COMPANION,
    "flashinfer-python": COMPANION,
    "sglang": COMPANION,
    "transformers": COMPANION,
    "trl": COMPANION,
    "numpy": COMPANION,
}
