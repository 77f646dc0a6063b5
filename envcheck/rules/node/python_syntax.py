"""PY140 from the error an interpreter raises on a language feature newer than itself: code
written for Python >= 3.9 (``list[int]``) or >= 3.10 (``str | None``) fails at import time on an
older one with ``TypeError: 'type' object is not subscriptable`` or ``unsupported operand
type(s) for |: 'type' and 'NoneType'``, whatever the package's metadata claims.

The feature's first CPython release comes from the matrix (``[[first_release]]`` with
``package = "python"`` and ``kind = "syntax"``, keyed by the error's words); the running Python
from the traceback's ``pythonX.Y/site-packages`` path or the node; the package from the
innermost site-packages frame. Threads fix it with a newer Python first ("Python 3.10 is ok"),
then the package's later release (one that declares its floor or avoids the feature), then
its release before the feature.
"""

from __future__ import annotations

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated
from envcheck.rules.fixes import fix, manual, pip_install

_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+)")


def running_python(facts: Facts, line: LogLine) -> Version | None:
    """X.Y of the interpreter: the traceback's pythonX.Y/site-packages, else the node's."""
    stated = line.stated.get("site_python") or line.stated.get("python_version")
    if stated:
        try:
            return Version(stated)
        except InvalidVersion:
            pass
    try:
        return facts.python_version()
    except Skip:
        return None


def _package(facts: Facts, line: LogLine) -> str | None:
    """The distribution of the innermost site-packages frame: the package whose code uses the
    feature (None when the traceback shows only the job's own files)."""
    path = line.stated.get("importer_file")
    found = _SITE_TOP.search(path) if path else None
    if found is None or found.group("top").startswith("_"):
        return None
    entry = facts.matrix.import_name(found.group("top"))
    if entry is not None and entry.distribution:
        return canonicalize_name(entry.distribution)
    return canonicalize_name(found.group("top"))


def _at_least(minor: str, floor: Version) -> bool:
    try:
        return Version(minor) >= floor
    except InvalidVersion:
        return False


def syntax_in_log(facts: Facts, line: LogLine, feature: str) -> Hit | None:
    """The finding for an interpreter older than the feature the code uses; None when the
    running Python has the feature (then the error is the code's own bug)."""
    floor = facts.matrix.first_release("python", "syntax", feature)
    if floor is None:
        raise NotStated(f"the matrix does not know which Python added '{feature}'", "python")
    py = running_python(facts, line)
    if py is None:
        raise NotStated("neither the log nor the node states the Python version", "python.version")
    minor = Version(f"{py.major}.{py.minor}")
    if minor >= floor:
        return None
    entry = next(
        (
            r
            for r in facts.matrix.first_releases
            if r.package == "python" and r.kind == "syntax" and r.name == feature
        ),
        None,
    )
    note = f" ({entry.note})" if entry is not None and entry.note else ""
    want = f"{floor.major}.{floor.minor}"
    # the CPython minors the matrix knows wheels for (torch's releases), from the floor on
    known = sorted(
        {p for t in facts.matrix.torch_releases for p in t.python if _at_least(p, floor)},
        key=Version,
    )
    listed = f" ({', '.join(known)})" if known else ""
    dist = _package(facts, line)
    installed = facts.known_version(dist) if dist is not None else None
    actions: list[Action] = [
        manual(
            f"conda create -n py{want.replace('.', '')} python={want}  (or: uv venv --python {want})"
        ),
    ]
    summary = f"Run the job on Python >= {want}{listed} (a new environment: conda create -n py{want.replace('.', '')} python={want}, or uv venv --python {want}) and reinstall its packages there"
    if dist is not None:
        summary += (
            f"; or, staying on Python {minor}, upgrade {dist} (pip install -U {dist}: a later "
            f"release may declare Python >= {want} or avoid the feature)"
        )
        actions.append(pip_install(dist, flags=("--upgrade",)))
        if installed is not None:
            summary += f' or go back to a release before it (pip install "{dist}<{installed}")'
            actions.append(pip_install(f"{dist}<{installed}"))
    where = f"{dist}'s code" if dist is not None else "the code"
    return Hit(
        f"{where} uses a Python {want} feature ('{feature}' on Python {minor}, line "
        f"{line.line}): this interpreter is older than the code was written for{note}",
        evidence={
            "line": line.line,
            "python": str(minor),
            "needs_python": f">={want}",
            "package": dist,
        },
        fix=fix(summary, "manual", *actions),
    )


def unknown_syntax_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """`SyntaxError: invalid syntax` whose statement the matrix does not know: open, as the
    job's own file or a package's. In a package's file (under site-packages) the fix threads
    run is a newer Python, or the package's release before the installed one."""
    dist = _package(facts, line)
    if dist is None:
        raise NotStated("the file Python could not parse is not a package's", "log.line")
    py = running_python(facts, line)
    on = f" than Python {py.major}.{py.minor}" if py is not None else ""
    installed = facts.known_version(dist)
    older = f' or pip install "{dist}<{installed}"' if installed is not None else ""
    raise NotStated(
        f"{dist}'s file uses syntax the interpreter cannot parse; the line does not show which",
        "python.version",
        fix=(
            f"{dist}'s release needs a newer Python{on}: run the job on the Python its "
            f"Requires-Python names (pip show {dist}; conda create -n <env> python=<that "
            f"version>), or install a {dist} release for this Python (pip install -U {dist} "
            f"when the newest declares its floor{older})"
        ),
    )


# Python 3.11's dataclasses refuse any unhashable field default (3.10 and older: list, dict and
# set only; python/cpython Lib/dataclasses.py _get_field, bpo-44674)
_UNHASHABLE_SINCE = Version("3.11")
_ALWAYS_REFUSED = frozenset({"list", "dict", "set"})


def refusal_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """A newer interpreter refusing code written for an older one: a dataclass field whose
    default is an unhashable instance (fairseq 0.12's config dataclasses), refused from Python
    3.11 on. None where the default is a list, dict or set (every Python refuses those: the
    code's own) or the Python the log states is older than 3.11."""
    refused = line.stated.get("refused_type")
    if refused in _ALWAYS_REFUSED:
        return None
    py = running_python(facts, line)
    if py is not None and Version(f"{py.major}.{py.minor}") < _UNHASHABLE_SINCE:
        return None
    dist = _package(facts, line)
    what = f"<class '{refused}'>" if refused else "an unhashable object"
    on = f"Python {py.major}.{py.minor}" if py is not None else "Python 3.11 or later"
    where = f"{dist}'s" if dist is not None else "the code's"
    summary = (
        "Run the job on Python 3.10 (a new environment: conda create -n py310 python=3.10, or "
        "uv venv --python 3.10; Python < 3.11 accepts the default) and reinstall its packages "
        "there"
    )
    actions: list[Action] = [
        manual("conda create -n py310 python=3.10  (or: uv venv --python 3.10)"),
    ]
    if dist is not None:
        summary += (
            f"; or upgrade {dist} to a release made for Python 3.11 (pip install -U {dist}), "
            "where it has one"
        )
        actions.append(pip_install(dist, flags=("--upgrade",)))
    return Hit(
        f"{on} refuses {where} dataclass field default, {what} (line {line.line}): from "
        "Python 3.11 on dataclasses refuse any unhashable default (3.10 and older refused only "
        "list, dict and set), so the code was written for Python < 3.11",
        evidence={"line": line.line, "needs_python": "<3.11", "package": dist},
        fix=fix(summary, "manual", *actions),
    )
