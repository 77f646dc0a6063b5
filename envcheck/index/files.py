"""File names, tags and core metadata of a project's files, parsed with packaging."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.metadata import parse_email
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from envcheck.index.simple import IndexFile, ProjectPage

ARCHES = ("x86_64", "aarch64")
PYTHON_MINORS = tuple(f"3.{minor}" for minor in range(6, 16))


class InvalidMetadata(ValueError):
    """Core metadata that cannot be trusted (unparsable, or about another file)."""


@dataclass(frozen=True)
class Dist:
    """One file of a release."""

    file: IndexFile
    version: Version
    wheel: bool
    tags: frozenset[Tag] = frozenset()
    build: tuple[int, str] | tuple[()] = ()

    @property
    def filename(self) -> str:
        return self.file.filename


def releases(
    page: ProjectPage, project: str, *, pre: bool = False, since: Version | None = None
) -> tuple[dict[Version, list[Dist]], list[str]]:
    """The page's files grouped by release, and the file names that could not be parsed."""
    key = canonicalize_name(project)
    out: dict[Version, list[Dist]] = {}
    problems: list[str] = []
    for file in page.files:
        name = file.filename
        try:
            if name.endswith(".whl"):
                wname, version, build, tags = parse_wheel_filename(name)
                dist = Dist(file, version, True, tags, build)
            elif name.endswith((".tar.gz", ".zip")):
                wname, version = parse_sdist_filename(name)
                dist = Dist(file, version, False)
            else:
                continue  # .egg, .exe, .tar.bz2: not read
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion) as exc:
            problems.append(f"{name}: {exc}")
            continue
        if canonicalize_name(wname) != key:
            problems.append(f"{name}: names another project")
            continue
        if (version.is_prerelease or version.is_devrelease) and not pre:
            continue
        if since is not None and version < since:
            continue
        out.setdefault(version, []).append(dist)
    return dict(sorted(out.items())), problems


def linux_arch(tag: Tag) -> str | None:
    """x86_64 / aarch64 for glibc Linux platform tags (manylinux*, linux_*); else None."""
    platform = tag.platform
    if not (platform.startswith("manylinux") or platform.startswith("linux_")):
        return None
    return next((arch for arch in ARCHES if platform.endswith(f"_{arch}")), None)


def cpython(tag: Tag) -> tuple[str, bool] | None:
    """("3.11", free_threaded) for a CPython-specific tag; None for abi3/py3 tags."""
    interp = tag.interpreter
    if not interp.startswith("cp") or not interp[2:].isdigit() or len(interp) < 4:
        return None
    if tag.abi == "abi3":
        return None
    return f"{interp[2]}.{interp[3:]}", tag.abi.endswith("t")


def glibc_of(tag: Tag) -> Version | None:
    platform = tag.platform
    legacy = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
    for prefix, glibc in legacy.items():
        if platform.startswith(prefix + "_"):
            return Version(glibc)
    parts = platform.split("_")
    if platform.startswith("manylinux_") and len(parts) >= 3 and parts[1].isdigit():
        return Version(f"{parts[1]}.{parts[2]}")
    return None


def minor_key(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def pythons(dists: Iterable[Dist], arch: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(CPython minors, free-threaded minors) with a Linux wheel for ``arch``."""
    regular: set[str] = set()
    threaded: set[str] = set()
    for dist in dists:
        for tag in dist.tags:
            py = cpython(tag)
            if py is None or linux_arch(tag) != arch:
                continue
            (threaded if py[1] else regular).add(py[0])
    return tuple(sorted(regular, key=minor_key)), tuple(sorted(threaded, key=minor_key))


def linux_wheels(dists: Iterable[Dist], arch: str) -> list[Dist]:
    return [d for d in dists if d.wheel and any(linux_arch(t) == arch for t in d.tags)]


def pure_wheel(dists: Iterable[Dist]) -> Dist | None:
    """A platform-independent wheel (``py3-none-any``): what pure-Python packages (transformers,
    trl, SGLang) publish instead of Linux wheels; its metadata speaks for every platform."""
    pure = [d for d in dists if d.wheel and d.tags and all(t.platform == "any" for t in d.tags)]
    return min(pure, key=lambda d: d.filename) if pure else None


# the Python whose wheel's metadata is read: the one most releases have, then its neighbours
PREFERRED = ("3.11", "3.10", "3.12", "3.9", "3.13", "3.8", "3.14")


def pick_wheel(dists: Sequence[Dist], arch: str) -> Dist | None:
    """The Linux wheel of ``arch`` whose metadata speaks for the release: a CPython 3.11 one when
    there is one (then 3.10, 3.12, ...), else any (abi3, py3); the highest build tag wins."""

    def rank(dist: Dist) -> tuple[int, int, str]:
        found = [cpython(t) for t in dist.tags if linux_arch(t) == arch]
        minors = [p[0] for p in found if p is not None and not p[1]]
        best = min((PREFERRED.index(m) for m in minors if m in PREFERRED), default=len(PREFERRED))
        if not minors and any(p is not None for p in found):
            best = len(PREFERRED) + 1  # free-threaded only: last resort
        build = -dist.build[0] if dist.build else 0
        return best, build, dist.filename

    candidates = linux_wheels(dists, arch)
    return min(candidates, key=rank) if candidates else None


@dataclass(frozen=True)
class CoreMetadata:
    name: str
    version: Version
    requires_python: SpecifierSet | None
    requires: tuple[Requirement, ...]
    extras: tuple[str, ...]


def parse_metadata(text: str, project: str, version: Version) -> CoreMetadata:
    raw, _unparsed = parse_email(text)
    name, written = raw.get("name"), raw.get("version")
    if not name or not written:
        raise InvalidMetadata("no Name or Version header")
    if canonicalize_name(name) != canonicalize_name(project):
        raise InvalidMetadata(f"the metadata is about {name}, not {project}")
    try:
        if Version(written) != version:
            raise InvalidMetadata(f"the metadata says version {written}, not {version}")
    except InvalidVersion:
        raise InvalidMetadata(f"invalid Version {written!r}") from None
    requires = []
    for line in raw.get("requires_dist", []):
        try:
            requires.append(Requirement(line))
        except InvalidRequirement as exc:
            raise InvalidMetadata(f"invalid Requires-Dist {line!r}: {exc}") from None
    spec = None
    if raw.get("requires_python"):
        try:
            spec = SpecifierSet(raw["requires_python"])
        except InvalidSpecifier:
            raise InvalidMetadata(f"invalid Requires-Python {raw['requires_python']!r}") from None
    extras = tuple(raw.get("provides_extra", []))
    return CoreMetadata(name, version, spec, tuple(requires), extras)


def applies(
    req: Requirement, *, arch: str, pythons: Sequence[str], extras: Sequence[str] = ()
) -> bool:
    """Whether the requirement holds on glibc Linux ``arch`` for some of ``pythons`` (with no
    extra, or with one of ``extras``)."""
    if req.marker is None:
        return True
    for py in pythons:
        for extra in ("", *extras):
            env = {
                "platform_system": "Linux",
                "sys_platform": "linux",
                "platform_machine": arch,
                "os_name": "posix",
                "python_version": py,
                "python_full_version": f"{py}.0",
                "implementation_name": "cpython",
                "platform_python_implementation": "CPython",
                "extra": extra,
            }
            if req.marker.evaluate(env):
                return True
    return False


def supported_minors(spec: SpecifierSet | None) -> tuple[str, ...]:
    if spec is None:
        return PYTHON_MINORS
    return tuple(m for m in PYTHON_MINORS if spec.contains(f"{m}.0", prereleases=True))
