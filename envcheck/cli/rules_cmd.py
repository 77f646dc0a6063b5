"""``envcheck rules``: the catalogue of rules."""

from __future__ import annotations

import argparse
from typing import Any

from envcheck.cli import common


def add_parser(sub: Any) -> None:
    p = sub.add_parser("rules", help="list every rule", description="List the rule catalogue.")
    p.add_argument("--json", action="store_true", help="print the catalogue as JSON")
    common.add_matrix_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.cli.explain import rule_json
    from envcheck.matrix_validate import load
    from envcheck.rules import all_rules

    rules = all_rules(load(args.matrix))
    if args.json:
        from envcheck.model.envelope import envelope

        common.emit(common.json_text(envelope("rules", "ok", 0, [rule_json(r) for r in rules])))
        return 0
    from rich import box
    from rich.table import Table

    from envcheck.formats.table import console

    table = Table(box=box.SIMPLE, title=f"{len(rules)} rules", title_justify="left")
    table.add_column("code", style="cyan", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("title", overflow="fold")
    table.add_column("from", style="dim", no_wrap=True)
    for rule in rules:
        table.add_row(
            rule.code,
            rule.severity.value,
            rule.title,
            "matrix" if rule.origin == "matrix" else rule.scope.replace("node", "code"),
        )
    console().print(table)
    return 0
