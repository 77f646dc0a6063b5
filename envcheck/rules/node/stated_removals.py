"""A library's own AttributeError that states the release which removed the name.

JAX keeps a removed name in its module's deprecation table with no value, so reading it
raises ``AttributeError: jax.tree_map was removed in JAX v0.6.0: use jax.tree.map ...``
(``jax/_src/deprecations.py`` ``deprecation_getattr``). The line itself names the module, the
name and the first release without it, so PY150 pins the release before it without needing
the name in any table: ``pip install "jax<0.6.0"``, and the last release before it where the
matrix knows the package's releases. NumPy 2's own wording is read in ``imports.py``.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, pip_install

STATED_REMOVAL = lazy(
    r"(?P<module>jax(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.(?P<name>[A-Za-z_][A-Za-z0-9_]*) was "
    r"removed in JAX v(?P<release>[0-9]+(?:\.[0-9]+)+)(?:[:.;] *[Uu]se (?P<instead>[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]))?"
)


def stated_removal(facts: Facts, line: LogLine, found: re.Match[str]) -> Hit | None:
    """The finding for a line that names the removed name and its release; None when the
    release does not parse, or the installed release predates it (then it is not the cause)."""
    from envcheck.rules.node.import_releases import last_clause

    module, name = found.group("module"), found.group("name")
    try:
        when = Version(found.group("release"))
    except InvalidVersion:
        return None
    dist = module.split(".", maxsplit=1)[0]
    version = facts.known_version(dist)
    if version is not None and version < when:
        return None
    have = f"{dist} {version}" if version is not None else f"the installed {dist}"
    pin = f"{dist}<{when}"
    last, pinned = last_clause(facts, dist, dist, when, "")
    instead = found.group("instead")
    port = f", or port the code to {instead}" if instead else ""
    return Hit(
        f"{dist} {when} removed {module}.{name}, as its own message says; {have} does not have "
        f"it (line {line.line}): the code that uses it was written for {dist} < {when}",
        evidence={
            "line": line.line,
            "name": name,
            "module": module,
            "distribution": dist,
            "removed_in": str(when),
        },
        fix=fix(
            f'Install the {dist} release before the removal: pip install "{pin}"{last} (and '
            f"pin it for later installs){port}",
            "manual",
            pip_install(pin),
            *pinned,
        ),
    )
