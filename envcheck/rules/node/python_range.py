"""PY140: a package's release does not accept this Python (its Requires-Python), beyond the
torch, vLLM and Ray releases PY101, PY102 and RAY101 check.

The ranges come from the matrix's generated tables (the wheel metadata of trl, transformers,
NumPy, FlashInfer, SGLang, torchvision ... as `envcheck matrix refresh` read it); pip's own line
'Package X requires a different Python: A not in B' states one by itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.generated import CompanionMetadata
from envcheck.matrix.merged import grouped
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Severity
from envcheck.names import canonicalize_name
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.pip_offered import offered_versions

# checked by their own rules (PY101, PY102, RAY101)
_OWN_RULES = frozenset({"torch", "vllm", "ray"})


def _minors(matrix: Matrix) -> list[str]:
    """The CPython minors the matrix knows wheels for (torch's and Ray's releases), in order."""
    seen = {py for t in matrix.torch_releases for py in t.python}
    seen |= {py for r in matrix.ray_releases for py in r.python}
    return sorted(seen, key=Version)


def _accepted(matrix: Matrix, spec: SpecifierSet) -> list[str]:
    """The known minors with a release inside ``spec`` ('>=3.9.1' admits 3.9: 3.9.99 is in)."""
    return [
        py
        for py in _minors(matrix)
        if any(spec.contains(f"{py}.{patch}", prereleases=True) for patch in (0, 99))
    ]


def _newest_for(matrix: Matrix, package: str, python: Version) -> Version | None:
    """The newest release of ``package`` whose Requires-Python admits ``python``."""
    key = canonicalize_name(package)
    fits = [
        c.version
        for c in matrix.generated.companion_metadata
        if canonicalize_name(c.package) == key
        and c.requires_python is not None
        and not c.yanked
        and not c.version.is_prerelease
        and c.requires_python.contains(python, prereleases=True)
    ]
    return max(fits, default=None)


_INDEX: list[tuple[object, _Releases]] = []


class _Releases:
    """The Requires-Python of the releases the generated tables know, by package, for one
    matrix: a package's releases are read when a distribution of it is asked about (a node
    has a few of the 761 records' packages installed), from the kept matrix entry's records
    of that package where there is one (``merged.grouped``), else from the decoded table."""

    def __init__(self, matrix: Matrix) -> None:
        self._matrix = matrix
        self._grouped = grouped(matrix, "generated.companion_metadata")
        self._spelled: dict[str, list[str]] = {}  # canonical name -> the records' spellings
        for name in self._grouped.names if self._grouped is not None else ():
            self._spelled.setdefault(str(canonicalize_name(name)), []).append(name)
        self._parsed: dict[str, dict[Version, SpecifierSet]] = {}

    def get(self, key: str, version: Version) -> SpecifierSet | None:
        known = self._parsed.get(key)
        if known is None:
            known = self._parsed[key] = self._parse(key)
        return known.get(version)

    def _parse(self, key: str) -> dict[Version, SpecifierSet]:
        texts = self._texts(key)
        if texts is not None:
            try:  # what the table's decoder makes of the same texts
                return {Version(v): SpecifierSet(r) for v, r in texts}
            except ValueError:  # not this code's entry: the decoded table decides
                pass
        return {
            c.version: c.requires_python
            for c in self._matrix.generated.companion_metadata
            if c.requires_python is not None and str(canonicalize_name(c.package)) == key
        }

    def _texts(self, key: str) -> list[tuple[str, str]] | None:
        """(version, Requires-Python) of the package's records, in the table's order, as the
        entry holds them; None without an entry (or records not of this shape)."""
        if self._grouped is None:
            return None
        rows = self._grouped.records(self._spelled.get(key, []))
        if rows is None:
            return None
        names = [f.name for f in fields(CompanionMetadata)]
        package, version, python = (
            names.index(n) for n in ("package", "version", "requires_python")
        )
        out: list[tuple[str, str]] = []
        for row in rows:
            if type(row) is not list or len(row) != len(names):
                return None
            text, spec = row[version], row[python]
            if type(row[package]) is not str or type(text) is not str:
                return None
            if spec is None:
                continue
            if type(spec) is not str:
                return None
            out.append((text, spec))
        return out


def _ranges(matrix: Matrix) -> _Releases:
    """The Requires-Python of each known (name, version), built once per matrix."""
    if _INDEX and _INDEX[0][0] is matrix:
        return _INDEX[0][1]
    index = _Releases(matrix)
    _INDEX[:] = [(matrix, index)]
    return index


def _hit(matrix: Matrix, package: str, version: str | None, spec: SpecifierSet, py: Version) -> Hit:
    """The finding; an older release that accepts ``py`` is offered only for a known release
    (pip's line is about the release the job asked for: the older one is what it fell back to)."""
    accepted = _accepted(matrix, spec)
    older = _newest_for(matrix, package, py) if version else None
    named = f"{package} {version}" if version else package
    pythons = f" ({', '.join(accepted)})" if accepted else ""
    alternative = (
        f", or {package}=={older}, its newest release that accepts Python {py}" if older else ""
    )
    actions = [manual(f"create the environment with a Python in '{spec}'{pythons}")]
    if older is not None:
        actions.append(pip_install(f"{package}=={older}"))
    return Hit(
        f"{named} requires Python '{spec}'; this is Python {py}",
        evidence={
            "package": package,
            "version": version or "unknown",
            "requires_python": str(spec),
            "python": str(py),
        },
        fix=fix(
            f"Use a Python that {named} accepts: '{spec}'{pythons}{alternative}",
            "manual",
            *actions,
        ),
    )


@rule("PY140", "package-python-range", Severity.ERROR)
def package_python_range(facts: Facts) -> Iterable[Hit]:
    """A package's release does not accept this Python (Requires-Python)

    ## What it checks
    Every installed or declared distribution whose release the matrix's generated tables know
    (trl, transformers, NumPy, FlashInfer, SGLang, torchvision, xformers ...: the wheel's
    `Requires-Python`) against the Python version. torch, vLLM and Ray have their own rules
    (PY101, PY102, RAY101). pip's line `ERROR: Package 'trl' requires a different Python:
    3.8.17 not in '>=3.9'` states the same from a log, and so does the error an older
    interpreter raises on a newer language feature in a package's code (`'type' object is not
    subscriptable` for `list[int]` before 3.9, `unsupported operand type(s) for |` for
    `str | None` before 3.10: the feature's first Python from the matrix), or the error a newer
    interpreter raises on code written for an older one (`mutable default <class 'X'> for field
    f is not allowed`: from Python 3.11 on dataclasses refuse any unhashable default, fairseq
    0.12's configs; a list, dict or set default is refused by every Python, the code's own).

    ## Why it matters
    pip refuses the release and keeps (or resolves) an older one without the features the job
    imports: on Python 3.8 the newest trl installable has no `GRPOConfig`, and the job fails
    with `ImportError: cannot import name 'GRPOConfig' from 'trl'`. A declared stack with such a
    pair cannot be built.

    ## Example
    trl 0.14.0 (Requires-Python >= 3.9) declared for Python 3.8.17.

    ## Fix
    Use a Python inside the release's range (the finding lists the minors the matrix knows
    wheels for), or the newest release of the package that still accepts this Python. For a
    language feature: a Python at or above its first release (`conda create -n py310
    python=3.10`, `uv venv --python 3.10`), else `pip install -U <package>` (a later release may
    declare its floor or avoid the feature) or its release before the installed one. For code
    a newer Python refuses: Python 3.10 for the dataclass default (`conda create -n py310
    python=3.10`), or the package's release made for 3.11 where it has one.

    ## References
    - https://github.com/modelscope/ms-swift/issues/3268
    - https://packaging.python.org/en/latest/specifications/core-metadata/#requires-python
    - https://docs.python.org/3/library/dataclasses.html#mutable-default-values
    - https://github.com/AI4Bharat/IndicXlit/issues/24 (fairseq on Python 3.11: Python 3.9)
    - the package index's wheel metadata (matrices/generated/*.toml)
    """
    metadata = _ranges(facts.matrix)
    ranges: list[tuple[str, str, SpecifierSet]] = []
    for dist in facts.packages().distributions:
        if dist.key in _OWN_RULES:
            continue
        try:
            spec = metadata.get(dist.key, Version(dist.version))
        except InvalidVersion:
            continue
        if spec is not None:
            ranges.append((dist.name, dist.version, spec))
    if not ranges:
        return []
    py = facts.python_version()
    return [
        _hit(facts.matrix, name, version, spec, py)
        for name, version, spec in ranges
        if not spec.contains(py, prereleases=True)
    ]


@from_log("PY140")
def python_range_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """pip's 'Package X requires a different Python: A not in B' names all three; an
    interpreter's error on a newer language feature names the feature
    (rules/node/python_syntax.py)."""
    from envcheck.rules.node.python_syntax import (
        refusal_in_log,
        syntax_in_log,
        unknown_syntax_in_log,
    )

    feature = line.stated.get("python_feature")
    if feature:
        return syntax_in_log(facts, line, feature)
    if line.stated.get("python_refusal"):
        return refusal_in_log(facts, line)
    if line.signature == "python-syntax-error-in-package":
        return unknown_syntax_in_log(facts, line)
    if _IGNORED.search(line.text) is not None:
        return _ignored_in_log(facts, line)
    package = line.stated.get("pkg_name")
    stated, spec_text = line.stated.get("python_version"), line.stated.get("requires_python")
    if not package or not stated or not spec_text:
        raise NotStated("the line does not name the package, the Python and its range", "log.line")
    try:
        spec, py = SpecifierSet(spec_text), Version(stated)
    except (InvalidSpecifier, InvalidVersion):
        raise NotStated(f"'{spec_text}' or '{stated}' is not a version range", "log.line") from None
    if spec.contains(py, prereleases=True):
        return None
    if _UV_REQUESTED.search(line.text) is not None:
        return _project_range(package, spec, stated)
    return _hit(facts.matrix, package, None, spec, py)


# uv lock / uv add / uv sync resolve for every Python the project's requires-python admits
# ("the requested Python version (>=3.8)"), whatever interpreter or .python-version is in use:
# the fix is the project's range, not the interpreter
# (https://github.com/astral-sh/uv/issues/12771: "I think you want to edit your
# requires-python? That determines the minimum-supported Python version for your project").
_UV_REQUESTED = lazy(r"[Tt]he requested Python version \(")


def _project_range(package: str, spec: SpecifierSet, lowest: str) -> Hit:
    return Hit(
        f"{package} requires Python '{spec}'; the project's requires-python admits Python {lowest}",
        evidence={"package": package, "requires_python": str(spec), "python": lowest},
        fix=fix(
            f"Raise the project's requires-python (pyproject.toml [project]) to '{spec}', the "
            f"range {package} accepts: uv resolves for every Python the project's range admits, "
            "whatever .python-version pins",
            "manual",
            manual(f'requires-python = "{spec}"  (pyproject.toml [project]), then uv lock'),
        ),
    )


# pip's resolver (factory.py, _report_requires_python_error / the 'Ignored the following
# versions' note): "Ignored the following versions that require a different python version:
# 1.21.2 Requires-Python >=3.7,<3.11; 1.21.3 Requires-Python >=3.7,<3.11"
_IGNORED = lazy(
    r"Ignored the following versions that require a different python version: (?P<list>.*)"
)
_IGNORED_ITEM = lazy(r"(?P<version>[0-9][^\s;]*) Requires-Python (?P<spec>[^;]+)")


def _ignored_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """pip ignored the releases whose Requires-Python excludes this interpreter; with the
    requirement pip could not satisfy (the lines after it), the release the job pins is among
    them: this Python is outside its range. Fix: a Python inside it, or the newest release pip
    offers for this Python (its 'from versions' list)."""
    found = _IGNORED.search(line.text)
    wanted = line.stated.get("pip_requirement")
    if found is None or not wanted:
        raise NotStated("the requirement pip could not satisfy is not in the log", "log.line")
    try:
        req = Requirement(wanted)
    except InvalidRequirement:
        raise NotStated(f"'{wanted}' is not a requirement", "log.pip_requirement") from None
    ranges: list[tuple[Version, SpecifierSet]] = []
    for item in _IGNORED_ITEM.finditer(found.group("list")):
        try:
            ranges.append(
                (Version(item.group("version")), SpecifierSet(item.group("spec").strip()))
            )
        except (InvalidVersion, InvalidSpecifier):
            continue
    # pip's list mixes every package it looked at: only an exact pin among the ignored versions
    # names the release this requirement wanted
    exact = {
        s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version
    }
    wanted_versions = [Version(e) for e in _valid(exact)]
    pinned = [(v, spec) for v, spec in ranges if v in wanted_versions]
    if not pinned:
        admitted = [(v, spec) for v, spec in ranges if req.specifier.contains(v, prereleases=True)]
        if not admitted:
            raise NotStated(f"pip ignored no release that {req} admits", "log.line")
        version, spec = max(admitted, key=lambda p: p[0])
        raise NotStated(
            "pip's list of ignored releases does not say which package each is of",
            "log.line",
            fix=(
                f"if the releases pip ignored are {req.name}'s ({version} requires Python "
                f"'{spec}'), use a Python in '{spec}' ({', '.join(_accepted(facts.matrix, spec))})"
                f", or a {req.name} release pip offers for this Python"
            ),
        )
    version, spec = max(pinned, key=lambda p: p[0])
    offered = [
        v for v in offered_versions(line.stated.get("pip_offered", "")) if not v.is_prerelease
    ]
    try:
        py: Version | None = facts.python_version()
    except Skip:
        py = None
    if py is not None and spec.contains(py, prereleases=True):
        return None
    accepted = _accepted(facts.matrix, spec)
    pythons = f" ({', '.join(accepted)})" if accepted else ""
    on = f"Python {py}" if py is not None else "this Python"
    newest = max(offered, default=None)
    actions = [manual(f"create the environment with a Python in '{spec}'{pythons}")]
    alternative = ""
    if newest is not None:
        alternative = (
            f", or {req.name}=={newest}, the newest release pip offers for {on} (drop the pin)"
        )
        actions.append(pip_install(f"{req.name}=={newest}"))
    return Hit(
        f"{req.name} {version} requires Python '{spec}' and pip ignored it on {on} (line "
        f"{line.line}): {req} has no release for this interpreter",
        evidence={
            "package": req.name,
            "version": str(version),
            "requires_python": str(spec),
            "python": str(py) if py is not None else "unknown",
        },
        fix=fix(
            f"Use a Python that {req.name} {version} accepts: '{spec}'{pythons}{alternative}",
            "manual",
            *actions,
        ),
    )


def _valid(texts: set[str]) -> list[str]:
    out = []
    for text in texts:
        try:
            Version(text)
        except InvalidVersion:
            continue
        out.append(text)
    return out
