"""What ``lock`` takes and returns (shared by ``lock.py`` and ``lock_resolve.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from envcheck.model.finding import Finding, Severity
from envcheck.model.plan import Stack

LockFormat = Literal["requirements", "pylock", "conda"]
EXIT_INDEX = 4


@dataclass(frozen=True)
class LockOptions:
    requirements: tuple[str, ...] = ()
    requirement_files: tuple[str, ...] = ()
    profile: str | None = None
    allow_unverified: bool = False
    spec: str | None = None
    python: tuple[str, ...] = ()  # the first is the rules' target; more make a multi-target lock
    gpus: tuple[str, ...] = ()
    driver: str | None = None
    arch: tuple[str, ...] = ()
    glibc: str | None = None
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    allow_local: bool = False
    format: LockFormat = "requirements"
    force: bool = False
    severity: Severity = Severity.ERROR
    dry_run: bool = False
    matrix: tuple[str, ...] = ()
    exclude_newer: str | None = None
    upgrade_packages: tuple[str, ...] = ()
    from_lock: str | None = None


@dataclass(frozen=True)
class LockResult:
    code: int
    status: str  # ok | conflict | unresolved | findings | unreachable
    stack: Stack
    message: str
    text: str | None = None  # the lock, when one was produced
    detail: str | None = None  # the resolver's own explanation
    findings: tuple[Finding, ...] = ()
    pins: dict[str, str] = field(default_factory=dict)
    blocking: int = 0
    notes: tuple[str, ...] = ()


__all__ = ["EXIT_INDEX", "LockFormat", "LockOptions", "LockResult"]
