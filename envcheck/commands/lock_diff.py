"""``lock diff OLD NEW``: packages added, removed and moved between two locks, and the rules'
verdict on each side for the same target node."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.model.finding import Finding, Severity


@dataclass(frozen=True)
class Side:
    path: str
    pins: dict[str, str]
    findings: tuple[Finding, ...]
    blocking: int

    @property
    def verdict(self) -> str:
        return "fails the rules" if self.blocking else "passes the rules"


@dataclass(frozen=True)
class LockDiff:
    old: Side
    new: Side
    added: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def code(self) -> int:
        return 1 if self.new.blocking else 0

    def to_json(self) -> dict[str, Any]:
        def side(s: Side) -> dict[str, Any]:
            return {
                "path": s.path,
                "packages": len(s.pins),
                "verdict": s.verdict,
                "findings": [f.to_json() for f in s.findings],
            }

        return {
            "old": side(self.old),
            "new": side(self.new),
            "added": self.added,
            "removed": self.removed,
            "moved": {k: {"old": a, "new": b} for k, (a, b) in self.moved.items()},
        }


def _direction(old: str, new: str) -> str:
    try:
        return "up" if Version(new) > Version(old) else "down"
    except InvalidVersion:
        return "changed"


# the packages whose moves decide whether a GPU stack still works: shown first, in this order
LEADING = (
    "torch",
    "vllm",
    "transformers",
    "flash-attn",
    "ray",
    "xformers",
    "flashinfer-python",
    "triton",
    "deepspeed",
    "accelerate",
    "torchvision",
    "torchaudio",
    "numpy",
)


def _rank(name: str) -> tuple[int, int, str]:
    key = canonicalize_name(name)
    if key in LEADING:
        return (0, LEADING.index(key), key)
    if key.startswith("nvidia-"):  # torch's CUDA wheels (cuBLAS, NCCL, cuDNN)
        return (1, 0, key)
    return (2, 0, key)


def render(diff: LockDiff) -> str:
    """The moves of the packages that matter first (torch, vLLM, transformers, ..., then the
    nvidia-* wheels), then the rest by name; each group: removed, added, moved."""
    lines = [f"--- {diff.old.path} ({len(diff.old.pins)} packages, {diff.old.verdict})"]
    lines.append(f"+++ {diff.new.path} ({len(diff.new.pins)} packages, {diff.new.verdict})")
    rows: list[tuple[tuple[int, int, str], int, str]] = []
    for name, version in diff.removed.items():
        rows.append((_rank(name), 0, f"- {name}=={version}"))
    for name, version in diff.added.items():
        rows.append((_rank(name), 1, f"+ {name}=={version}"))
    for name, (old, new) in diff.moved.items():
        rows.append((_rank(name), 2, f"~ {name} {old} -> {new} ({_direction(old, new)})"))
    rows.sort(key=lambda r: (r[0][0], r[0][1], r[1], r[0][2]))
    leading = [text for rank, _, text in rows if rank[0] < 2]
    rest = [text for rank, _, text in rows if rank[0] == 2]
    if leading and rest:
        lines += [
            "packages that matter for the GPU stack:",
            *leading,
            f"other packages ({len(rest)}):",
            *rest,
        ]
    else:
        lines += leading + rest
    if not (diff.added or diff.removed or diff.moved):
        lines.append("  the locks install the same packages")
    for side, label in ((diff.old, "old"), (diff.new, "new")):
        for finding in side.findings:
            lines.append(f"  {label}: {finding.code} {finding.severity.value}: {finding.message}")
    return "\n".join(lines) + "\n"


def diff_locks(
    old: str, new: str, report: Any, matrix: Any, rules: Any, severity: Severity
) -> LockDiff:
    """Compare two lock files for the node ``report`` describes (its hardware, no packages)."""
    from envcheck.engine import evaluate
    from envcheck.plan.lockfile import read_lock
    from envcheck.plan.target import with_packages

    markers = report.python.data.markers if report.python.is_ok and report.python.data else None
    bare = with_packages(report, {}, origin="target")
    before = {(f.code, f.message) for f in evaluate(bare, matrix, rules).findings}

    def side(path: str) -> Side:
        pins = read_lock(path, markers)
        result = evaluate(with_packages(report, pins, origin=path), matrix, rules)
        brought = tuple(f for f in result.findings if (f.code, f.message) not in before)
        return Side(path, pins, brought, sum(f.severity.at_least(severity) for f in brought))

    a, b = side(old), side(new)
    return LockDiff(
        a,
        b,
        added={k: v for k, v in b.pins.items() if k not in a.pins},
        removed={k: v for k, v in a.pins.items() if k not in b.pins},
        moved={k: (v, b.pins[k]) for k, v in a.pins.items() if k in b.pins and b.pins[k] != v},
    )


_TARGET = re.compile(r"^# Target: (?P<target>.+)$", re.MULTILINE)


def stated_target(path: str) -> dict[str, Any]:
    """The target an envcheck lock's header states ("# Target: Python 3.11; x86_64, glibc 2.35;
    driver 550.54.15; NVIDIA H20 x8"): python, arch, glibc, driver, gpus; {} when it states none."""
    from envcheck.inputs import read_text

    found = _TARGET.search(read_text(path)[:65536])
    if found is None:
        return {}
    out: dict[str, Any] = {}
    for part in (p.strip() for p in found.group("target").split(";")):
        if part.startswith("Python "):
            out["python"] = part.removeprefix("Python ").strip()
        elif part.startswith("driver "):
            out["driver"] = part.removeprefix("driver ").strip()
        elif "glibc" in part or part in ("x86_64", "aarch64"):
            arch, _, glibc = part.partition(", glibc ")
            out["arch"] = arch.strip()
            if glibc:
                out["glibc"] = glibc.strip()
        elif re.search(r"\sx\d+$", part.split(",")[0].strip()):
            out["gpus"] = tuple(g.strip() for g in part.split(","))
    return out
