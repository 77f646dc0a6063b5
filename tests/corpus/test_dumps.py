"""Every pasted dump in the corpus parses, and states the facts its case lists in
``[expect_facts]``, field by field (tests/corpus/facts.py says how each field is compared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.errors import EnvcheckError
from tests.corpus.facts import actual, cases_with_dumps, compare, expected_facts, parse_dump

DUMPS = cases_with_dumps()
FIELDS = [
    pytest.param(case, key, id=f"{case.name}:{key}")
    for case in DUMPS
    for key in expected_facts(case)
]
# Share of the corpus's dumps that must parse (issue 12: real pasted text, cut-off, retyped,
# mixed and template dumps included). Before the loose parser: 17 of 48.
PARSE_FLOOR = 0.95


def test_the_corpus_has_dumps_with_facts() -> None:
    assert len(DUMPS) >= 40
    assert len(FIELDS) >= 120


def test_dumps_parse() -> None:
    failed = []
    for case in DUMPS:
        try:
            parse_dump(case)
        except EnvcheckError as exc:
            failed.append(f"{case.name}: {exc}")
    parsed = len(DUMPS) - len(failed)
    assert parsed / len(DUMPS) >= PARSE_FLOOR, (
        f"{parsed} of {len(DUMPS)} dumps parse; failing:\n" + "\n".join(failed)
    )


@pytest.mark.parametrize(("case", "key"), FIELDS)
def test_dump_states_expected_fact(case: Path, key: str) -> None:
    report = parse_dump(case)
    expected = {key: expected_facts(case)[key]}
    assert compare(report, expected) == [], actual(report, key, expected[key])
