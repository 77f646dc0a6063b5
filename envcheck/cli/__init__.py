"""Command line: parse, dispatch to a subcommand, map outcomes to exit codes.

Exit codes: 0 clean, 1 findings at or above the chosen severity, 2 usage or input error
(one line on stderr, nothing written), 3 internal error.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from envcheck import __version__
from envcheck.errors import EnvcheckError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"envcheck: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


# subcommand -> the module that defines it (``add_parser(sub)`` and ``run(args)``), in the order
# `envcheck --help` lists them
COMMANDS = {
    "check": "check",
    "probe": "probe",
    "explain": "explain",
    "rules": "rules_cmd",
    "matrix": "matrix_cmd",
    "triage": "triage",
    "fix": "fix",
    "lock": "lock",
    "cluster": "cluster",
    "diff": "diff",
    "completion": "completion",
}

# commands whose -o/--output names one file: expanded (%N, {hostname}) and checked up front
FILE_OUTPUT = frozenset({"check", "probe", "triage", "cluster", "diff", "lock", "fix"})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``) the one subcommand being run in full and the others as
    bare names: each subcommand's module imports what it needs, and `envcheck probe` should
    not pay for the rules, the matrix and the planners."""
    parser = _Parser(
        prog="envcheck",
        description="Pre-flight checks for GPU training nodes.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"envcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in COMMANDS.items():
        if only is None or only == name:
            importlib.import_module(f"envcheck.cli.{module}").add_parser(sub)
        else:
            sub.add_parser(name, add_help=False)
    return parser


def _refuse_contradictions(args: argparse.Namespace) -> None:
    """Options that cancel each other are refused rather than one silently winning (the
    source options' contradictions are refused in commands/source.py)."""
    if getattr(args, "no_index", False):
        for dest, flag in (("index_url", "--index-url"), ("extra_index_url", "--extra-index-url")):
            if getattr(args, dest, None):
                from envcheck.errors import UsageError

                raise UsageError(f"--no-index and {flag} contradict each other; give one")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # `envcheck` and `envcheck --json ...` mean `envcheck check ...`
    if not args_list or (
        args_list[0].startswith("-") and args_list[0] not in ("-h", "--help", "--version")
    ):
        args_list.insert(0, "check")
    parser = build_parser(args_list[0] if args_list[0] in COMMANDS else None)
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        _refuse_contradictions(args)
        if args.command in FILE_OUTPUT:
            from envcheck.cli.output import prepare

            prepare(args)
        code: int = args.run(args)
        return code
    except EnvcheckError as exc:
        sys.stderr.write(f"envcheck: error: {exc.one_line()}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("envcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the last line of defence: one line, exit 3
        if os.environ.get("ENVCHECK_DEBUG"):
            traceback.print_exc()
        sys.stderr.write(
            f"envcheck: internal error: {type(exc).__name__}: {exc} "
            "(set ENVCHECK_DEBUG=1 for a traceback; please report it)\n"
        )
        return EXIT_INTERNAL


def entry() -> NoReturn:
    """The ``envcheck`` console script and ``python -m envcheck``: run with standard output and
    error that tolerate a reader leaving early (the exit code stays the command's), then exit
    without the interpreter's final garbage collection walking every object the run made
    (gc.freeze(); reference counting has freed what is garbage). That walk was a fifth of a
    probe's time."""
    from envcheck.formats.stdout import guard

    guard()
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()
    sys.exit(code)
