"""Pasted text with long lines is parsed in linear time (`check --from` of one 200 kB line of
`x` ran for minutes: a pattern searched from every character of the line), and the linear
rewrites find what the old patterns found."""

from __future__ import annotations

import contextlib
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck.ingest import loose, nvidia_smi
from envcheck.ingest.common import FormatError, Source
from envcheck.ingest.detect import parse

N = 200_000
HOSTILE = {
    "name": "x" * N,
    "dashes": "-a" * (N // 2),
    "heading": "#" + "x" * N,
    "mixed": "ab1.-_" * (N // 6),
    "sm": "sm_" * (N // 3),
    "cu": "cu12" * (N // 4),
    "digits": "torch version: " + "1" * N,
    "packages": "packages: " + "x" * N,
    "spaces": " " * N + "x",
    "x-spaces": "x" + " " * N,
    "brackets": "[" * N,
    "mib": "1" * N + " MiB",
}
FORMATS = [None, "env-text", "nvidia-smi-q", "nvidia-smi-csv", "collect-env", "pip-list"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_long_line_is_parsed_in_linear_time(name: str, fmt: str | None) -> None:
    # a bound against hangs, not a benchmark: these took from 20 s to hours before
    text = "PyTorch version: 2.4.0\n" + HOSTILE[name] + "\nPython version: 3.10.12\n"
    started = time.monotonic()
    with contextlib.suppress(FormatError):  # refused with a message is fine; hanging is not
        parse(Source("pasted.txt", text), fmt)
    assert time.monotonic() - started < 5.0


_OLD_Q = re.compile(r"^(\s*)([^:]+?)\s*:\s*(.*?)\s*$")
_OLD_VER = re.compile(loose._VERSION)
_OLD_EXPR = re.compile(rf"({loose._NAME})\.__version__\)?$")
_OLD_PAIR = re.compile(rf"({loose._NAME})\s+({loose._VERSION})")
_TEXT = st.text(alphabet=" \t:[]().-_#1290axTtorch", max_size=40)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_the_query_split_is_the_old_pattern(raw: str) -> None:
    old = _OLD_Q.match(raw)
    assert nvidia_smi._q_value(raw) == (old.group(2, 3) if old else None)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_the_unit_cut_is_the_old_substitution(cell: str) -> None:
    assert nvidia_smi._unit_cut(cell) == re.sub(r"\s*\[.*\]$", "", cell)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" 1.2ab-_x(),=", max_size=40))
def test_versions_and_names_are_found_where_the_old_patterns_found_them(text: str) -> None:
    old = _OLD_VER.search(text)
    new = loose._VER.search(text)
    assert (new.group(0) if new else None) == (old.group(0) if old else None)
    assert loose._VER.fullmatch(text) is not None or _OLD_VER.fullmatch(text) is None
    old_expr = _OLD_EXPR.search(text + ".__version__")
    new_expr = loose._EXPR.search(text + ".__version__")
    assert (new_expr.group(1) if new_expr else None) == (old_expr.group(1) if old_expr else None)


def test_pairs_are_read_as_before() -> None:
    value = "numpy 1.26.4, torch 2.4.0+cu121, 1abc 2.0, flash-attn 2.6.3"
    assert [m.groups() for m in loose._PAIR.finditer(value)] == [
        m.groups() for m in _OLD_PAIR.finditer(value)
    ]
