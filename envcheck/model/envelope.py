"""The JSON contract: reports as-is, command results in a versioned envelope (docs/json.md)."""

from __future__ import annotations

import json
from typing import Any

ENVELOPE_SCHEMA = 1


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


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
