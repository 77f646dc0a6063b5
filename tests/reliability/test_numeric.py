"""envcheck.numeric: finite numbers inside their ranges, for files and command-line options."""

from __future__ import annotations

import argparse
import math

import pytest

from envcheck.numeric import NumberError, Range, check, count_arg, parse, seconds_arg


@pytest.mark.parametrize(
    ("value", "bounds", "message"),
    [
        (math.nan, Range(), "finite"),
        (math.inf, Range(), "finite"),
        (-math.inf, Range(), "finite"),
        (float("1e400"), Range(), "finite"),  # overflows to inf when read
        (1e300, Range(minimum=0, maximum=2**30), "must be >= 0 and <= 1073741824"),
        (-4, Range(minimum=1, integer=True), "must be >= 1"),
        (1.5, Range(integer=True), "expected an integer"),
        (True, Range(), "expected a number"),
        ("5", Range(), "expected a number"),
        (0, Range(positive=True), "must be > 0"),
    ],
)
def test_refused(value: object, bounds: Range, message: str) -> None:
    with pytest.raises(NumberError, match=message):
        check(value, bounds)


@pytest.mark.parametrize(
    ("value", "bounds"),
    [(0, Range(minimum=0)), (1e6, Range(maximum=1e6)), (9000, Range(integer=True))],
)
def test_accepted(value: float, bounds: Range) -> None:
    assert check(value, bounds) == value


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "0", "1e400", "86401", "x", ""])
def test_seconds_option_refuses(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        seconds_arg(text)


def test_seconds_and_counts_accept_ordinary_values() -> None:
    assert seconds_arg("0.5") == 0.5
    assert count_arg("8") == 8
    assert parse(" 3 ", Range(integer=True)) == 3


@pytest.mark.parametrize("text", ["0", "-1", "99999999999", "1.5", "9" * 5000])
def test_counts_are_bounded(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        count_arg(text)
