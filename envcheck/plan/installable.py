"""Can a lock install on a node? What pip checks before it installs anything: the lock's format
(from its content, never its file name), each package's Requires-Python, each pinned wheel's
tags against the node's Python, CPU architecture and glibc, and the markers that select a
package for this environment. The first package that cannot install is named."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from packaging.markers import InvalidMarker, Marker
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LockFormat = Literal["pylock", "conda", "requirements"]
_TARGET_KEYS = {"python_version", "python_full_version", "platform_machine", "implementation_name"}
_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


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
        return f"Python {self.python}, {self.arch}{glibc}"


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


def _platform_ok(platform: str, node: Node) -> bool:
    if platform == "any":
        return True
    if platform == f"linux_{node.arch}":
        return True
    for legacy, version in _LEGACY.items():
        if platform == f"{legacy}_{node.arch}":
            return node.glibc is None or node.glibc >= version
    match = re.fullmatch(r"manylinux_(\d+)_(\d+)_(.+)", platform)
    if match and match.group(3) == node.arch:
        return node.glibc is None or node.glibc >= (int(match.group(1)), int(match.group(2)))
    return False


def _interpreter_ok(interpreter: str, abi: str, node: Node) -> bool:
    major, minor = node.python.major, node.python.minor
    if interpreter in (f"py{major}", f"py{major}{minor}"):
        return True
    match = re.fullmatch(r"cp(\d)(\d+)", interpreter)
    if not match or int(match.group(1)) != major:
        return False
    wheel_minor = int(match.group(2))
    if abi == "abi3":
        return wheel_minor <= minor
    return wheel_minor == minor


def wheel_fits(filename: str, node: Node) -> bool:
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return True  # not a wheel pip would judge by its name
    return any(
        _interpreter_ok(t.interpreter, t.abi, node) and _platform_ok(t.platform, node) for t in tags
    )


def _applies(marker: str | None, node: Node) -> bool:
    if not marker:
        return True
    try:
        return Marker(marker).evaluate({**node.markers, "extra": ""})
    except InvalidMarker:
        return True


def _python_ok(spec: str | None, node: Node) -> bool:
    if not spec:
        return True
    try:
        return SpecifierSet(spec).contains(node.python, prereleases=True)
    except InvalidSpecifier:
        return True


def _targets_only(marker: str) -> bool:
    names = set(re.findall(r"\b([a-z_]+)\s*(?:==|!=|<=|>=|<|>|~=|in|not in)\s*['\"]", marker))
    return bool(names & _TARGET_KEYS) and names <= _TARGET_KEYS | {
        "sys_platform",
        "platform_system",
    }


def pylock_problem(text: str, node: Node) -> str | None:
    data: dict[str, Any] = tomllib.loads(text)
    if not _python_ok(data.get("requires-python"), node):
        return f"the lock requires Python {data['requires-python']}; this node runs {node.python}"
    environments = data.get("environments") or []
    if environments and not any(_applies(str(e), node) for e in environments):
        return (
            f"the lock covers {' | '.join(map(str, environments))}; this node is {node.describe()}"
        )
    for package in data.get("packages", []):
        if not isinstance(package, dict) or not _applies(package.get("marker"), node):
            continue
        name, version = package.get("name"), package.get("version")
        if not _python_ok(package.get("requires-python"), node):
            return (
                f"{name}=={version} requires Python {package['requires-python']}; "
                f"this node runs {node.python}"
            )
        wheels = [w for w in package.get("wheels") or [] if isinstance(w, dict)]
        names = [str(w.get("name") or str(w.get("url", "")).rsplit("/", 1)[-1]) for w in wheels]
        if wheels and not package.get("sdist") and not any(wheel_fits(n, node) for n in names):
            shown = ", ".join(n.split("-", 2)[-1].removesuffix(".whl") for n in names[:3])
            return f"{name}=={version} has no wheel for {node.describe()} (its wheels: {shown})"
    return None


def requirements_problem(text: str, node: Node) -> str | None:
    """A requirements lock names no wheels; its markers still say where each pin applies."""
    seen: dict[str, bool] = {}
    first: dict[str, tuple[str, str]] = {}
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        match = re.match(
            r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)\s*;\s*([^#]+?)\s*(?:--hash|#|$)",
            line.strip(),
        )
        if not match:
            plain = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==", line.strip())
            if plain:
                seen[canonicalize_name(plain.group(1))] = True
            continue
        name, version, marker = match.groups()
        key: str = canonicalize_name(name)
        applies = _applies(marker, node)
        seen[key] = seen.get(key, False) or applies
        if not applies and _targets_only(marker):
            first.setdefault(key, (f"{name}=={version}", marker))
    for name_key, ok in seen.items():
        if not ok and name_key in first:
            pin, where = first[name_key]
            return f"{pin} is locked only for {where}; this node is {node.describe()}"
    return None


def lock_problem(text: str, fmt: LockFormat, node: Node) -> str | None:
    if fmt == "pylock":
        return pylock_problem(text, node)
    if fmt == "requirements":
        return requirements_problem(text, node)
    return None
