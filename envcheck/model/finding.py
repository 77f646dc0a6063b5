"""Findings: what a rule says about a node, with evidence and a declarative fix."""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

Applicability = Literal["safe", "unsafe", "manual"]


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


@dataclass(frozen=True)
class Action:
    """One step of a fix.

    ``pip_install`` / ``pip_uninstall`` carry requirement strings; ``env`` sets variables;
    ``manual`` is a step envcheck cannot do (upgrade the driver, resize /dev/shm).
    """

    kind: Literal["pip_install", "pip_uninstall", "env", "manual"]
    packages: tuple[str, ...] = ()
    index_url: str | None = None
    flags: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    text: str | None = None
    # the interpreter whose pip runs it (`/path/python -m pip`): the one checked, when known
    python: str | None = None
    # pins pip must keep while it installs (`-c`): a fix plan's later steps carry the whole
    # resolved set, so pip cannot backtrack torch or undo an earlier step (plan/planner.py)
    constraints: tuple[str, ...] = ()

    def command(self) -> str:
        pip = [self.python, "-m", "pip"] if self.python else ["pip"]
        if self.kind == "pip_install":
            argv = [*pip, "install", *self.flags, *self.packages]
            if self.index_url:
                argv += ["--index-url", self.index_url]
            text = shlex.join(argv)
            if self.constraints:
                # (bash) one line: the constraints as a file pip reads, nothing left behind
                pins = " ".join(shlex.quote(c) for c in self.constraints)
                text += f" -c <(printf '%s\\n' {pins})"
            return text
        if self.kind == "pip_uninstall":
            return shlex.join([*pip, "uninstall", "-y", *self.packages])
        if self.kind == "env":
            return "export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        return f"# {self.text}"


@dataclass(frozen=True)
class Fix:
    """What to do about a finding: a summary, how safe it is, and the actions."""

    summary: str
    applicability: Applicability
    actions: tuple[Action, ...] = ()

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(a.command() for a in self.actions)

    def to_json(self) -> dict[str, Any]:
        from envcheck.model.codec import to_dict

        return {
            "summary": self.summary,
            "commands": list(self.commands),
            "applicability": self.applicability,
            "actions": to_dict(self.actions),
        }


@dataclass(frozen=True)
class Finding:
    """A rule's verdict on a node: what is wrong, the evidence and the fix."""

    code: str
    severity: Severity
    title: str
    message: str
    node: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: Fix | None = None
    references: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "title": self.title,
            "message": self.message,
            "node": self.node,
            "evidence": self.evidence,
            "fix": self.fix.to_json() if self.fix else None,
            "references": list(self.references),
        }


@dataclass(frozen=True)
class Skipped:
    """A rule that did not run on a node, and the unknown fact that stopped it."""

    code: str
    reason: str
    node: str | None = None
    fact: str | None = None  # the unknown fact the rule needed ("packages.vllm", "gpu.gpus")

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "reason": self.reason, "node": self.node, "fact": self.fact}


# facts every GPU training node has: a rule skipped for one of them is a gap that matters
# (`--strict`); a skip for an unknown environment variable, disk, interface or an optional
# package (Ray, Isaac Sim, ...) does not
CORE_FACTS = (
    "gpu.gpus",
    "gpu.driver_version",
    "gpu.cuda_driver_version",
    "torch",
    "python",
    "packages.torch",
    "packages.vllm",
    "packages.nvidia-",
)


def skip_matters(skipped: Skipped) -> bool:
    fact = skipped.fact
    return fact is not None and (fact in ("gpu", "packages") or fact.startswith(CORE_FACTS))


def skip_kinds(skipped: tuple[Skipped, ...]) -> dict[str, int]:
    """How many rules were skipped per unknown fact (its first part: packages, env, gpu...)."""
    counts: dict[str, int] = {}
    for s in skipped:
        kind = (s.fact or "unnamed").split(".", 1)[0].split("[", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass(frozen=True)
class CheckResult:
    """The findings, skipped rules and errors of evaluating the rules."""

    findings: tuple[Finding, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    rules_run: int = 0
    errors: tuple[str, ...] = ()

    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    def at_or_above(self, threshold: Severity) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity.at_least(threshold))
