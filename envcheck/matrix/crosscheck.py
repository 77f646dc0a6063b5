"""Generated facts against the hand-curated ones: every field where the two disagree.

The curated entry is what rules use; a disagreement says either the curated table is stale
or wrong, or the index changed (a re-upload), and is for a person to judge. `envcheck matrix
validate` lists them as warnings (errors with --strict).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from envcheck.matrix.model import Matrix


@dataclass(frozen=True)
class Disagreement:
    table: str  # the curated table
    key: str  # the release
    field: str
    curated: str
    generated: str
    curated_verified: bool
    source: str  # the generated record's wheel (or file names) and date

    def __str__(self) -> str:
        mark = "" if self.curated_verified else " (the curated entry is UNVERIFIED)"
        source = re.sub(r" \(sha256 [^)]*\)", "", self.source)  # the hash is in the file
        return (
            f"{self.table} {self.key}: {self.field}: curated {self.curated}, "
            f"index {self.generated}{mark} [{source}]"
        )


def _text(value: Any) -> str:
    if value is None or value in ((), {}):
        return "(none)"
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return str(value)


def _curated(matrix: Matrix, entry: object, table: str) -> bool:
    origin = matrix.origin(entry)
    return origin is None or origin[1] == table


def _specs_differ(a: SpecifierSet | None, b: SpecifierSet | None) -> bool:
    return (a or SpecifierSet()) != (b or SpecifierSet())


def _pins(
    curated: Mapping[str, SpecifierSet], generated: Mapping[str, SpecifierSet]
) -> list[tuple[str, str, str]]:
    out = []
    for name in sorted(set(curated) | set(generated)):
        a, b = curated.get(name), generated.get(name)
        if a is None or b is None or a != b:
            out.append((f"pins.{name}", _text(a), _text(b)))
    return out


def crosscheck(matrix: Matrix) -> list[Disagreement]:
    from envcheck.matrix.fill import source_of

    out: list[Disagreement] = []
    gen = matrix.generated
    for wheel in gen.torch_wheel:
        release = matrix.torch_release(wheel.version)
        if wheel.arch != "x86_64" or wheel.unknown or release is None:
            continue
        if not _curated(matrix, release, "torch"):
            continue
        diffs = []
        if release.python != wheel.python:
            diffs.append(("python", _text(release.python), _text(wheel.python)))
        diffs += _pins(release.pins, wheel.pins)
        if release.pypi_default != wheel.variant:
            diffs.append(("pypi_default", _text(release.pypi_default), _text(wheel.variant)))
        key = str(wheel.version)
        out += [
            Disagreement("torch", key, f, a, b, release.verified, source_of(wheel))
            for f, a, b in diffs
        ]
    for meta in gen.vllm_metadata:
        vllm = matrix.vllm_release(meta.version)
        if meta.unknown or vllm is None or not _curated(matrix, vllm, "vllm"):
            continue
        for name in (
            "requires_python",
            "torch",
            "torchvision",
            "xformers",
            "ray",
            "numpy",
            "flashinfer",
        ):
            a, b = getattr(vllm, name), getattr(meta, name)
            if _specs_differ(a, b):
                out.append(
                    Disagreement(
                        "vllm",
                        str(meta.version),
                        name,
                        _text(a),
                        _text(b),
                        vllm.verified,
                        source_of(meta),
                    )
                )
    for wheels in gen.ray_wheels:
        ray = matrix.ray_release(wheels.version)
        if wheels.unknown or ray is None or not _curated(matrix, ray, "ray"):
            continue
        if ray.python != wheels.python:
            out.append(
                Disagreement(
                    "ray",
                    str(wheels.version),
                    "python",
                    _text(ray.python),
                    _text(wheels.python),
                    ray.verified,
                    source_of(wheels),
                )
            )
    for sim in gen.isaacsim_index:
        isaac = matrix.isaacsim_release(sim.version)
        if sim.unknown or isaac is None or not _curated(matrix, isaac, "isaacsim"):
            continue
        pairs: tuple[tuple[str, object, object], ...] = (
            ("python", isaac.python, sim.python),
            ("glibc", isaac.glibc, sim.glibc),
        )
        for name, a, b in pairs:
            if a is not None and b is not None and a != b:
                out.append(
                    Disagreement(
                        "isaacsim",
                        str(isaac.version),
                        name,
                        _text(a),
                        _text(b),
                        isaac.verified,
                        source_of(sim),
                    )
                )
    for comp in gen.companion_metadata:
        companion = matrix.companion(comp.package, comp.version)
        if comp.unknown or companion is None or not _curated(matrix, companion, "companion"):
            continue
        if comp.torch is None or not comp.torch.contains(companion.torch, prereleases=True):
            out.append(
                Disagreement(
                    "companion",
                    f"{canonicalize_name(comp.package)} {comp.version}",
                    "torch",
                    f"=={companion.torch}",
                    _text(comp.torch),
                    companion.verified,
                    source_of(comp),
                )
            )
    return out
