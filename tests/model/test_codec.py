from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envcheck.errors import CodecError
from envcheck.model.codec import from_dict, to_dict


@dataclass(frozen=True)
class Inner:
    name: str
    size: int | None = None


@dataclass(frozen=True)
class Outer:
    kind: Literal["a", "b"]
    items: tuple[Inner, ...] = ()
    table: dict[str, float] = field(default_factory=dict)
    flag: bool = False


def test_round_trip():
    value = Outer("a", (Inner("x", 3), Inner("y")), {"k": 1.5}, True)
    assert from_dict(Outer, to_dict(value)) == value


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ({"kind": "c"}, "kind", "expected one of 'a', 'b'"),
        ({"kind": "a", "items": [{"name": 1}]}, "items[0].name", "expected a string"),
        ({"kind": "a", "items": [{}]}, "items[0].name", "missing required key"),
        ({"kind": "a", "flag": 1}, "flag", "expected a boolean"),
        (
            {"kind": "a", "items": [{"name": "x", "size": True}]},
            "items[0].size",
            "expected an integer",
        ),
        ({"kind": "a", "table": {"k": "1"}}, "table.k", "expected a number"),
        ({"kind": "a", "extra": 1}, "extra", "unknown key"),
        ({"kind": "a", "items": {"name": "x"}}, "items", "expected a list"),
    ],
)
def test_errors_name_the_path(data, path, message):
    with pytest.raises(CodecError) as err:
        from_dict(Outer, data)
    assert err.value.path == path
    assert message in err.value.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_hostile_input_only_raises_codec_errors(data):
    with contextlib.suppress(CodecError):
        from_dict(Outer, data)
