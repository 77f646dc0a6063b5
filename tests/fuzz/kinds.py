"""Every kind of generated case, by name: the building blocks' (tests/fuzz/cases.py) and the
families built on them (hostile.py, state.py, signals.py)."""

from __future__ import annotations

from typing import Any

from tests.fuzz.cases import BASE
from tests.fuzz.hostile import control_case, index_case
from tests.fuzz.signals import signal_case
from tests.fuzz.state import binaries_cache_case, cache_case, settings_case

ALL: dict[str, Any] = {
    **BASE,
    "controls": control_case,
    "index": index_case,
    "settings": settings_case,
    "caches": cache_case,
    "binaries-cache": binaries_cache_case,
    "signals": signal_case,
}

# a case of these kinds costs several of the others' (a real process and a signal; a probe of
# this node; a loopback index; a matrix overlay validated and loaded): they run this many times
# fewer examples in `make test` (scripts/fuzz.py runs thousands)
COST = {"signals": 8, "binaries-cache": 10, "caches": 3, "index": 2, "overlay": 2, "settings": 2}


def examples_for(kind: str, examples: int) -> int:
    return max(2, examples // COST.get(kind, 1))
