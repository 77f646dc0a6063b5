"""The fuzz suite: generated hostile specs, reports, envelopes, dumps, logs, overlays and
options, each run through the real CLI entry point in-process, each checked against the
contract (see harness.py). ``ENVCHECK_FUZZ_EXAMPLES`` sets the examples per kind (default 40; costly kinds run fewer,
``cases.COST``);
``scripts/fuzz.py`` runs thousands with a seed and prints the figures."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz.cases import Case
from tests.fuzz.kinds import ALL, examples_for
from tests.fuzz.run import run_case

EXAMPLES = int(os.environ.get("ENVCHECK_FUZZ_EXAMPLES", "40"))


def check_case(case: Case) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="envcheck-fuzz-") as tmp:
        argv, outcome = run_case(case, Path(tmp))
    return [f"{p} [{' '.join(argv)}]" for p in outcome.problems()]


@pytest.mark.parametrize("kind", sorted(ALL))
def test_contract_holds_for_generated_input(kind: str) -> None:
    @settings(
        max_examples=examples_for(kind, EXAMPLES),
        deadline=None,
        database=None,
        derandomize=True,  # the same cases every run; scripts/fuzz.py --seed N explores
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(ALL[kind]())
    def property_(case: Case) -> None:
        assert check_case(case) == []

    property_()
