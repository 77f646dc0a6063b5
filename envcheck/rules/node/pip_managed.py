"""PY163: pip refused to install into a Python the OS distribution manages (PEP 668).

Debian 12, Ubuntu 23.04 and later, Fedora 38 and later (and images built on them) mark their
system Python with an ``EXTERNALLY-MANAGED`` file; pip then refuses every install into it with
``error: externally-managed-environment`` (pip's ExternallyManagedEnvironment). The job's
packages are not installed, so what runs next fails on a missing module.
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# pip's default context line: 'The Python environment under /usr is managed externally'
_PREFIX = lazy(r"environment under (?P<prefix>/\S+) is managed externally")


@rule("PY163", "pip-externally-managed", Severity.ERROR)
def pip_externally_managed(facts: Facts) -> Iterable[Hit]:
    """pip refused to install into a Python the OS manages (externally-managed-environment)

    ## What it checks
    pip's refusal `error: externally-managed-environment` (`This environment is externally
    managed`): the interpreter pip runs for is a system Python its distribution marks with an
    EXTERNALLY-MANAGED file (PEP 668). Only a log states it.

    ## Why it matters
    Nothing is installed; the job then fails on the first module it imports, however the
    requirements are set.

    ## Example
    `error: externally-managed-environment` from `pip install -r requirements.txt` on Ubuntu
    24.04's /usr/bin/python3.

    ## Fix
    Install into a virtual environment (python3 -m venv, then that environment's pip), or,
    in a container image that owns its system Python, pass pip's --break-system-packages
    (PIP_BREAK_SYSTEM_PACKAGES=1); pipx for command-line applications.

    ## References
    - https://peps.python.org/pep-0668/
    - pypa/pip src/pip/_internal/exceptions.py (ExternallyManagedEnvironment)
    """
    raise Skip("only a log line states pip's refusal", "log.resolver")


@from_log("PY163")
def pip_externally_managed_in_log(facts: Facts, line: LogLine) -> Hit:
    found = _PREFIX.search(line.text)
    prefix = found.group("prefix") if found else None
    where = f"the Python under {prefix}" if prefix else "the system Python"
    return Hit(
        f"pip refused to install into {where} (line {line.line}): the OS distribution manages "
        "it (PEP 668's EXTERNALLY-MANAGED)",
        evidence={"line": line.line, "prefix": prefix},
        fix=fix(
            "Install into a virtual environment (python3 -m venv .venv, then .venv/bin/pip "
            "install ...); in a container image that owns its Python, pip install "
            "--break-system-packages ... (or PIP_BREAK_SYSTEM_PACKAGES=1)",
            "manual",
            manual("python3 -m venv .venv && .venv/bin/pip install -r requirements.txt"),
            manual("pip install --break-system-packages -r requirements.txt  (a container image)"),
        ),
    )
