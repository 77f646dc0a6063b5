"""Code written for pydantic 1 that pydantic 2 refuses, in pydantic 2's own words (PY150).

Pydantic 2 keeps pydantic 1's names importable only to say where they went
(pydantic/_migration.py: `pydantic:parse_raw_as` "has been removed in V2", BaseSettings "has
been moved to the `pydantic-settings` package") and refuses pydantic 1's validator and field
forms with a PydanticUserError ("The `field` and `config` parameters are not available in
Pydantic V2", "`const` is removed"). Each line states the release that removed the form (2.0),
whatever the name: the package that uses it was written for pydantic 1. Threads pin pydantic 1
(`pip install "pydantic<2"`, `"pydantic==1.*"`) until that package has a release for pydantic 2.
"""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install

# pydantic/_migration.py (getattr_migration) and pydantic/_internal/_decorators_v1.py,
# pydantic/deprecated/class_validators.py, pydantic/fields.py (PydanticUserError)
PYDANTIC_V1_FORM = lazy(
    r"`(?P<path>[A-Za-z0-9_.]+:[A-Za-z0-9_]+)` has been removed in V2"
    r"|The `field` and `config` parameters are not available in Pydantic V2"
    r"|If you use `@root_validator` with pre=False \(the default\) you MUST specify"
    r"|`(?:const|regex|unique_items)` is removed[,.] use"
)


def pydantic_v1_form(facts: Facts, line: LogLine) -> Hit | None:
    """The finding for a pydantic 1 name or form pydantic 2 refused, None when the line is not
    one of pydantic 2's refusals."""
    found = PYDANTIC_V1_FORM.search(line.text)
    if found is None:
        return None
    version = facts.known_version("pydantic")
    if version is not None and version.major < 2:
        return None  # pydantic 1 installed: not pydantic 2's refusal of pydantic 1 code
    have = f"pydantic {version}" if version is not None else "the installed pydantic 2"
    path = found.group("path")
    what = (
        f"pydantic 2.0 removed {path.replace(':', '.')}"
        if path
        else "pydantic 2.0 removed a pydantic 1 form the code uses"
    )
    return Hit(
        f"{what}; {have} refuses it (line {line.line}): the package that uses it was written "
        "for pydantic 1",
        evidence={"line": line.line, "module": "pydantic", "removed_in": "2.0", "name": path},
        fix=fix(
            'Install pydantic 1: pip install "pydantic<2" (and pin it for later installs), or '
            "upgrade the package in the traceback to a release made for pydantic 2 (code of "
            "your own can import pydantic 1's API from pydantic.v1, or migrate with "
            "bump-pydantic)",
            "manual",
            pip_install("pydantic<2"),
            manual(
                'pip install "pydantic==1.*"  (the same pin, as pydantic\'s migration guide '
                "writes it)"
            ),
        ),
    )
