"""One generated case, run as its family needs: in-process through the harness, or (signals)
as a real process; the outcome carries the family's own problems (``Outcome.extra``)."""

from __future__ import annotations

from pathlib import Path

from tests.fuzz.cases import Case
from tests.fuzz.harness import Outcome


def run_case(case: Case, directory: Path) -> tuple[list[str], Outcome]:
    if case.signal is not None:
        from tests.fuzz import signals

        return signals.run_case(case, directory)
    from tests.fuzz import state

    return state.run_case(case, directory)
