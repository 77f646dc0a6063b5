"""Findings -> a Plan: ordered, merged actions, each traced to the findings it answers.

Pins asked for by several findings are merged; pins that cannot both hold are reported as a
conflict and neither is emitted. The plan is then applied to a copy of the report and the rules
run again, until no finding with a fix that would change something is left (a fixed point,
bounded): moving torch to another build re-checks the driver, the GPUs' architectures, vLLM's
pin and flash-attn's tag.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.engine import evaluate
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Action, Applicability, CheckResult, Finding, Severity
from envcheck.model.plan import Conflict, Plan, Step
from envcheck.model.report import NodeReport
from envcheck.names import canonicalize_name
from envcheck.patterns import lazy
from envcheck.plan.simulate import changes_something, parse_requirement, simulate, version_within
from envcheck.plan.torch_choice import rechoose
from envcheck.rules.base import Rule

if TYPE_CHECKING:
    from envcheck.plan.resolver_answer import Followed, Resolved

MAX_ITERATIONS = 6
_TORCH_FAMILY = {"torch", "torchvision", "torchaudio"}
_RANK: dict[Applicability, int] = {"safe": 0, "unsafe": 1, "manual": 2}


@dataclass
class _Want:
    """A requirement a fix asks for, and the finding it comes from."""

    req: Requirement
    index_url: str | None
    flags: tuple[str, ...]
    applicability: Applicability
    code: str
    summary: str
    origin: int = 0  # which action of which finding asked for it


@dataclass
class _Collected:
    """The installs, uninstalls, settings and manual steps of the fixes, in order."""

    installs: dict[str, list[_Want]] = field(default_factory=dict)
    uninstalls: dict[str, list[tuple[str, str, Applicability, str]]] = field(default_factory=dict)
    env: dict[str, list[tuple[str, str, Applicability, str]]] = field(default_factory=dict)
    manual: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # install keys in first-seen order


def _collect(findings: Sequence[Finding]) -> _Collected:
    out = _Collected()
    origin = 0
    for finding in findings:
        fix = finding.fix
        if fix is None:
            continue
        for action in fix.actions:
            origin += 1
            if action.kind == "pip_install":
                for text in action.packages:
                    req = parse_requirement(text)
                    if req is None:
                        continue
                    key = canonicalize_name(req.name)
                    if key not in out.installs:
                        out.order.append(key)
                    out.installs.setdefault(key, []).append(
                        _Want(
                            req,
                            action.index_url,
                            action.flags,
                            fix.applicability,
                            finding.code,
                            fix.summary,
                            origin,
                        )
                    )
            elif action.kind == "pip_uninstall":
                for name in action.packages:
                    out.uninstalls.setdefault(canonicalize_name(name), []).append(
                        (name, finding.code, fix.applicability, fix.summary)
                    )
            elif action.kind == "env":
                for var, value in action.env.items():
                    out.env.setdefault(var, []).append(
                        (value, finding.code, fix.applicability, fix.summary)
                    )
            else:
                text = action.text or fix.summary
                codes, _ = out.manual.setdefault(text, ([], fix.summary))
                if finding.code not in codes:
                    codes.append(finding.code)
    return out


def _codes(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _worst(items: Sequence[Applicability]) -> Applicability:
    return max(items, key=lambda a: _RANK[a])


def _merge_install(key: str, wants: list[_Want]) -> tuple[_Want | None, Conflict | None]:
    """One requirement for a distribution, or the conflict between what findings asked."""
    codes = _codes([w.code for w in wants])
    texts = tuple(
        dict.fromkeys(f"{w.req}" + (f" from {w.index_url}" if w.index_url else "") for w in wants)
    )
    indexes = {w.index_url for w in wants if w.index_url}
    if len(indexes) > 1:
        return None, Conflict(
            key,
            texts,
            codes,
            f"{key} is wanted from different indexes: {', '.join(sorted(indexes))}",
        )
    spec = wants[0].req.specifier
    for want in wants[1:]:
        spec &= want.req.specifier
    if len(wants) > 1 and version_within(spec) is None:
        return None, Conflict(
            key,
            texts,
            codes,
            f"{key}: {' and '.join(texts)} cannot both hold ({', '.join(codes)})",
        )
    exact = [
        str(item)
        for w in wants
        for item in w.req.specifier
        if item.operator == "==" and "*" not in item.version
    ]
    if exact and len(set(exact)) == 1:
        spec = SpecifierSet(exact[0])
    first = wants[0]
    extras = sorted({e for w in wants for e in w.req.extras})
    name = first.req.name + (f"[{','.join(extras)}]" if extras else "")
    merged = Requirement(f"{name}{spec}")
    flags = tuple(dict.fromkeys(f for w in wants for f in w.flags))
    return (
        _Want(
            merged,
            next(iter(indexes), None),
            flags,
            _worst([w.applicability for w in wants]),
            ",".join(codes),
            "; ".join(dict.fromkeys(w.summary for w in wants)),
        ),
        None,
    )


def merge(findings: Sequence[Finding]) -> tuple[list[Step], list[Conflict]]:
    """Ordered steps for the findings' fixes: uninstalls, installs from a torch variant's index,
    other installs, environment variables, manual steps."""
    got = _collect(findings)
    steps: list[Step] = []
    conflicts: list[Conflict] = []
    for key, items in got.uninstalls.items():
        steps.append(
            Step(
                Action(kind="pip_uninstall", packages=(items[0][0],)),
                _worst([i[2] for i in items]),
                _codes([i[1] for i in items]),
                "; ".join(dict.fromkeys(i[3] for i in items)),
            )
        )
        _ = key
    groups: dict[tuple[str | None, tuple[str, ...], Applicability, bool], list[_Want]] = {}
    merged_wants: dict[str, _Want] = {}
    tainted: set[int] = set()  # actions with a conflicting pin: none of their pins is emitted
    for key in got.order:
        merged, conflict = _merge_install(key, got.installs[key])
        if conflict is not None:
            conflicts.append(conflict)
            tainted |= {w.origin for w in got.installs[key]}
        elif merged is not None:
            merged_wants[key] = merged
    for key, first in merged_wants.items():
        final: _Want | None = first
        if any(w.origin in tainted for w in got.installs[key]):
            kept = [w for w in got.installs[key] if w.origin not in tainted]
            final = _merge_install(key, kept)[0] if kept else None
        if final is not None:
            # torch and its companions install in a step of their own: a pin that overrides one
            # of torch's (cuBLAS) cannot be resolved together with it, and comes after it
            family = canonicalize_name(final.req.name) in _TORCH_FAMILY
            key_ = (final.index_url, final.flags, final.applicability, family)
            groups.setdefault(key_, []).append(final)
    # torch first: every later step (its overrides: a cuBLAS that torch's own pin would undo)
    # runs after it, so no step undoes an earlier one
    ordered = sorted(
        groups.items(),
        key=lambda kv: (
            not kv[0][3],
            kv[0][0] is None,
            _RANK[kv[0][2]],
        ),
    )
    for (index_url, flags, applicability, _family), wants in ordered:
        steps.append(
            Step(
                Action(
                    kind="pip_install",
                    packages=tuple(str(w.req) for w in wants),
                    index_url=index_url,
                    flags=flags,
                ),
                applicability,
                _codes([c for w in wants for c in w.code.split(",")]),
                "; ".join(dict.fromkeys(w.summary for w in wants)),
            )
        )
    env_groups: dict[Applicability, list[tuple[str, str, list[str], list[str]]]] = {}
    for var, items in got.env.items():
        values = {i[0] for i in items}
        codes = _codes([i[1] for i in items])
        if len(values) > 1:
            conflicts.append(
                Conflict(
                    var,
                    tuple(f"{var}={v}" for v in sorted(values)),
                    codes,
                    f"{var} is wanted as {' and as '.join(repr(v) for v in sorted(values))}",
                )
            )
            continue
        env_groups.setdefault(_worst([i[2] for i in items]), []).append(
            (var, items[0][0], list(codes), [i[3] for i in items])
        )
    for applicability, entries in sorted(env_groups.items(), key=lambda kv: _RANK[kv[0]]):
        steps.append(
            Step(
                Action(kind="env", env={var: value for var, value, _, _ in entries}),
                applicability,
                _codes([c for _, _, codes, _ in entries for c in codes]),
                "; ".join(dict.fromkeys(s for _, _, _, summaries in entries for s in summaries)),
            )
        )
    for text, (manual_codes, summary) in _one_driver(got.manual).items():
        steps.append(
            Step(Action(kind="manual", text=text), "manual", _codes(manual_codes), summary)
        )
    return steps, conflicts


_DRIVER_STEP = lazy(r"\bNVIDIA driver\b", re.IGNORECASE)
_DRIVER_VERSION = lazy(r"\b(\d{3}\.\d{2,3}(?:\.\d{2,3})?)\b")
_DRIVER_PACKAGE = lazy(r"\bapt install nvidia-driver-(\d{3})\b")


def _driver_floor(text: str) -> Version | None:
    """The driver version a manual "upgrade the NVIDIA driver" step asks for at least."""
    if not _DRIVER_STEP.search(text):
        return None
    found = [Version(v) for v in _DRIVER_VERSION.findall(text)]
    return max(found) if found else None


def _one_driver(
    manual: dict[str, tuple[list[str], str]],
) -> dict[str, tuple[list[str], str]]:
    """Driver upgrades asked for by several findings (the CUDA build's floor, the GPU's
    architecture's) as one step: the highest floor meets every one of them."""
    floors = {text: v for text in manual if (v := _driver_floor(text)) is not None}
    if len(floors) < 2:
        return manual
    top = max(floors.values())
    # a rule's "or ... sudo apt install nvidia-driver-<branch>" alternative names a package for
    # its own floor: folded into the one step, the package of the lowest branch that meets the
    # highest floor is named there (none: the step names no package)
    packages = {text: int(m.group(1)) for text in manual if (m := _DRIVER_PACKAGE.search(text))}
    fitting = sorted(b for b in packages.values() if b >= top.major)
    codes = _codes([c for text in (*floors, *packages) for c in manual[text][0]])
    merged = f"upgrade the NVIDIA driver to {top} or newer (it meets what {', '.join(codes)} need)"
    if fitting:
        merged += f": sudo apt install nvidia-driver-{fitting[0]}, then reboot"
    summaries = f"Upgrade the NVIDIA driver to {top} or newer: one driver for every finding"
    out: dict[str, tuple[list[str], str]] = {}
    for text, item in manual.items():
        if text in floors or text in packages:
            out.setdefault(merged, (list(codes), summaries))
        else:
            out[text] = item
    return out


def _key(finding: Finding) -> tuple[str, str]:
    return finding.code, finding.message


def _fixable(finding: Finding, report: NodeReport, matrix: Matrix) -> bool:
    return finding.fix is not None and any(
        changes_something(a, report, matrix) for a in finding.fix.actions
    )


Resolve = Callable[[NodeReport, Sequence[Step]], "Resolved"]


@dataclass
class _Verdict:
    """What the resolver said of the plan's latest round."""

    resolved: bool | None = False
    reason: str = "not verified by the resolver"
    notes: tuple[str, ...] = ()
    conflict: Conflict | None = None
    followed: dict[str, Followed] = field(default_factory=dict)
    pins: dict[str, str] = field(default_factory=dict)  # the resolved set: name -> version


def _installs(steps: Sequence[Step]) -> bool:
    return any(s.action.kind == "pip_install" for s in steps)


def _resolve(
    report: NodeReport,
    steps: list[Step],
    after: NodeReport,
    notes: tuple[str, ...],
    matrix: Matrix,
    resolve: Resolve,
    verdict: _Verdict,
) -> tuple[NodeReport, tuple[str, ...]]:
    """The simulated ``after`` replaced by uv's resolution of the steps (the verdict says
    whether it was); a conflict or an unusable resolver is recorded in ``verdict``."""
    from envcheck.plan.resolver_answer import NotResolved, ResolutionConflict, after_resolution

    if not _installs(steps):
        verdict.resolved, verdict.reason, verdict.notes = None, "the plan installs nothing", ()
        return after, notes
    try:
        got = resolve(report, steps)
    except NotResolved as exc:
        verdict.resolved, verdict.reason = False, f"not verified by the resolver: {exc}"
        verdict.notes = ()
        return after, notes
    except ResolutionConflict as exc:
        verdict.resolved, verdict.reason = False, "uv found no resolution (see the conflict)"
        verdict.conflict, verdict.notes = exc.conflict, ()
        return after, notes
    if not got.verified:
        # the offline resolver (plan/offline.py): the simulator's versions, read as uv's are
        verdict.resolved, verdict.reason, verdict.notes = False, got.reason, ()
        return after_resolution(after, got, matrix), notes
    verdict.resolved, verdict.reason = True, f"{got.count} package(s) resolved"
    verdict.notes = got.notes
    verdict.followed = dict(got.followed)
    verdict.pins = dict(got.pins)
    # the resolution gives the exact release a range stands for
    kept = tuple(n for n in notes if "was re-checked as a version inside that range" not in n)
    return after_resolution(after, got, matrix), kept


def build_plan(
    report: NodeReport,
    matrix: Matrix,
    rules: Sequence[Rule],
    *,
    threshold: Severity = Severity.WARNING,
    max_iterations: int = MAX_ITERATIONS,
    resolve: Resolve | None = None,
    constrain: bool = False,
    first: CheckResult | None = None,
) -> tuple[Plan, NodeReport]:
    """The plan for a report's findings at or above ``threshold``, and the report as it would be
    after the plan (for ``check`` to confirm). With ``resolve``, every round's steps are
    resolved with the node's installed packages and the rules run on that resolution; no
    resolution ends planning with a conflict naming both sides (the pip steps are withheld).
    With ``constrain`` (``fix``), every install step after the first carries the resolved set
    as pip constraints (``held``). Without ``resolve``, the rounds go through the same path
    with the offline resolver (``plan/offline.py``: the simulator's versions, unverified).
    ``first``: the rules' result on ``report`` when the caller has it (``check``), not run again.
    """
    from envcheck.plan.offline import OfflineResolver

    resolver: Resolve = resolve if resolve is not None else OfflineResolver(matrix)
    # the rules are pure: a report already evaluated (the simulation returns the same object
    # when nothing changes, and the last round's report is the final one) is not run again
    results: dict[int, tuple[NodeReport, CheckResult]] = {}
    if first is not None:
        results[id(report)] = (report, first)

    def evaluate_once(node: NodeReport) -> CheckResult:
        known = results.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        result = evaluate(node, matrix, rules)
        results[id(node)] = (node, result)
        return result

    addressed: dict[tuple[str, str], Finding] = {}
    first_seen: list[Finding] = []
    after = report
    notes: tuple[str, ...] = ()
    steps: list[Step] = []
    conflicts: list[Conflict] = []
    converged = False
    iterations = 0
    verdict = _Verdict()
    for iterations in range(1, max_iterations + 1):
        result = evaluate_once(after)
        relevant = [f for f in result.findings if f.severity.at_least(threshold)]
        if iterations == 1:
            first_seen = relevant
        new = [f for f in relevant if _key(f) not in addressed and _fixable(f, after, matrix)]
        if not new:
            converged = True
            break
        for finding in new:
            addressed[_key(finding)] = finding
        wanted, torch_conflicts = rechoose(
            _dependent(list(addressed.values()), first_seen) + _manual_only(first_seen, addressed),
            report,
            matrix,
        )
        steps, conflicts = merge(wanted)
        conflicts += torch_conflicts
        after, notes = simulate(report, [s.action for s in steps], matrix)
        after, notes = _resolve(report, steps, after, notes, matrix, resolver, verdict)
        steps = _followed(steps, verdict.followed)
        if verdict.conflict is not None:
            # a real conflict: the pip steps cannot all hold with what is installed
            conflicts.append(verdict.conflict)
            steps = [s for s in steps if s.action.kind not in ("pip_install", "pip_uninstall")]
            after, notes = simulate(report, [s.action for s in steps], matrix)
            break
    final = evaluate_once(after)
    remaining = tuple(f for f in final.findings if f.severity.at_least(threshold))
    for key, item in verdict.followed.items():
        # the pin could not hold and the rule is still violated on the resolution: a real
        # conflict, between the rule and the anchor uv named
        if any(f.code in item.codes for f in remaining):
            conflicts.append(replace(item.conflict, subject=key))
    if not addressed:
        steps, conflicts = merge(_manual_only(first_seen, addressed))
    if not _installs(steps) and verdict.conflict is None:
        verdict.resolved, verdict.reason = None, "the plan installs nothing"
    pinned = bound(steps, interpreter(report))
    if constrain:
        pinned = held(pinned, verdict.pins if verdict.resolved else None, _torch_family(report))
    plan = Plan(
        node=report.node,
        steps=pinned,
        conflicts=tuple(conflicts),
        addressed=tuple(addressed.values())
        + tuple(f for f in first_seen if _key(f) not in addressed and f.fix is not None),
        remaining=remaining,
        iterations=iterations,
        converged=converged,
        notes=tuple(f"simulated: {n}" for n in notes)
        + tuple(f"resolved: {n}" for n in verdict.notes),
        resolved=verdict.resolved,
        resolver=verdict.reason,
    )
    return plan, after


def interpreter(report: NodeReport) -> str | None:
    """The interpreter the report was probed with (None for a declared or pasted node)."""
    data = report.python.data if report.python.is_ok else None
    return data.executable if data is not None and data.executable else None


def bound(steps: Sequence[Step], python: str | None) -> tuple[Step, ...]:
    """The steps with their pip commands bound to ``python`` (``/path/python -m pip``): the
    environment checked, never whichever pip comes first on PATH."""
    if python is None:
        return tuple(steps)
    return tuple(
        replace(s, action=replace(s.action, python=python))
        if s.action.kind in ("pip_install", "pip_uninstall")
        else s
        for s in steps
    )


def _exact(text: str) -> tuple[str, str] | None:
    """``(canonical name, text)`` of an exact pin (``torch==2.4.0``), else None."""
    req = parse_requirement(text)
    if req is None:
        return None
    items = list(req.specifier)
    if len(items) == 1 and items[0].operator in ("==", "===") and "*" not in items[0].version:
        return canonicalize_name(req.name), f"{req.name}=={items[0].version}"
    return None


def _torch_family(report: NodeReport) -> dict[str, str]:
    """The installed torch, torchvision and torchaudio: name -> ``name==version``."""
    packages = report.packages.data if report.packages.is_ok else None
    if packages is None:
        return {}
    return {
        d.key: f"{d.name}=={d.version}" for d in packages.distributions if d.key in _TORCH_FAMILY
    }


def held(
    steps: Sequence[Step],
    resolved: Mapping[str, str] | None,
    installed: Mapping[str, str] | None = None,
) -> tuple[Step, ...]:
    """The steps with every install after the first carrying what pip must keep, as ``-c``
    constraints: the whole resolved set (``resolved``: name -> version, as uv resolved the
    node after the plan), so a later step (a companion, flash-attn, an override of torch's
    pin) cannot move torch or anything else the resolution holds: pip stops with a conflict
    instead of backtracking. Without a resolution (``--no-resolve``, no uv), what is known
    without one: the exact pins of the earlier install steps and ``installed`` (name ->
    ``name==version``: the installed torch family) as those steps leave it; the simulator's
    estimate of everything else is not held (pip may have to move a dependency). The first
    install has none: it is the step that moves what the rest is held to (a constraint on the
    resolved cuBLAS override would make torch's own pin of it unsatisfiable). A constraint on a
    name the step itself installs is kept only when the step's requirement allows it."""
    out: list[Step] = []
    earlier: dict[str, str] = dict(installed or {})
    first = True
    for step in steps:
        action = step.action
        if action.kind == "pip_uninstall":
            for name in action.packages:
                earlier.pop(canonicalize_name(name), None)
        if action.kind != "pip_install":
            out.append(step)
            continue
        own: dict[str, Requirement] = {
            canonicalize_name(req.name): req
            for req in (parse_requirement(p) for p in action.packages)
            if req is not None
        }
        if not first:
            base = (
                {k: f"{k}=={v}" for k, v in resolved.items()}
                if resolved is not None
                else dict(earlier)
            )
            keep = {
                k: pin
                for k, pin in base.items()
                if k not in own
                or own[k].specifier.contains(pin.split("==", 1)[1], prereleases=True)
            }
            constraints = tuple(keep[k] for k in sorted(keep))
            out.append(replace(step, action=replace(action, constraints=constraints)))
        else:
            out.append(step)
        first = False
        for key, req in own.items():
            pin = _exact(str(req))
            if pin is not None:
                earlier[key] = pin[1]
            else:
                earlier.pop(key, None)  # a range: pip picks the release, unknown here
    return tuple(out)


def _same_version(a: str, b: str | None) -> bool:
    try:
        return b is not None and Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _followed(steps: list[Step], followed: Mapping[str, Followed]) -> list[Step]:
    """The install steps with each followed pin replaced by the release uv picked (dropped when
    that is the installed one or nothing needs it): what is printed is the resolution."""
    if not followed:
        return steps
    out: list[Step] = []
    for step in steps:
        action = step.action
        if action.kind != "pip_install":
            out.append(step)
            continue
        packages = []
        for text in action.packages:
            req = parse_requirement(text)
            item = followed.get(canonicalize_name(req.name)) if req is not None else None
            if item is None:
                packages.append(text)
            elif item.version is not None and not _same_version(item.version, item.installed):
                packages.append(f"{req.name if req else text}=={item.version}")
        if packages:
            out.append(replace(step, action=replace(action, packages=tuple(packages))))
    return out


def _dependent(findings: list[Finding], first_seen: Sequence[Finding]) -> list[Finding]:
    """Findings the plan itself brings (a torch change re-installs torch's cuBLAS pin) depend
    on the steps that bring them: they are no safer than the riskiest of those steps, so an
    ``--apply`` without ``--unsafe`` never runs them alone (a cuBLAS downgrade under the old
    torch)."""
    original = {_key(f) for f in first_seen}
    risk = [
        f.fix.applicability
        for f in findings
        if _key(f) in original and f.fix is not None and f.fix.applicability != "manual"
    ]
    if not risk:
        return findings
    worst = _worst(risk)

    def riskier(item: Finding) -> Finding:
        fix = item.fix
        if _key(item) in original or fix is None or _RANK[worst] <= _RANK[fix.applicability]:
            return item
        return replace(item, fix=replace(fix, applicability=worst))

    return [riskier(f) for f in findings]


def _manual_only(
    findings: Sequence[Finding], addressed: dict[tuple[str, str], Finding]
) -> list[Finding]:
    """Findings whose fix is manual (nothing to simulate): their steps are printed."""
    return [
        f
        for f in findings
        if _key(f) not in addressed
        and f.fix is not None
        and all(a.kind == "manual" for a in f.fix.actions)
    ]
