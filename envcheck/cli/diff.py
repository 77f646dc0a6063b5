"""``envcheck diff REPORTS...``: the comparison `envcheck cluster` makes, from saved reports
(`envcheck probe -o`, `check --json` or `cluster --json` files, or directories of them), with no
Ray. Exit codes as for `envcheck cluster`; an unreadable file is exit 2 naming it."""

from __future__ import annotations

import argparse
from typing import Any

from envcheck.cli import check, common


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="compare saved reports of several nodes (no Ray needed)",
        description="Check saved node reports and compare them: the drift table and the "
        "cluster rules of `envcheck cluster`, from files (e.g. `srun envcheck probe -o "
        "reports/%N.json`, then `envcheck diff reports/`). Exit codes: 0 nothing at or above "
        "--severity, 1 findings, 2 an unreadable report or usage error, 3 internal error.",
    )
    p.add_argument(
        "reports",
        nargs="+",
        metavar="REPORT",
        help="report files (probe -o, check --json, cluster --json) or directories of *.json",
    )
    check.add_check_options(p)
    common.add_output_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.cli.cluster import render
    from envcheck.commands.cluster import diff_reports

    outcome = diff_reports(args.reports, check.rule_options(args))
    render(outcome, args)
    return outcome.exit_code
