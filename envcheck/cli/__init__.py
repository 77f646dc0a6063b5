"""Command line: parse, dispatch to a subcommand, map outcomes to exit codes.

Exit codes: 0 clean, 1 findings at or above the chosen severity, 2 usage or input error
(one line on stderr, nothing written), 3 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from envcheck import __version__
from envcheck.errors import EnvcheckError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"envcheck: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    from envcheck.cli import check, explain, fix, lock, matrix_cmd, probe, rules_cmd, triage

    parser = _Parser(
        prog="envcheck",
        description="Pre-flight checks for GPU training nodes.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"envcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in (check, probe, explain, rules_cmd, matrix_cmd, triage, fix, lock):
        module.add_parser(sub)
    from envcheck.cli import cluster, diff  # issue 5: every node at once

    for module in (cluster, diff):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args_list = list(sys.argv[1:] if argv is None else argv)
    # `envcheck` and `envcheck --json ...` mean `envcheck check ...`
    if not args_list or (
        args_list[0].startswith("-") and args_list[0] not in ("-h", "--help", "--version")
    ):
        args_list.insert(0, "check")
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
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
