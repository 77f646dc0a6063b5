"""PKG101 from a library's own import-time version guard, worded as a bound and a side rather
than a requirement: numba's ``_ensure_critical_deps`` (numba/__init__.py) raises::

    ImportError: Numba needs NumPy 1.22 or less                       (0.56, 0.57)
    ImportError: Numba needs NumPy 2.1 or less. Got NumPy 2.2.         (0.58 on)
    ImportError: Numba needs NumPy 1.24 or greater. Got NumPy 1.23.
    ImportError: Numba requires SciPy version 1.0 or greater. Got SciPy 0.19.1.

Any library that words its guard ``X needs|requires Y [version] A.B or less|greater`` is read
the same way, and matplotlib's ``_check_versions`` form, ``Matplotlib requires numpy>=1.23; you
have 1.21.6``, as a floor. The guard compares the release to the bound at the bound's own precision (numba
takes NumPy's major.minor: ``numpy_version > (2, 1)`` refuses 2.2 and accepts 2.1.3), so "A.B
or less" is the pin ``Y<A.(B+1)`` and "A.B or greater" is ``Y>=A.B``. The other way out is the
guarding package at a release made for the Y installed (``pip install -U X``). A guard on the
interpreter itself (``Numba needs Python 3.10 or greater``) is a Python to run it under, or an
older X, never a pip install of Python."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated
from envcheck.rules.fixes import fix, manual, pip_install

# numba/__init__.py (_ensure_critical_deps), numba 0.56.0: raise ImportError("Numba needs NumPy
# 1.22 or less"); 0.58.0 on: f"Numba needs NumPy 1.22 or greater. Got NumPy {major}.{minor}.",
# "Numba requires SciPy version 1.0 or greater. Got SciPy {scipy.__version__}."; 0.61.0:
# f"Numba needs NumPy 2.1 or less. Got NumPy {major}.{minor}."
GUARD = lazy(
    r"(?P<by>[A-Z][A-Za-z0-9_.-]*) (?:needs|requires) (?P<dep>[A-Za-z][A-Za-z0-9_.-]*) "
    r"(?:version )?(?P<bound>[0-9]+(?:\.[0-9]+)*) or (?P<side>less|lower|older|below|earlier|"
    r"greater|higher|newer|above|later)\b(?:[.,;]? *(?:Got|got|found|Found) "
    r"(?:[A-Za-z][A-Za-z0-9_.-]* )?(?:version )?(?P<found>[0-9]+(?:\.[0-9]+)*[0-9a-z+]*))?"
)
# matplotlib/__init__.py (_check_versions): f"Matplotlib requires {modname}>={minver}; "
# f"you have {module.__version__}"
REQUIRES_HAVE = lazy(
    r"(?P<by>[A-Z][A-Za-z0-9_.-]*) requires (?P<dep>[A-Za-z][A-Za-z0-9_.-]*)>="
    r"(?P<bound>[0-9]+(?:\.[0-9]+)*); you have (?P<found>[0-9]+(?:\.[0-9]+)*[0-9a-z+]*)"
)
_CEILING = ("less", "lower", "older", "below", "earlier")
# words a guard may bound that no pip install changes: the toolkit, the driver, the compiler
_NOT_PIP = frozenset({"cuda", "cudnn", "nvcc", "driver", "gcc", "cmake", "glibc", "rocm", "gpu"})


def _next_release(bound: Version) -> Version:
    """The first release past ``bound`` at its own precision: 2.1 -> 2.2, 1 -> 2, 1.24.3 ->
    1.24.4 (a guard that states major.minor accepts every patch release of it)."""
    parts = list(bound.release)
    parts[-1] += 1
    return Version(".".join(str(p) for p in parts))


def _at_precision(version: Version, bound: Version) -> Version:
    """``version`` cut to the bound's precision, as the guard compares it (2.1.3 -> 2.1)."""
    return Version(".".join(str(p) for p in version.release[: len(bound.release)]))


def _distribution(facts: Facts, name: str) -> str:
    """The distribution a guard's word names: its import name's distribution where the matrix
    knows one (sklearn -> scikit-learn), else the word itself, normalised (NumPy -> numpy)."""
    entry = facts.matrix.import_name(name.lower())
    if entry is not None and entry.distribution:
        return canonicalize_name(entry.distribution)
    return canonicalize_name(name)


def states_guard(text: str) -> bool:
    """Whether ``text`` holds a guard this module reads (either wording)."""
    return GUARD.search(text) is not None or REQUIRES_HAVE.search(text) is not None


def version_guard_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The finding for a ``GUARD`` or ``REQUIRES_HAVE`` line: the pin the guard's bound makes, or the guarding
    package upgraded. None when the release the line (or the given environment) states is
    inside the bound after all: then the guard did not refuse it, and it is not this cause."""
    found = GUARD.search(line.text) or REQUIRES_HAVE.search(line.text)
    if found is None:
        raise NotStated("the line is cut before the bound the guard states", "packages")
    try:
        bound = Version(found.group("bound"))
        stated = Version(found.group("found")) if found.group("found") else None
    except InvalidVersion:
        raise NotStated(
            "the bound or the release the line states is unreadable", "packages"
        ) from None
    by, dep = _distribution(facts, found.group("by")), _distribution(facts, found.group("dep"))
    if dep in _NOT_PIP:
        return None  # a toolkit's or a driver's floor: the CUDA and build rules' cause
    ceiling = "side" in found.re.groupindex and found.group("side") in _CEILING
    allowed = SpecifierSet(f"<{_next_release(bound)}" if ceiling else f">={bound}")
    have = stated if stated is not None else facts.known_version(dep)
    if have is not None and allowed.contains(_at_precision(have, bound), prereleases=True):
        return None
    wanted = f"{dep}{allowed}"
    got = f" and found {dep} {have}" if have is not None else ""
    side = "at most" if ceiling else "at least"
    actions: list[Action]
    if dep == "python":
        summary = (
            f"Run it under Python {allowed} ({by}'s guard: {side} {bound}), or install a {by} "
            f"release that supports this Python"
        )
        actions = [manual(f"Use a Python {allowed} environment for {by}")]
    elif ceiling:
        summary = (
            f'Install the newest {dep} {by}\'s guard accepts: pip install "{wanted}" '
            f"({bound}.x or older), or upgrade {by} to a release made for the newer {dep} "
            f"(pip install -U {by})"
        )
        actions = [pip_install(wanted), pip_install(by, flags=("--upgrade",))]
    else:
        summary = (
            f'Upgrade {dep} into {by}\'s range: pip install -U "{wanted}", or install a {by} '
            f"release made for the older {dep}"
        )
        actions = [pip_install(wanted, flags=("--upgrade",))]
    return Hit(
        f"{by}'s import-time guard needs {dep} {side} {bound} (line {line.line}){got}: "
        + (f"{dep} is newer than {by} accepts" if ceiling else f"{dep} is older than {by} needs"),
        evidence={
            "line": line.line,
            "requires": wanted,
            "found": f"{dep}=={have}" if have is not None else None,
            "checker": by,
        },
        fix=fix(summary, "unsafe", *actions),
    )
