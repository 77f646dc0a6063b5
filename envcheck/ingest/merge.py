"""Several partial reports of one node become one (``--from A --from B``, ``--spec`` too).

Section by section: a section only one source knows is taken from it; a section several know is
merged field by field, the first source that states a field giving its value (the order is
``--spec`` first, then the ``--from`` files as given). Lists merge by identity: packages by
distribution name (the union), GPUs by index. A field two sources state differently is a
conflict: the first source's value is kept and the section's notes say what the other said.
Every merged section's notes name the sources its facts came from. A package list is partial
only when every list is (a complete list plus a partial one is complete).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from envcheck.ingest.common import now
from envcheck.model.report import Distribution, Gpu, NodeReport, Origin, PackagesInfo, TorchBuild
from envcheck.model.section import QUERY_FAILED, STATED_ABSENT, Section, Status
from envcheck.probes.torch_build import is_cuda_dist

QUIET = {"driver_source", "gpus_reason", "source", "installer", "location", "executable"}


def source_name(report: NodeReport) -> str:
    return report.origin.detail or report.node


class _Merge:
    def __init__(self) -> None:
        self.conflicts: list[str] = []

    def value(self, a: Any, b: Any, path: str, names: tuple[str, str]) -> Any:
        if _empty(a):
            return b
        if _empty(b):
            return a
        if isinstance(a, PackagesInfo) and isinstance(b, PackagesInfo):
            return self.packages(a, b, path, names)
        if dataclasses.is_dataclass(a) and type(a) is type(b):
            changes = {}
            for f in dataclasses.fields(a):
                if not f.init:
                    continue
                old, new = getattr(a, f.name), getattr(b, f.name)
                if _is_default(f, old) and not _is_default(f, new):
                    changes[f.name] = new
                elif not _is_default(f, new):
                    changes[f.name] = self.value(old, new, f"{path}.{f.name}", names)
            return dataclasses.replace(a, **changes)  # type: ignore[type-var]
        if isinstance(a, tuple) and isinstance(b, tuple):
            if a and isinstance(a[0], Gpu):
                return self.gpus(a, b, path, names)
            return a
        if isinstance(a, dict) and isinstance(b, dict):
            merged = dict(b)
            merged.update(a)
            for key in a.keys() & b.keys():
                if a[key] != b[key]:
                    self.conflict(f"{path}.{key}", a[key], b[key], names)
            return merged
        if not _same(a, b):
            if isinstance(a, str) and isinstance(b, str) and _truncated(a, b):
                return b
            if path.rsplit(".", 1)[-1] not in QUIET:
                self.conflict(path, a, b, names)
        return a

    def conflict(self, path: str, a: Any, b: Any, names: tuple[str, str]) -> None:
        self.conflicts.append(
            f"conflict: {path} is {a!r} in {names[0]} but {b!r} in {names[1]}; kept {names[0]}'s"
        )

    def gpus(
        self, a: tuple[Gpu, ...], b: tuple[Gpu, ...], path: str, names: tuple[str, str]
    ) -> tuple[Gpu, ...]:
        if len(a) != len(b):
            self.conflict(f"{path} (count)", len(a), len(b), names)
        by_index = {g.index: g for g in b}
        return tuple(
            self.value(g, by_index[g.index], f"{path}[{g.index}]", names)
            if g.index in by_index
            else g
            for g in a
        )

    def packages(
        self, a: PackagesInfo, b: PackagesInfo, path: str, names: tuple[str, str]
    ) -> PackagesInfo:
        merged: dict[str, Distribution] = {d.key: d for d in a.distributions}
        order = [d.key for d in a.distributions]
        for dist in b.distributions:
            if dist.key not in merged:
                merged[dist.key] = dist
                order.append(dist.key)
                continue
            first = merged[dist.key]
            if first.version != dist.version and "unknown" not in (first.version, dist.version):
                self.conflict(f"{path}.{dist.key}", first.version, dist.version, names)
            if first.version == "unknown":
                first = dataclasses.replace(first, version=dist.version)
            merged[dist.key] = self.value(first, dist, f"{path}.{dist.key}", names)
        partial = a.partial if a.partial and b.partial else None
        return PackagesInfo(
            distributions=tuple(merged[k] for k in order),
            broken=a.broken + b.broken,
            search_path=a.search_path or b.search_path,
            partial=partial,
        )


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (tuple, dict, str)) and not value)


def _is_default(f: dataclasses.Field[Any], value: Any) -> bool:
    if _empty(value):
        return True
    if f.default is not dataclasses.MISSING:
        return bool(value == f.default)
    return False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return bool(a == b)


def _truncated(a: str, b: str) -> bool:
    """nvidia-smi shortens long names with '...': the full name wins."""
    return a.endswith("...") and b.startswith(a[:-3].rstrip())


def merge(reports: Sequence[NodeReport]) -> NodeReport:
    """One report from several descriptions of the same node (the first wins conflicts)."""
    if not reports:
        raise ValueError("nothing to merge")
    if len(reports) == 1:
        return reports[0]
    sections: dict[str, Section[Any]] = {}
    for name in NodeReport.SECTIONS:
        parts = [(r, getattr(r, name)) for r in reports]
        known = [(r, s) for r, s in parts if s.is_ok]
        if not known:
            status = (
                Status.ERROR
                if any(s.status is Status.ERROR for _, s in parts)
                else Status.UNAVAILABLE
            )
            reasons = list(dict.fromkeys(s.reason for _, s in parts if s.reason))
            # what an input states about the fact (absent, its query failed) stays said
            said = tuple(
                dict.fromkeys(
                    n for _, s in parts for n in s.notes if n in (STATED_ABSENT, QUERY_FAILED)
                )
            )
            sections[name] = Section(status, reason="; ".join(reasons) or None, notes=said)
            continue
        merger = _Merge()
        first_report, first = known[0]
        data = first.data
        notes = [f"{source_name(first_report)}: {n}" for n in first.notes]
        for report, section in known[1:]:
            names = (source_name(first_report), source_name(report))
            data = merger.value(data, section.data, name, names)
            notes += [f"{source_name(report)}: {n}" for n in section.notes]
        sources = ", ".join(source_name(r) for r, _ in known)
        sections[name] = Section.ok(
            data,
            source=" + ".join(s.source or "?" for _, s in known),
            notes=(f"from {sources}", *notes, *merger.conflicts),
        )
    sections["torch"] = _torch(sections["torch"], sections["packages"])
    merged = reports[0].with_sections(**sections)
    return dataclasses.replace(
        merged,
        created_at=now(),
        origin=Origin(kind="ingested", detail=" + ".join(source_name(r) for r in reports)),
        redacted=any(r.redacted for r in reports),
    )


def _torch(torch: Section[TorchBuild], packages: Section[PackagesInfo]) -> Section[TorchBuild]:
    """torch's installed nvidia-* wheels come from the merged package list."""
    if not packages.is_ok or packages.data is None:
        return torch
    dist = packages.data.get("torch")
    if torch.is_ok and torch.data is not None and not torch.data.version and dist is not None:
        # a log quoted torch's arch list but not its release: the package list names the build
        from envcheck.ingest.common import torch_section

        listed = torch_section(packages.data, packages.source or "the package list")
        if listed.is_ok and listed.data is not None:
            data = dataclasses.replace(listed.data, arch_list=torch.data.arch_list)
            torch = Section.ok(data, source=f"{listed.source} + {torch.source}", notes=torch.notes)
    if not torch.is_ok or torch.data is None:
        if dist is None:
            return torch
        build = TorchBuild(version=dist.version)
        torch = Section.ok(build, source=packages.source, notes=("from the package list",))
    assert torch.data is not None
    installed = {d.key: d.version for d in packages.data.distributions if is_cuda_dist(d.name)}
    return dataclasses.replace(
        torch, data=dataclasses.replace(torch.data, installed_cuda=installed)
    )
