"""Fix plans and chosen stacks: ordered actions, each traced to the findings it fixes.

A ``Plan`` is what ``envcheck fix`` prints and runs; a ``Stack`` is what ``envcheck lock``
chose for a target before resolving it. Both are plain data; nothing here runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envcheck.model.finding import Action, Applicability, Finding


@dataclass(frozen=True)
class Step:
    """One action of a plan and the findings (rule codes) it answers."""

    action: Action
    applicability: Applicability
    codes: tuple[str, ...]
    reason: str

    def command(self) -> str:
        return self.action.command()

    def to_json(self) -> dict[str, Any]:
        from envcheck.model.codec import to_dict

        return {
            "command": self.command(),
            "applicability": self.applicability,
            "codes": list(self.codes),
            "reason": self.reason,
            "action": to_dict(self.action),
        }


@dataclass(frozen=True)
class Conflict:
    """Two findings ask for incompatible things; neither side is emitted."""

    subject: str  # a distribution name, an environment variable, or "stack"
    wanted: tuple[str, ...]
    codes: tuple[str, ...]
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "wanted": list(self.wanted),
            "codes": list(self.codes),
            "message": self.message,
        }


@dataclass(frozen=True)
class Plan:
    """The steps that fix a node's findings, and what they leave."""

    node: str
    steps: tuple[Step, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    addressed: tuple[Finding, ...] = ()  # findings the plan answers (first evaluation)
    remaining: tuple[Finding, ...] = ()  # still reported after the plan is applied to the report
    iterations: int = 0
    converged: bool = True
    notes: tuple[str, ...] = ()
    # True: the rules ran on uv's resolution of the plan with the node's installed packages;
    # False: on the simulator's estimate (``resolver`` says why); None: nothing to resolve
    resolved: bool | None = False
    resolver: str = "not verified by the resolver"

    def by_applicability(self, *kinds: Applicability) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.applicability in kinds)

    @property
    def empty(self) -> bool:
        return not self.steps and not self.conflicts

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "steps": [s.to_json() for s in self.steps],
            "conflicts": [c.to_json() for c in self.conflicts],
            "addressed": [f.to_json() for f in self.addressed],
            "remaining": [f.to_json() for f in self.remaining],
            "iterations": self.iterations,
            "converged": self.converged,
            "notes": list(self.notes),
            "resolved": self.resolved,
            "resolver": self.resolver,
        }


@dataclass(frozen=True)
class Choice:
    """One decision taken while choosing a stack, with the reason printed next to it."""

    subject: str  # "torch", "vllm", "override", "python", ...
    value: str  # a requirement line or a short value
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"subject": self.subject, "value": self.value, "reason": self.reason}


@dataclass(frozen=True)
class Target:
    """The hardware and interpreter a stack is chosen for (from a spec or flags)."""

    python: str
    arch: str = "x86_64"
    glibc: str | None = None
    driver: str | None = None
    max_cuda: str | None = None  # newest CUDA the driver reports, when declared
    gpus: tuple[str, ...] = ()  # names, one per GPU
    compute_capability: str | None = None  # when the names are not in the matrix

    def to_json(self) -> dict[str, Any]:
        from envcheck.model.codec import to_dict

        data: dict[str, Any] = to_dict(self)
        return data


@dataclass(frozen=True)
class Stack:
    """What to resolve for a target: top-level requirements, indexes and overrides."""

    target: Target
    requirements: tuple[str, ...]
    overrides: tuple[str, ...] = ()
    # bounds on what the stack may pull in (uv --constraints): real upper bounds of its releases
    constraints: tuple[str, ...] = ()
    torch: str | None = None  # "2.5.1"
    torch_variant: str | None = None  # "cu124"
    torch_index_url: str | None = None  # None: the torch wheel on the default index
    choices: tuple[Choice, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    notes: tuple[str, ...] = ()
    manual: tuple[str, ...] = ()  # steps outside the lock (a simulator, a source build)
    env: dict[str, str] = field(default_factory=dict)
    profile: str | None = None

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target.to_json(),
            "profile": self.profile,
            "requirements": list(self.requirements),
            "overrides": list(self.overrides),
            "constraints": list(self.constraints),
            "torch": self.torch,
            "torch_variant": self.torch_variant,
            "torch_index_url": self.torch_index_url,
            "choices": [c.to_json() for c in self.choices],
            "conflicts": [c.to_json() for c in self.conflicts],
            "notes": list(self.notes),
            "manual": list(self.manual),
            "env": dict(self.env),
        }
