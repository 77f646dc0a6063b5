from __future__ import annotations

import subprocess
import sys

import pytest

from envcheck.rules import all_rules
from envcheck.rules.base import CODE_PATTERN, DOC_SECTIONS, FAMILIES
from tests.builtin_matrix import builtin_matrix
from tests.conftest import REPO

RULES = all_rules(builtin_matrix())


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_fully_documented(rule):
    assert CODE_PATTERN.match(rule.code) and rule.family in FAMILIES
    assert rule.title and not rule.title.endswith(".")
    for title, body in rule.doc.sections():
        assert body.strip(), f"{rule.code}: section {title!r} is empty"
    assert rule.doc.references, f"{rule.code} cites no source"


def test_codes_are_unique_and_sections_fixed():
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    assert DOC_SECTIONS == ("What it checks", "Why it matters", "Example", "Fix", "References")


def test_generated_rule_docs_are_current():
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    text = (REPO / "docs" / "rules.md").read_text()
    for rule in RULES:
        assert f"### {rule.code}: {rule.title}" in text
