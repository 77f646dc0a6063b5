"""PKG193: pip found no release of a package that meets the requirement, for any package: its
'Could not find a version that satisfies the requirement R (from versions: ...)' lists the
releases that have a file for this interpreter and platform on the indexes it used
(pypa/pip src/pip/_internal/resolution/resolvelib/factory.py). torch (PY101) and Ray (RAY101)
have rules that read their wheels' Python tags; this one reads only what pip's line states."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.pip_offered import offered_versions

_NO_MATCH = lazy(r"No matching distribution found for (?P<req>[^\s]+)")


@rule("PKG193", "requirement-not-offered", Severity.ERROR)
def requirement_not_offered(facts: Facts) -> Iterable[Hit]:
    """pip found no release of the package that meets the requirement here

    ## What it checks
    pip's `Could not find a version that satisfies the requirement R (from versions: A, B,
    ...)` for any package: the releases it lists are the ones with a file for this interpreter
    and platform on the indexes it used. A pinned release missing from the list has no file
    here; an empty list (`none`) means the package has nothing for this Python, platform or
    index at all. Only a log states it.

    ## Why it matters
    The install stops; repeating it with the same pin, Python and index fails the same way.

    ## Example
    `ERROR: Could not find a version that satisfies the requirement vllm==0.9.0 (from versions:
    0.5.0, 0.6.0)`: vllm 0.9.0 has no wheel for this Python or platform.

    ## Fix
    Pin a release pip lists (the nearest to the one asked for), or use a Python and platform the
    pinned release publishes files for; with `none`, check the index (`--index-url` replaces the
    default index) and the interpreter (`pip download <pkg> --no-deps -v` shows what pip saw).

    ## References
    - pypa/pip src/pip/_internal/resolution/resolvelib/factory.py
    """
    raise Skip("only a log line states what pip found", "log.pip_offered")


def _nearest(wanted: Requirement, offered: list[Version]) -> Version | None:
    """The listed release nearest the pin: the newest at or below it, else the oldest above;
    the newest listed for a range or a bare name. Pre-releases only when nothing else is."""
    final = [v for v in offered if not v.is_prerelease] or offered
    if not final:
        return None
    pinned = [s for s in wanted.specifier if s.operator in ("==", "===")]
    if not pinned or "*" in pinned[0].version:
        return max(final)
    try:
        target = Version(pinned[0].version)
    except ValueError:
        return max(final)
    below = [v for v in final if v <= target]
    return max(below) if below else min(final)


@from_log("PKG193")
def requirement_not_offered_in_log(facts: Facts, line: LogLine) -> Hit:
    wanted, listed = line.stated.get("pip_requirement"), line.stated.get("pip_offered")
    if not wanted:
        alone = _NO_MATCH.search(line.text)
        wanted, listed = (alone.group("req"), None) if alone else (None, None)
    if not wanted:
        raise NotStated("the line does not name the requirement", "log.pip_requirement")
    try:
        req = Requirement(wanted)
    except InvalidRequirement:
        raise NotStated(f"'{wanted}' is not a requirement", "log.pip_requirement") from None
    name = req.name
    probe = manual(
        f"pip download '{req}' --no-deps -d /tmp/pipcheck -v  (what pip saw, why skipped)"
    )
    where = manual("python -c 'import sys, platform; print(sys.version, platform.machine())'")
    offered = offered_versions(listed) if listed else []
    if listed is None or not offered:
        said = "(from versions: none)" if listed is not None else "(its list not shown)"
        return Hit(
            f"pip found no release of {name} it can install here {said} (line {line.line}): "
            f"{name} has no file for this Python or platform on the index used, or the index "
            "(a --index-url that replaces the default one) does not carry it",
            evidence={"line": line.line, "requirement": str(req), "offered": listed},
            fix=fix(
                f"Check what pip saw for {name} (pip download '{req}' --no-deps -v): use a Python "
                f"and platform {name} publishes wheels for, or add the index that carries it "
                "(--extra-index-url keeps the default index; --index-url replaces it)",
                "manual",
                probe,
                where,
            ),
        )
    if any(req.specifier.contains(v, prereleases=True) for v in offered):
        raise NotStated(
            f"a release pip lists meets {req}: the refusal is another requirement's",
            "log.pip_offered",
        )
    nearest = _nearest(req, offered)
    listed_text = f"{min(offered)} to {max(offered)}" if len(offered) > 1 else str(offered[0])
    actions: list[Action] = []
    text = f"pip lists {name} {listed_text} for this interpreter and platform"
    if nearest is not None:
        actions.append(pip_install(f"{name}=={nearest}"))
        text = (
            f"Pin a release pip lists here: pip install {name}=={nearest} (the nearest to {req}); "
            f"or use a Python and platform {req} publishes files for"
        )
    actions += [probe, where]
    return Hit(
        f"no release of {name} that meets {req} has a file for this interpreter and platform "
        f"(line {line.line}): pip lists {listed_text}",
        evidence={"line": line.line, "requirement": str(req), "offered": listed},
        fix=fix(text, "manual", *actions),
    )
