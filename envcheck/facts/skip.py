"""The one way a fact is unknown: rules, conditions and triage raise :class:`Skip` with the reason."""

from __future__ import annotations


class Skip(Exception):
    """Raised while checking when a fact the rule needs is unknown; the reason is reported."""

    def __init__(self, reason: str, fact: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fact = fact  # the unknown fact, as a dotted path ("packages", "gpu.driver_version")
