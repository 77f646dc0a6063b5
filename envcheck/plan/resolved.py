"""A fix plan resolved with uv against the node's installed requirements.

What ``pip install`` would leave behind is resolved for the node's Python and platform: the
plan's pins (the cuBLAS-style overrides the matrix accepts as ``override-dependencies``), the
installed top-level distributions pinned at their current versions, and the installed
dependencies as constraints at their current versions (freed only when the resolution needs
to move them, as pip moves a dependency only when it must). A distribution the index does not
serve (a local build, an editable install) is kept as installed and said so.

The result is the set the rules run on instead of the simulator's guess: a range becomes the
release uv picks, a dependency the plan moves shows its moved version, and what the plan's
pins newly bring is added. No resolution is a conflict naming both sides, with uv's own
explanation; an index that cannot be reached is ``IndexUnreachable``, never a verdict.

What is asked of uv is built in ``resolved_request.py``; uv's lock is read back in
``resolved_result.py``; this module runs uv and frees what its explanations name.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Conflict, Step
from envcheck.model.report import NodeReport
from envcheck.plan.resolve import IndexConfig, redact_url
from envcheck.plan.resolved_request import (
    TORCH_FAMILY,
    Request,
    build_request,
    node_arch,
    node_python,
)
from envcheck.plan.resolved_result import closure, read_result
from envcheck.plan.resolver_answer import (
    NotResolved,
    ResolutionConflict,
    Resolved,
    after_resolution,
)
from envcheck.plan.uvlock import (
    NoResolution,
    explanation,
    lock_once,
    lock_packages,
    mentioned,
    not_found,
)
from envcheck.plan.uvproject import IndexUnreachable

RESOLVE_TIMEOUT = 300.0  # seconds for one `uv lock`
RESOLVE_BUDGET = 900.0  # seconds for every resolution of one plan
MAX_ATTEMPTS = 8  # resolutions per plan round (each frees what the previous one named)


@dataclass
class PlanResolver:
    """How to resolve plans for one ``envcheck fix`` run (the budget is shared by its rounds)."""

    uv: str
    index: IndexConfig
    matrix: Matrix
    timeout: float = RESOLVE_TIMEOUT
    budget: float = RESOLVE_BUDGET
    env: Mapping[str, str] | None = None
    runs: int = 0
    held: set[str] = field(default_factory=set)  # learned: dependencies pip leaves alone here
    missing: set[str] = field(default_factory=set)  # learned: installed, not on the index
    _deadline: float | None = field(default=None, repr=False)

    def describe(self, report: NodeReport) -> str:
        python, arch = node_python(report) or "?", node_arch(report, self.matrix)
        urls = [redact_url(u) for u in [self.index.index_url or "", *self.index.extra_index_urls]]
        if not self.index.index_url:
            urls.append("the resolver's default index")
        where = ", ".join(u for u in urls if u)
        if self.index.no_index:
            where = "no index"
        if self.index.find_links:
            where += " and " + ", ".join(self.index.find_links)
        return f"uv lock for Python {python} on linux {arch}, against {where} ({self.index.source})"

    def _remaining(self) -> float:
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + self.budget
        return self._deadline - now

    def __call__(self, report: NodeReport, steps: Sequence[Step]) -> Resolved:
        return resolve_plan(report, steps, self)


def _conflict(request: Request, detail: str, why: str = "") -> ResolutionConflict:
    named = mentioned(detail)
    plan_side = [
        f"{req} ({', '.join(codes)})" for key, (req, codes) in request.plan.items() if key in named
    ]
    installed_side = [
        f"{d.name}=={d.version}"
        for key, d in request.installed.items()
        if key in named and key not in request.excluded
    ]
    codes = tuple(
        dict.fromkeys(c for key, (_r, cs) in request.plan.items() if key in named for c in cs)
    ) or tuple(dict.fromkeys(c for _r, cs in request.plan.values() for c in cs))
    if not plan_side:
        plan_side = [f"{req} ({', '.join(cs)})" for req, cs in request.plan.values()]
    ours = "the plan's " + ", ".join(plan_side)
    theirs = (
        "the installed " + ", ".join(installed_side)
        if installed_side
        else "each other"
        if len(plan_side) > 1
        else "the index"
    )
    message = f"{ours} cannot be installed with {theirs}: " + (why or explanation(detail))
    wanted = tuple(f"plan: {p}" for p in plan_side) + tuple(
        f"installed: {i}" for i in installed_side
    )
    return ResolutionConflict(Conflict("resolution", wanted, codes, message), detail)


def _lockfile(request: Request, resolver: PlanResolver) -> dict[str, object]:
    """uv's lock of the request (parsed TOML)."""
    variant = tuple(
        n
        for n in TORCH_FAMILY
        if n in request.plan or (n in request.installed and n in request.top)
    )
    left = resolver._remaining()
    if left <= 0:
        raise NotResolved(f"the resolver's time ({resolver.budget:.0f} s) ran out")
    resolver.runs += 1
    return lock_once(
        request.stack(),
        resolver.index,
        variant,
        uv=resolver.uv,
        timeout=min(resolver.timeout, left),
        env=resolver.env,
    )


def _loosen(request: Request, detail: str) -> None:
    """Free what uv's explanation names, for the next attempt: installed distributions the
    index does not serve are kept as installed, installed dependencies it names may move.
    Raises ResolutionConflict when a pin of the plan is not served or nothing is left to free
    (each call frees something new, so attempts cannot repeat themselves)."""
    missing = not_found(detail)
    ours = missing & set(request.plan)
    if ours:
        pins = ", ".join(str(request.plan[k][0]) for k in sorted(ours))
        raise _conflict(request, detail, f"the index has no {pins} ({explanation(detail)})")
    kept = (missing & set(request.installed)) - request.excluded
    if kept:
        request.excluded |= kept
        return
    named = mentioned(detail) & request.movable()
    if named:
        request.freed |= named
        return
    relax = request.relaxable(mentioned(detail))
    if not relax:
        if request.followed:
            # uv still finds nothing with the rule's pin let go: the first conflict, which
            # names the pin and the installed side, is the real one
            first = next(iter(request.followed.values()))[2]
            raise ResolutionConflict(first, detail)
        raise _conflict(request, detail)
    # a rule's pin that cannot hold with the anchors becomes "may move": uv picks the release
    # the rest allows, and the rules run on that (a rule still violated there is the conflict)
    request.follow(relax, _conflict(request, detail).conflict)


def _names(keys: set[str], limit: int = 8) -> str:
    shown = sorted(keys)
    more = f" and {len(shown) - limit} more" if len(shown) > limit else ""
    return ", ".join(shown[:limit]) + more


def _gave_up(request: Request, detail: str) -> str:
    """One line: why the resolver stopped freeing, what it freed, uv's last explanation."""
    what = []
    if request.freed:
        what.append(f"freed {_names(request.freed)}")
    if request.excluded:
        what.append(f"kept as installed {_names(request.excluded)}")
    last = explanation(detail)
    last = last if len(last) <= 300 else last[:297] + "..."
    return (
        f"uv found no resolution in {MAX_ATTEMPTS} attempts, each freeing what the previous one"
        f" named ({'; '.join(what) or 'nothing freed'}); the last: {last}"
    )


def resolve_plan(report: NodeReport, steps: Sequence[Step], resolver: PlanResolver) -> Resolved:
    """The node's packages after ``steps``, resolved by uv; raises ResolutionConflict,
    IndexUnreachable or NotResolved (the resolver's time ran out, or no resolution settled
    in MAX_ATTEMPTS runs of uv)."""
    request = build_request(report, steps, resolver.matrix)
    request.held = {k for k in resolver.held if k in request.installed and k not in request.top}
    request.excluded |= resolver.missing & set(request.installed)
    for _attempt in range(MAX_ATTEMPTS):
        try:
            data = _lockfile(request, resolver)
            break
        except NoResolution as exc:
            detail = exc.detail
        _loosen(request, detail)  # outside the handler: a conflict carries no uv traceback
    else:
        raise NotResolved(_gave_up(request, detail))
    locked = lock_packages(data)
    untouched = request.freed - closure(request, locked)
    if untouched:
        # freed only because the node was already at odds with them: pip, installing the
        # plan's pins, leaves them as they are; so does the resolution (if it still holds)
        request.freed -= untouched
        request.held |= untouched
        try:
            locked = lock_packages(_lockfile(request, resolver))
        except NoResolution:
            request.held -= untouched
            request.freed |= untouched
    resolver.held |= request.held
    resolver.missing |= request.excluded
    return read_result(request, locked)


__all__ = [
    "IndexUnreachable",
    "NotResolved",
    "PlanResolver",
    "ResolutionConflict",
    "Resolved",
    "after_resolution",
    "explanation",
    "resolve_plan",
]
