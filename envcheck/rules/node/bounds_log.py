"""PKG110 from a log line: the crash a matrix ``[[bound]]`` describes, seen in the log.

A line whose signature matches the ``symptom`` of exactly one bound is that bound's breakage:
vLLM's tokenizer cache reading ``all_special_tokens_extended``, which transformers 5 removed,
fails with transformers 5's own ``X has no attribute all_special_tokens_extended``; trl < 0.8.1
fails importing ``top_k_top_p_filtering`` from transformers 4.39. The line states that the
dependency is beyond the bound, so the bound's fix applies without the versions; the node's
versions, where known, still rule the bound out. (Python's own ``'X' object has no attribute
'y'`` is another signature, which leaves the cause open: the class may never have had it.)
"""

from __future__ import annotations

import re

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import Bound
from envcheck.rules.base import Hit, LogLine, from_log
from envcheck.rules.fixes import fix, pip_install


def _symptom_of(facts: Facts, line: LogLine) -> Bound:
    signature = next((s for s in facts.matrix.signatures if s.id == line.signature), None)
    if signature is None:
        raise Skip("the line's signature is not in the matrix")
    pattern = re.compile(signature.pattern)
    bounds = [b for b in facts.matrix.bounds if b.symptom and pattern.search(b.symptom)]
    if len(bounds) != 1:
        raise Skip("the line is not the symptom of exactly one [[bound]]")
    return bounds[0]


@from_log("PKG110")
def bound_symptom_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The line is the symptom of one bound: that bound's finding and fix, or None when the
    node's versions put the pair outside it."""
    bound = _symptom_of(facts, line)
    version, dep = facts.known_version(bound.package), facts.known_version(bound.dependency)
    if version is not None and not bound.versions.contains(version, prereleases=True):
        return None
    if dep is not None and bound.allowed.contains(dep, prereleases=True):
        return None
    wanted = f"{bound.dependency}{bound.allowed}"
    install = bound.install or wanted
    install = (
        install.replace("{version}", str(version))
        if version is not None
        else install.replace("=={version}", "")
    )
    known = [f"{name} {v}" for name, v in ((bound.package, version), (bound.dependency, dep)) if v]
    stated = f" (the node has {' and '.join(known)})" if known else ""
    with_dep = (
        f"{bound.dependency} {dep}" if dep is not None else f"the installed {bound.dependency}"
    )
    workaround = f"; or, keeping both: {bound.workaround}" if bound.workaround else ""
    return Hit(
        f"line {line.line} is the symptom of {bound.package} {bound.versions} with "
        f"{bound.dependency} outside {bound.allowed}{stated}: "
        f"{bound.reason.split('. ')[0]}",
        evidence={
            "line": line.line,
            bound.package: str(version) if version else None,
            bound.dependency: str(dep) if dep else None,
            "bound": wanted,
        },
        fix=fix(
            f"Install {install} (what {bound.package} {bound.versions} works with), or a "
            f"{bound.package} release that supports {with_dep}{workaround}"
            + ("" if version is not None else f" (no {bound.package} release is stated)"),
            "safe",
            pip_install(install),
        ),
    )
