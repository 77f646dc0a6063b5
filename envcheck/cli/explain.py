"""``envcheck explain CODE``: what a rule checks, why it matters, an example, the fix, sources."""

from __future__ import annotations

import argparse
from typing import Any

from envcheck.cli import common
from envcheck.errors import UsageError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help="explain a rule", description="Show a rule's documentation.")
    p.add_argument("code", metavar="CODE", help="a rule code such as CUD102 (or its name)")
    p.add_argument("--json", action="store_true", help="print the rule as JSON")
    common.add_matrix_option(p)
    p.set_defaults(run=run)


def rule_json(rule: Any) -> dict[str, Any]:
    doc = rule.doc
    return {
        "code": rule.code,
        "name": rule.name,
        "family": rule.family,
        "severity": rule.severity.value,
        "title": rule.title,
        "origin": rule.origin,
        "scope": rule.scope,
        "verified": rule.verified,
        "docs": {
            "what": doc.what,
            "why": doc.why,
            "example": doc.example,
            "fix": doc.fix,
            "references": list(doc.references),
        },
    }


def run(args: argparse.Namespace) -> int:
    from envcheck.matrix_validate import load
    from envcheck.rules import all_rules, find

    rule = find(all_rules(load(args.matrix)), args.code)
    if rule is None:
        raise UsageError(f"unknown rule {args.code!r} (see `envcheck rules`)")
    if args.json:
        from envcheck.model.envelope import envelope

        common.emit(common.json_text(envelope("explain", "ok", 0, rule_json(rule))))
        return 0
    from rich.markdown import Markdown

    from envcheck.formats.markdown import render_rule
    from envcheck.formats.table import console

    console().print(Markdown(render_rule(rule)))
    return 0
