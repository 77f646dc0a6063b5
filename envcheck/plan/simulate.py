"""Apply a plan's actions to a copy of a report, as if they had run.

The planner re-runs the rules on the result until nothing fixable is left. What an action
would do is modelled from the matrix: installing a torch release from a variant's index makes
that build (its CUDA, its arch list); installing the PyPI wheel also brings the nvidia-* wheels
it pins. A version range (``numpy<2``) becomes a version inside it, marked as assumed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix, public, variant_cuda
from envcheck.model.codec import to_dict
from envcheck.model.finding import Action
from envcheck.model.report import (
    Distribution,
    EnvInfo,
    LibrariesInfo,
    NodeReport,
    PackagesInfo,
    TorchBuild,
)
from envcheck.model.section import Section
from envcheck.patterns import lazy
from envcheck.probes.torch_build import is_cuda_dist

PLANNED = "envcheck-plan"
_VARIANT_URL = lazy(r"/(cu\d{3,}|cpu|rocm[\d.]+)/?$")


def variant_of_index(url: str | None) -> str | None:
    """cu124 for a torch variant index URL (…/whl/cu124); None for other indexes."""
    match = _VARIANT_URL.search(url or "")
    return match.group(1) if match else None


def parse_requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _bumped(version: Version, below: bool) -> Version:
    parts = list(version.release)
    if not below:
        return Version(".".join(map(str, [*parts, 1])))
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] > 0:
            lower = [*parts[:i], parts[i] - 1]
            return Version(".".join(map(str, [*lower, 999])))
    return version


def version_within(spec: SpecifierSet, current: Version | None = None) -> Version | None:
    """A version inside ``spec``: the current one when it fits, an exact pin, else one built
    from the specifiers' own bounds (``<2`` gives 1.999). None when the set looks empty."""
    if current is not None and spec.contains(current, prereleases=True):
        return current
    candidates: list[Version] = []
    for item in spec:
        text = item.version.removesuffix(".*")
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if item.operator in ("==", "==="):
            if not item.version.endswith(".*"):
                return version if spec.contains(version, prereleases=True) else None
            candidates.append(version)
        candidates += [version, _bumped(version, below=True), _bumped(version, below=False)]
    fitting = [v for v in candidates if spec.contains(v, prereleases=True)]
    if not fitting:
        return None if candidates else current
    return max(fitting)


def _torch_build(
    matrix: Matrix, version: Version, variant: str | None, installed_cuda: dict[str, str]
) -> TorchBuild:
    """The build pip installs: from a variant's index (``variant`` given) it carries the
    +label; from the default index it is the PyPI wheel, with the nvidia-* pins it brings."""
    release = matrix.torch_release(version)
    label = variant
    if variant is None and release is not None:
        variant = release.pypi_default
    pins = {k: str(v) for k, v in release.pins.items()} if release and label is None else {}
    cuda = variant_cuda(variant)
    return TorchBuild(
        version=f"{public(version)}+{label}" if label else str(public(version)),
        local_label=label,
        cuda=f"{cuda.major}.{cuda.minor}" if cuda else None,
        variant=variant,
        requires_cuda={k: v for k, v in pins.items() if is_cuda_dist(k)},
        installed_cuda=installed_cuda,
    )


class _State:
    def __init__(self, report: NodeReport, matrix: Matrix) -> None:
        self.matrix = matrix
        self.report = report
        self.dists: dict[str, Distribution] | None = None
        if report.packages.is_ok and report.packages.data is not None:
            self.dists = {}
            for dist in report.packages.data.distributions:
                self.dists.setdefault(dist.key, dist)
        self.torch_changed: tuple[Version, str | None] | None = None  # (version, index variant)
        self.env: dict[str, str] | None = (
            dict(report.env.data.variables) if report.env.is_ok and report.env.data else None
        )
        self.assumed: list[str] = []

    def install(self, req: Requirement, index_url: str | None) -> None:
        if self.dists is None:
            return
        key = canonicalize_name(req.name)
        old = self.dists.get(key)
        current = None
        if old is not None:
            try:
                current = Version(old.version)
            except InvalidVersion:
                current = None
        variant = variant_of_index(index_url)
        if key == "torch" and variant and current is not None and self.report.torch.is_ok:
            build = self.report.torch.data
            if build is not None and build.variant != variant:
                current = None  # another build of the same release is a change too
        version = version_within(req.specifier, current)
        if version is None:
            self.assumed.append(f"{req}: no version satisfies it")
            return
        exact = any(s.operator in ("==", "===") and "*" not in s.version for s in req.specifier)
        if not exact and version != current:
            # the stand-in (numpy 1.999 for numpy<2) is not a release: never show it as one
            self.assumed.append(
                f"{req} was re-checked as a version inside that range; pip picks the exact one"
            )
        if old is not None and current is not None and version == current:
            return
        label = f"+{variant}" if key == "torch" and variant and variant.startswith("cu") else ""
        self.dists[key] = Distribution(
            name=old.name if old else req.name,
            version=f"{public(version)}{label}" if label else str(version),
            location=old.location if old else None,
            installer=PLANNED,
        )
        if key == "torch":
            self.torch_changed = (version, variant)
            release = self.matrix.torch_release(version)
            default = release.pypi_default if release else None
            if release is not None and (variant is None or variant == default):
                for name, spec in release.pins.items():
                    pin = version_within(spec)
                    if pin is not None and is_cuda_dist(name):
                        self._set(name, str(pin))

    def _set(self, name: str, version: str) -> None:
        assert self.dists is not None
        key = canonicalize_name(name)
        old = self.dists.get(key)
        self.dists[key] = Distribution(
            name=old.name if old else name,
            version=version,
            location=old.location if old else None,
            installer=PLANNED,
        )

    def uninstall(self, names: Iterable[str]) -> None:
        if self.dists is None:
            return
        for name in names:
            self.dists.pop(canonicalize_name(name), None)

    def set_env(self, variables: Mapping[str, str]) -> None:
        if self.env is None:
            self.env = {}
        self.env.update(variables)

    def result(self) -> NodeReport:
        report = self.report
        changes: dict[str, Any] = {}
        if self.dists is not None and report.packages.data is not None:
            old = report.packages.data
            info = PackagesInfo(
                distributions=tuple(self.dists.values()),
                broken=old.broken,
                search_path=old.search_path,
            )
            changes["packages"] = replace(report.packages, data=info)
            changes["torch"] = self._torch_section(info)
        if self.env is not None:
            before = report.env.data.variables if report.env.data else {}
            if self.env != before:
                redacted = report.env.data.redacted if report.env.data else ()
                changes["env"] = Section.ok(
                    EnvInfo(variables=dict(self.env), redacted=redacted),
                    source=report.env.source,
                )
                changes["libraries"] = self._libraries(before)
        return report.with_sections(**changes) if changes else report

    def _torch_section(self, info: PackagesInfo) -> Section[TorchBuild]:
        section = self.report.torch
        torch = info.get("torch")
        if torch is None:
            if self.report.packages.is_ok:
                return Section.unavailable("torch is not installed", source=PLANNED)
            return section
        installed_cuda = {d.key: d.version for d in info.distributions if is_cuda_dist(d.name)}
        if self.torch_changed is not None:
            version, variant = self.torch_changed
            return Section.ok(
                _torch_build(self.matrix, version, variant, installed_cuda), source=PLANNED
            )
        if section.is_ok and section.data is not None:
            return replace(section, data=replace(section.data, installed_cuda=installed_cuda))
        return section

    def _libraries(self, before: Mapping[str, str]) -> Section[LibrariesInfo]:
        section = self.report.libraries
        env = self.env or {}
        if env.get("LD_LIBRARY_PATH") == before.get("LD_LIBRARY_PATH") and env.get(
            "LD_PRELOAD"
        ) == before.get("LD_PRELOAD"):
            return section
        ld = tuple(p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p)
        preload = tuple(p for p in re.split(r"[:\s]+", env.get("LD_PRELOAD", "")) if p)
        old = section.data if section.is_ok and section.data else LibrariesInfo()
        dirs = {p.rstrip("/") for p in ld}
        kept = tuple(
            lib
            for lib in old.cuda_libraries
            if (lib.via == "LD_PRELOAD" and lib.path in preload)
            or (lib.via != "LD_PRELOAD" and lib.path.rsplit("/", 1)[0].rstrip("/") in dirs)
        )
        return Section.ok(
            LibrariesInfo(ld_library_path=ld, ld_preload=preload, cuda_libraries=kept),
            source=section.source or PLANNED,
        )


def simulate(
    report: NodeReport, actions: Iterable[Action], matrix: Matrix
) -> tuple[NodeReport, tuple[str, ...]]:
    """The report as it would be after the actions (manual ones change nothing), and the
    versions that had to be assumed."""
    state = _State(report, matrix)
    for action in actions:
        if action.kind == "pip_install":
            for text in action.packages:
                req = parse_requirement(text)
                if req is not None:
                    state.install(req, action.index_url)
        elif action.kind == "pip_uninstall":
            state.uninstall(action.packages)
        elif action.kind == "env":
            state.set_env(action.env)
    return state.result(), tuple(state.assumed)


def changes_something(action: Action, report: NodeReport, matrix: Matrix) -> bool:
    """Whether running the action would change the report (an already-applied fix does not)."""
    if action.kind == "manual":
        return False
    after, _ = simulate(report, [action], matrix)
    # a section the simulation left alone is the same object, and the same JSON: only the
    # sections it replaced are compared (as the whole reports' JSON would compare)
    for f in fields(report):
        new, old = getattr(after, f.name), getattr(report, f.name)
        # equal sections (the model's dataclasses compare every field) have the same JSON:
        # only unequal ones are compared as JSON, which is the definition
        if new is not old and new != old and to_dict(new) != to_dict(old):
            return True
    return False


__all__ = [
    "changes_something",
    "parse_requirement",
    "simulate",
    "variant_of_index",
    "version_within",
]
