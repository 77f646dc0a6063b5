"""uv's resolution of a fix plan read back as what the node has after the plan.

The plan's pins and their closure in uv's dependency graph (pip installs no missing
dependency of a package the plan does not touch), the installed distributions at their
resolved versions, and notes on what moved; ``after_resolution`` puts those versions into
the simulated report the rules run on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Conflict
from envcheck.model.report import NodeReport
from envcheck.plan.resolved_request import Request, exact
from envcheck.plan.uvlock import Locked, applies
from envcheck.plan.uvproject import LockTargets


@dataclass(frozen=True)
class Resolved:
    """The node's packages after the plan, as uv resolved them."""

    pins: dict[str, str]  # canonical name -> version: installed ones and what the plan brings
    notes: tuple[str, ...] = ()
    count: int = 0  # packages in uv's resolution
    # the rules' pins that followed the resolution: name -> (the pin asked for, its rule codes,
    # the version uv picked or None when nothing installs it, uv's conflict with the pin)
    followed: dict[str, Followed] = field(default_factory=dict)


@dataclass(frozen=True)
class Followed:
    """A rule's pin that could not hold with the anchors, and what the resolution made of it."""

    asked: str
    codes: tuple[str, ...]
    version: str | None
    installed: str | None
    conflict: Conflict


def closure(request: Request, locked: Locked) -> set[str]:
    """The plan's pins and everything they depend on, in uv's graph, for the node."""
    env = LockTargets((request.python,), (request.arch,)).environments()[0]
    brought: set[str] = set()
    todo = [k for k in request.plan if k in locked]
    while todo:
        key = todo.pop()
        if key in brought:
            continue
        brought.add(key)
        todo += [d for d, marker in locked[key][1] if d in locked and applies(marker, env)]
    return brought


def read_result(request: Request, locked: Locked) -> Resolved:
    """The node's packages after the plan, from uv's lock, with notes on what moved."""
    # what the plan's pins bring: their closure in uv's graph (pip installs no missing
    # dependency of a package the plan does not touch)
    brought = closure(request, locked)
    pins: dict[str, str] = {}
    notes: list[str] = []
    added: list[str] = []
    for key in sorted(brought | (set(request.installed) & set(locked))):
        version = locked[key][0]
        pins[key] = version
        if key in request.plan:
            req = request.plan[key][0]
            if exact(req) is None:
                notes.append(f"{req}: uv picks {key} {version}")
        elif key in request.installed:
            old = request.installed[key].version
            if old != version:
                notes.append(f"{key} {old} -> {version} (moved by the plan's pins)")
        else:
            added.append(f"{key} {version}")
    if added:
        shown = ", ".join(added[:8]) + (f" and {len(added) - 8} more" if len(added) > 8 else "")
        notes.append(f"the plan's pins bring {len(added)} package(s) not installed: {shown}")
    if request.excluded:
        kept = ", ".join(
            f"{request.installed[k].name} {request.installed[k].version}"
            for k in sorted(request.excluded)
            if k in request.installed
        )
        notes.append(f"kept as installed, not on the index: {kept}")
    followed: dict[str, Followed] = {}
    for key, (req, codes, conflict) in request.followed.items():
        got = pins.get(key)
        dist = request.node.get(key)
        followed[key] = Followed(str(req), codes, got, dist.version if dist else None, conflict)
        anchors = [w.removeprefix("installed: ") for w in conflict.wanted if w.startswith("inst")]
        notes.append(
            f"{req} ({', '.join(codes)}) cannot hold with "
            + (", ".join(anchors) or "the rest")
            + "; the package follows the resolution: "
            + (f"uv picks {key} {got}" if got else f"nothing needs {key}")
        )
    return Resolved(pins=pins, notes=tuple(notes), count=len(locked), followed=followed)


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
