"""NumPy's C-API / C-ABI check (PKG190): a compiled module was built against NumPy headers of
another version than the NumPy that imports it, for any extension (a Cython or pybind11 module,
pandas, OpenCV, a project's own build).

NumPy's `_import_array` (its headers, compiled into each extension) prints the module's
build-time version and the running NumPy's, in hex: `module compiled against API version 0x10 but
this version of numpy is 0xe` (the C API is newer than the installed NumPy's: NumPy refuses it),
NumPy 2's `module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but the running NumPy
has C-API version 0x10`, and `module compiled against ABI version 0x1000009 but this version of
numpy is 0x2000000` (a NumPy 1 build under NumPy 2). The first NumPy release of each version is
data (matrices/packages/numpy_c_api.toml, from NumPy's cversions.txt and numpyconfig.h), so the
fix names the NumPy release the module needs, never a constant.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.import_releases import last_clause
from envcheck.rules.node.imports import frame_distribution

_CHECK = lazy(
    r"module (?:was )?compiled against (?:NumPy C-)?(?P<kind>API|ABI) version "
    r"(?:0x)?(?P<built>[0-9a-fA-F]+)"
    r"(?: \(NumPy (?P<built_release>[0-9][0-9.]*[0-9])\))?"
    r".*?(?:this version of numpy is|running NumPy has C-API version) (?:0x)?(?P<have>[0-9a-fA-F]+)"
)
# the innermost site-packages frame of the traceback: the module whose import_array failed
_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+)")


@rule("PKG190", "numpy-c-api-version", Severity.ERROR)
def numpy_c_api_version(facts: Facts) -> Iterable[Hit]:
    """A compiled module was built against another NumPy C API or ABI than the NumPy installed

    ## What it checks
    NumPy's own import check in a compiled module (`module compiled against API version 0x10
    but this version of numpy is 0xe`; `... ABI version 0x1000009 but this version of numpy is
    0x2000000`): the module's build-time C-API (or C-ABI) version and the running NumPy's, and
    the first NumPy release of each from NumPy's own version table. Only a log states it.

    ## Why it matters
    An extension built against NumPy 1.23's headers needs NumPy >= 1.23 at run time; one built
    against NumPy 1.x's ABI does not load in NumPy 2. The import fails (`numpy.core.multiarray
    failed to import`) whatever else is right.

    ## Example
    `module compiled against API version 0x10 but this version of numpy is 0xe`: the module
    was built with NumPy 1.23's C API (0x10), NumPy 1.20 or 1.21 (0xe) runs it.

    ## Fix
    NumPy 1's ABI under NumPy 2: `pip install "numpy<2"` (the last 1.x release where the matrix
    knows it), or upgrade the module to a release built for NumPy 2. A newer C API: install
    the NumPy release that has it, as NumPy's version table names it (0x10: NumPy 1.23, so
    `numpy>=1.23,<2`; below 2 when the module was built for NumPy 1), or reinstall the module
    built for the installed NumPy.

    ## References
    - numpy/_core/include/numpy/__multiarray_api.h (_import_array: the ABI and C-API checks)
    - numpy/_core/code_generators/cversions.txt (C-API version per NumPy release)
    - matrices/packages/numpy_c_api.toml
    """
    raise Skip("only a log line states NumPy's import check", "log.imports")


def _hex(text: str) -> str:
    return f"0x{int(text, 16):x}"


def _release(facts: Facts, kind: str, version: str) -> Version | None:
    return facts.matrix.first_release("numpy", kind, _hex(version))


def _module(facts: Facts, line: LogLine) -> str | None:
    """The distribution whose module failed NumPy's check: the traceback's innermost
    site-packages frame (numpy's own frames left out)."""
    path = line.stated.get("importer_file")
    found = _SITE_TOP.search(path) if path else None
    if found is None or found.group("top").startswith("_"):
        return None
    dist = frame_distribution(facts, found.group("top"))
    return None if dist == "numpy" else dist


@from_log("PKG190")
def numpy_c_api_version_in_log(facts: Facts, line: LogLine) -> Hit | None:
    found = _CHECK.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} is cut before NumPy's versions", "packages.numpy")
    kind, built, have = found.group("kind"), found.group("built"), found.group("have")
    if int(built, 16) <= int(have, 16) and kind == "API":
        return None  # NumPy refuses only a newer C API: not this cause
    installed = facts.known_version("numpy")
    running = f"numpy {installed}" if installed is not None else "the installed numpy"
    module = _module(facts, line)
    named = module or "the module the traceback names"
    reinstall = manual(
        f"pip install --force-reinstall --no-cache-dir {module}  (its build for the installed "
        "NumPy)"
        if module
        else "pip install --force-reinstall --no-cache-dir <the module the traceback names>  "
        "(its build for the installed NumPy)"
    )
    evidence: dict[str, object] = {
        "line": line.line,
        "kind": kind,
        "built": _hex(built),
        "running": _hex(have),
        "numpy": str(installed) if installed is not None else None,
        "module": module,
    }
    if kind == "ABI":
        return _abi(facts, line, built, have, running, named, reinstall, evidence)
    first = _release(facts, "c_api", built)
    stated = found.group("built_release")
    if first is None and stated is not None:
        first = Version(stated)  # NumPy 2's headers print the release themselves
    if first is None:
        raise Skip(f"the matrix does not know NumPy's C-API version {_hex(built)}", "packages")
    # a module built with NumPy 1.x headers has NumPy 1's ABI: NumPy 2 refuses it in turn
    below = ",<2" if first.major < 2 else ""
    pin = f"numpy>={first.major}.{first.minor}{below}"
    evidence["needs"] = pin
    actions: list[Action] = [pip_install(pin, flags=("--upgrade",)), reinstall]
    return Hit(
        f"{named} was built against NumPy's C-API version {_hex(built)} (NumPy {first.major}."
        f"{first.minor} and newer), {running} has {_hex(have)} (line {line.line}): it needs a "
        "newer NumPy",
        evidence=evidence,
        fix=fix(
            f'Install NumPy {first.major}.{first.minor} or newer: pip install --upgrade "{pin}" '
            f"(the first release with C-API {_hex(built)}"
            + (f"; below 2, as {named} was built for NumPy 1" if below else "")
            + f"), or reinstall {named} built for the installed NumPy",
            "manual",
            *actions,
        ),
    )


def _abi(
    facts: Facts,
    line: LogLine,
    built: str,
    have: str,
    running: str,
    named: str,
    reinstall: Action,
    evidence: dict[str, object],
) -> Hit | None:
    """NumPy's ABI check: the module's ABI is older than the running NumPy's (NumPy 1's
    0x1000009 under NumPy 2's 0x2000000): NumPy below the release that began the running ABI,
    or the module's build for it."""
    if int(built, 16) >= int(have, 16):
        return None
    began = _release(facts, "c_abi", have)
    if began is None:
        raise Skip(f"the matrix does not know NumPy's ABI version {_hex(have)}", "packages")
    major = began.major
    pin = f"numpy<{major}"
    evidence["needs"] = pin
    last, pinned = last_clause(facts, "numpy", "numpy", began, "")
    return Hit(
        f"{named} was built against NumPy {major - 1}.x's ABI ({_hex(built)}), {running} is "
        f"NumPy {major}'s ABI ({_hex(have)}) (line {line.line}): the module does not load",
        evidence=evidence,
        fix=fix(
            f'Install NumPy {major - 1}.x: pip install "{pin}"{last} and pin it for later '
            f"installs, or upgrade {named} to a release built for NumPy {major}",
            "manual",
            pip_install(pin),
            *pinned,
            reinstall,
        ),
    )
