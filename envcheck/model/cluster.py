"""Records of a cluster check: nodes that did not answer, the drift table, the collective test.

Pure data. ``to_json`` writes plain JSON types for the ``cluster`` / ``diff`` envelopes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class NodeFailure:
    """A node whose report could not be had: no answer in time, its task died, bad report."""

    node: str
    reason: str
    node_id: str | None = None
    address: str | None = None
    kind: Literal["timeout", "died", "unschedulable", "error", "unreadable"] = "error"

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "reason": self.reason,
            "kind": self.kind,
            "node_id": self.node_id,
            "address": self.address,
        }


@dataclass(frozen=True)
class Member:
    """One node that answered: its label in the output and what Ray knows of it."""

    label: str
    node_id: str | None = None
    address: str | None = None  # the address Ray advertises for the node (None for saved reports)
    source: str | None = None  # the file a saved report came from
    duration_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.label,
            "node_id": self.node_id,
            "address": self.address,
            "source": self.source,
            "duration_ms": self.duration_ms,
        }


@dataclass(frozen=True)
class DriftValue:
    value: str
    nodes: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True)
class DriftRow:
    """One fact that differs across nodes: each value with the nodes holding it, majority first.

    ``unknown`` lists the nodes whose report does not say (they do not make a fact differ).
    """

    fact: str
    label: str
    values: tuple[DriftValue, ...]
    unknown: tuple[str, ...] = ()

    @property
    def majority(self) -> DriftValue:
        return self.values[0]

    def odd_nodes(self) -> tuple[str, ...]:
        return tuple(n for v in self.values[1:] for n in v.nodes)

    @property
    def has_majority(self) -> bool:
        """One value is held by more nodes than any other (a 1-1 split has none)."""
        return len(self.values) < 2 or self.values[0].count > self.values[1].count

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.fact,
            "label": self.label,
            "values": [
                {"value": v.value, "count": v.count, "nodes": list(v.nodes)} for v in self.values
            ],
            "unknown": list(self.unknown),
        }


@dataclass(frozen=True)
class RankOutcome:
    """What one rank (one node) of the collective test saw."""

    node: str
    rank: int
    ok: bool
    stage: str  # how far it got: start, import, init, allreduce, ring, done
    reason: str | None = None  # why it failed, classified (see cluster/collective.py)
    kind: str | None = None  # interface, loopback, unreachable, timeout, no-torch, no-gpu, error
    bound: tuple[str, ...] = ()  # addresses the rank's sockets bound (listening), host:port
    expected: str | None = None  # the address the interface choice should give
    ifname: str | None = None  # the *_SOCKET_IFNAME in effect for the rank
    error: str | None = None  # the raw error text, first lines
    seconds: float | None = None
    log: str | None = None  # NCCL_DEBUG=WARN output for triage

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "rank": self.rank,
            "ok": self.ok,
            "stage": self.stage,
            "reason": self.reason,
            "kind": self.kind,
            "bound": list(self.bound),
            "expected": self.expected,
            "ifname": self.ifname,
            "error": self.error,
            "seconds": self.seconds,
            "log": self.log,
        }


@dataclass(frozen=True)
class PairOutcome:
    """One send/recv of the ring: ``src`` sent a tensor to ``dst``."""

    src: str
    dst: str
    ok: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"src": self.src, "dst": self.dst, "ok": self.ok, "reason": self.reason}


@dataclass(frozen=True)
class CollectiveReport:
    backend: str  # gloo or nccl
    ok: bool
    summary: str
    store: str | None = None  # host:port of the TCPStore on the head node
    timeout_s: float | None = None
    ranks: tuple[RankOutcome, ...] = ()
    pairs: tuple[PairOutcome, ...] = ()
    not_run: str | None = None  # why the test could not run at all
    seconds: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def failed_ranks(self) -> tuple[RankOutcome, ...]:
        return tuple(r for r in self.ranks if not r.ok)

    def root_causes(self) -> tuple[tuple[RankOutcome, ...], tuple[RankOutcome, ...]]:
        """(ranks that failed on their own, ranks that timed out or waited for them)."""
        return root_causes(self.ranks)

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "ok": self.ok,
            "summary": self.summary,
            "store": self.store,
            "timeout_s": self.timeout_s,
            "not_run": self.not_run,
            "seconds": self.seconds,
            "ranks": [r.to_json() for r in self.ranks],
            "pairs": [p.to_json() for p in self.pairs],
            "notes": list(self.notes),
        }


def root_causes(
    ranks: Sequence[RankOutcome],
) -> tuple[tuple[RankOutcome, ...], tuple[RankOutcome, ...]]:
    """(ranks that failed on their own, ranks that timed out or waited for them)."""
    failed = [r for r in ranks if not r.ok]
    causes = tuple(r for r in failed if r.kind not in ("timeout", "waiting"))
    return causes, tuple(r for r in failed if r not in causes)
