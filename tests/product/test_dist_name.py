"""The distribution on the package index is ``envcheck-gpu`` (``envcheck`` there is an unrelated
project): every install command in the docs and in the tool's own hints names it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
DIST = "envcheck-gpu"
# `pip install [options] NAME...`: the package arguments of one install command
_INSTALL = re.compile(r"pip3?\s+install\b([^`\n\"]*)")
_ENVCHECK_ARG = re.compile(r"(?:^|\s)['\"]?(envcheck[\w.-]*)(\[[^\]]*\])?")


def _texts() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    files += sorted((REPO / "envcheck").rglob("*.py"))
    return files


def wrong_names(text: str) -> list[str]:
    """The envcheck-like package names install commands in ``text`` use other than DIST."""
    bad = []
    for match in _INSTALL.finditer(text):
        for arg in _ENVCHECK_ARG.finditer(match.group(1)):
            if arg.group(1) != DIST:
                bad.append(arg.group(1) + (arg.group(2) or ""))
    bad += [m.group(0) for m in re.finditer(r"(?<![\w-])envcheck\[\w+\]", text)]
    return bad


def test_the_checker_catches_the_wrong_name() -> None:
    assert wrong_names("RUN pip install envcheck") == ["envcheck"]
    assert wrong_names("`pip install 'envcheck[lock]'`") == ["envcheck[lock]", "envcheck[lock]"]
    assert wrong_names("python -m pip install --no-cache-dir envcheck==0.1") == ["envcheck"]
    assert wrong_names("pip install 'envcheck-gpu[cluster]' and envcheck-gpu") == []
    assert wrong_names("pip install nvidia-nccl-cu12==2.21.5") == []


def test_docs_and_hints_name_only_the_chosen_distribution() -> None:
    found = {str(p.relative_to(REPO)): bad for p in _texts() if (bad := wrong_names(p.read_text()))}
    assert found == {}, "install commands naming another distribution than envcheck-gpu"


def test_pyproject_names_the_distribution_and_keeps_the_command() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"envcheck": "envcheck.cli:entry"}
    readme = (REPO / "README.md").read_text()
    assert f"pip install {DIST}" in readme and f"'{DIST}[cluster]'" in readme
