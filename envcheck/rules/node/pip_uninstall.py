"""PY180: pip cannot replace an installed package it did not install itself.

To upgrade or downgrade a distribution pip first uninstalls the installed one, from the file
list its own installs leave (the ``RECORD`` file of the ``.dist-info``). A distribution another
installer put there has none: the OS package manager's (Debian's python3-yaml, blinker 1.4 on
Ubuntu), distutils' ``setup.py install`` (an ``.egg-info`` file) or conda's. pip then stops the
whole install, in its words (pypa/pip src/pip/_internal/exceptions.py and, before pip 23.1,
req/req_uninstall.py):

- ``ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed project and thus we cannot
  accurately determine which files belong to it which would lead to only a partial uninstall.``
- ``error: uninstall-distutils-installed-package`` / ``× Cannot uninstall blinker 1.4`` /
  ``╰─> It is a distutils installed project ...`` (LegacyDistutilsInstall)
- ``error: uninstall-no-record-file`` / ``× Cannot uninstall requests 2.32.3`` / ``╰─> The
  package's contents are unknown: no RECORD file was found for requests.`` with the hint
  ``The package was installed by debian.`` (UninstallMissingRecord)

The line names the package (and, in the last form, the installer), so the cause is confirmed
from the log; the fix is by that installer.
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])"
_PACKAGE = lazy(rf"Cannot uninstall '?{_NAME}|no RECORD file was found for {_NAME}")
_INSTALLER = lazy(r"The package was installed by (?P<installer>[A-Za-z0-9_.-]+)\.")


@rule("PY180", "pip-cannot-uninstall-foreign", Severity.ERROR)
def pip_cannot_uninstall(facts: Facts) -> Iterable[Hit]:
    """pip cannot replace a package that another installer (the OS, distutils, conda) installed

    ## What it checks
    pip's refusal to uninstall a distribution it has no file list for, before installing
    another release of it: `Cannot uninstall 'PyYAML'. It is a distutils installed project`
    (pip 10 to 23.0), `error: uninstall-distutils-installed-package` and `error:
    uninstall-no-record-file` (`no RECORD file was found for requests`, with the installer
    pip read, `The package was installed by debian.`). Only a log states it.

    ## Why it matters
    pip stops the whole install at that package: nothing the command asked for is installed,
    and the job then fails on a missing module or an old release, though the requirements
    are right.

    ## Example
    `ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed project and thus we cannot
    accurately determine which files belong to it which would lead to only a partial
    uninstall.` from `pip install -r requirements.txt` on a system Python with python3-yaml.

    ## Fix
    Install over it without uninstalling: `pip install --ignore-installed <package>` (then the
    rest of the requirements), what the threads ran; or install into a virtual environment
    (`python3 -m venv .venv`, `--system-site-packages` to keep the OS's packages visible) so
    the OS's copy is left alone; where conda installed it, `conda remove <package>` before
    pip; where pip's own hint names a release (`pip install --force-reinstall --no-deps
    X==V`), that.

    ## References
    - pypa/pip src/pip/_internal/exceptions.py (LegacyDistutilsInstall, UninstallMissingRecord)
    - https://github.com/pypa/pip/issues/5247
    - https://github.com/neka-nat/kinpy/issues/8 (pip install kinpy --ignore-installed PyYAML)
    - https://github.com/VlachosGroup/pMuTT/issues/132 (--ignore-installed PyYAML)
    - https://github.com/microsoft/qlib/issues/377 (--ignore-installed ruamel.yaml)
    - https://github.com/yaml/pyyaml/issues/498 (an OS-packaged PyYAML: a --user install or a
      virtualenv)
    """
    raise Skip("only a log line states pip's refusal to uninstall", "log.resolver")


@from_log("PY180")
def pip_cannot_uninstall_in_log(facts: Facts, line: LogLine) -> Hit:
    found = _PACKAGE.search(line.text)
    name = next((g for g in (found.groups() if found else ()) if g), None)
    package = line.stated.get("pip_uninstall_refused") or name or "<package>"
    by = _INSTALLER.search(line.text)
    installer = by.group("installer").lower() if by else None
    who = {
        "debian": "the OS package manager (apt)",
        "conda": "conda",
    }.get(installer or "", f"{installer}" if installer else "distutils or the OS")
    first = [
        manual(f"pip install --ignore-installed {package}  (then the rest: pip install -r ...)"),
        manual("python3 -m venv --system-site-packages .venv && .venv/bin/pip install ..."),
    ]
    if installer == "conda":
        first.insert(0, manual(f"conda remove {package}  (then pip install ...)"))
    return Hit(
        f"pip cannot uninstall {package} (line {line.line}): {who} installed it without the "
        "file list pip needs, and pip stopped the install there",
        evidence={"line": line.line, "package": package, "installer": installer},
        fix=fix(
            f"Install over it without uninstalling: pip install --ignore-installed {package} "
            "(then the rest of the requirements); or a virtual environment (python3 -m venv "
            "--system-site-packages .venv) so the OS's copy stays untouched"
            + (
                f"; or conda remove {package} first, since conda installed it"
                if installer == "conda"
                else ""
            ),
            "manual",
            *first,
        ),
    )
