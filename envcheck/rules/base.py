"""What a rule is: a stable code, a default severity, sectioned docs and a check over Facts.

Code rules are functions decorated with ``@rule``; their docstring's first line is the title and
its ``## `` sections are the docs that ``envcheck explain`` prints. Data rules come from the
matrix's ``[[known_bad]]`` entries (see rules/data.py) and have the same shape.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from envcheck.facts.skip import Skip
from envcheck.model.finding import Finding, Fix, Severity
from envcheck.patterns import lazy

if TYPE_CHECKING:
    from envcheck.facts.node import Facts
    from envcheck.rules.cluster.model import ClusterFacts, ClusterHit

DOC_SECTIONS = ("What it checks", "Why it matters", "Example", "Fix", "References")
CODE_PATTERN = lazy(r"^[A-Z]{2,4}\d{3}$")
FAMILIES = {
    "DRV": "NVIDIA driver",
    "TOR": "torch build vs GPUs and companion packages",
    "CUD": "CUDA libraries",
    "PKG": "installed packages",
    "VLM": "vLLM",
    "RAY": "Ray",
    "NET": "networking for Gloo, NCCL and Ray",
    "SIM": "Isaac Sim and OmniGibson",
    "PY": "Python",
    "SYS": "system",
    "CLU": "cluster (across nodes)",
    "GPU": "GPU health and CUDA driver, asked directly (--deep)",
    "COV": "coverage: what the matrix does not know about the node",
}


class NotStated(Skip):
    """Raised by a ``@from_log`` function when the line does not state what would establish
    the cause (Ray's version-mismatch line cut before the versions): the cause stays open.
    ``fix``, when given, is the concrete fix the line's facts allow for the open cause (the
    most common working one), printed as its condition instead of the rule's documented fix."""

    def __init__(self, reason: str, fact: str | None = None, fix: str | None = None) -> None:
        super().__init__(reason, fact)
        self.fix = fix


class StatedOtherwise(Skip):
    """Raised by a ``@from_log`` function when the facts the line states rule the cause out,
    with the reason in the line's own terms (torch's numbers showing that other processes held
    nothing): the cause is ruled out, worded by ``reason``, whatever the node shows."""


class NodeDecides(NotStated):
    """A ``NotStated`` for a line that only sometimes decides its cause (a build's wrapper line
    decides CUD110 only where the package's toolkit floor applies): where the node's own check
    of the rule ran, its verdict stands (ruled out when it did not fire); elsewhere the cause
    stays open as with ``NotStated``."""


@dataclass(frozen=True)
class Hit:
    """One problem a rule found; the engine turns it into a Finding."""

    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: Fix | None = None
    severity: Severity | None = None  # overrides the rule's default


@dataclass(frozen=True)
class RuleDoc:
    """A rule's documentation sections (``envcheck explain``)."""

    what: str
    why: str
    example: str
    fix: str
    references: tuple[str, ...]

    def sections(self) -> list[tuple[str, str]]:
        refs = "\n".join(f"- {r}" for r in self.references)
        return list(
            zip(DOC_SECTIONS, (self.what, self.why, self.example, self.fix, refs), strict=True)
        )


CheckFn = Callable[["Facts"], Iterable[Hit]]
ClusterCheckFn = Callable[["ClusterFacts"], Iterable["ClusterHit"]]


@dataclass(frozen=True)
class Rule:
    """A rule: its code, severity, docs and the check it runs on a node's facts."""

    code: str
    name: str
    severity: Severity
    title: str
    doc: RuleDoc
    check: CheckFn
    origin: Literal["code", "matrix"] = "code"
    verified: bool = True
    # "cluster" rules compare nodes (envcheck cluster / diff); `check` never runs them, the engine
    # skips them, and `cluster_check` holds their check (see rules/cluster/model.py). "lock"
    # rules are the lock gate's findings (check --lock, lock --verify: rules/lock.py)
    scope: Literal["node", "cluster", "lock"] = "node"
    cluster_check: ClusterCheckFn | None = None

    @property
    def family(self) -> str:
        return family_of(self.code)

    def finding(self, hit: Hit, node: str) -> Finding:
        """The Finding a hit of this rule on ``node`` reports."""
        return Finding(
            code=self.code,
            severity=hit.severity or self.severity,
            title=self.title,
            message=hit.message,
            node=node,
            evidence=hit.evidence,
            fix=hit.fix,
            references=self.doc.references,
        )


def family_of(code: str) -> str:
    r"""A rule code's family: its letters (``re.sub(r"\d+$", "", code)``, without the regular
    expression for a code of ASCII letters and digits)."""
    if code.isascii() and code.isalnum():
        return code.rstrip("0123456789")
    return re.sub(r"\d+$", "", code)


_REGISTRY: list[Rule] = []


def register_not_per_node(
    code: str,
    name: str,
    severity: Severity,
    docstring: str | None,
    scope: Literal["cluster", "lock"],
    cluster_check: ClusterCheckFn | None = None,
) -> None:
    """Register a rule that ``check`` never runs on a node (a cluster comparison, a lock gate
    finding): its docstring supplies the title and docs; on a node it is skipped, saying why."""
    reason = {
        "cluster": "cluster rule: it compares nodes (envcheck cluster / envcheck diff)",
        "lock": "lock rule: it checks a lock file against the node (envcheck check --lock)",
    }[scope]

    def not_per_node(facts: Facts) -> Iterable[Any]:
        raise Skip(reason)

    title, doc = docstring_doc(docstring or "")
    _REGISTRY.append(
        Rule(
            code=code,
            name=name,
            severity=severity,
            title=title,
            doc=doc,
            check=not_per_node,
            scope=scope,
            cluster_check=cluster_check,
        )
    )


class LazyDoc(RuleDoc):
    """A rule's ``RuleDoc`` made when first read: a ``check`` reads the docs of the few rules
    that found something (their references), not of the ~270 it builds. ``make`` gives the
    ``RuleDoc`` (a code rule's docstring parsed, a data rule's entry described). Answers,
    compares and prints as that ``RuleDoc``."""

    def __init__(self, make: Callable[[], RuleDoc]) -> None:
        object.__setattr__(self, "_make", make)

    def __getattr__(self, name: str) -> Any:
        # reached only while the fields are unset (or for a name no RuleDoc has)
        if name.startswith("__") or name == "_make":
            raise AttributeError(name)
        made = self._make()
        for key in ("what", "why", "example", "fix", "references"):
            object.__setattr__(self, key, getattr(made, key))
        return object.__getattribute__(self, name)

    def _fields(self) -> tuple[Any, ...]:
        return (self.what, self.why, self.example, self.fix, self.references)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RuleDoc):
            return self._fields() == (
                other.what,
                other.why,
                other.example,
                other.fix,
                other.references,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "RuleDoc" + RuleDoc.__repr__(self).removeprefix(type(self).__qualname__)


def _title(text: str) -> str:
    """``parse_doc(text)[0]`` without parsing the sections."""
    first = text.expandtabs().split("\n", 1)[0].strip()
    return first if first else parse_doc(text)[0]


def log_only_rule(
    code: str,
    name: str,
    severity: str,
    title: str,
    module: str,
    function: str,
    reason: str,
    fact: str | None,
) -> Rule:
    """A rule of rules/log_only.py as its module registers it, the module not imported (until
    its docs are read): its check raises at once the ``Skip`` the module's check raises at once."""

    def read_doc() -> str:
        import importlib

        return str(getattr(importlib.import_module(module), function).__doc__ or "")

    def check(facts: Facts) -> Iterable[Hit]:
        raise Skip(reason, fact)

    return Rule(
        code=code,
        name=name,
        severity=Severity(severity),
        title=title,
        doc=LazyDoc(lambda: parse_doc(read_doc())[1]),
        check=check,
    )


def docstring_doc(text: str) -> tuple[str, RuleDoc]:
    """``parse_doc(text)``, the sections parsed when first read."""
    return _title(text), LazyDoc(lambda: parse_doc(text)[1])


def parse_doc(text: str) -> tuple[str, RuleDoc]:
    """Title and sections of a rule docstring; a missing section is an empty string."""
    text = inspect.cleandoc(text)
    title, _, rest = text.partition("\n")
    parts: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            parts[current] = ""
        elif current is not None:
            parts[current] += line + "\n"
    refs = tuple(
        line[2:].strip()
        for line in parts.get("References", "").splitlines()
        if line.startswith("- ")
    )
    doc = RuleDoc(
        what=parts.get("What it checks", "").strip(),
        why=parts.get("Why it matters", "").strip(),
        example=parts.get("Example", "").strip(),
        fix=parts.get("Fix", "").strip(),
        references=refs,
    )
    return title.strip(), doc


def rule(code: str, name: str, severity: Severity) -> Callable[[CheckFn], CheckFn]:
    """Register a code rule; its docstring supplies the title and docs."""

    def register(fn: CheckFn) -> CheckFn:
        title, doc = docstring_doc(fn.__doc__ or "")
        _REGISTRY.append(
            Rule(code=code, name=name, severity=severity, title=title, doc=doc, check=fn)
        )
        return fn

    return register


# a line the program itself logged below warning level: NCCL's INFO lines, a logger's INFO
INFORMATIONAL = lazy(r"\bNCCL INFO\b|\[INFO\]|(?:^|[\s|:])INFO(?:[\s|:\]]|$)")


@dataclass(frozen=True)
class LogLine:
    """A log line that establishes a rule's cause by itself (a signature's ``confirms``), with
    the facts the log's matched lines state (extract.FACTS names -> the first value read)."""

    signature: str
    line: int
    text: str
    stated: Mapping[str, str] = field(default_factory=dict)

    def number(self, name: str) -> float | None:
        try:
            return float(self.stated[name])
        except (KeyError, ValueError):
            return None

    @property
    def informational(self) -> bool:
        """Whether the program logged this line as information, not as a failure (``NCCL INFO
        NET/IB : No device found.``, printed on every healthy node without InfiniBand): such a
        line states a fact; only a rule's ``@from_log`` reading of it may confirm a cause."""
        return bool(INFORMATIONAL.search(self.text))


# code -> how the rule words a cause that a log line establishes (``@from_log``)
LogHitFn = Callable[["Facts", LogLine], "Hit | None"]
_FROM_LOG: dict[str, LogHitFn] = {}


def from_log(code: str) -> Callable[[LogHitFn], LogHitFn]:
    """Register how rule ``code`` turns a line that establishes its cause into a finding, from
    what the log states and what is known of the node (``facts``): return the Hit (message and
    the concrete fix), None when the facts the line states show it is not this cause (Ray's
    version-mismatch line with equal versions), raise Skip when nothing concrete can be said
    (triage then prints the rule's documented fix), or NotStated when the line does not state
    what would establish the cause (it stays open)."""

    def register(fn: LogHitFn) -> LogHitFn:
        if code in _FROM_LOG:  # one reading per code: a second would silently replace the first
            raise ValueError(f"@from_log({code!r}) registered twice: {_FROM_LOG[code].__module__}")
        _FROM_LOG[code] = fn
        return fn

    return register
