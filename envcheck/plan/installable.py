"""Can a lock install on a node? What pip checks before it installs anything: the lock's format
(from its content, never its file name), the markers that select each package for the node's
whole environment (a line whose marker is false simply does not apply, as for pip), each file's
Requires-Python, each pinned wheel's tags against the node's Python, CPU architecture and glibc
(``packaging.tags``), and yanked releases. The files come from the lock itself (pylock's
``wheels``) or from the index (:mod:`envcheck.plan.lock_index`); every package that cannot
install is named."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LockFormat = Literal["pylock", "conda", "requirements"]
_LEGACY = {(2, 5): "manylinux1", (2, 12): "manylinux2010", (2, 17): "manylinux2014"}
_NEWEST_GLIBC = (2, 40)  # an unknown glibc is taken as new: only the CPU and Python decide
# an explicit exception for a yanked release: `# envcheck: allow-yanked NAME==VERSION REASON`
ALLOW_YANKED = re.compile(
    r"^[ \t]*#[ \t]*envcheck:[ \t]*allow-yanked[ \t]+(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"[ \t]*==[ \t]*(?P<version>[^\s#]+)(?:[ \t]+(?P<reason>\S[^\n]*?))?[ \t]*$",
    re.MULTILINE,
)


def detect_format(text: str) -> LockFormat:
    """pylock (TOML with lock-version), conda (YAML with dependencies:), else requirements."""
    if re.search(r"^lock-version\s*=", text, re.MULTILINE):
        return "pylock"
    if re.search(r"^dependencies\s*:", text, re.MULTILINE):
        return "conda"
    return "requirements"


@dataclass(frozen=True)
class Node:
    python: Version
    arch: str
    glibc: tuple[int, int] | None
    markers: Mapping[str, str]

    def describe(self) -> str:
        glibc = f", glibc {self.glibc[0]}.{self.glibc[1]}" if self.glibc else ""
        implementation = self.environment["implementation_name"]
        kind = "" if implementation == "cpython" else f"{implementation} "
        return f"{kind}Python {self.python}, {self.arch}{glibc}"

    @cached_property
    def environment(self) -> dict[str, str]:
        """The node's whole PEP 508 environment: what the report states, and for what it does
        not, a Linux CPython of its version and CPU (never the values of the machine running
        envcheck, which packaging would otherwise fill in)."""
        full = str(self.python)
        env = {
            "implementation_name": "cpython",
            "platform_python_implementation": "CPython",
            "implementation_version": full,
            "python_version": f"{self.python.major}.{self.python.minor}",
            "python_full_version": full,
            "platform_machine": self.arch,
            "sys_platform": "linux",
            "platform_system": "Linux",
            "os_name": "posix",
            "platform_release": "",
            "platform_version": "",
        }
        env.update({k: v for k, v in self.markers.items() if k in env and v})
        env["extra"] = ""
        return env

    @cached_property
    def tags(self) -> frozenset[Tag]:
        """Every wheel tag pip accepts on this node (packaging.tags, for the node's Python, CPU
        and glibc rather than this machine's)."""
        glibc = self.glibc or _NEWEST_GLIBC
        platforms: list[str] = []
        floor = 5 if self.arch in ("x86_64", "i686") else 17
        for minor in range(glibc[1], floor - 1, -1):
            platforms.append(f"manylinux_2_{minor}_{self.arch}")
            legacy = _LEGACY.get((2, minor))
            if legacy and (legacy != "manylinux1" or self.arch in ("x86_64", "i686")):
                platforms.append(f"{legacy}_{self.arch}")
        platforms.append(f"linux_{self.arch}")
        version = (self.python.major, self.python.minor)
        out: set[Tag] = set()
        if self.environment["implementation_name"] == "cpython":
            out.update(cpython_tags(version, platforms=platforms))
            interpreter = f"cp{version[0]}{version[1]}"
        else:
            interpreter = None
        out.update(compatible_tags(version, interpreter, platforms=platforms))
        return frozenset(out)


def node_from(markers: Mapping[str, str], glibc: str | None) -> Node | None:
    try:
        python = Version(markers.get("python_full_version") or markers["python_version"])
    except (KeyError, InvalidVersion):
        return None
    parsed = None
    if glibc:
        match = re.match(r"(\d+)\.(\d+)", glibc)
        parsed = (int(match.group(1)), int(match.group(2))) if match else None
    return Node(python, markers.get("platform_machine") or "x86_64", parsed, markers)


def wheel_fits(filename: str, node: Node) -> bool:
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return True  # not a wheel pip would judge by its name
    return not tags.isdisjoint(node.tags)


def marker_applies(marker: str | None, node: Node) -> bool:
    """Whether a PEP 508 marker holds on the node (evaluated for its whole environment)."""
    if not marker:
        return True
    try:
        return Marker(marker).evaluate(node.environment)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True  # pip would refuse the line; the lock parser reports it with its line


def python_ok(spec: str | None, node: Node) -> bool:
    if not spec:
        return True
    try:
        return SpecifierSet(spec).contains(node.python, prereleases=True)
    except InvalidSpecifier:
        return True


# --- what a lock pins, with what it says about each pin's files -----------------------------


@dataclass(frozen=True)
class IndexedFile:
    """One file of a release as an index (or the lock) describes it."""

    filename: str
    sha256: str | None = None
    requires_python: str | None = None
    yanked: bool = False
    yanked_reason: str | None = None


@dataclass(frozen=True)
class LockedPin:
    name: str
    version: str
    marker: str | None = None
    line: int | None = None
    hashes: frozenset[str] = frozenset()
    requires_python: str | None = None  # the lock's own claim (pylock)
    files: tuple[IndexedFile, ...] = ()  # the lock's own files (pylock wheels and sdist)
    index: str | None = None  # the index the lock names for it (pylock)

    @property
    def key(self) -> str:
        return str(canonicalize_name(self.name))

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class ParsedLock:
    fmt: LockFormat
    pins: tuple[LockedPin, ...]
    indexes: tuple[str, ...] = ()  # --index-url / --extra-index-url lines, in order
    requires_python: str | None = None
    environments: tuple[str, ...] = ()
    allowed_yanked: Mapping[str, str] = field(default_factory=dict)  # "name==version" -> why
    replaces_default: bool = False  # an --index-url line: pip's configured index is not read


_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*(?P<version>[^\s;]+)"
    r"(?:\s*;\s*(?P<marker>.+?))?\s*$"
)
_HASH = re.compile(r"--hash[=\s]+sha256:([0-9a-fA-F]+)")
_OPTION = re.compile(r"\s--hash[=\s]+\S+")


def _allowed_yanked(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for match in ALLOW_YANKED.finditer(text):
        key = f"{canonicalize_name(match.group('name'))}=={match.group('version')}"
        out[key] = (match.group("reason") or "").strip()
    return out


def logical_lines(text: str) -> list[tuple[int, str]]:
    """A requirements file's logical lines (a trailing backslash continues a line), each with
    the number of the line it starts on."""
    logical: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not buffer:
            start = number
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        logical.append((start, buffer + line))
        buffer = ""
    if buffer:
        logical.append((start, buffer))
    return logical


def parse_requirements(text: str) -> ParsedLock:
    pins: list[LockedPin] = []
    indexes: list[str] = []
    replaces_default = False
    for number, raw_line in logical_lines(text):
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            option, _, value = line.partition(" ")
            if "=" in option and option.startswith("--"):
                option, _, value = option.partition("=")
            if option in ("--index-url", "-i", "--extra-index-url"):
                indexes.append(value.strip())
                replaces_default = replaces_default or option != "--extra-index-url"
            continue
        body = re.split(r"\s#", line, maxsplit=1)[0]
        match = _PIN.match(_OPTION.sub("", " " + body).strip())
        if match is None:
            continue  # read_lock reports what is not an exact pin, with its line
        pins.append(
            LockedPin(
                match.group("name"),
                match.group("version"),
                match.group("marker") or None,
                number,
                frozenset(h.lower() for h in _HASH.findall(body)),
            )
        )
    return ParsedLock(
        "requirements",
        tuple(pins),
        tuple(indexes),
        replaces_default=replaces_default,
        allowed_yanked=_allowed_yanked(text),
    )


def _pylock_files(package: Mapping[str, Any]) -> tuple[IndexedFile, ...]:
    out = []
    entries = [w for w in package.get("wheels") or [] if isinstance(w, dict)]
    sdist = package.get("sdist")
    if isinstance(sdist, dict):
        entries.append(sdist)
    for entry in entries:
        name = str(entry.get("name") or str(entry.get("url", "")).rsplit("/", 1)[-1])
        hashes = entry.get("hashes")
        digest = hashes.get("sha256") if isinstance(hashes, dict) else None
        out.append(IndexedFile(name, str(digest).lower() if digest else None))
    return tuple(out)


def parse_pylock_text(text: str) -> ParsedLock:
    data: dict[str, Any] = tomllib.loads(text)
    pins = []
    for package in data.get("packages", []):
        if not isinstance(package, dict) or "name" not in package or "version" not in package:
            continue
        files = _pylock_files(package)
        pins.append(
            LockedPin(
                str(package["name"]),
                str(package["version"]),
                package.get("marker"),
                None,
                frozenset(f.sha256 for f in files if f.sha256),
                package.get("requires-python"),
                files,
                package.get("index"),
            )
        )
    environments = data.get("environments") or []
    return ParsedLock(
        "pylock",
        tuple(pins),
        (),
        data.get("requires-python"),
        tuple(str(e) for e in environments),
        _allowed_yanked(text),
    )


def parse_lock_text(text: str, fmt: LockFormat) -> ParsedLock | None:
    if fmt == "pylock":
        return parse_pylock_text(text)
    if fmt == "requirements":
        return parse_requirements(text)
    return None


# --- the verdict -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One reason the lock cannot install as it is (``kind``: "python", "platform", "markers",
    "yanked"); ``pin`` names the package."""

    kind: str
    message: str
    pin: str | None = None
    evidence: Mapping[str, str] = field(default_factory=dict)


def _release_files(pin: LockedPin, served: Sequence[IndexedFile]) -> list[IndexedFile]:
    """The files of the pinned release: the index's that match the lock's hashes (all of the
    release's when the lock names none), else the lock's own."""
    version = _version(pin.version)
    release = [f for f in served if version is not None and _file_version(f, pin) == version]
    if pin.hashes:
        matched = [f for f in release if f.sha256 and f.sha256 in pin.hashes]
        release = matched or ([] if any(f.sha256 for f in release) else release)
    if not release:
        return list(pin.files)
    if pin.files:  # the lock's own file names and the index's facts about them
        known = {f.filename for f in pin.files}
        mine = [f for f in release if f.filename in known]
        return mine or release
    return release


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _file_version(file: IndexedFile, pin: LockedPin) -> Version | None:
    try:
        if file.filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(file.filename)
        elif file.filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(file.filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if canonicalize_name(name) == pin.key else None


def _tags_of(files: Sequence[IndexedFile]) -> str:
    shown = []
    for f in files:
        if f.filename.endswith(".whl"):
            shown.append(f.filename.removesuffix(".whl").split("-", 2)[-1])
    return ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")


def pin_problems(
    pin: LockedPin, node: Node, served: Sequence[IndexedFile], allowed_yanked: Mapping[str, str]
) -> list[Problem]:
    """What pip would say about one pin that applies on the node: none of its files for the
    node's Python or platform, or every one of them yanked (unless the lock allows it)."""
    out: list[Problem] = []
    evidence = {"package": pin.name, "version": pin.version, "node": node.describe()}
    if not python_ok(pin.requires_python, node):
        return [
            Problem(
                "python",
                f"{pin.pin} requires Python {pin.requires_python}; this node runs {node.python}",
                pin.pin,
                {**evidence, "requires_python": str(pin.requires_python)},
            )
        ]
    files = _release_files(pin, served)
    if not files:
        return out
    for_python = [f for f in files if python_ok(f.requires_python, node)]
    if not for_python:
        spec = next(f.requires_python for f in files if f.requires_python)
        return [
            Problem(
                "python",
                f"{pin.pin} requires Python {spec} (Requires-Python of its files); "
                f"this node runs {node.python}",
                pin.pin,
                {**evidence, "requires_python": str(spec)},
            )
        ]
    fits = [
        f for f in for_python if not f.filename.endswith(".whl") or wheel_fits(f.filename, node)
    ]
    if not fits:
        return [
            Problem(
                "platform",
                f"{pin.pin} has no wheel for {node.describe()} (its wheels: {_tags_of(for_python)})",
                pin.pin,
                {**evidence, "wheels": _tags_of(for_python)},
            )
        ]
    if all(f.yanked for f in fits):
        key = f"{pin.key}=={pin.version}"
        reason = next((f.yanked_reason for f in fits if f.yanked_reason), None)
        if allowed_yanked.get(key):
            return out
        why = f" (the index says: {reason})" if reason else ""
        out.append(
            Problem(
                "yanked",
                f"{pin.pin} is yanked{why}: pip and uv warn and install it only because it is "
                f"pinned; lock another release, or keep it with a line "
                f"`# envcheck: allow-yanked {key} <reason>`",
                pin.pin,
                {**evidence, "yanked_reason": reason or ""},
            )
        )
    return out


def lock_problems(
    lock: ParsedLock, node: Node, served: Mapping[str, Sequence[IndexedFile]] | None = None
) -> list[Problem]:
    """Every reason the lock cannot install on the node (empty: it can, as far as the lock and
    the index files ``served`` per package key say)."""
    served = served or {}
    if not python_ok(lock.requires_python, node):
        return [
            Problem(
                "python",
                f"the lock requires Python {lock.requires_python}; this node runs {node.python}",
                evidence={"requires_python": str(lock.requires_python), "node": node.describe()},
            )
        ]
    if lock.environments and not any(marker_applies(e, node) for e in lock.environments):
        return [
            Problem(
                "markers",
                f"the lock covers {' | '.join(lock.environments)}; this node is {node.describe()}",
                evidence={"environments": " | ".join(lock.environments), "node": node.describe()},
            )
        ]
    applying = [p for p in lock.pins if marker_applies(p.marker, node)]
    if lock.pins and not applying:
        markers = sorted({p.marker for p in lock.pins if p.marker})
        return [
            Problem(
                "markers",
                f"no package of the lock applies to this node ({node.describe()}): every pin is "
                f"marked for another environment ({markers[0] if markers else '?'})",
                evidence={"marker": markers[0] if markers else "", "node": node.describe()},
            )
        ]
    out: list[Problem] = []
    for pin in applying:
        out += pin_problems(pin, node, served.get(pin.key, ()), lock.allowed_yanked)
    return out


def allow_yanked_errors(text: str) -> list[str]:
    """`# envcheck: allow-yanked` lines without a reason (each is refused as bad input)."""
    return [
        f"allow-yanked {m.group('name')}=={m.group('version')} needs a reason after the pin"
        for m in ALLOW_YANKED.finditer(text)
        if not (m.group("reason") or "").strip()
    ]


def lock_problem(text: str, fmt: LockFormat, node: Node) -> str | None:
    """The first reason the lock cannot install, from the lock alone (no index)."""
    parsed = parse_lock_text(text, fmt)
    if parsed is None:
        return None
    found = lock_problems(parsed, node)
    return found[0].message if found else None
