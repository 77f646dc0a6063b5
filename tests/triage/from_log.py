"""Helpers shared by the triage tests of lines that confirm a cause (``@from_log``)."""

from __future__ import annotations

import json
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


def log_file(tmp_path: Path, *lines: str, name: str = "job.log") -> Path:
    """``lines`` written as a log file (UTF-8, one line each, a newline at the end)."""
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def saved_node(tmp_path: Path, **versions: str) -> Path:
    """A saved report (``--report``) whose package list holds ``versions``."""
    from envcheck.ingest.spec import load_spec
    from envcheck.model.report import Distribution, PackagesInfo
    from envcheck.model.section import Section

    spec = tmp_path / "spec.toml"
    spec.write_text("[packages]\n" + "".join(f'{k} = "{v}"\n' for k, v in versions.items()))
    report = load_spec(str(spec))
    packages = PackagesInfo(
        distributions=tuple(Distribution(name=k, version=v) for k, v in versions.items())
    )
    saved = tmp_path / "node.json"
    saved.write_text(
        json.dumps(report.with_sections(packages=Section.ok(packages, source="t")).to_dict())
    )
    return saved


def triage_data(cli: Callable[..., CliResult], log: Path) -> dict[str, Any]:
    """``triage --no-probe --json`` of a log that shows a failure: its ``data``."""
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 1, result.stderr
    data: dict[str, Any] = result.json()["data"]
    return data


def confirmed_fixes(data: dict[str, Any]) -> dict[str, str]:
    """Each confirmed cause's code -> its findings' fixes (as JSON: to compare two runs)."""
    return {
        cause["code"]: json.dumps([f.get("fix") for f in cause["findings"]])
        for match in data["matches"]
        for cause in match["causes"]
        if cause["verdict"] == "confirmed"
    }


def stated_facts(data: dict[str, Any]) -> set[tuple[str, str]]:
    """The (fact, value) pairs the log states."""
    return {(f["fact"], f["value"]) for f in data["facts"]}
