"""PKG170-PKG173, the lock gate's findings, are catalogue rules of scope "lock": `envcheck
explain` and docs/rules.md know them, `check` on a node never runs them, the findings the gate
emits carry the catalogue's title and severity, and --select / --ignore choose them."""

from __future__ import annotations

import json
from pathlib import Path

from envcheck.rules import all_rules, code_rules, node_rules
from envcheck.rules.lock import LOCK_CODES, lock_rules
from tests.builtin_matrix import builtin_matrix
from tests.conftest import REPO, run_cli


def test_the_lock_codes_are_in_the_catalogue_and_the_docs() -> None:
    rules = {r.code: r for r in all_rules(builtin_matrix())}
    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert [r.code for r in lock_rules()] == list(LOCK_CODES)
    for code in LOCK_CODES:
        assert rules[code].scope == "lock"
        assert f"### {code}: {rules[code].title}" in text
    assert rules["PKG171"].title == "The lock pins a yanked release"
    assert rules["PKG173"].severity.value == "warning"


def test_explain_prints_cause_and_fix() -> None:
    result = run_cli("explain", "PKG171", "--json")
    assert result.returncode == 0, result.stderr
    rule = json.loads(result.stdout)["data"]
    assert rule["scope"] == "lock" and rule["severity"] == "error"
    assert "allow-yanked" in rule["docs"]["fix"] and "PEP 592" in rule["docs"]["what"]
    text = run_cli("explain", "PKG170")
    assert text.returncode == 0 and "lock gate" in text.stdout
    listed = run_cli("rules", "--json")
    scopes = {r["code"]: r["scope"] for r in json.loads(listed.stdout)["data"]}
    assert {scopes[c] for c in LOCK_CODES} == {"lock"}


def test_check_on_a_node_never_runs_them() -> None:
    matrix = builtin_matrix()
    assert not {r.code for r in code_rules("node")} & set(LOCK_CODES)
    assert not {r.code for r in node_rules(matrix, ("PKG17",))} & set(LOCK_CODES)


def _spec(tmp_path: Path) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(
        '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA H100 80GB HBM3"]\n'
        '[python]\nversion = "3.11.9"\n[system]\narch = "x86_64"\nglibc = "2.35"\n',
        encoding="utf-8",
    )
    return path


def test_gate_findings_carry_the_catalogue_and_follow_ignore(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text("--index-url http://127.0.0.1:9/simple\nfilelock==3.16.1\n", encoding="utf-8")
    spec = _spec(tmp_path)
    result = run_cli("check", "--lock", str(lock), "--spec", str(spec), "--json")
    (found,) = [f for f in json.loads(result.stdout)["data"]["findings"] if f["code"] == "PKG173"]
    assert found["title"] == "The lock's packages could not be checked against the index"
    assert found["severity"] == "warning" and found["references"]
    ignored = run_cli(
        "check", "--lock", str(lock), "--spec", str(spec), "--json", "--ignore", "PKG173"
    )
    assert ignored.returncode == 0, ignored.stderr
    codes = [f["code"] for f in json.loads(ignored.stdout)["data"]["findings"]]
    assert "PKG173" not in codes
