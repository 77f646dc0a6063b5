"""uv's resolution of a fix plan read back as what the node has after the plan.

The plan's pins and their closure in uv's dependency graph (pip installs no missing
dependency of a package the plan does not touch), the installed distributions at their
resolved versions, and notes on what moved; ``after_resolution`` puts those versions into
the simulated report the rules run on.
"""

from __future__ import annotations

from envcheck.plan.resolved_request import Request, exact
from envcheck.plan.resolver_answer import Followed, Resolved
from envcheck.plan.uvlock import Locked, applies
from envcheck.plan.uvproject import LockTargets


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
