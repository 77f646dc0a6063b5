"""A requirement one package states on another, read from the line a Python installer or
runtime prints when it is not met, in each tool's own words:

- pip's check after installing (pypa/pip src/pip/_internal/commands/install.py,
  _warn_about_conflicts): `X V requires REQ, but you have Y W which is incompatible.` and
  `X V requires Y, which is not installed.`; before pip 20.3 the same
  function's `X V has requirement REQ, but you'll have Y W which is incompatible.`;
- pip's resolver (src/pip/_internal/resolution/resolvelib/factory.py,
  _report_conflict / ResolutionImpossible): `Cannot install A and B because these package
  versions have conflicting dependencies.`, `The user requested REQ`, `X V depends on REQ`;
- uv's resolver (PubGrub's report, astral-sh/uv crates/uv-resolver/src/pubgrub/report.rs):
  `Because X==V depends on REQ and you require REQ2, we can conclude ...` (also `your project
  depends on`);
- Poetry's solver (python-poetry/poetry src/poetry/mixology/incompatibility.py):
  `Because X (V) depends on Y (SPEC) and P depends on Y (SPEC2), version solving failed.`;
- pkg_resources at run time (setuptools pkg_resources/__init__.py): `VersionConflict: (Y W
  (path), Requirement.parse('REQ'))`, `ContextualVersionConflict: (..., {'X'})`, `The 'REQ'
  distribution was not found and is required by X`.

PKG101 words what an installed set breaks; PKG192 what a resolver refused to install."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import public
from envcheck.model.finding import Action, Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_VERSION = r"[0-9][^\s,;()']*[0-9A-Za-z]|[0-9]"
# pip's post-install check: the requirement runs to ', but you have' (markers included);
# pip before 20.3 (the same _warn_about_conflicts) and `pip check` word it 'X V has
# requirement REQ, but you'll have Y W which is incompatible.' / 'but you have Y W.'
_PIP_HAVE = lazy(
    rf"(?P<by>{_NAME}) (?P<by_version>{_VERSION}) (?:requires|has requirement) "
    r"(?P<req>[^\n]+?), but you(?:'ll)? have "
    rf"(?P<name>{_NAME}) (?P<have>{_VERSION})(?: which is incompatible)?"
)
_PIP_MISSING = lazy(
    rf"(?P<by>{_NAME}) (?P<by_version>{_VERSION}) requires (?P<req>{_NAME}[^\n]*?), which is "
    r"not installed"
)
# pkg_resources: VersionConflict's args (the distribution found, the requirement, the requirers)
_PKG_CONFLICT = lazy(
    rf"VersionConflict: \((?P<name>{_NAME}) (?P<have>{_VERSION}) \([^)]*\), "
    r"Requirement\.parse\(['\"](?P<req>[^'\"]+)['\"]\)(?:, \{'(?P<by>[^']+)')?"
)
_PKG_MISSING = lazy(
    r"The '(?P<req>[^']+)' distribution was not found and is required by "
    rf"(?P<by>{_NAME}(?:, {_NAME})*)"
)
# pip's resolver: the candidates' requirements after 'The conflict is caused by:'
_PIP_DEPENDS = lazy(
    rf"(?m)^\s*(?P<by>{_NAME}) (?P<by_version>{_VERSION}) depends on (?P<req>{_NAME}[^\s]*)\s*$"
)
_PIP_REQUESTED = lazy(r"(?m)^\s*The user requested (?P<asked>[A-Za-z0-9][^\s]*)\s*$")
# uv (PubGrub): the clause a package's requirement and the user's / project's make together
_UV = lazy(
    rf"Because (?P<by>{_NAME})==(?P<by_version>{_VERSION})\s+depends\s+on\s+"
    r"(?P<req>[A-Za-z0-9][^\s]*?)\s+and\s+(?:you\s+require|your\s+project\s+depends\s+on|"
    rf"{_NAME}\s+depends\s+on)\s+(?P<asked>[A-Za-z0-9][^\s,]*(?:,[<>=!~][^\s,]+)*)"
)
# Poetry: 'Because X (V) depends on Y (SPEC) and P depends on Y (SPEC2), version solving failed.'
_POETRY = lazy(
    rf"Because (?P<by>{_NAME}) \((?P<by_version>[^)]+)\) depends on (?P<name>{_NAME}) "
    rf"\((?P<spec>[^)]+)\)\s+and\s+(?:{_NAME}) depends on (?P=name) \((?P<asked>[^)]+)\)"
)


@dataclass(frozen=True)
class Conflict:
    """``by`` (at ``by_version``) requires ``requirement``; the environment has ``have`` of
    it (pip's check, pkg_resources), or the user asked for ``asked`` (a resolver); ``missing``
    when the required distribution is not installed at all. ``tool`` names who said it."""

    tool: str
    by: str | None
    by_version: str | None
    requirement: Requirement
    have: str | None = None
    asked: str | None = None

    @property
    def name(self) -> str:
        return str(canonicalize_name(self.requirement.name))

    @property
    def missing(self) -> bool:
        return self.have is None and self.asked is None

    @property
    def resolver(self) -> bool:
        return self.tool in ("pip's resolver", "uv", "Poetry")


def _requirement(text: str) -> Requirement | None:
    with contextlib.suppress(InvalidRequirement):
        return Requirement(text.strip().rstrip(".,"))
    return None


def stated_conflict(text: str) -> Conflict | None:
    """The requirement conflict a line (with the lines after it, for pip's resolver) states;
    None when it states none in a wording this module reads."""
    found = _PIP_HAVE.search(text)
    if found and (req := _requirement(found.group("req"))) is not None:
        return Conflict(
            "pip", found.group("by"), found.group("by_version"), req, have=found.group("have")
        )
    found = _PIP_MISSING.search(text)
    if found and (req := _requirement(found.group("req"))) is not None:
        return Conflict("pip", found.group("by"), found.group("by_version"), req)
    found = _PKG_CONFLICT.search(text)
    if found and (req := _requirement(found.group("req"))) is not None:
        return Conflict("pkg_resources", found.group("by"), None, req, have=found.group("have"))
    found = _PKG_MISSING.search(text)
    if found and (req := _requirement(found.group("req"))) is not None:
        return Conflict("pkg_resources", found.group("by").split(",")[0], None, req)
    found = _UV.search(text)
    if found and (req := _requirement(found.group("req"))) is not None:
        asked = _requirement(found.group("asked"))
        if asked is not None and canonicalize_name(asked.name) == canonicalize_name(req.name):
            return Conflict(
                "uv",
                found.group("by"),
                found.group("by_version"),
                req,
                asked=str(asked.specifier) or None,
            )
    found = _POETRY.search(text)
    if found:
        req = _requirement(f"{found.group('name')}{_poetry_spec(found.group('spec'))}")
        if req is not None:
            return Conflict(
                "Poetry",
                found.group("by"),
                found.group("by_version"),
                req,
                asked=_poetry_spec(found.group("asked")),
            )
    asked_found = _PIP_REQUESTED.search(text)
    asked_req = _requirement(asked_found.group("asked")) if asked_found else None
    for depends in _PIP_DEPENDS.finditer(text):
        req = _requirement(depends.group("req"))
        if req is None:
            continue
        if asked_req is None or canonicalize_name(asked_req.name) == canonicalize_name(req.name):
            return Conflict(
                "pip's resolver",
                depends.group("by"),
                depends.group("by_version"),
                req,
                asked=str(asked_req.specifier) if asked_req is not None else None,
            )
    return None


_DEPENDS_ON = lazy(
    rf"^(?P<by>{_NAME})(?:==| )(?P<by_version>{_VERSION})\s+depends\s+on\s+(?P<req>\S+)$"
)


def from_facts(line_text: str, depends_on: str | None, asked: str | None) -> Conflict | None:
    """The conflict a resolver's explanation states over several lines, from the facts its
    signature read there (``depends_on``: 'vllm 0.6.3 depends on torch==2.4.0' or uv's
    'vllm==0.6.3 depends on torch==2.4.0'; ``asked``: the user's pin), else from the line."""
    found = _DEPENDS_ON.match(" ".join(depends_on.split())) if depends_on else None
    req = _requirement(found.group("req")) if found else None
    if found is None or req is None:
        return stated_conflict(line_text)
    pin = _requirement(asked) if asked else None
    if pin is not None and canonicalize_name(pin.name) != canonicalize_name(req.name):
        pin = None
    tool = "uv" if "==" in found.group(0).split(" depends", 1)[0] else "pip's resolver"
    return Conflict(
        tool,
        found.group("by"),
        found.group("by_version"),
        req,
        asked=str(pin.specifier) if pin is not None and str(pin.specifier) else None,
    )


def _poetry_spec(text: str) -> str:
    """Poetry writes an exact version bare (`torch (2.4.0)`): as a specifier, `==2.4.0`."""
    text = text.strip()
    return f"=={text}" if text[:1].isdigit() else text.replace(" ", "")


def _paired_release(facts: Facts, by: str, name: str, version: str | None) -> str | None:
    """The release of ``by`` the matrix pairs with ``name`` at ``version`` (a torch companion
    with a torch release: torchvision 0.17.0 with torch 2.2.0); None when it pairs none."""
    if version is None or name != "torch":
        return None
    try:
        wanted = public(Version(version))
    except InvalidVersion:
        return None
    paired = sorted(
        (
            c.version
            for c in facts.matrix.companions
            if canonicalize_name(c.package) == canonicalize_name(by) and c.torch == wanted
        ),
        reverse=True,
    )
    return str(paired[0]) if paired else None


def _contains(spec: str | None, version: str | None) -> bool | None:
    if not spec or version is None:
        return None
    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


# how each resolver's users change a requirement (uv's and Poetry's project commands write the
# pin into pyproject.toml; uv pip install takes the same arguments as pip)
_INSTALL = {"uv": "uv add", "Poetry": "poetry add", "pip's resolver": "pip install"}


def conflict_fix(facts: Facts, conflict: Conflict) -> Fix:
    """The fix the line's own facts select: for an installed set, the required release back
    (or the requirer's release paired with what is installed, where the matrix pairs them);
    for a resolver's refusal, the user's pin moved inside the requirer's range, or another
    release of the requirer that accepts the pin."""
    name, req = conflict.name, conflict.requirement
    spec = str(req.specifier)
    inside = f"{name}{spec}" if spec else name
    by = str(canonicalize_name(conflict.by)) if conflict.by else None
    other = conflict.have or (conflict.asked.lstrip("=") if conflict.asked else None)
    exact = other if other and other[:1].isdigit() else None
    paired = _paired_release(facts, by, name, exact) if by else None
    actions: list[Action] = []
    if conflict.missing:
        text = f"Install {inside}, which {conflict.by or 'the package'} requires: pip install '{inside}'"
        return fix(text, "unsafe", pip_install(inside))
    if paired is not None and by is not None:
        text = (
            f"Install {by} {paired}, the release paired with {name} {exact} (keeps {name}); or "
            f"put {name} back inside {by}'s range: pip install '{inside}'"
        )
        actions = [pip_install(f"{by}=={paired}"), pip_install(inside)]
        return fix(text, "unsafe", *actions)
    requirer = f"{conflict.by} {conflict.by_version}" if conflict.by_version else conflict.by
    if conflict.resolver:
        wanted = f"{name}{conflict.asked or ''}"
        # each tool's own spelling: the project's dependency changed where the resolver read it
        install = _INSTALL.get(conflict.tool, "pip install")
        moved = f"{install} '{inside}' {by or ''}".rstrip()
        text = (
            f"The requirements cannot all hold: {requirer} requires {inside} and the request "
            f"asks for {wanted}. Drop or change that pin to {inside} ({moved}), or let the "
            f"resolver pick a release of {by} that accepts {wanted} (unpin {by}: {install} "
            f"{by} '{wanted}')"
        )
        actions = [manual(f"{moved}  (the pin moved inside {by}'s range)")]
        if by and conflict.asked:
            actions.append(manual(f"{install} {by} '{wanted}'  ({by} unpinned)"))
        if install != "pip install":
            actions.append(manual(f"pip install '{inside}' {by or ''}  (the same with pip)"))
        return fix(text, "manual", *actions)
    text = (
        f"Install {inside}, inside {requirer}'s range ({name} {conflict.have} is installed): "
        f"pip install '{inside}'; or move {by} to a release that supports {name} "
        f"{conflict.have} (pip install --upgrade {by})"
    )
    actions = [pip_install(inside)]
    if by:
        actions.append(
            manual(f"pip install --upgrade {by}  (a release that accepts {name} {conflict.have})")
        )
    return fix(text, "unsafe", *actions)


def holds(conflict: Conflict) -> bool | None:
    """Whether the version the line names meets the requirement after all (a stale line);
    None when the line names no version."""
    return _contains(str(conflict.requirement.specifier), conflict.have)


@rule("PKG192", "resolver-refused-requirements", Severity.ERROR)
def resolver_refused(facts: Facts) -> Iterable[Hit]:
    """A resolver refused the requested packages: one's requirement excludes another's pin

    ## What it checks
    The line pip's, uv's or Poetry's resolver prints when the set asked for cannot be
    installed, read into who requires what (`vllm 0.6.3 depends on torch==2.4.0` after `The
    user requested torch==2.5.1`; uv's `Because vllm==0.6.3 depends on torch==2.4.0 and you
    require torch==2.5.1`; Poetry's `Because vllm (0.6.3) depends on torch (2.4.0) and
    my-project depends on torch (2.5.1), version solving failed`). Only a log states it.

    ## Why it matters
    Nothing is installed: the job's requirements (a requirements file, a project's
    dependencies, a command line) pin a release that another requirement excludes, and
    repeating the install fails the same way.

    ## Example
    `Because vllm==0.6.3 depends on torch==2.4.0 and you require torch==2.5.1, we can conclude
    that your requirements and vllm==0.6.3 are incompatible.`

    ## Fix
    Move the pin inside the requirer's range (`pip install 'torch==2.4.0' vllm==0.6.3`), or
    unpin the requirer so the resolver picks a release that accepts the pin (`pip install
    vllm 'torch==2.5.1'`); for a torch companion, the release paired with the pinned torch.

    ## References
    - pypa/pip src/pip/_internal/resolution/resolvelib/factory.py (ResolutionImpossible)
    - astral-sh/uv crates/uv-resolver/src/pubgrub/report.rs
    - python-poetry/poetry src/poetry/mixology/incompatibility.py
    """
    raise Skip("only a log line states a resolver's refusal", "log.resolver")


@from_log("PKG192")
def resolver_refused_in_log(facts: Facts, line: LogLine) -> Hit:
    conflict = from_facts(
        line.text, line.stated.get("depends_on"), line.stated.get("asked_requirement")
    )
    if conflict is None or not conflict.resolver:
        raise NotStated(
            f"line {line.line} does not state which requirement excludes which pin (the "
            "resolver's explanation is cut off)",
            "log.resolver",
        )
    requirer = f"{conflict.by} {conflict.by_version}" if conflict.by_version else conflict.by
    asked = f"{conflict.name}{conflict.asked}" if conflict.asked else "another pin"
    return Hit(
        f"{conflict.tool} refused the requested set (line {line.line}): {requirer} requires "
        f"{conflict.requirement}, and the request asks for {asked}",
        evidence={
            "line": line.line,
            "tool": conflict.tool,
            "requirer": conflict.by,
            "requires": str(conflict.requirement),
            "asked": conflict.asked,
        },
        fix=conflict_fix(facts, conflict),
    )


def installed_conflict_hit(facts: Facts, line: LogLine, conflict: Conflict) -> Hit | None:
    """PKG101 from pip's post-install check or pkg_resources' run-time check: the installed
    version the line names is outside the requirer's range (or the requirement is missing);
    None when the version named meets it after all."""
    if holds(conflict):
        return None
    requirer = f"{conflict.by} {conflict.by_version}" if conflict.by_version else conflict.by
    state = (
        f"{conflict.name} is not installed"
        if conflict.missing
        else f"{conflict.name} {conflict.have} is installed"
    )
    return Hit(
        f"{requirer} requires {conflict.requirement} and {state} (line {line.line}, "
        f"{conflict.tool})",
        evidence={
            "line": line.line,
            "requirer": conflict.by,
            "requires": str(conflict.requirement),
            "installed": conflict.have,
        },
        fix=conflict_fix(facts, conflict),
    )
