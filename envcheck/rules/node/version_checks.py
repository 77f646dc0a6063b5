"""PKG101 from a library's own runtime version check: transformers' ``require_version`` (used
by its dependency check, its Trainer, LLaMA-Factory and many others) prints the range it
requires and the release it found on one line::

    ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of
    this module, but found tokenizers==0.14.0.

The line decides the direction by itself: a release below the range's lower bound is upgraded
into it (``pip install -U "X>=A"``); one above an upper bound is pinned back to the last release
the check accepts (``X==B`` for ``<=B``, ``X<B`` for ``<B``), or the package that runs the check
is upgraded to a release that accepts it (transformers' own hint: ``pip install transformers
-U``). A switch the log names to skip the check (LLaMA-Factory's ``DISABLE_VERSION_CHECK=1``)
comes last.
"""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import Specifier
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated
from envcheck.rules.fixes import fix, manual, pip_install

# transformers/utils/versions.py (_compare_versions): f"{requirement} is required for a normal
# functioning of this module, but found {pkg}=={got_ver}.{hint}"
REQUIRED_FOUND = lazy(
    r"(?P<req>[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?\s*(?:===|[<>=!~]=?)\s*[^\s,]+"
    r"(?:\s*,\s*(?:===|[<>=!~]=?)\s*[^\s,]+)*)\s+is required for a normal functioning of this "
    r"module, but found (?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<found>[0-9][^\s]*[0-9a-z])"
)
_NAME = lazy(r"^[A-Za-z0-9._-]+(?:\[[^\]]*\])?")
_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+)")


def _checker(facts: Facts, line: LogLine, name: str) -> str | None:
    """The distribution whose check raised: the package its own hint tells to upgrade
    (transformers' 'Try: `pip install transformers -U`'), else the site-packages frame that
    called the check (transformers/dependency_versions_check.py, llamafactory/extras/misc.py);
    None when the log shows neither, or the check is the checked package's own."""
    hint = line.stated.get("check_upgrade")
    if hint:
        by = canonicalize_name(hint)
    else:
        path = line.stated.get("checker_file")
        found = _SITE_TOP.search(path) if path else None
        if found is None:
            return None
        entry = facts.matrix.import_name(found.group("top"))
        by = canonicalize_name(
            entry.distribution if entry is not None and entry.distribution else found.group("top")
        )
    return None if by == canonicalize_name(name) else by


def _upper_pin(name: str, spec: Specifier) -> str | None:
    """The pin for the last releases an upper clause accepts: ``X==B`` for ``<=B`` and ``==B``
    (B is a release), ``X<B`` for ``<B``; None for the other operators."""
    if spec.operator in ("<=", "==", "==="):
        return f"{name}=={spec.version}"
    if spec.operator == "<":
        return f"{name}<{spec.version}"
    return None


def version_check_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The finding for a runtime version check's line (``REQUIRED_FOUND``): None when the
    release it found is inside the range after all (then it is not this cause)."""
    found = REQUIRED_FOUND.search(line.text)
    if found is None:
        raise NotStated("the line is cut before the range and the release found", "packages")
    try:
        req = Requirement(found.group("req").replace(" ", ""))
        have = Version(found.group("found"))
    except (InvalidRequirement, InvalidVersion):
        raise NotStated(
            "the range or the release the line states is unreadable", "packages"
        ) from None
    name = found.group("name")
    if req.specifier.contains(have, prereleases=True):
        return None
    failed = [s for s in req.specifier if not s.contains(have, prereleases=True)]
    too_old = any(s.operator in (">=", ">", "~=") for s in failed)
    wanted = f"{name}{req.specifier}"
    wanted_as_stated = name + _NAME.sub("", found.group("req").replace(" ", ""), count=1)
    by = _checker(facts, line, name)
    switch = line.stated.get("check_switch")
    actions: list[Action]
    if too_old:
        lows = [s for s in failed if s.operator in (">=", ">", "~=")]
        low = f"{name}{lows[0]}"
        summary = (
            f'Upgrade {name} into the range the check requires: pip install -U "{low}" '
            f"({wanted_as_stated} as the line states it)"
        )
        actions = [pip_install(low, flags=("--upgrade",))]
        if by is not None:
            summary += f", or move {by} to a release made for {name} {have}"
    else:
        pins = [p for p in (_upper_pin(name, s) for s in failed) if p is not None]
        pin = pins[0] if pins else wanted
        clause = ",".join(str(s) for s in failed)
        summary = (
            f"Install the newest {name} the check accepts ({name}{clause}): "
            f'pip install "{pin}" (the whole range: "{wanted_as_stated}")'
        )
        actions = [pip_install(pin)]
        if pin != wanted_as_stated:
            actions.append(pip_install(wanted_as_stated))
        if by is not None:
            summary += (
                f", or upgrade {by} to a release made for {name} {have} (pip install -U {by})"
            )
            actions.append(pip_install(by, flags=("--upgrade",)))
    if switch:
        summary += f"; {switch} skips the check (at the risk the range protects against)"
        actions.append(manual(f"export {switch}"))
    checked = f"{by}'s runtime check" if by is not None else "a runtime version check"
    return Hit(
        f"{checked} requires {wanted_as_stated} and found {name} {have} (line {line.line}): "
        + (f"{name} is older than the range" if too_old else f"{name} is newer than the range"),
        evidence={
            "line": line.line,
            "requires": wanted,
            "found": f"{name}=={have}",
            "checker": by,
        },
        fix=fix(summary, "unsafe", *actions),
    )
