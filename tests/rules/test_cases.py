"""Every rule has fixture reports: bad ones it must flag (with the expected severity and message
fragments) and good ones it must evaluate (not skip) and pass. A rule whose cause only a log
line states (its node check always skips: the loader, ABI, import and build families) has log
fixtures instead (``bad*.log`` / ``good*.log``): triage must confirm it from the bad log's line,
with the expected severity and fragments, and must not confirm it from the good one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from envcheck.engine import evaluate
from envcheck.ingest.spec import load_spec
from envcheck.model.report import NodeReport
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES = Path(__file__).parent / "cases"
MATRIX = builtin_matrix()
# node rules; cluster rules (CLU) compare several reports and have their cases in tests/cluster
RULES = {r.code: r for r in all_rules(MATRIX) if r.scope == "node"}


def _fixtures() -> list[tuple[str, Path]]:
    out = []
    for folder in sorted(CASES.iterdir()):
        for path in sorted(folder.iterdir()):
            if path.suffix in (".toml", ".json") and path.name != "expect.toml":
                out.append((folder.name, path))
    return out


def _log_fixtures() -> list[tuple[str, Path]]:
    return [
        (folder.name, path)
        for folder in sorted(CASES.iterdir())
        for path in sorted(folder.iterdir())
        if path.suffix == ".log"
    ]


def _load(path: Path) -> NodeReport:
    if path.suffix == ".json":
        return NodeReport.from_dict(json.loads(path.read_text()), where=str(path))
    return load_spec(str(path))


def test_every_rule_has_a_bad_and_a_good_case():
    for code in RULES:
        folder = CASES / code
        assert folder.is_dir(), f"no fixture folder for {code}"
        names = {p.stem for p in folder.iterdir() if p.name != "expect.toml"}
        assert any(n.startswith("bad") for n in names), f"{code} has no bad case"
        assert any(n.startswith("good") for n in names), f"{code} has no good case"
    assert {p.name for p in CASES.iterdir()} <= set(RULES), "fixture folder for an unknown code"


@pytest.mark.parametrize(
    ("code", "path"), _fixtures(), ids=lambda v: v if isinstance(v, str) else v.stem
)
def test_rule_case(code, path):
    expect = tomllib.loads((path.parent / "expect.toml").read_text())[path.stem]
    result = evaluate(_load(path), MATRIX, [RULES[code]])
    assert not result.errors, result.errors
    assert not result.skipped, f"{code} skipped {path.name}: {result.skipped[0].reason}"
    findings = [f for f in result.findings if f.code == code]
    if path.stem.startswith("good"):
        assert findings == [], [f.message for f in findings]
        return
    assert findings, f"{code} did not flag {path.name}"
    assert {f.severity.value for f in findings} == {expect["severity"]}
    text = (
        " ".join(f.message for f in findings)
        + " "
        + " ".join(" ".join(f.fix.commands) + " " + f.fix.summary for f in findings if f.fix)
    )
    for fragment in expect["contains"]:
        assert fragment in text, f"{fragment!r} not in {text!r}"
    for finding in findings:
        assert finding.node and finding.title and finding.references


@pytest.mark.parametrize(
    ("code", "path"), _log_fixtures(), ids=lambda v: v if isinstance(v, str) else v.stem
)
def test_log_case(code, path, cli):
    expect = tomllib.loads((path.parent / "expect.toml").read_text())[path.stem]
    result = cli("triage", str(path), "--json", "--no-probe")
    assert result.returncode in (0, 1), result.stderr
    causes = [c for m in result.json()["data"]["matches"] for c in m["causes"]]
    confirmed = [c for c in causes if c["code"] == code and c["verdict"] == "confirmed"]
    if path.stem.startswith("good"):
        assert confirmed == [], [c["findings"] for c in confirmed]
        return
    assert confirmed, f"{code} not confirmed from {path.name}: {causes}"
    findings = [f for c in confirmed for f in c["findings"]]
    assert findings, f"{code} confirmed from {path.name} without a finding"
    assert {f["severity"] for f in findings} == {expect["severity"]}
    text = " ".join(
        f["message"] + " " + f["fix"]["summary"] + " " + " ".join(f["fix"]["commands"])
        for f in findings
    )
    for fragment in expect["contains"]:
        assert fragment in text, f"{fragment!r} not in {text!r}"


def test_cases_use_real_formats():
    """Spec fixtures are valid specs and JSON fixtures are valid reports (strict schema)."""
    for _, path in _fixtures():
        report = _load(path)
        assert report.schema == 1
