"""PKG110 from a log line: the crash a matrix ``[[bound]]`` describes, seen in the log.

A bound may name the log signatures whose line is its very breakage (``signatures``): vLLM's
tokenizer cache reading ``all_special_tokens_extended``, which transformers 5 removed, fails
with transformers 5's own ``X has no attribute all_special_tokens_extended``. That line states
that the dependency is beyond the bound, so the bound's fix applies without the versions; the
node's versions, where known, still rule the bound out.
"""

from __future__ import annotations

import re

from envcheck.matrix.schema import Bound
from envcheck.rules.base import Hit, LogLine, NotStated, Skip, from_log
from envcheck.rules.facts import Facts
from envcheck.rules.fixes import fix, pip_install

# transformers 5's PreTrainedTokenizerBase.__getattr__: f"{cls} has no attribute {key}"; Python's
# own "'X' object has no attribute 'y'" (a tokenizer class that never had it) is another cause
_TRANSFORMERS_GETATTR = re.compile(r"(?<!object )\bhas no attribute [A-Za-z_]+\b(?!')")


def _known(facts: Facts, name: str) -> str | None:
    try:
        version = facts.version(name)
    except Skip:
        return None
    return str(version) if version is not None else None


def _applies(facts: Facts, bound: Bound) -> bool:
    """False when the node's stated versions put the pair outside the bound."""
    package, dep = _known(facts, bound.package), _known(facts, bound.dependency)
    if package is not None and not bound.versions.contains(package, prereleases=True):
        return False
    return dep is None or not bound.allowed.contains(dep, prereleases=True)


@from_log("PKG110")
def bound_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The line is the breakage of a bound that names its signature: the bound's fix."""
    bounds = [b for b in facts.matrix.bounds if line.signature in b.signatures]
    if not bounds:
        raise Skip(f"no [[bound]] names the signature {line.signature}")
    if not _TRANSFORMERS_GETATTR.search(line.text):
        raise NotStated(
            f"line {line.line} is Python's own AttributeError, not the dependency's "
            "(the attribute may never have existed on that class)",
            "log.line",
        )
    applicable = [b for b in bounds if _applies(facts, b)]
    if not applicable:
        return None
    bound = applicable[0]
    package, dep = _known(facts, bound.package), _known(facts, bound.dependency)
    wanted = f"{bound.dependency}{bound.allowed}"
    install = bound.install or wanted
    if package is not None:
        install = install.replace("{version}", package)
    elif "{version}" in install:
        install = wanted
    named = f"{bound.package} {package}" if package else f"{bound.package} {bound.versions}"
    have = f"{bound.dependency} {dep}" if dep else f"{bound.dependency} outside {bound.allowed}"
    return Hit(
        f"line {line.line} is the crash the matrix knows of {named} with {have}: "
        f"{bound.reason.split('. ')[0]}",
        evidence={
            "line": line.line,
            bound.package: package or f"{bound.versions} (from the line)",
            bound.dependency: dep or f"not {bound.allowed} (from the line)",
            "bound": wanted,
        },
        fix=fix(
            f"Install {install} (what {bound.package} {bound.versions} works with), or a "
            f"{bound.package} release that supports the newer {bound.dependency}",
            "safe",
            pip_install(install),
        ),
    )
