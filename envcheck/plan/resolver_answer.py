"""What a resolver answers the planner for one round of a plan (``plan/planner.py``): the
node's packages after the plan (``Resolved``), the rules' pins that followed the resolution
(``Followed``), or why there is no answer (``NotResolved``: no verdict; ``ResolutionConflict``:
no resolution, naming both sides), and ``after_resolution``, which reads an answer into the
simulated report the rules run on.

Both resolvers answer in these terms: uv against the index (``plan/resolved.py``) and the
offline one (``plan/offline.py``). This module imports neither, so a plan that never asks uv
(``check``, ``triage``, ``fix --no-resolve``) loads nothing of uv's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Conflict
from envcheck.model.report import NodeReport


class NotResolved(Exception):
    """The plan cannot be resolved here (no Python known, uv did not run): not a verdict."""


class ResolutionConflict(Exception):
    """uv found no resolution: the plan's pins and what is installed cannot hold together."""

    def __init__(self, conflict: Conflict, detail: str) -> None:
        super().__init__(conflict.message)
        self.conflict = conflict
        self.detail = detail


@dataclass(frozen=True)
class Resolved:
    """The node's packages after the plan, as uv resolved them."""

    pins: dict[str, str]  # canonical name -> version: installed ones and what the plan brings
    notes: tuple[str, ...] = ()
    count: int = 0  # packages in uv's resolution
    # the rules' pins that followed the resolution: name -> (the pin asked for, its rule codes,
    # the version uv picked or None when nothing installs it, uv's conflict with the pin)
    followed: dict[str, Followed] = field(default_factory=dict)
    # False: an estimate, not a resolution (plan/offline.py: the simulator's), ``reason`` why
    verified: bool = True
    reason: str = ""


@dataclass(frozen=True)
class Followed:
    """A rule's pin that could not hold with the anchors, and what the resolution made of it."""

    asked: str
    codes: tuple[str, ...]
    version: str | None
    installed: str | None
    conflict: Conflict


def after_resolution(after: NodeReport, resolved: Resolved, matrix: Matrix) -> NodeReport:
    """``after`` (the simulated report) with the resolved versions: a range becomes uv's
    release, a moved dependency its new version, what the pins bring is added. torch keeps the
    simulator's build (its variant, CUDA and arch list), whose version the plan pins."""
    from envcheck.model.finding import Action
    from envcheck.plan.simulate import simulate

    packages = after.packages.data if after.packages.is_ok else None
    if packages is None:
        return after
    current = {d.key: d.version for d in packages.distributions}
    changed = []
    for key, version in sorted(resolved.pins.items()):
        if key == "torch":
            continue
        old = current.get(key)
        try:
            same = old is not None and Version(old) == Version(version)
        except InvalidVersion:
            same = old == version
        if not same:
            changed.append(f"{key}=={version}")
    if not changed:
        return after
    return simulate(after, [Action(kind="pip_install", packages=tuple(changed))], matrix)[0]
