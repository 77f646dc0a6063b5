"""SARIF 2.1.0 (``--output-format sarif``), for GitHub code scanning and other SARIF readers:
the rules that ran, from the catalogue with their help text, and one result per finding with
its level and a location: the file that was checked (a spec, a saved report, a pasted dump, a
lock file, the log for triage, with its line), else a logical location naming the node."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from envcheck.formats.ci import LEVELS, CiRule, CiRun, fix_lines
from envcheck.version import __version__

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    """A file name as a URI reference (relative stays relative; spaces and the like quoted)."""
    quoted = quote(path, safe="/:@-._~")
    return f"file://{quoted}" if path.startswith("/") else quoted


def _rule(rule: CiRule) -> dict[str, Any]:
    help_text = rule.fix or rule.what or rule.title
    out: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.what or rule.title},
        "help": {"text": help_text, "markdown": f"**Fix**: {help_text}"},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": [rule.family]},
    }
    web = [r for r in rule.references if r.startswith(("https://", "http://"))]
    if web:
        out["helpUri"] = web[0]
    return out


def render_sarif(run: CiRun) -> str:
    index = {rule.code: i for i, rule in enumerate(run.rules)}
    results = []
    for r in run.results:
        if r.file:
            physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(r.file)}}
            if r.line is not None:
                physical["region"] = {"startLine": r.line}
            location: dict[str, Any] = {"physicalLocation": physical}
        else:
            location = {"logicalLocations": [{"name": r.node, "kind": "node"}]}
        result: dict[str, Any] = {
            "ruleId": r.code,
            "level": LEVELS[r.severity],
            "message": {"text": "\n".join([f"{r.title}: {r.message}", *fix_lines(r.fix)])},
            "locations": [location],
            "properties": {"node": r.node, "failing": r.failing},
        }
        if r.code in index:
            result["ruleIndex"] = index[r.code]
        if r.fix is not None:
            result["properties"]["fix"] = r.fix.to_json()
        results.append(result)
    notifications = [
        {"level": "error", "message": {"text": e}, "descriptor": {"id": "internal-error"}}
        for e in run.errors
    ]
    notifications += [
        {
            "level": "note",
            "message": {"text": f"{s.code} skipped: {s.reason}"},
            "descriptor": {"id": s.code},
        }
        for s in run.skipped
    ]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "envcheck",
                        "version": __version__,
                        "rules": [_rule(rule) for rule in run.rules],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not run.errors,
                        "exitCode": run.exit_code,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
