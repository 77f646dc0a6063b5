"""Helpers shared by the triage tests of lines that confirm a cause (``@from_log``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult


def causes(cli: Callable[..., CliResult], log: Path, *args: str) -> dict[str, dict[str, Any]]:
    """Triage ``log`` (``--no-probe`` unless other arguments are given): every cause by code."""
    result = cli("triage", str(log), "--json", *(args or ("--no-probe",)))
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    return {c["code"]: c for m in data["matches"] for c in m["causes"]}


def fix_text(cause: dict[str, Any]) -> str:
    """The summary and commands of the one finding a confirmed cause carries."""
    (finding,) = cause["findings"]
    fix = finding["fix"]
    return fix["summary"] + "\n" + "\n".join(fix["commands"])
