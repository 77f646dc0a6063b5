"""envelope.dumps writes exactly what ``json.dumps(data, indent=2, ensure_ascii=False)`` writes
(the JSON contract, docs/json.md), for every kind of value, the plain ones it writes itself and
the others it hands over."""

from __future__ import annotations

import enum
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck.model.envelope import dumps


def _reference(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


class Level(enum.IntEnum):
    LOW = 1


class Word(str, enum.Enum):
    A = "a\u00e9"


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.sampled_from(["", "\u001b[31m", '\x00\n\t"\\', "\u2028", "é", "日本", "\ud800"])
)
keys = st.text() | st.sampled_from(["", "a", "é", '"', "\n"])
plain = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=40,
)
odd_keys = st.dictionaries(
    st.integers() | st.floats() | st.booleans() | st.none() | st.text(), scalars, max_size=4
)
odd_values = st.sampled_from([Level.LOW, Word.A, {"k": Level.LOW}, [Word.A]])


@settings(max_examples=400, deadline=None)
@given(plain)
def test_plain_values_as_json_writes_them(data: Any) -> None:
    assert dumps(data) == _reference(data)


@settings(max_examples=100, deadline=None)
@given(st.one_of(odd_keys, odd_values, st.lists(odd_values, max_size=3)))
def test_other_keys_and_subclasses_as_json_writes_them(data: Any) -> None:
    assert dumps(data) == _reference(data)


def test_empty_and_nested_containers_and_a_real_envelope() -> None:
    data = {
        "schema": 1,
        "data": {"a": [], "b": {}, "c": [[], {}, [1, [2.5, None]]], "d": (1, "x")},
        "errors": [],
        "nan": float("nan"),
        "inf": [float("inf"), -float("inf")],
    }
    assert dumps(data) == _reference(data)
    assert dumps([]) == "[]\n"
    assert dumps("é") == '"é"\n'


def test_deep_nesting_is_handed_over() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    try:
        expected: str | type[BaseException] = _reference(deep)
    except RecursionError:
        expected = RecursionError
    try:
        got: str | type[BaseException] = dumps(deep)
    except RecursionError:
        got = RecursionError
    assert got == expected
