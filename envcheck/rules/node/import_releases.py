"""PY150/PY151's reasoning from the release history of a name or a module.

The matrix's generated table (generated/python_names.toml, read from each library's own git
tags or wheels) says which releases of a library have a name in a module, or a module path:
the release that added it (the importer needs at least that one) or removed it (the importer
was written for the releases before: pin below it, or name the last release that had it). The
installed version, when the node states it, chooses the direction; the importing package the
traceback shows is named as the other side of the skew.
"""

from __future__ import annotations

import itertools

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.python_names import Importer
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
            return _added(facts, line, history, added, version, importer)
        if removed is not None:
            return _removed(facts, line, history, removed, version, importer)
        return None
    newest_added = history.added()
    if newest_added is not None:
        return _added(facts, line, history, newest_added, None, importer)
    last_removed = history.removed()
    if last_removed is not None:
        return _removed(facts, line, history, last_removed, None, importer)
    return None


def declared_bound(
    facts: Facts, importer: tuple[str, object] | None, lib: str, installed: Version | None
) -> tuple[str, str] | None:
    """(importer, "lib<bound>") when the importer's installed release declares a bound on
    ``lib`` (generated/importers.toml: its setup.py/pyproject at that tag) that the installed
    ``lib`` is outside of; None otherwise."""
    if importer is None or installed is None or not isinstance(importer[1], Version):
        return None
    rows = facts.matrix.python_importer(importer[0])
    bound = rows.bound(canonicalize_name(lib), importer[1]) if rows is not None else None
    if bound is None or not str(bound) or bound.contains(installed, prereleases=True):
        return None
    return canonicalize_name(rows.distribution) if rows else importer[0], f"{lib}{bound}"


def declared_by_installed(
    facts: Facts, lib: str, installed: Version | None
) -> list[tuple[str, str]]:
    """(importer, "lib<bound>") for each importing package the node has whose installed
    release declares a bound on ``lib`` (generated/importers.toml) that excludes the installed
    ``lib``: what `pip check` would say, from the importers' own setup.py/pyproject."""
    if installed is None or not facts.matrix.python_names_files:
        return []
    out = []
    for rows in facts.matrix.python_names().importers:
        version = facts.known_version(rows.distribution)
        if version is None:
            continue
        found = declared_bound(facts, (rows.distribution, version), lib, installed)
        if found is not None:
            out.append(found)
    return out


def last_release(facts: Facts, dist: str, before: Version) -> Version | None:
    """The newest release of ``dist`` before ``before`` (a removal's release) that the package
    index lists, as `envcheck matrix refresh` recorded it (generated/<package>.toml; yanked and
    pre-releases left out); None when the matrix does not record that package's releases or
    none precedes it. Git tags are not used: a tag is not always a release on the index."""
    key = canonicalize_name(dist)
    known = [
        c.version
        for c in facts.matrix.generated.companion_metadata
        if canonicalize_name(c.package) == key and not c.yanked and not c.version.is_prerelease
    ]
    if not known or min(known) >= before:
        return None
    return max(v for v in known if v < before)


def last_clause(
    facts: Facts, dist: str, typed: str, before: Version, said: str
) -> tuple[str, list[Action]]:
    """ " (L is the last release before it: pip install typed==L)" and its command, unless the
    text ``said`` already names that pin."""
    last = last_release(facts, dist, before)
    if last is None or f"=={last}" in said:
        return "", []
    return (
        f" ({dist} {last} is the last release before {short(before)}: pip install {typed}=={last})",
        [manual(f"pip install {typed}=={last}")],
    )


def _prior(releases: tuple[Version, ...], version: Version) -> Version | None:
    """The release scanned just before ``version``."""
    before = [r for r in releases if r < version]
    return before[-1] if before else None


def importer_fit(
    facts: Facts,
    history: NameHistory | tuple[str, str, str | None],
    importer: tuple[str, object] | None,
    installed: Version | None,
    *,
    too_old: bool,
) -> tuple[str, list[Action]] | None:
    """The release of the importing package that fits the installed library, from what each of
    its releases imports and requires (generated/importers.toml): the releases before it began
    importing the name (``too_old``: the library predates the name) or after it stopped (the
    library removed it), whose declared bound admits the installed library. Where the
    traceback does not show the importer, the known importers of the name that the node has
    (or may have, when its packages are unknown), each as a conditional clause. None when
    nothing is known. ``history`` may be (library, module, name) alone."""
    lib, module, name = (
        history
        if isinstance(history, tuple)
        else (history.distribution, history.module, history.name)
    )
    if importer is not None:
        rows = facts.matrix.python_importer(importer[0])
        if rows is None:
            return None
        version = importer[1] if isinstance(importer[1], Version) else None
        return _fit(rows, lib, module, name, version, installed, too_old=too_old)
    try:  # a complete package list (pip list, conda list), not a declared stack's few
        listed = not facts.packages().partial and facts.report.origin.kind != "declared"
    except Skip:
        listed = False
    clauses: list[str] = []
    actions: list[Action] = []
    for rows in facts.matrix.python_importing(module, name)[:3]:
        version = facts.known_version(rows.distribution)
        if version is None and listed:
            continue  # the node's package list says it is not installed
        spans = rows.imports(module, name) or ()
        if version is not None and not any(
            s.first <= version and (s.gone is None or version < s.gone) for s in spans
        ):
            continue  # the installed release does not import it
        fit = _fit(rows, lib, module, name, version, installed, too_old=too_old)
        if fit is not None and fit[1]:
            clauses.append(f"if it is {rows.distribution} that imports it: {fit[0]}")
            actions += fit[1]
    if not clauses:
        return None
    return "; ".join(clauses), actions


def _fit(
    rows: Importer,
    library: str,
    module: str,
    name: str | None,
    version: Version | None,
    installed: Version | None,
    *,
    too_old: bool,
) -> tuple[str, list[Action]] | None:
    by, lib = canonicalize_name(rows.distribution), canonicalize_name(library)
    spans = rows.imports(module, name)
    what = f"{name} from {module}" if name else module
    fits = set(rows.accepting(lib, installed)) if installed is not None else set(rows.releases)
    if spans:
        if too_old:
            first = spans[0].first
            before = _prior(rows.releases, first)
            if before is None or before not in fits:
                return None
            return (
                f"{by} {short(first)} began importing {what} ({by} {before} is the last release "
                f'before it): pip install "{by}<{short(first)}" (pip install {by}=={before})',
                [pip_install(f"{by}<{short(first)}"), manual(f"pip install {by}=={before}")],
            )
        gone = spans[-1].gone
        if gone is None:
            return (
                f"every {by} release up to {rows.releases[-1]} imports {what}: keep the {lib} "
                "release that has it",
                [],
            )
        later = [r for r in rows.releases if r >= gone and r in fits]
        if not later:
            return None
        pick = later[0]
        pin = f"{by}>={short(pick)}"
        admits = (
            f" and {by} {pick} is the first such release whose {lib} bound admits {installed}"
            if pick != gone and installed is not None
            else ""
        )
        return (
            f"{by} {short(gone)} stopped importing {what}{admits}: pip install -U {by} "
            f'(a release >= {short(pick)}: pip install -U "{pin}")',
            [pip_install(pin, flags=("--upgrade",))],
        )
    if version is None or installed is None:
        return None
    bound = rows.bound(lib, version)
    if bound is None or not str(bound) or bound.contains(installed, prereleases=True):
        return None
    newer = [r for r in rows.releases if r in fits and r > version]
    move = (
        f"; or {by} {newer[0]}, the next release whose bound admits {lib} {installed}: pip "
        f"install {by}=={newer[0]}"
        if newer
        else ""
    )
    return (
        f'{by} {version} declares {lib}{bound}: pip install "{lib}{bound}"{move}',
        [
            pip_install(f"{lib}{bound}"),
            *([manual(f"pip install {by}=={newer[0]}")] if newer else []),
        ],
    )


def _with_importer(
    summary: str, actions: list[Action], fit: tuple[str, list[Action]], shown: bool
) -> tuple[str, list[Action]]:
    """The importer's clause first where the traceback shows the importer, else after."""
    if shown:
        return f"{fit[0]}; or {summary[0].lower()}{summary[1:]}", [*fit[1], *actions]
    return f"{summary}; {fit[0]}", [*actions, *fit[1]]


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
    facts: Facts,
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
    fit = importer_fit(facts, history, importer, version, too_old=True)
    if fit is not None:
        summary, actions = _with_importer(summary, actions, fit, importer is not None)
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
    facts: Facts,
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
    if version is None:  # the line does not say which release: earlier gaps lack it too
        gaps, gap_actions = _earlier_gaps(history, span, typed)
        summary += gaps
        actions += gap_actions
    fit = importer_fit(facts, history, importer, version, too_old=False)
    if fit is not None:
        summary, actions = _with_importer(summary, actions, fit, importer is not None)
    elif importer is not None:
        actions.append(pip_install(importer[0], flags=("--upgrade",)))
    return Hit(
        f"{dist} {gone} removed {_what(history)} ({last} is the last release with it); {have} "
        f"does not have it (line {line.line}): {named} was written for {dist} < {short(gone)} "
        f"(version skew between {dist} and the package that imports it)",
        evidence=_evidence(line, history, version, importer),
        fix=fix(summary, "manual", *actions),
    )


def _earlier_gaps(history: NameHistory, span: NameSpan, typed: str) -> tuple[str, list[Action]]:
    """The releases before ``span``'s removal that lacked the name too: a removal a later
    release undid (transformers 4.37.0 dropped 'SampleOutput' from transformers.generation.utils
    and 4.37.2 brought it back). Where the line does not state the installed release, the
    failure may be one of those: each gap is named with both ways out of it, the release that
    brought the name back and the last one before the gap. Empty when no earlier gap is known."""
    dist = canonicalize_name(history.distribution)
    text = ""
    actions: list[Action] = []
    for before, after in itertools.pairwise(history.spans):
        if before.gone is None or before.last is None or after.first > span.first:
            continue
        gap = f"{dist} >= {short(before.gone)}, < {short(after.first)}"
        back = (
            f'pip install "{typed}>={short(after.first)},<{short(span.gone)}"'
            if span.gone is not None
            else f'pip install "{typed}>={short(after.first)}"'
        )
        text += (
            f"; {gap} lack it too ({after.first} brought it back): where one of those is "
            f"installed, {back}, or go back to {before.last}: pip install "
            f"{typed}=={before.last}"
        )
        actions.append(manual(f"pip install {typed}=={before.last}  (where {gap} is installed)"))
    return text, actions
