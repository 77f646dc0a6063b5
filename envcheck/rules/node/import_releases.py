"""PY150/PY151's reasoning from the release history of a name or a module.

The matrix's generated table (generated/python_names.toml, read from each library's own git
tags or wheels) says which releases of a library have a name in a module, or a module path:
the release that added it (the importer needs at least that one) or removed it (the importer
was written for the releases before: pin below it, or name the last release that had it). The
installed version, when the node states it, chooses the direction; the importing package the
traceback shows is named as the other side of the skew.
"""

from __future__ import annotations

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.matrix.schema import NameHistory, NameSpan
from envcheck.model.finding import Action
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install


def short(version: Version) -> str:
    """A version as a pin writes it: trailing zero components dropped (2.0.0 -> 2, 0.26.0 ->
    0.26), the same release for pip's comparisons."""
    parts = [str(p) for p in version.release]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def _typed(history: NameHistory) -> str:
    """The name a user types: the import's top-level name when it names the distribution
    (huggingface_hub, typing_extensions), else the distribution (protobuf, pillow)."""
    top = history.module.split(".", maxsplit=1)[0]
    dist = canonicalize_name(history.distribution)
    return top if canonicalize_name(top) == dist else dist


def by_release(
    facts: Facts,
    line: LogLine,
    history: NameHistory,
    importer: tuple[str, object] | None,
) -> Hit | None:
    """The finding for a name or module whose presence the release history explains: added
    after the installed release (upgrade to it) or removed before it (pin below the removal).
    None when the history does not explain the failure (the installed release has it)."""
    dist = canonicalize_name(history.distribution)
    version = facts.known_version(dist)
    if version is not None:
        has = history.has(version)
        if has is not False:
            return None  # the installed release has it (or is outside the releases scanned)
        added, removed = history.next_added(version), history.last_before(version)
        if added is not None:
            return _added(line, history, added, version, importer)
        if removed is not None:
            return _removed(line, history, removed, version, importer)
        return None
    newest_added = history.added()
    if newest_added is not None:
        return _added(line, history, newest_added, None, importer)
    last_removed = history.removed()
    if last_removed is not None:
        return _removed(line, history, last_removed, None, importer)
    return None


def _what(history: NameHistory) -> str:
    return (
        f"the module {history.module}"
        if history.name is None
        else f"'{history.name}' in {history.module}"
    )


def _by(importer: tuple[str, object] | None) -> tuple[str, str]:
    """(the importer as the finding names it, its upgrade clause)."""
    if importer is None:
        return "the importing package", "upgrade the importing package"
    by, by_version = importer
    named = f"{by} {by_version}" if by_version is not None else by
    return named, f"pip install -U {by}"


def _evidence(
    line: LogLine, history: NameHistory, version: Version | None, importer: object
) -> dict[str, object]:
    return {
        "line": line.line,
        "name": history.name,
        "module": history.module,
        "distribution": canonicalize_name(history.distribution),
        "version": str(version) if version is not None else None,
        "importer": importer[0] if isinstance(importer, tuple) else None,
        "releases_scanned": f"{history.oldest} .. {history.newest}",
        "source": history.source,
    }


def _added(
    line: LogLine,
    history: NameHistory,
    span: NameSpan,
    version: Version | None,
    importer: tuple[str, object] | None,
) -> Hit:
    dist = canonicalize_name(history.distribution)
    typed = _typed(history)
    pin = f"{typed}>={short(span.first)}"
    have = f"{dist} {version}" if version is not None else f"the installed {dist}"
    older = "predates it" if version is not None else "is older than that, as the line says"
    named, _ = _by(importer)
    # a name a release removed and a later one brought back: the releases before the gap
    # have it too (the way back when the importer was written for those)
    before = history.last_before(span.first)
    back = (
        f'; or go back before {dist} {short(before.gone)}: pip install "{typed}<'
        f'{short(before.gone)}" ({dist} {before.last} is the last release with it there: '
        f"pip install {typed}=={before.last})"
        if before is not None and before.gone is not None
        else ""
    )
    summary = (
        f"Install {dist} {short(span.first)} or newer, the first release with it: pip install "
        f'"{pin}" ({typed}=={span.first} is that release; pip install -U {typed} installs the '
        "newest)"
        + (f"; {named} imports it from {dist}" if importer is not None else "")
        + back
        + f"; or use a release of {named} made for {have}"
    )
    actions: list[Action] = [pip_install(pin), pip_install(typed, flags=("--upgrade",))]
    when = (
        f"{dist} {before.gone} removed {_what(history)} and {span.first} brought it back"
        if before is not None and before.gone is not None
        else f"{dist} {span.first} added {_what(history)}"
    )
    return Hit(
        f"{when}; {have} {older} (line {line.line}): "
        f"{named} was written for {dist} >= {short(span.first)} (version skew between {dist} "
        "and the package that imports it)",
        evidence=_evidence(line, history, version, importer),
        fix=fix(summary, "manual", *actions),
    )


def _removed(
    line: LogLine,
    history: NameHistory,
    span: NameSpan,
    version: Version | None,
    importer: tuple[str, object] | None,
) -> Hit:
    dist = canonicalize_name(history.distribution)
    typed = _typed(history)
    gone, last = span.gone, span.last
    assert gone is not None and last is not None
    pin = f"{typed}<{short(gone)}"
    have = f"{dist} {version}" if version is not None else f"the installed {dist}"
    named, upgrade = _by(importer)
    summary = (
        f'Install the last {dist} release before {short(gone)}: pip install "{pin}" '
        f"({dist} {last} is the last release with it: pip install {typed}=={last}), or "
        f"{upgrade} to a release made for {dist} >= {short(gone)}"
    )
    actions: list[Action] = [pip_install(pin), manual(f"pip install {typed}=={last}")]
    if importer is not None:
        actions.append(pip_install(importer[0], flags=("--upgrade",)))
    return Hit(
        f"{dist} {gone} removed {_what(history)} ({last} is the last release with it); {have} "
        f"does not have it (line {line.line}): {named} was written for {dist} < {short(gone)} "
        f"(version skew between {dist} and the package that imports it)",
        evidence=_evidence(line, history, version, importer),
        fix=fix(summary, "manual", *actions),
    )
