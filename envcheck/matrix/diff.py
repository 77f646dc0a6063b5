"""What changed between two matrix trees (or two sets of records): entries added, removed and
changed, field by field. Pure: both sides are parsed strictly, nothing is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from envcheck.errors import MatrixError
from envcheck.matrix.load import IDENTITY, parse_file, tree_files
from envcheck.matrix.schema import MatrixFile
from envcheck.model.codec import to_dict


@dataclass(frozen=True)
class FieldChange:
    field: str  # dotted: pins.nvidia-cublas-cu12
    old: Any
    new: Any


@dataclass(frozen=True)
class Change:
    table: str
    key: str
    kind: Literal["added", "removed", "changed"]
    fields: tuple[FieldChange, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": self.key,
            "kind": self.kind,
            "fields": [{"field": f.field, "old": f.old, "new": f.new} for f in self.fields],
        }


def key_text(identity: object) -> str:
    if isinstance(identity, tuple):
        return " ".join(str(part) for part in identity)
    return str(identity)


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, item in data.items():
        path = f"{prefix}{name}"
        if isinstance(item, Mapping) and item:
            out.update(flatten(item, f"{path}."))
        elif item not in (None, [], {}):
            out[path] = item
    return out


def diff_entries(table: str, old: Iterable[object], new: Iterable[object]) -> list[Change]:
    identity = IDENTITY[table]
    before = {identity(e): e for e in old}
    after = {identity(e): e for e in new}
    changes = []
    for ident in sorted(before.keys() | after.keys(), key=_sort_key):
        if ident not in after:
            changes.append(Change(table, key_text(ident), "removed"))
        elif ident not in before:
            changes.append(Change(table, key_text(ident), "added"))
        else:
            a, b = flatten(to_dict(before[ident])), flatten(to_dict(after[ident]))
            diffs = tuple(
                FieldChange(name, a.get(name), b.get(name))
                for name in sorted(a.keys() | b.keys())
                if a.get(name) != b.get(name)
            )
            if diffs:
                changes.append(Change(table, key_text(ident), "changed", diffs))
    return changes


def _sort_key(ident: object) -> tuple[Any, ...]:
    parts = ident if isinstance(ident, tuple) else (ident,)
    return tuple((0, p) if not isinstance(p, str) else (1, p) for p in parts)


def diff_files(old: Sequence[MatrixFile], new: Sequence[MatrixFile]) -> list[Change]:
    changes = []
    for f in fields(MatrixFile):
        if f.name == "meta":
            continue
        before = [e for mfile in old for e in getattr(mfile, f.name)]
        after = [e for mfile in new for e in getattr(mfile, f.name)]
        if before or after:
            changes.extend(diff_entries(f.name, before, after))
    return changes


def load_tree(path: str | Path) -> list[MatrixFile]:
    """A matrix directory (its *.toml and generated/*.toml) or a single file, parsed strictly."""
    target = Path(path)
    if target.is_dir():
        return [parse_file(p) for p in tree_files(target)]
    if target.is_file():
        return [parse_file(target)]
    raise MatrixError("no such file or directory", where=str(target))


def diff_trees(old: str | Path, new: str | Path) -> list[Change]:
    return diff_files(load_tree(old), load_tree(new))


def _show(item: Any) -> str:
    if isinstance(item, list):
        return "[" + ", ".join(map(str, item)) + "]"
    return "(none)" if item is None else str(item)


def render(changes: Sequence[Change]) -> str:
    lines = []
    for change in changes:
        lines.append(f"{change.kind:8} {change.table} {change.key}")
        lines.extend(
            f"           {f.field}: {_show(f.old)} -> {_show(f.new)}" for f in change.fields
        )
    return "\n".join(lines) + ("\n" if lines else "")
