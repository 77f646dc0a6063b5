"""Saved reports for ``envcheck diff``: `probe -o` files, `check --json` and `cluster --json`
envelopes, or directories of them. Each file is parsed and folded in before the next is read."""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envcheck.cluster.nodes import ReportReader, assign_labels, relabel
from envcheck.errors import InputError, ReportError, UsageError
from envcheck.model.cluster import Member, NodeFailure
from envcheck.model.report import NodeReport, Origin


@dataclass(frozen=True)
class Saved:
    members: tuple[Member, ...]
    reports: tuple[NodeReport, ...]
    failures: tuple[NodeFailure, ...]
    files: int


def expand(paths: Sequence[str]) -> list[Path]:
    files: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
            if not found:
                raise UsageError(f"{text}: no *.json reports in this directory")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise UsageError("give at least one report file (or a directory of them)")
    return files


def _entries(data: Any, where: str) -> tuple[list[tuple[Any, str | None]], list[NodeFailure]]:
    """(report data, Ray address) pairs and recorded failures held by one file."""
    if isinstance(data, Mapping) and "command" in data and "data" in data:
        body = data["data"]
        reports = body.get("reports") if isinstance(body, Mapping) else None
        if not isinstance(reports, list) or not reports:
            raise ReportError(
                f"this `{data.get('command')}` JSON envelope holds no reports "
                "(write them with `envcheck probe -o`, `check --json` or `cluster --json`)",
                where=where,
            )
        nodes = _list(body.get("nodes"), where, "data.nodes")
        addresses = {
            n["node"]: _text(n.get("address"))
            for n in nodes
            if isinstance(n, Mapping) and isinstance(n.get("node"), str) and n.get("address")
        }
        failures = [
            NodeFailure(
                node=str(f.get("node")),
                reason=f"{f.get('reason')} (recorded in {where})",
                node_id=_text(f.get("node_id")),
                address=_text(f.get("address")),
                kind=_kind(f.get("kind")),
            )
            for f in _list(body.get("unreachable"), where, "data.unreachable")
            if isinstance(f, Mapping)
        ]
        entries = [
            (
                r,
                addresses.get(r["node"])
                if isinstance(r, Mapping) and isinstance(r.get("node"), str)
                else None,
            )
            for r in reports
        ]
        return entries, failures
    return [(data, None)], []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any, where: str, key: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ReportError("expected a list", where=where, key=key)
    return value


def _kind(value: Any) -> Literal["timeout", "died", "unschedulable", "error", "unreadable"]:
    for kind in ("timeout", "died", "unschedulable", "unreadable"):
        if value == kind:
            return kind
    return "error"


def _read_file(
    path: Path, reader: ReportReader
) -> tuple[list[tuple[NodeReport, str | None]], list[NodeFailure]]:
    from envcheck.inputs import read_text

    where = str(path)
    text = read_text(where, error=ReportError, too_big="for a saved report")
    data = reader.loads(text, where=where)
    del text
    entries, recorded = _entries(data, where)
    return [(reader.read(entry, where=where), address) for entry, address in entries], recorded


def load_saved(paths: Sequence[str]) -> Saved:
    reader = ReportReader()
    files = expand(paths)
    reports: list[NodeReport] = []
    addresses: list[str | None] = []
    sources: list[str] = []
    failures: list[NodeFailure] = []
    bad: list[InputError] = []
    collecting = gc.isenabled()
    gc.disable()  # parsing makes millions of objects and keeps few: skip cyclic GC passes
    try:
        for path in files:
            try:
                found, recorded = _read_file(path, reader)
            except InputError as exc:
                bad.append(exc)
                continue
            for report, address in found:
                reports.append(report)
                addresses.append(address)
                sources.append(str(path))
            failures.extend(recorded)
    finally:
        if collecting:
            gc.enable()
    if bad:
        first = str(bad[0])
        if len(bad) > 1:
            others = ", ".join(e.where or "?" for e in bad[1:4])
            more = f" and {len(bad) - 4} more" if len(bad) > 4 else ""
            first += f" (also unreadable: {others}{more}; {len(bad)} of {len(files)} files)"
        raise ReportError(first)
    labels = assign_labels(
        [r.node for r in reports],
        [
            (f" ({Path(s).name})", f"@{a}" if a else "")
            for s, a in zip(sources, addresses, strict=True)
        ],
    )
    members = tuple(
        Member(label=label, address=address, source=source)
        for label, address, source in zip(labels, addresses, sources, strict=True)
    )
    labelled = tuple(
        relabel(
            report,
            label,
            Origin(kind="saved", detail=source) if report.origin.kind == "probe" else None,
        )
        for report, label, source in zip(reports, labels, sources, strict=True)
    )
    return Saved(members, labelled, tuple(failures), len(files))
