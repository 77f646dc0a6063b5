"""One ``uv lock`` of a throwaway project for one node, read back: the packages and their
dependency graph from ``uv.lock``, or uv's own explanation when there is no resolution."""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name

from envcheck.model.plan import Stack
from envcheck.plan.resolve import IndexConfig, redact_url
from envcheck.plan.resolver_answer import NotResolved
from envcheck.plan.uvproject import LockRequest, LockTargets, index_unreachable, uv_lock

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Locked = dict[str, tuple[str, list[tuple[str, str | None]]]]  # name -> (version, [(dep, marker)])
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_NOT_FOUND = re.compile(
    r"(?:there is no version of|no versions of)\s+([A-Za-z0-9][A-Za-z0-9._-]*)"
    r"|([A-Za-z0-9][A-Za-z0-9._-]*) was not found in the",
    re.IGNORECASE,
)


class NoResolution(Exception):
    """uv found no resolution; ``detail`` is its explanation."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def lock_once(
    stack: Stack,
    index: IndexConfig,
    variant_names: tuple[str, ...],
    *,
    uv: str,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """``uv lock`` for the stack's target (one Python, Linux, one CPU architecture); raises
    NoResolution (uv's explanation), IndexUnreachable or NotResolved (uv did not run)."""
    target = stack.target
    # pip takes the best version across every index it is configured with: so does this
    # resolution (it checks what pip will do); the torch index stays explicit, for torch only
    lock = LockRequest(
        stack,
        index,
        LockTargets((target.python,), (target.arch,)),
        allow_local=True,
        variant_names=variant_names,
        index_strategy="unsafe-best-match",
    )
    with tempfile.TemporaryDirectory(prefix="envcheck-fix-") as tmp:
        project = Path(tmp)
        result = uv_lock(lock, project, uv=uv, timeout=timeout, env=env)
        if result.problem:
            raise NotResolved(f"uv could not run: {result.problem}")
        if not result.ok:
            detail = (result.stderr or result.stdout).strip().replace(tmp, "the plan")
            unreachable = index_unreachable(detail, lock)
            if unreachable is not None:
                raise unreachable
            if "no solution found" not in detail.lower():
                # not a verdict on the plan (an sdist whose metadata would not build ...)
                raise NotResolved(f"uv failed: {explanation(detail)}")
            raise NoResolution(detail)
        try:
            data = tomllib.loads((project / "uv.lock").read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise NotResolved(f"uv wrote no readable lock: {exc}") from None
    return data


def mentioned(detail: str) -> set[str]:
    return {canonicalize_name(m) for m in _NAME.findall(detail)}


def not_found(detail: str) -> set[str]:
    out: set[str] = set()
    for match in _NOT_FOUND.finditer(detail):
        name = match.group(1) or match.group(2)
        out.add(canonicalize_name(re.split(r"[<>=!~;\[{ ]", name)[0]))
    return out


def explanation(detail: str) -> str:
    """uv's own explanation, trimmed: the lines after ``cause:`` (no hints), on one line."""
    lines = detail.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("cause:")), None)
    body = lines[start:] if start is not None else lines
    kept = []
    for line in body:
        text = line.strip().removeprefix("cause:").strip(" ×╰─▶│")
        if text.lower().startswith("hint:"):
            break
        if text.lower().startswith("no solution found when resolving"):
            continue  # uv's header, not the cause
        if text:
            kept.append(text)
    text = " ".join(kept) or " ".join(detail.split())
    text = text.replace("your project's requirements", "the plan's and the installed requirements")
    text = text.replace("your project", "the node after the plan")
    text = re.sub(r"(?:https?|file)://\S+", lambda m: redact_url(m.group(0)), text)
    return text if len(text) <= 700 else text[:697] + "..."


def lock_packages(data: Mapping[str, object]) -> Locked:
    """uv.lock's packages: name -> (version, [(dependency, marker)]), the project left out."""
    out: Locked = {}
    items = data.get("package", [])
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or "version" not in item:
            continue
        source = item.get("source", {})
        if isinstance(source, dict) and ("virtual" in source or "editable" in source):
            continue
        deps: list[tuple[str, str | None]] = []
        groups = [item.get("dependencies", [])]
        optional = item.get("optional-dependencies", {})
        if isinstance(optional, dict):
            groups += list(optional.values())
        for group in groups:
            for dep in group if isinstance(group, list) else []:
                if isinstance(dep, dict) and "name" in dep:
                    deps.append((canonicalize_name(str(dep["name"])), dep.get("marker")))
        name = canonicalize_name(str(item.get("name", "")))
        out.setdefault(name, (str(item["version"]), deps))
    return out


def applies(marker: str | None, env: Mapping[str, str]) -> bool:
    if not marker:
        return True
    try:
        return Marker(marker).evaluate(dict(env))
    except (InvalidMarker, KeyError, ValueError):
        return True
