"""``envcheck triage LOG|-``: what the error lines of a log mean, most likely cause first, and
which causes the node confirms or rules out.

Exit codes: 0 no known signature (or only noise), 1 the log shows a known failure, 2 bad input
or usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import os
from contextlib import nullcontext
from typing import Any

from envcheck.cli import common, from_opts
from envcheck.model.report import NodeReport
from envcheck.numeric import seconds_arg


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "triage",
        help="explain a job log's error lines and check their causes on a node",
        description="Scan a log (a file or '-' for stdin; gzip is decompressed) for known error signatures; "
        "for each: line, meaning, ranked causes and, with a node (--report, --from, --spec, or "
        "this node probed by default), whether the node confirms or rules out each cause; "
        "then what the environment given (--report, --from, --spec, or pasted in the log) "
        "shows itself. Exit codes: 0 no known signature (or only noise), 1 a known failure "
        "or an error the given environment shows, 2 bad input.",
    )
    p.add_argument("log", metavar="LOG", help="the log file, or '-' for standard input")
    src = p.add_argument_group("which node the causes are checked on")
    src.add_argument("--spec", metavar="FILE", help="a declared stack (TOML)")
    src.add_argument("--report", metavar="FILE", help="a report saved by `envcheck probe -o`")
    src.add_argument(
        "--no-probe",
        action="store_true",
        help="do not probe this node; causes stay unchecked unless a node is given",
    )
    src.add_argument(
        "--timeout", type=seconds_arg, default=5.0, metavar="S", help="per command while probing"
    )
    from_opts.add_from_options(p)
    opts = p.add_argument_group("scanning")
    opts.add_argument(
        "--engine",
        choices=("auto", "grep", "re2", "re"),
        default="auto",
        help="matcher (auto): re for a file up to 4 MiB; else GNU grep when on PATH, else RE2 when google-re2 is installed, else the standard library's re",
    )
    common.add_matrix_option(opts)
    out = p.add_argument_group("output")
    common.add_format_options(out)
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the result to FILE (JSON, or the --output-format chosen other than text)",
    )
    from envcheck.cli.output import add_force

    add_force(out)
    p.set_defaults(run=run, python=None, redact=False)


def _node(args: argparse.Namespace) -> tuple[NodeReport | None, str]:
    """The node to check causes on, and a sentence saying where its facts come from."""
    if args.from_ or args.from_format:
        from envcheck.ingest.common import NoFactsError

        try:
            report = common.obtain_report(args)
        except NoFactsError as exc:
            if args.spec:  # a declared node is still there: the error stays an error
                raise
            # a pasted text with no environment fact (prose, log lines): the log's own facts
            # still confirm causes, so the triage goes on without a node and says why
            return None, f"not checked against --from: {exc}"
        return report, f"checked against {report.origin.detail or report.node}"
    if args.spec or args.report:
        report = common.obtain_report(args)
        label = f"the declared spec {args.spec}" if args.spec else f"the saved report {args.report}"
        return report, f"checked against {label} (node {report.node})"
    if args.no_probe:
        return None, "not checked: --no-probe and no --report/--from/--spec given"
    report = common.obtain_report(args)
    gpus = report.gpu.data.gpus if report.gpu.is_ok and report.gpu.data is not None else None
    if not gpus:
        return None, (
            "not checked: this machine has no visible NVIDIA GPU, so it is not the node the "
            "log came from; pass --report, --from or --spec"
        )
    return report, f"checked against this node ({report.node}, probed now)"


def _stated(args: argparse.Namespace) -> tuple[NodeReport | None, str]:
    """The node the user's inputs describe (--from, --spec, --report), never this machine."""
    if args.from_ or args.from_format or args.spec or args.report:
        return _node(args)
    return None, "not checked: no known signature matched"


LARGE = 32 * 1024 * 1024  # bytes of log from which a scan shows a spinner on a terminal


def _large(log: str) -> bool:
    if log == "-":
        return True
    try:
        return os.path.getsize(log) >= LARGE
    except OSError:
        return False


def run(args: argparse.Namespace) -> int:
    from envcheck.commands.triage import TriageOptions, triage_log

    if args.log == "-" and "-" in (args.from_ or []):
        from envcheck.errors import UsageError

        raise UsageError("the log and --from cannot both be standard input")
    options = TriageOptions(engine=args.engine, matrix=tuple(args.matrix))
    from envcheck.formats.progress import status

    with status(f"scanning {args.log}") if _large(args.log) else nullcontext():
        result = triage_log(args.log, options, lambda: _node(args), lambda: _stated(args))
    scan = result.scan
    from envcheck.model.envelope import envelope

    env = envelope("triage", result.status, result.exit_code, result.to_json())
    from envcheck.formats.ci import from_triage
    from envcheck.formats.ci_output import CI_FORMATS
    from envcheck.formats.ci_output import render as render_ci

    text = None
    if args.output_format in CI_FORMATS:
        text = render_ci(args.output_format, from_triage(result))
        common.emit(text)
    elif args.json:
        common.emit(common.json_text(env))
    elif args.markdown:
        from envcheck.formats.triage_view import markdown

        common.emit(markdown(result))
    else:
        from envcheck.formats.table import console
        from envcheck.formats.triage_view import print_triage

        print_triage(result, console())
    if args.output:
        text = common.json_text(env) if text is None else text
        common.write_output(args.output, text, overwrite=args.force)
    s = result.summary()
    shown = [f"the environment shows {s['environment']};"] if s["environment"] else []
    common.summary(
        [
            f"{scan.lines} lines;",
            f"{s['signatures']} known failure signature(s),",
            f"{s['noise']} noise;",
            f"causes: {s['confirmed']} confirmed,",
            f"{s['ruled_out']} ruled out,",
            f"{s['unknown'] + s['unchecked']} open;",
            *shown,
            f"exit {result.exit_code}",
        ]
    )
    return result.exit_code
