"""``envcheck probe``: an inventory of this node (table, JSON NodeReport or Markdown)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from envcheck.numeric import seconds_arg


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "probe",
        help="inventory this node (never imports what it inspects)",
        description="Inspect this node's GPU, driver, Python, packages, torch build, system, "
        "storage, network and environment. Exit code 0 unless the input is bad.",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the NodeReport as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown for a bug report")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE (JSON unless --markdown); %%N or {hostname} in FILE is "
        "this node's name (for `srun envcheck probe -o reports/%%N.json`), %%j the Slurm job id",
    )
    from envcheck.cli.output import add_force

    add_force(p)
    p.add_argument("--python", metavar="PATH", help="inspect the packages of another interpreter")
    p.add_argument("--redact", action="store_true", help="replace hostnames and IP addresses")
    p.add_argument(
        "--timeout",
        type=seconds_arg,
        default=5.0,
        metavar="S",
        help="per external command (default 5)",
    )
    from envcheck.cli.common import add_deep_option

    add_deep_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from envcheck.commands.probe import ProbeOptions, probe

    report = probe(
        ProbeOptions(
            python=args.python,
            timeout=args.timeout,
            redact=args.redact,
            deep=tuple(args.deep or ()),
            deep_timeout=args.deep_timeout,
        )
    )
    if args.markdown:
        from envcheck.formats.markdown import render_report

        text = render_report(report)
    elif args.json or args.output:
        from envcheck.model.envelope import dumps

        text = dumps(report.to_dict())
    else:
        from envcheck.formats.table import console, print_report

        print_report(report, console())
        return 0
    if args.output:
        from envcheck.model.report import DEEP_NOT_RUN
        from envcheck.output import write

        write(args.output, text, overwrite=args.force)
        missing = [
            s
            for s in report.SECTIONS
            if not getattr(report, s).is_ok and getattr(report, s).reason != DEEP_NOT_RUN
        ]
        note = f"; not available: {', '.join(missing)}" if missing else ""
        sys.stderr.write(f"envcheck: wrote {args.output}{note}\n")
    else:
        sys.stdout.write(text)
    return 0
