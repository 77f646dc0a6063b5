"""The `glibc` part of a known_bad condition: the system glibc against a range; unknown glibc
makes the condition unknown (the rule is skipped with the reason), never false."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from envcheck.facts.conditions import describe, evaluate
from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.ingest.spec import load_spec
from envcheck.matrix.schema import Condition
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()
COND = Condition(packages={"vllm": SpecifierSet(">=0.7.3")}, glibc=SpecifierSet("<2.25"))


def facts(tmp_path: Path, text: str) -> Facts:
    spec = tmp_path / "node.toml"
    spec.write_text(text)
    return Facts(load_spec(str(spec)), MATRIX)


@pytest.mark.parametrize(
    ("glibc", "vllm", "holds"),
    [("2.17", "0.8.2", True), ("2.35", "0.8.2", False), ("2.17", "0.7.2", False)],
)
def test_glibc_range(tmp_path: Path, glibc: str, vllm: str, holds: bool) -> None:
    node = facts(tmp_path, f'[system]\nglibc = "{glibc}"\n\n[packages]\nvllm = "{vllm}"\n')
    assert evaluate(COND, node) is holds


def test_unknown_glibc_is_unknown_not_false(tmp_path: Path) -> None:
    node = facts(tmp_path, '[packages]\nvllm = "0.8.2"\n')
    with pytest.raises(Skip, match=r"glibc is unknown|system facts unknown"):
        evaluate(COND, node)
    node = facts(tmp_path, '[system]\nos = "CentOS 7"\n\n[packages]\nvllm = "0.8.2"\n')
    with pytest.raises(Skip, match="glibc is unknown"):
        evaluate(COND, node)


def test_described_for_the_catalogue() -> None:
    assert "glibc <2.25" in describe(COND)
