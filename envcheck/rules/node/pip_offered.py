"""What pip's 'Could not find a version that satisfies the requirement R (from versions: ...)'
states: the releases of the package that have a wheel for this interpreter and platform.

PY101 (torch) and RAY101 (Ray) compare the Python with the CPython tags of a release's Linux
wheels (the matrix's generated tables). pip's list is the witness for the node it ran on
(macOS, Windows, another architecture included): a pinned release missing from it has no wheel
there, and the newest release it lists is the one that installs.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.fixes import fix, manual, pip_install

_NOT_LINUX = {"macos": "macOS", "darwin": "macOS", "osx": "macOS", "windows": "Windows"}


def linux_wheels_only(facts: Facts) -> None:
    """Skip a rule that reads the Linux wheels' tags on a node declared as macOS or Windows."""
    try:
        os_id = (facts.system().os_id or "").lower()
    except Skip:
        return
    if os_id in _NOT_LINUX:
        raise Skip(
            f"the matrix lists the Linux wheels' Pythons; this node runs {_NOT_LINUX[os_id]}",
            "system.os",
        )


def offered_versions(text: str) -> list[Version]:
    """The releases of pip's '(from versions: 1.0, 1.1, ...)' list, the unreadable ones left out."""
    out = []
    for part in text.split(","):
        try:
            out.append(Version(part.strip()))
        except InvalidVersion:
            continue
    return out


_NO_MATCH = lazy(r"No matching distribution found for (?P<req>[^\s]+)")


def _stated(line: LogLine, package: str) -> tuple[Requirement, list[Version]]:
    wanted, listed = line.stated.get("pip_requirement"), line.stated.get("pip_offered")
    alone = _NO_MATCH.search(line.text) if not wanted and listed is None else None
    if alone is not None:
        # pip's last line alone ('No matching distribution found for ray'): the list above it
        # is cut off; nothing pip found is stated, so the Python decides what can be said
        wanted, listed = alone.group("req"), ""
    if not wanted or listed is None:
        raise NotStated("the line does not list the versions pip found", "log.pip_offered")
    try:
        req = Requirement(wanted)
    except InvalidRequirement:
        raise NotStated(f"'{wanted}' is not a requirement", "log.pip_requirement") from None
    if canonicalize_name(req.name) != package:
        raise NotStated(f"the line is about {req.name}, not {package}", "log.pip_requirement")
    return req, offered_versions(listed)


def _minor_key(minor: str) -> Version:
    try:
        return Version(minor)
    except InvalidVersion:
        return Version("0")


def _python_minors(facts: Facts, package: str, pythons: Sequence[tuple[str, ...]]) -> str:
    """Where the node's Python is known: whether any release has Linux wheels for it. When
    some do, the line cannot tell a Python newer than the releases pip could see (at the
    time) from a platform without wheels; the fix threads run is the Python before it."""
    try:
        py = facts.python_version()
    except Skip:
        raise NotStated("pip found no release at all; the Python is not stated", "python") from None
    minor = f"{py.major}.{py.minor}"
    if any(minor in tags for tags in pythons):
        older = sorted(
            {t for tags in pythons for t in tags if _minor_key(t) < _minor_key(minor)},
            key=_minor_key,
            reverse=True,
        )[:2]
        instead = (
            f"use Python {' or '.join(older)} (the minors before {minor}: a {package} release "
            f"made before Python {minor} wheels existed has none for it), e.g. conda create -n "
            f"py{older[0].replace('.', '')} python={older[0]}; on Windows, a 64-bit Python"
            if older
            else None
        )
        raise NotStated(
            f"releases with wheels for Python {minor} exist (Linux): pip's empty list points at "
            "the platform or the index, not only the Python",
            "system.os",
            fix=instead,
        )
    return minor


def _newest_tags(pythons: Sequence[tuple[Version, tuple[str, ...]]]) -> tuple[Version, str]:
    version, tags = max(pythons, key=lambda p: p[0])
    return version, ", ".join(tags)


def _hit(
    facts: Facts,
    line: LogLine,
    package: str,
    releases: Sequence[tuple[Version, tuple[str, ...]]],
) -> Hit | None:
    req, offered = _stated(line, package)
    stable = [v for v in offered if not v.is_prerelease] or offered
    if stable:
        if any(req.specifier.contains(v, prereleases=True) for v in offered):
            raise NotStated(f"pip lists a release that satisfies {req}", "log.pip_offered")
        newest = max(stable)
        pinned = next((r for r, _ in releases if req.specifier.contains(r, prereleases=True)), None)
        tags = dict(releases).get(pinned) if pinned else None
        where = f" (its Linux x86-64 wheels are for Python {', '.join(tags)})" if tags else ""
        return Hit(
            f"pip lists {package} up to {newest} for this interpreter and platform (line "
            f"{line.line}): {req} has no wheel here{where}",
            evidence={"line": line.line, "requirement": str(req), "newest_offered": str(newest)},
            fix=fix(
                f"Install {package}=={newest}, the newest release pip offers for this Python and "
                f"platform, or use a Python and platform that {req} has wheels for{where}",
                "manual",
                pip_install(f"{package}=={newest}"),
            ),
        )
    minor = _python_minors(facts, package, [tags for _, tags in releases])
    newest_release, newest_tags = _newest_tags(releases)
    return Hit(
        f"pip found no {package} release for Python {minor} (line {line.line}); no {package} "
        f"release in the matrix has wheels for it",
        evidence={"line": line.line, "python": minor, "newest": str(newest_release)},
        fix=fix(
            f"Use a Python that {package} has wheels for: {package} {newest_release} has them "
            f"for {newest_tags}",
            "manual",
            manual(f"create the environment with one of Python {newest_tags}"),
        ),
    )


@from_log("RAY101")
def ray_offered(facts: Facts, line: LogLine) -> Hit | None:
    """pip's list of the Ray releases it found for this interpreter (ray#34666)."""
    releases = [(r.version, tuple(r.python)) for r in facts.matrix.ray_releases]
    return _hit(facts, line, "ray", releases)


@from_log("PY101")
def torch_offered(facts: Facts, line: LogLine) -> Hit | None:
    """pip's list of the torch releases it found for this interpreter (pytorch#112478)."""
    releases = [(t.version, tuple(t.python)) for t in facts.matrix.torch_releases]
    return _hit(facts, line, "torch", releases)
