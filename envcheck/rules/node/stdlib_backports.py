"""PY171: a PyPI backport of a standard-library module shadows the interpreter's own.

Backports such as ``typing`` (for Python 2.7/3.4) and ``enum34`` (Python 3.4's enum for older
Pythons) install a top-level module of the standard library's name into site-packages. On a
Python whose standard library has the module, site-packages' copy is found first in some
set-ups (and always where the job's path puts it first): the backport, written for an older
interpreter, then fails on the newer one (typing.py reads ABCMeta's ``_abc_registry``, gone with
Python 3.7's C abc; enum34's enum lacks ``IntFlag``, which re.py subclasses from 3.6 on). The
backports and the Python that made them unnecessary come from ``[[import_name]]`` entries with
``stdlib_since`` (matrices/packages/import_names.toml).
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.python_syntax import running_python

# the typing backport's symptom names no module: the signature is the module's own
_BY_SIGNATURE = {"stdlib-backport-typing": "typing", "stdlib-backport-enum": "enum"}


@rule("PY171", "stdlib-backport-shadows", Severity.ERROR)
def stdlib_backport_shadows(facts: Facts) -> Iterable[Hit]:
    """A PyPI backport of a standard-library module shadows the interpreter's own module

    ## What it checks
    The failure a standard-library backport raises on a Python that already has the module:
    the typing backport's `type object 'Callable' has no attribute '_abc_registry'` (its
    typing.py under site-packages, Python 3.7 and later), enum34's `module 'enum' has no
    attribute 'IntFlag'` (re.py on Python 3.6 and later). The backport and the Python whose
    standard library has the module are the matrix's `[[import_name]]` entries with
    `stdlib_since`; a Python the log states as older than that rules it out. Only a log states
    it.

    ## Why it matters
    The backport's copy wins over the standard library's in site-packages, so the failure hits
    every import of the module (pip itself imports re, so even `pip install` fails), whatever
    the job's own code; a package that requires the backport unconditionally pulls it back in.

    ## Example
    `AttributeError: module 'enum' has no attribute 'IntFlag'` from
    `/usr/lib64/python3.6/re.py` (`class RegexFlag(enum.IntFlag)`) with enum34 installed.

    ## Fix
    Remove the backport from the environment: `pip uninstall -y enum34` (`pip uninstall -y
    typing`); where pip itself no longer starts, `python -m pip uninstall -y enum34` or delete
    its directory from site-packages. Where a package keeps requiring it, install that package
    with `--no-deps` or a release whose requirement is conditioned on the Python version.

    ## References
    - https://github.com/python/typing/issues/721 (pip uninstall typing)
    - https://github.com/cardiffnlp/tweetnlp/issues/4 (pip uninstall enum34)
    - matrices/packages/import_names.toml (stdlib_since)
    """
    raise Skip("only a log line states a backport's failure", "log.imports")


@from_log("PY171")
def stdlib_backport_shadows_in_log(facts: Facts, line: LogLine) -> Hit | None:
    module = line.stated.get("shadowed_module") or _BY_SIGNATURE.get(line.signature or "")
    entry = facts.matrix.import_name(module) if module else None
    if entry is None or entry.stdlib_since is None or entry.distribution is None:
        raise NotStated("the line names no backport the matrix knows", "packages")
    dist, since = entry.distribution, entry.stdlib_since
    py = running_python(facts, line)
    if py is not None and Version(f"{py.major}.{py.minor}") < since:
        return None  # the interpreter predates the module: the backport is the module here
    on = f"Python {py.major}.{py.minor}" if py is not None else f"this Python (>= {since})"
    note = f" {entry.note}" if entry.note else ""
    return Hit(
        f"the {dist} backport is installed on {on} (line {line.line}), whose standard library "
        f"has {module} since {since}: site-packages' copy shadows the interpreter's own.{note}",
        evidence={"line": line.line, "module": module, "distribution": dist},
        fix=fix(
            f"Remove the backport: pip uninstall -y {dist} (where pip itself fails, python -m "
            f"pip uninstall -y {dist}, or delete its files from site-packages); a package that "
            f"keeps requiring {dist} installs with --no-deps or in a release that requires it "
            f"only for Python < {since}",
            "manual",
            manual(f"pip uninstall -y {dist}"),
            manual("pip check"),
        ),
    )
