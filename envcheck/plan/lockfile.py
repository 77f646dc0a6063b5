"""Read a lock file (requirements with pins, PEP 751 pylock.toml, or an environment.yml as
envcheck writes it) into the set of packages it would install, for ``check --lock``."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import InputError
from envcheck.model.finding import Finding
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
    from envcheck.plan.installable import node_from

    node = node_from(markers, None)
    environment = node.environment if node is not None else {**markers, "extra": ""}
    try:
        return Marker(marker).evaluate(environment)  # the node's whole environment
    except InvalidMarker as exc:
        raise LockError(f"invalid marker {marker!r}: {exc}", where=where) from None
    except (UndefinedComparison, UndefinedEnvironmentName) as exc:
        raise LockError(f"marker {marker!r} cannot be evaluated: {exc}", where=where) from None


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
    from envcheck.plan.installable import logical_lines

    for number, raw_line in logical_lines(text):
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
    _validate_pylock(data, where)
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


def _validate_pylock(data: dict[str, object], where: str) -> None:
    """PEP 751's own rules, as packaging (>= 25) checks them, where it has ``packaging.pylock``."""
    try:
        from packaging.pylock import (
            Pylock,
            PylockUnsupportedVersionError,
            PylockValidationError,
        )
    except ImportError:  # pragma: no cover - an older packaging: the fields above suffice
        return
    try:
        Pylock.from_dict(data)
    except (PylockValidationError, PylockUnsupportedVersionError) as exc:
        raise LockError(f"not a valid PEP 751 lock: {exc}", where=where) from None


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


def read_lock(
    path: str, markers: Mapping[str, str] | None = None, *, none_may_apply: bool = False
) -> dict[str, str]:
    """Exact pins of a lock file (its format told by its content, not its name); a torch from a
    variant index gets its +cuXYZ label. A lock whose every pin is marked for another
    environment gives no pins with ``none_may_apply`` (the gate says why it cannot install),
    else it is an error."""
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
    if not pins and not (none_may_apply and fmt != "conda" and _has_pins(text, fmt, path)):
        raise LockError("no pinned packages found", where=path)
    from envcheck.plan.installable import allow_yanked_errors

    for problem in allow_yanked_errors(text):
        raise LockError(problem, where=path)
    torch = pins.get("torch")
    if torch is not None and "+" not in torch:
        variants = [v for v in (variant_of_index(u) for u in indexes) if v]
        if variants:
            pins["torch"] = f"{torch}+{variants[0]}"
    return pins


def _has_pins(text: str, fmt: str, path: str) -> bool:
    if fmt == "pylock":
        return bool(parse_pylock(text, path)[0])
    return bool(parse_requirements_lock(text, path)[0])


def apply_lock(report: NodeReport, path: str) -> NodeReport:
    """The node's hardware (from a spec, a saved report, or this node) with the lock's packages."""
    markers = report.python.data.markers if report.python.is_ok and report.python.data else None
    pins = read_lock(path, markers, none_may_apply=True)
    return with_packages(report, pins, origin=f"{report.origin.detail or report.node} + {path}")


def install_findings(report: NodeReport, path: str, *, index: bool = True) -> list[Finding]:
    """Why the lock cannot install on the report's node, as findings: PKG170 (no file of a pin
    for the node's Python or platform, or no pin for its environment), PKG171 (a yanked release
    pinned without a reason), PKG173 (an index that could not be read: what it would have said
    is unchecked). ``index`` reads each pin's files from the index (Requires-Python, tags,
    yanked); without it only what the lock itself states is checked."""
    from envcheck.errors import InputError
    from envcheck.inputs import read_text
    from envcheck.plan.installable import detect_format, lock_problems, node_from, parse_lock_text

    python = report.python.data if report.python.is_ok and report.python.data else None
    system = report.system.data if report.system.is_ok and report.system.data else None
    node = node_from(python.markers, system.glibc if system else None) if python else None
    if node is None:
        return []
    try:
        text = read_text(path)
    except InputError:
        return []  # read_lock has already said why
    try:
        parsed = parse_lock_text(text, detect_format(text))
    except tomllib.TOMLDecodeError:
        return []
    if parsed is None:
        return []
    served = None
    unread: tuple[str, ...] = ()
    if index:
        from envcheck.plan.lock_index import lock_indexes, served_files

        found = served_files(parsed, node, lock_indexes(parsed))
        served, unread = found.files, found.unread
    out = [
        _finding(
            "PKG171" if p.kind == "yanked" else "PKG170",
            f"{path}: {p.message}"
            if p.kind == "yanked"
            else f"{path}: cannot install: {p.message}",
            report.node,
            dict(p.evidence),
        )
        for p in lock_problems(parsed, node, served)
    ]
    out += [
        _finding(
            "PKG173",
            f"{path}: could not read the index {why}: Requires-Python, wheel tags and yanked "
            "releases of its packages were not checked",
            report.node,
            {"index": why},
        )
        for why in unread
    ]
    return out


_FIXES = {
    "PKG170": "Lock for this node's Python and CPU (`envcheck lock --python X.Y --arch ARCH`), or "
    "check the lock on the node it was made for",
    "PKG171": "Lock another release (`envcheck lock` skips yanked files), or keep it on purpose "
    "with a line `# envcheck: allow-yanked NAME==VERSION <reason>` in the lock",
    "PKG173": "Run the gate where the index can be reached",
}


def _finding(code: str, message: str, node: str, evidence: dict[str, str]) -> Finding:
    from envcheck.rules.lock import lock_finding

    return lock_finding(code, message, node, evidence, _FIXES[code])
