"""Real-format inputs for the reliability tests: a saved report as `envcheck probe -o` writes
it, with whatever an older envcheck (or a hand) left in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envcheck.ingest.spec import parse_spec, spec_to_report
from tests.specs import TINYZERO


def report_data(**env: str) -> dict[str, Any]:
    """The TinyZero node as a saved report's JSON data; ``env`` is planted unredacted."""
    data: dict[str, Any] = spec_to_report(parse_spec(TINYZERO, "node.toml"), "node.toml").to_dict()
    if env:
        data["env"]["data"]["variables"].update(env)
        data["env"]["data"]["redacted"] = []
    return data


def saved_report(directory: Path, name: str = "node.json", **kwargs: Any) -> Path:
    path = directory / name
    path.write_text(json.dumps(report_data(**kwargs.get("env", {})), indent=2))
    return path
