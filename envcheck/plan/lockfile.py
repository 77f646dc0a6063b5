"""Read a lock file (requirements with pins, PEP 751 pylock.toml, or an environment.yml as
envcheck writes it) into the set of packages it would install, for ``check --lock``."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import InputError
from envcheck.model.report import NodeReport
from envcheck.plan.simulate import variant_of_index
from envcheck.plan.target import with_packages

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class LockError(InputError):
    """A lock file cannot be read as a set of exact pins."""


_LINE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*(?P<version>[^\s;\\]+)"
    r"(?:\s*;\s*(?P<marker>[^#\\]+?))?\s*(?:--hash\S*\s*)*\\?\s*(?:#.*)?$"
)


def _keep(marker: str | None, markers: Mapping[str, str] | None, where: str) -> bool:
    if not marker or not markers:
        return True
    try:
        return Marker(marker).evaluate({**markers, "extra": ""})
    except InvalidMarker as exc:
        raise LockError(f"invalid marker {marker!r}: {exc}", where=where) from None


def _check_version(name: str, version: str, where: str) -> None:
    try:
        Version(version)
    except InvalidVersion:
        raise LockError(f"{name}: invalid version {version!r}", where=where) from None


def parse_requirements_lock(
    text: str, where: str, markers: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """(pins, index URLs) of a requirements-format lock."""
    pins: dict[str, str] = {}
    indexes: list[str] = []
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
    for number, raw_line in logical:
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            option, _, value = line.partition(" ")
            if option in ("--index-url", "-i", "--extra-index-url"):
                indexes.append(value.strip())
            continue
        match = _LINE.match(line)
        if match is None:
            raise LockError(
                f"not an exact pin: {line.split(' --hash', 1)[0]!r} (a lock pins every package with ==)",
                where=f"{where}:{number}",
            )
        name, version = match.group("name"), match.group("version")
        _check_version(name, version, f"{where}:{number}")
        if _keep(match.group("marker"), markers, f"{where}:{number}"):
            pins[canonicalize_name(name)] = version
    return pins, indexes


def parse_pylock(
    text: str, where: str, markers: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LockError(f"invalid TOML: {exc}", where=where) from None
    packages = data.get("packages")
    if not isinstance(packages, list) or "lock-version" not in data:
        raise LockError("not a PEP 751 lock (lock-version and [[packages]] expected)", where=where)
    pins: dict[str, str] = {}
    indexes: list[str] = []
    for i, package in enumerate(packages):
        if not isinstance(package, dict) or "name" not in package or "version" not in package:
            raise LockError("needs name and version", where=where, key=f"packages[{i}]")
        name, version = str(package["name"]), str(package["version"])
        _check_version(name, version, where)
        if not _keep(package.get("marker"), markers, where):
            continue
        pins[canonicalize_name(name)] = version
        if canonicalize_name(name) == "torch":
            for wheel in package.get("wheels", []) or []:
                if isinstance(wheel, dict) and "url" in wheel:
                    indexes.append(str(wheel["url"]).rsplit("/", 1)[0])
            if package.get("index"):
                indexes.append(str(package["index"]))
    return pins, indexes


_YAML_ITEM = re.compile(r"^\s*-\s*(['\"]?)(?P<value>.*?)\1\s*$")


def parse_conda_env(text: str, where: str) -> tuple[dict[str, str], list[str], str | None]:
    """(pins under pip:, index lines, python) of an environment.yml as envcheck writes it."""
    pins: dict[str, str] = {}
    indexes: list[str] = []
    python = None
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.lstrip().startswith("#"):
            continue
        match = _YAML_ITEM.match(raw)
        if match is None:
            continue
        value = match.group("value").replace("''", "'")
        if value.startswith("python="):
            python = value.split("=", 1)[1]
        elif value.startswith("--"):
            option, _, url = value.partition(" ")
            if "index-url" in option:
                indexes.append(url.strip())
        elif "==" in value:
            found, _ = parse_requirements_lock(value, f"{where}:{number}")
            pins.update(found)
    return pins, indexes, python


def read_lock(path: str, markers: Mapping[str, str] | None = None) -> dict[str, str]:
    """Exact pins of a lock file (its format told by its content, not its name); a torch from a
    variant index gets its +cuXYZ label."""
    from envcheck.inputs import read_text
    from envcheck.plan.installable import detect_format

    text = read_text(path, error=LockError, too_big="for a lock file")
    fmt = detect_format(text)
    if fmt == "pylock":
        pins, indexes = parse_pylock(text, path, markers)
    elif fmt == "conda":
        pins, indexes, _python = parse_conda_env(text, path)
    else:
        pins, indexes = parse_requirements_lock(text, path, markers)
    if not pins:
        raise LockError("no pinned packages found", where=path)
    torch = pins.get("torch")
    if torch is not None and "+" not in torch:
        variants = [v for v in (variant_of_index(u) for u in indexes) if v]
        if variants:
            pins["torch"] = f"{torch}+{variants[0]}"
    return pins


def apply_lock(report: NodeReport, path: str) -> NodeReport:
    """The node's hardware (from a spec, a saved report, or this node) with the lock's packages."""
    markers = report.python.data.markers if report.python.is_ok and report.python.data else None
    return with_packages(
        report, read_lock(path, markers), origin=f"{report.origin.detail or report.node} + {path}"
    )


def lock_problem(report: NodeReport, path: str) -> str | None:
    """The first package of the lock that cannot install on the report's node, as one line."""
    from envcheck.plan.installable import detect_format, lock_problem, node_from

    python = report.python.data if report.python.is_ok and report.python.data else None
    system = report.system.data if report.system.is_ok and report.system.data else None
    node = node_from(python.markers, system.glibc if system else None) if python else None
    if node is None:
        return None
    from envcheck.errors import InputError
    from envcheck.inputs import read_text

    try:
        text = read_text(path)
    except InputError:
        return None  # read_lock has already said why
    try:
        problem = lock_problem(text, detect_format(text), node)
    except tomllib.TOMLDecodeError:
        return None
    return f"{path}: {problem}" if problem else None
