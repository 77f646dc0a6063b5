"""A probe's outcome: facts, or the reason there are none."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class Status(str, enum.Enum):
    """``ok``: facts were read. ``unavailable``: the thing is absent (no GPU, not installed,
    not declared). ``error``: it should have been readable but reading failed."""

    OK = "ok"
    UNAVAILABLE = "unavailable"
    ERROR = "error"


STATED_ABSENT = "the input states it is absent"
# the input tried to read the fact and could not (collect_env's 'GPU models and configuration:
# Could not collect'): unknown, like a probe that failed, not silent about it
QUERY_FAILED = "the input's own query for it failed"


@dataclass(frozen=True)
class Section(Generic[T]):
    """One part of a NodeReport. ``data`` is set exactly when ``status`` is ok."""

    status: Status
    data: T | None = None
    reason: str | None = None
    source: str | None = None
    duration_ms: float | None = None
    notes: tuple[str, ...] = ()

    @classmethod
    def ok(cls, data: T, *, source: str | None = None, notes: tuple[str, ...] = ()) -> Section[T]:
        return cls(Status.OK, data=data, source=source, notes=notes)

    @classmethod
    def unavailable(cls, reason: str, *, source: str | None = None) -> Section[T]:
        return cls(Status.UNAVAILABLE, reason=reason, source=source)

    @classmethod
    def error(cls, reason: str, *, source: str | None = None) -> Section[T]:
        return cls(Status.ERROR, reason=reason, source=source)

    @property
    def stated_absent(self) -> bool:
        """The input states the thing is absent (collect_env's 'No CUDA'), as a probe would
        find it; not merely unknown (a spec that does not declare it)."""
        return self.status is Status.UNAVAILABLE and STATED_ABSENT in self.notes

    @property
    def query_failed(self) -> bool:
        """The input tried to read it and could not: unknown, and the input says so."""
        return self.status is not Status.OK and QUERY_FAILED in self.notes

    @property
    def is_ok(self) -> bool:
        return self.status is Status.OK and self.data is not None

    def describe(self) -> str:
        """``ok``, or ``unavailable (reason)`` / ``error (reason)``."""
        if self.is_ok:
            return "ok"
        return f"{self.status.value} ({self.reason})" if self.reason else self.status.value
