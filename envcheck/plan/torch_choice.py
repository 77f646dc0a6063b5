"""One torch for a plan, chosen the way ``lock`` chooses it.

Several rules ask for a torch install (DRV102: a build the driver runs; TOR101: a build with
kernels for the GPUs; VLM101: the release vLLM pins). Merging their pins version by version
gives false conflicts (torch 2.4.0 vs 2.5.1 on a TinyZero H20 node, where 2.4.0 satisfies both)
and builds that lose something another rule needs (a cu118 torch for an RTX 5090: no sm_120).
Instead, the stack chooser (plan/stack.py) picks the build for the node's hardware and its
installed vLLM: the driver runs it, every GPU has kernels, vLLM's torch pin and CUDA hold, and
the PyPI wheel is preferred when it is the build wanted. When nothing fits, the chooser's
conflict names both sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix
from envcheck.model.finding import Action, Finding
from envcheck.model.plan import Conflict, Stack
from envcheck.model.report import NodeReport
from envcheck.plan.simulate import parse_requirement

TORCH = "torch"


def _installed(report: NodeReport) -> dict[str, str]:
    if not report.packages.is_ok or report.packages.data is None:
        return {}
    return {canonicalize_name(d.name): d.version for d in report.packages.data.distributions}


def _wants_torch(action: Action) -> bool:
    if action.kind != "pip_install":
        return False
    for text in action.packages:
        req = parse_requirement(text)
        if req is not None and canonicalize_name(req.name) == TORCH:
            return True
    return False


def choose(report: NodeReport, matrix: Matrix) -> Stack | None:
    """The chooser's torch for this node: first keeping the installed release, then any
    release; None when the node's Python is unknown (nothing to choose for)."""
    from envcheck.errors import UsageError
    from envcheck.plan.resolved_request import node_arch
    from envcheck.plan.stack import choose_stack
    from envcheck.plan.target import target_from_report

    try:
        target = target_from_report(report)
    except UsageError:
        return None
    target = replace(target, arch=node_arch(report, matrix))  # a GH200's CPU is aarch64
    installed = _installed(report)
    base = [f"vllm=={installed['vllm']}"] if "vllm" in installed else []
    tries = []
    if TORCH in installed:
        release = installed[TORCH].split("+", 1)[0]
        tries.append([*base, f"torch=={release}"])
        # then the closest newer release that fits (TOR101's "closest build"), so that check,
        # triage and fix print one torch for one node
        try:
            current = Version(release)
        except InvalidVersion:
            current = None
        if current is not None and not base:
            newer = sorted(r.version for r in matrix.torch_releases if r.version > current)
            tries += [[f"torch=={v}"] for v in newer]
    tries.append([*base, "torch"])
    stack = None
    for requirements in tries:
        stack = choose_stack(matrix, target, requirements, installed=True)
        if stack.torch is not None and not stack.conflicts:
            return stack
    return stack


def rechoose(
    findings: Sequence[Finding], report: NodeReport, matrix: Matrix
) -> tuple[list[Finding], list[Conflict]]:
    """The findings with every torch install replaced by the chooser's build (or, when no build
    fits, without their torch actions and with the chooser's conflict)."""
    asking = [f for f in findings if f.fix and any(_wants_torch(a) for a in f.fix.actions)]
    if not asking:
        return list(findings), []
    stack = choose(report, matrix)
    if stack is None:
        return list(findings), []
    codes = tuple(dict.fromkeys(f.code for f in asking))
    if stack.torch is None or stack.conflicts:
        conflict = stack.conflicts[0] if stack.conflicts else None
        message = conflict.message if conflict else "no torch build fits this node"
        wanted = conflict.wanted if conflict else ("torch",)
        return _without_torch(findings, asking), [Conflict(TORCH, wanted, codes, message)]
    if _already(report, stack):
        note = next((n for n in stack.notes if "For full support" in n), "")
        message = (
            f"the only torch build that fits this node's GPUs and vLLM is the installed one "
            f"(torch {stack.torch}+{stack.torch_variant}); "
            + (note or "the driver must change for the rest")
        )
        return _without_torch(findings, asking), [
            Conflict(TORCH, (stack.choices[0].value,), codes, message)
        ]
    pin = f"torch=={stack.torch}"
    installed = _installed(report).get(TORCH, "")
    rebuild = installed.split("+", 1)[0] == stack.torch  # same release, another build
    if rebuild and stack.torch_index_url and stack.torch_variant:
        # `torch==2.5.1` is met by an installed 2.5.1+cu124: pip would change nothing
        pin = f"torch=={stack.torch}+{stack.torch_variant}"
    summary = f"Install {stack.choices[0].value}" if stack.choices else f"Install {pin}"

    def chosen(item: Finding) -> Finding:
        if item not in asking or item.fix is None:
            return item
        first = (
            (Action(kind="pip_uninstall", packages=(TORCH,)),)
            if rebuild and not stack.torch_index_url
            else ()
        )
        actions = first + tuple(
            replace(
                a,
                packages=tuple(pin if _is_torch(p) else p for p in a.packages),
                index_url=stack.torch_index_url,
            )
            if _wants_torch(a)
            else a
            for a in item.fix.actions
        )
        return replace(item, fix=replace(item.fix, actions=actions, summary=summary))

    return [chosen(f) for f in findings], []


def _already(report: NodeReport, stack: Stack) -> bool:
    """The chosen build is the installed one: installing it changes nothing."""
    from envcheck.plan.simulate import variant_of_index

    installed = _installed(report).get(TORCH)
    if installed is None or installed.split("+", 1)[0] != stack.torch:
        return False
    label = installed.split("+", 1)[1] if "+" in installed else None
    build = report.torch.data if report.torch.is_ok and report.torch.data else None
    have = label or (build.variant if build else None)
    want = stack.torch_variant or variant_of_index(stack.torch_index_url)
    return have is not None and have == want


def _without_torch(findings: Sequence[Finding], asking: Sequence[Finding]) -> list[Finding]:
    def stripped(item: Finding) -> Finding:
        if item not in asking or item.fix is None:
            return item
        kept = tuple(a for a in item.fix.actions if not _wants_torch(a))
        return replace(item, fix=replace(item.fix, actions=kept))

    return [stripped(f) for f in findings]


def _is_torch(text: str) -> bool:
    req = parse_requirement(text)
    return req is not None and canonicalize_name(req.name) == TORCH
