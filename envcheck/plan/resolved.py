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
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Conflict, Stack, Step, Target
from envcheck.model.report import Distribution, NodeReport
from envcheck.plan.resolve import IndexConfig, redact_url
from envcheck.plan.simulate import parse_requirement, variant_of_index
from envcheck.plan.uvlock import (
    Locked,
    NoResolution,
    NotResolved,
    applies,
    explanation,
    lock_once,
    lock_packages,
    mentioned,
    not_found,
)
from envcheck.plan.uvproject import IndexUnreachable, LockTargets

RESOLVE_TIMEOUT = 300.0  # seconds for one `uv lock`
RESOLVE_BUDGET = 900.0  # seconds for every resolution of one plan
MAX_ATTEMPTS = 8  # resolutions per plan round (each frees what the previous one named)
_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


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
        python, arch = _python(report) or "?", _arch(report)
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


@dataclass
class _Request:
    """What one resolution of a plan asks of uv."""

    python: str
    arch: str
    plan: dict[str, tuple[Requirement, tuple[str, ...]]]  # name -> (requirement, rule codes)
    installed: dict[str, Distribution]  # unchanged by the plan
    top: set[str]  # installed names pinned as requirements; the rest are constraints
    overrides: list[str]
    torch_index: str | None
    excluded: set[str] = field(default_factory=set)  # not on the index: kept as installed
    freed: set[str] = field(default_factory=set)  # dependencies the resolution may move
    # dependencies already at odds with what requires them, which the plan does not touch: pip
    # leaves them as they are (an installed cuBLAS override of torch's pin stays)
    held: set[str] = field(default_factory=set)

    def stack(self) -> Stack:
        requirements = [str(req) for req, _ in self.plan.values()]
        overrides = list(self.overrides)
        constraints = []
        for key, dist in sorted(self.installed.items()):
            if key in self.excluded:
                continue
            pin = f"{dist.name}=={dist.version}"
            if key in self.top:
                requirements.append(pin)
            elif key in self.held:
                overrides.append(pin)
            elif key not in self.freed:
                constraints.append(pin)
        return Stack(
            target=Target(python=self.python, arch=self.arch),
            requirements=tuple(requirements),
            overrides=tuple(overrides),
            constraints=tuple(constraints),
            torch_index_url=self.torch_index,
        )


def _python(report: NodeReport) -> str | None:
    data = report.python.data if report.python.is_ok else None
    return data.version if data is not None and data.version else None


def _arch(report: NodeReport) -> str:
    data = report.system.data if report.system.is_ok else None
    return data.arch if data is not None and data.arch in ("x86_64", "aarch64") else "x86_64"


def _marker_env(python: str, arch: str) -> dict[str, str]:
    return LockTargets((python,), (arch,)).environments()[0]


def _plan_pins(
    steps: Sequence[Step],
) -> tuple[dict[str, tuple[Requirement, tuple[str, ...]]], set[str], str | None]:
    """The plan's requirements by name (a later step wins, as pip's last install does), the
    names it uninstalls, and the torch variant index it installs torch from."""
    pins: dict[str, tuple[Requirement, tuple[str, ...]]] = {}
    removed: set[str] = set()
    torch_index = None
    for step in steps:
        action = step.action
        if action.kind == "pip_uninstall":
            removed |= {canonicalize_name(n) for n in action.packages}
        elif action.kind == "pip_install":
            for text in action.packages:
                req = parse_requirement(text)
                if req is None:
                    continue
                key = canonicalize_name(req.name)
                pins[key] = (req, step.codes)
                if key in _TORCH_FAMILY and action.index_url:
                    torch_index = action.index_url
    return pins, removed, torch_index


def _exact(req: Requirement) -> str | None:
    found = [s.version for s in req.specifier if s.operator == "==" and "*" not in s.version]
    return found[0] if len(found) == 1 else None


def _top_level(
    installed: Mapping[str, Distribution], matrix: Matrix, torch: Version | None
) -> set[str]:
    """Installed names nothing else installed requires (the user's own installs). Without
    requirements (a declared or pasted list), torch's own wheels are its dependencies."""
    dists = list(installed.values())
    if any(d.requires for d in dists):
        required: set[str] = set()
        for dist in dists:
            for text in dist.requires:
                req = parse_requirement(text)
                if req is not None and canonicalize_name(req.name) != dist.key:
                    required.add(canonicalize_name(req.name))
        return {d.key for d in dists if d.key not in required}
    companions = {"triton"}
    release = matrix.torch_release(torch) if torch is not None else None
    if release is not None:
        companions |= {canonicalize_name(n) for n in release.pins}
    return {d.key for d in dists if not d.key.startswith("nvidia-") and d.key not in companions}


def _torch_version(
    report: NodeReport, plan: Mapping[str, tuple[Requirement, tuple[str, ...]]]
) -> Version | None:
    if "torch" in plan:
        exact = _exact(plan["torch"][0])
        text = exact
    else:
        packages = report.packages.data if report.packages.is_ok else None
        dist = packages.get("torch") if packages is not None else None
        text = dist.version if dist is not None else None
    try:
        return Version(Version(text).public) if text else None
    except InvalidVersion:
        return None


def _request(report: NodeReport, steps: Sequence[Step], matrix: Matrix) -> _Request:
    python = _python(report)
    if python is None:
        raise NotResolved("the node's Python version is unknown")
    packages = report.packages.data if report.packages.is_ok else None
    if packages is None:
        raise NotResolved("the node's installed packages are unknown")
    plan, removed, torch_index = _plan_pins(steps)
    installed: dict[str, Distribution] = {}
    for dist in packages.distributions:
        if dist.key in plan or dist.key in removed or dist.key in installed:
            continue
        try:
            Version(dist.version)
        except InvalidVersion:
            continue
        installed[dist.key] = dist
    torch = _torch_version(report, plan)
    overrides = []
    for key, (req, _codes) in plan.items():
        version = _exact(req)
        if torch is None or version is None or key in _TORCH_FAMILY:
            continue
        if any(version in o.versions for o in matrix.overrides_for(req.name, Version(str(torch)))):
            overrides.append(str(req))
    excluded: set[str] = set()
    if torch_index is None and "torch" in installed:
        # an installed variant build (2.4.0+cu121) comes from its variant's index
        label = variant_of_index("/" + installed["torch"].version.partition("+")[2])
        if label:
            torch_index = matrix.torch_index_url(label)
            if torch_index is None:
                excluded.add("torch")
    # what is top-level is a property of the node as it is (torch, which the plan moves,
    # still makes its cuBLAS a dependency)
    everything = {d.key: d for d in packages.distributions}
    top = _top_level(everything, matrix, torch) & set(installed)
    return _Request(
        python, _arch(report), plan, installed, top, overrides, torch_index, excluded=excluded
    )


def _conflict(request: _Request, detail: str, why: str = "") -> ResolutionConflict:
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


def _lockfile(request: _Request, resolver: PlanResolver) -> dict[str, object]:
    """uv's lock of the request (parsed TOML)."""
    variant = tuple(
        n
        for n in _TORCH_FAMILY
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


def resolve_plan(report: NodeReport, steps: Sequence[Step], resolver: PlanResolver) -> Resolved:
    """The node's packages after ``steps``, resolved by uv; raises ResolutionConflict,
    IndexUnreachable or NotResolved."""
    request = _request(report, steps, resolver.matrix)
    request.held = {k for k in resolver.held if k in request.installed and k not in request.top}
    request.excluded |= resolver.missing & set(request.installed)
    data: dict[str, object] | None = None
    for _attempt in range(MAX_ATTEMPTS):
        try:
            data = _lockfile(request, resolver)
            break
        except NoResolution as exc:
            missing = not_found(exc.detail)
            ours = missing & set(request.plan)
            if ours:
                raise _conflict(
                    request,
                    exc.detail,
                    f"the index has no {', '.join(str(request.plan[k][0]) for k in sorted(ours))}"
                    f" ({explanation(exc.detail)})",
                ) from None
            kept = (missing & set(request.installed)) - request.excluded
            if kept:
                request.excluded |= kept
                continue
            named = mentioned(exc.detail)
            movable = {
                k for k in request.installed if k not in request.top and k not in request.freed
            }
            if named & movable:
                request.freed |= named & movable
                continue
            raise _conflict(request, exc.detail) from None
    if data is None:
        raise NotResolved(f"no resolution settled after {MAX_ATTEMPTS} attempts")
    locked = lock_packages(data)
    untouched = request.freed - _closure(request, locked)
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
    return _result(request, locked)


def _closure(request: _Request, locked: Locked) -> set[str]:
    """The plan's pins and everything they depend on, in uv's graph, for the node."""
    env = _marker_env(request.python, request.arch)
    brought: set[str] = set()
    todo = [k for k in request.plan if k in locked]
    while todo:
        key = todo.pop()
        if key in brought:
            continue
        brought.add(key)
        todo += [d for d, marker in locked[key][1] if d in locked and applies(marker, env)]
    return brought


def _result(request: _Request, locked: Locked) -> Resolved:
    # what the plan's pins bring: their closure in uv's graph (pip installs no missing
    # dependency of a package the plan does not touch)
    brought = _closure(request, locked)
    pins: dict[str, str] = {}
    notes: list[str] = []
    added: list[str] = []
    for key in sorted(brought | (set(request.installed) & set(locked))):
        version = locked[key][0]
        pins[key] = version
        if key in request.plan:
            req = request.plan[key][0]
            if _exact(req) is None:
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
    return Resolved(pins=pins, notes=tuple(notes), count=len(locked))


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
