"""An unreadable site-packages (a directory on the inspected path that cannot be listed) is an
error section, "site-packages unreadable: ...", so rules that need packages skip; it is never
"torch is not installed". Tests run as root, who can list any directory, so the
PermissionError is made at the edge: os.listdir fails for that one path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envcheck.model.section import Status
from envcheck.probes.python_env import probe_packages
from tests.distfactory import make_dist


@pytest.fixture
def unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site-packages"
    make_dist(site, "torch", "2.5.1")
    real = os.listdir

    def listdir(path: str | os.PathLike[str] = ".") -> list[str]:
        if os.fspath(path) == str(site):
            raise PermissionError(13, "Permission denied", str(site))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    return site


def test_unreadable_site_packages_is_an_error_section(unreadable: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    make_dist(other, "numpy", "2.1.3")
    section = probe_packages({"sys_path": [str(other), str(unreadable)]})
    assert section.status is Status.ERROR
    assert section.reason == f"site-packages unreadable: {unreadable}: Permission denied"


def test_rules_skip_instead_of_passing(unreadable: Path) -> None:
    from envcheck.engine import evaluate
    from envcheck.matrix_validate import load
    from envcheck.model.report import NodeReport
    from envcheck.rules import all_rules

    matrix = load([])
    section = probe_packages({"sys_path": [str(unreadable)]})
    report = NodeReport(
        node="n", envcheck_version="0", created_at="2026-01-01T00:00:00Z", packages=section
    )
    result = evaluate(report, matrix, all_rules(matrix))
    assert not any("not installed" in f.message for f in result.findings), result.findings
    reasons = " ".join(str(s) for s in result.skipped)
    assert "site-packages unreadable" in reasons


def test_a_missing_entry_still_holds_nothing(tmp_path: Path) -> None:
    """As importlib.metadata: an entry that does not exist is not an error."""
    site = tmp_path / "site"
    make_dist(site, "numpy", "2.1.3")
    section = probe_packages({"sys_path": [str(tmp_path / "missing"), str(site)]})
    assert section.status is Status.OK and section.data.get("numpy") is not None
