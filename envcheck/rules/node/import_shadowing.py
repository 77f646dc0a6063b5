"""CPython's own words for a module that is not the one the code meant: a local file that
shadows a library or the standard library, or a module read while it is still initialising.

Python 3.13 names the file it found instead (Objects/moduleobject.c,
``_Py_module_getattro_impl``, and Python/ceval.c, ``_PyEval_ImportFrom``):

- ``module 'random' has no attribute 'randint' (consider renaming '/home/me/random.py' since it
  has the same name as the standard library module named 'random' and prevents importing that
  standard library module)``
- ``module 'numpy' has no attribute 'array' (consider renaming '/home/me/numpy.py' if it has
  the same name as a library you intended to import)``, and the same tail after
  ``cannot import name 'X' from 'Y'``
- ``partially initialized module 'torch' from '/home/me/torch.py' has no attribute 'Tensor'
  (most likely due to a circular import)``
- ``cannot access submodule 'utils' of module 'pkg' (most likely due to a circular import)``

The line itself states the cause (and, from 3.13, the file): PY150 is confirmed from it, and
the fix renames that file (what the interpreter's message and the 3.13 whatsnew, gh-95754,
advise), never a release of the package it shadows. Pythons before 3.13 say only
``partially initialized module 'X'`` (read in imports.py, with the same fix without a path).
"""

from __future__ import annotations

import re

from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual

SHADOWED = lazy(
    r"(?:module '(?P<module>[A-Za-z0-9_.]+)' has no attribute '(?P<name>[A-Za-z0-9_]+)'|"
    r"cannot import name '(?P<imported>[A-Za-z0-9_]+)' from '(?P<from_module>[A-Za-z0-9_.]+)')"
    r" \(consider renaming '(?P<path>[^']+)' (?:since it has the same name as the standard "
    r"library module named '(?P<stdlib>[A-Za-z0-9_.]+)'|if it has the same name as a library)"
)
PARTIAL_FROM = lazy(
    r"partially initialized module '(?P<module>[A-Za-z0-9_.]+)' from '(?P<path>[^']+)' has no "
    r"attribute '(?P<name>[A-Za-z0-9_]+)'"
)
SUBMODULE = lazy(
    r"cannot access submodule '(?P<name>[A-Za-z0-9_]+)' of module '(?P<module>[A-Za-z0-9_.]+)'"
    r" \(most likely due to a circular import\)"
)


def _site_packages(path: str) -> bool:
    return "site-packages" in path or "dist-packages" in path


def shadowed(line: LogLine) -> Hit | None:
    """The finding for any of CPython's lines above; None for a line that is none of them."""
    found = SHADOWED.search(line.text) or PARTIAL_FROM.search(line.text)
    if found is not None:
        return _named_file(line, found)
    sub = SUBMODULE.search(line.text)
    if sub is None:
        return None
    module, name = sub.group("module"), sub.group("name")
    return Hit(
        f"{module}.{name} is read while {module} is still initialising (line {line.line}): a "
        "circular import between its modules",
        evidence={"line": line.line, "name": name, "module": module},
        fix=fix(
            f"Break the circular import: import {module}.{name} inside the function that uses "
            "it, or move what both modules need into a third",
            "manual",
            manual(f"python -c 'import {module}; print({module}.__file__)'"),
        ),
    )


def _named_file(line: LogLine, found: re.Match[str]) -> Hit:
    groups = found.groupdict()
    module = groups.get("module") or groups.get("from_module") or ""
    name = groups.get("name") or groups.get("imported") or ""
    path = found.group("path")
    top = module.split(".", maxsplit=1)[0]
    stdlib = groups.get("stdlib")
    what = f"the standard library's {stdlib}" if stdlib else f"the installed {top}"
    partial = "partially initialized" in line.text
    if _site_packages(path):
        # the file is an installed package's own: an import cycle (or a broken install), not
        # a local file in the way
        summary = f"{module} ({path}) is read while still initialising: break the circular import"
        message = f"'{name}' is read from {module} while it is still initialising"
    else:
        summary = f"Rename {path}: it has the name {top} and is imported instead of {what}" + (
            " (a circular import when the file is the package itself)" if partial else ""
        )
        message = f"{path} is imported as {module} instead of {what}"
    return Hit(
        f"{message} (line {line.line}): '{name}' is not in it",
        evidence={"line": line.line, "name": name, "module": module, "path": path},
        fix=fix(
            summary,
            "manual",
            manual(f"python -c 'import {top}; print({top}.__file__)'  (must not be {path})"),
        ),
    )
