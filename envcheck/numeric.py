"""The one check for numbers a user gives: finite, of the right kind, inside a range.

Used by the model codec (every float in a report, spec or overlay must be finite), by the spec
loader (sizes, counts, MTUs against their ranges) and by command-line options (``--timeout``,
GPU counts). ``nan``, ``inf``, ``1e400`` (which Python reads as inf) and ``1e300`` GiB (which
overflows when turned into bytes) are refused with the key that held them.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

MAX_SECONDS = 24 * 3600.0  # a bound on any wait envcheck is told to make
MAX_GPUS = 1024  # GPUs in one declared node or lock target


class NumberError(ValueError):
    """``message`` says what is wrong with the value (the caller adds file, line and key)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class Range:
    """Inclusive bounds; ``integer`` demands an int (``true`` is not one)."""

    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    positive: bool = False  # strictly above zero (for a minimum of 0 exclusive)

    def describe(self) -> str:
        low = (
            "> 0"
            if self.positive
            else f">= {_fmt(self.minimum)}"
            if self.minimum is not None
            else ""
        )
        high = f"<= {_fmt(self.maximum)}" if self.maximum is not None else ""
        return " and ".join(p for p in (low, high) if p)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def check(value: object, bounds: Range = Range()) -> float | int:
    """``value`` when it is a finite number inside ``bounds``; NumberError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "an integer" if bounds.integer else "a number"
        raise NumberError(f"expected {kind}, got {value!r}")
    if bounds.integer and not isinstance(value, int):
        raise NumberError(f"expected an integer, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise NumberError(f"must be a finite number, got {value!r}")
    too_low = (bounds.positive and value <= 0) or (
        bounds.minimum is not None and value < bounds.minimum
    )
    too_high = bounds.maximum is not None and value > bounds.maximum
    if too_low or too_high:
        raise NumberError(f"must be {bounds.describe()}, got {value!r}")
    return value


def parse(text: str, bounds: Range = Range()) -> float | int:
    """A number from command-line text (``"5"``, ``"0.5"``), checked like ``check``."""
    stripped = text.strip()
    try:
        value: float | int = int(stripped) if bounds.integer else float(stripped)
    except (ValueError, OverflowError):
        kind = "an integer" if bounds.integer else "a number"
        raise NumberError(f"expected {kind}, got {text!r}") from None
    return check(value, bounds)


def seconds_arg(text: str) -> float:
    """argparse ``type=`` for time limits: finite, above zero, at most a day."""
    try:
        return float(parse(text, Range(positive=True, maximum=MAX_SECONDS)))
    except NumberError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def count_arg(text: str, maximum: int = MAX_GPUS) -> int:
    """argparse ``type=`` for counts: an integer from 1 to ``maximum``."""
    try:
        return int(parse(text, Range(minimum=1, maximum=maximum, integer=True)))
    except NumberError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
