"""The matrix's ``[[bound]]`` entries on a lock's resolved set: what the metadata let the resolver
pick but the packages do not run with becomes a constraint (pyarrow>=26 with a numpy<2 pin:
``pyarrow<26``) or a requirement (triton 3.0-3.2 import setuptools without declaring it:
``setuptools>=40.8.0``), and the stack is resolved again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.model.plan import Choice, Stack

_NEGATE = {">=": "<", ">": "<=", "<": ">=", "<=": ">", "==": "!="}
MAX_ROUNDS = 3


def exclusion(package: str, versions: SpecifierSet, resolved: str) -> str:
    """A constraint that leaves out the bound's releases: the negation of a one-sided range
    (``>=26.0.0`` -> ``pyarrow<26.0.0``), else the resolved release alone (``!=X``)."""
    specs = list(versions)
    if len(specs) == 1 and specs[0].operator in _NEGATE:
        return f"{package}{_NEGATE[specs[0].operator]}{specs[0].version}"
    return f"{package}!={resolved}"


def bound_repairs(bounds: Sequence[Any], pins: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(kind, requirement, reason) for each bound the resolved ``pins`` break: kind is
    "constraint" (leave the package's releases out) or "requirement" (add the dependency)."""
    found = {canonicalize_name(k): v for k, v in pins.items()}
    out: list[tuple[str, str, str]] = []
    for bound in bounds:
        have = found.get(canonicalize_name(bound.package))
        if have is None:
            continue
        try:
            version = Version(have)
        except InvalidVersion:
            continue
        if not bound.versions.contains(version, prereleases=True):
            continue
        dep = found.get(canonicalize_name(bound.dependency))
        first = bound.reason.split(". ")[0]
        if dep is None:
            if getattr(bound, "required", False):
                out.append(
                    (
                        "requirement",
                        f"{bound.dependency}{bound.allowed}",
                        f"{bound.package} {version} imports {bound.dependency} without declaring "
                        f"it: {first}",
                    )
                )
            continue
        try:
            inside = bound.allowed.contains(Version(dep), prereleases=True)
        except InvalidVersion:
            continue
        if not inside:
            out.append(
                (
                    "constraint",
                    exclusion(bound.package, bound.versions, have),
                    f"{bound.package} {bound.versions} needs {bound.dependency}{bound.allowed}, "
                    f"and the lock holds {bound.dependency} {dep}: {first}",
                )
            )
    return out


def with_repairs(stack: Stack, repairs: Sequence[tuple[str, str, str]]) -> Stack | None:
    """The stack with the repairs added; None when they add nothing new (no progress)."""
    constraints = list(stack.constraints)
    requirements = list(stack.requirements)
    choices = list(stack.choices)
    changed = False
    for kind, value, reason in repairs:
        target = constraints if kind == "constraint" else requirements
        if value in target:
            continue
        target.append(value)
        choices.append(Choice("bound", value, reason))
        changed = True
    if not changed:
        return None
    return replace(
        stack,
        constraints=tuple(constraints),
        requirements=tuple(requirements),
        choices=tuple(choices),
    )
