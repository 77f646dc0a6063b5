"""The JSON contract: reports as-is, command results in a versioned envelope (docs/json.md)."""

from __future__ import annotations

import json
from json.encoder import encode_basestring as _encode  # json's own (its C one when built)
from typing import Any

ENVELOPE_SCHEMA = 1


def dumps(data: Any) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)`` and a newline: the same text, written
    here for the plain types a result is made of (a third of the standard library's indenting
    encoder's time, which is pure Python: its C encoder cannot indent); anything else (another
    key type, a subclass, nesting past the recursion limit) goes through ``json.dumps``."""
    out: list[str] = []
    try:
        _put(data, "\n", out)
    except (_Unusual, RecursionError):
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return "".join(out) + "\n"


class _Unusual(Exception):
    """A value the plain writer leaves to ``json.dumps``."""


_INFINITY = float("inf")


def _put(value: Any, indent: str, out: list[str]) -> None:
    """``value`` as json's indenting encoder writes it; ``indent``: a newline and the current
    indentation."""
    kind = type(value)
    if kind is str:
        out.append(_encode(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float:
        if value != value:  # noqa: PLR0124 - NaN, as json tests it
            out.append("NaN")
        elif value == _INFINITY:
            out.append("Infinity")
        elif value == -_INFINITY:
            out.append("-Infinity")
        else:
            out.append(float.__repr__(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{" + inner)
        first = True
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            if first:
                first = False
            else:
                out.append("," + inner)
            out.append(_encode(key))
            out.append(": ")
            _put(item, inner, out)
        out.append(indent + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[" + inner)
        first = True
        for item in value:
            if first:
                first = False
            else:
                out.append("," + inner)
            _put(item, inner, out)
        out.append(indent + "]")
    else:
        raise _Unusual


def envelope(
    command: str,
    status: str,
    exit_code: int,
    data: Any,
    errors: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The contract every ``--json`` command result follows (documented in docs/json.md)."""
    return {
        "schema": ENVELOPE_SCHEMA,
        "command": command,
        "status": status,
        "exit_code": exit_code,
        "data": data,
        "errors": errors or [],
    }
