"""The planner's resolver without uv: the simulator's estimate of the node after a plan.

``build_plan`` always resolves each round through a resolver: ``PlanResolver``
(``plan/resolved.py``: uv against the index) for ``fix``, or ``OfflineResolver`` for
``fix --no-resolve``, ``fix`` without uv, and the planner's step beside each finding of
``check`` and ``triage`` (``plan/per_finding.py``). The offline one answers with the versions
``plan/simulate.py`` gives (exact pins as pinned, a range as a stand-in inside it, torch's
nvidia-* pins from the matrix), marked unverified with the reason, so the planner reads both
answers the same way; it never finds a conflict (that needs the index) and never lets a pin
follow a resolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Step
from envcheck.model.report import NodeReport
from envcheck.plan.resolver_answer import Resolved
from envcheck.plan.simulate import simulate

UNVERIFIED = "not verified by the resolver"


@dataclass(frozen=True)
class OfflineResolver:
    """Resolve a round with the simulator; ``reason`` says why no real resolver ran."""

    matrix: Matrix
    reason: str = UNVERIFIED

    def __call__(self, report: NodeReport, steps: Sequence[Step]) -> Resolved:
        after, _assumed = simulate(report, [s.action for s in steps], self.matrix)
        packages = after.packages.data if after.packages.is_ok else None
        pins = {d.key: d.version for d in packages.distributions} if packages else {}
        return Resolved(pins=pins, count=len(pins), verified=False, reason=self.reason)
