"""Write generated matrix records as TOML (the small subset they need; read back by tomllib)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from envcheck.model.codec import to_dict

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def string(value: str) -> str:
    # JSON string escapes are TOML basic-string escapes; TOML also wants DEL escaped
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def key(name: str) -> str:
    return name if _BARE.match(name) else string(name)


def value(item: Any) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, (int, float)):
        return repr(item)
    if isinstance(item, str):
        return string(item)
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(v) for v in item) + "]"
    raise TypeError(f"cannot write {type(item).__name__} as a TOML value")


def _empty(item: Any) -> bool:
    return item is None or item is False or item in ([], {})


def table_array(name: str, records: Sequence[object]) -> str:
    """``[[name]]`` entries; None, false and empty values are left out (they are the defaults)."""
    out = []
    for record in records:
        data = to_dict(record)
        out.append(f"[[{name}]]")
        subtables = []
        for field, item in data.items():
            if _empty(item):
                continue
            if isinstance(item, Mapping):
                subtables.append((field, item))
                continue
            out.append(f"{key(field)} = {value(item)}")
        for field, mapping in subtables:
            out.append(f"[{name}.{key(field)}]")
            out.extend(f"{key(k)} = {value(v)}" for k, v in mapping.items())
        out.append("")
    return "\n".join(out)


def document(header: str, meta: Mapping[str, str], tables: Mapping[str, Sequence[object]]) -> str:
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += ["", "[meta]"]
    lines += [f"{key(k)} = {string(v)}" for k, v in meta.items()]
    lines.append("")
    for name, records in tables.items():
        if records:
            lines.append(table_array(name, records))
    return "\n".join(lines).rstrip("\n") + "\n"
