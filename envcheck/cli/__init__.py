"""Command line: parse, dispatch to a subcommand, map outcomes to exit codes.

Exit codes: 0 clean, 1 findings at or above the chosen severity, 2 usage or input error
(one line on stderr, nothing written; with ``--json`` also an envelope with status "error" on
stdout), 3 internal error, 130 / 143 / 129 stopped by SIGINT /
SIGTERM / SIGHUP (128 + the signal's number, as a shell reports a process a signal killed):
the children envcheck started are ended first (SIGTERM to their process groups, SIGKILL after
two seconds) and its temporary files removed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from envcheck.errors import EnvcheckError
from envcheck.version import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageExit(SystemExit):
    """argparse's refusal, carrying its one line (for the ``--json`` error envelope)."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_USAGE)
        self.message = message


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, the terminal's width read as ``shutil.get_terminal_size``
    reads it (``envcheck.terminal``): argparse imports shutil for it in every parser and
    `--help` check otherwise, and shutil loads the bz2 and lzma modules (~1% of a `check`)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            from envcheck.terminal import terminal_size

            width = terminal_size().columns - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        """One line (the usage block is one `--help` away)."""
        message = " ".join(message.split())
        sys.stderr.write(f"envcheck: error: {message} (see `{self.prog} --help`)\n")
        raise UsageExit(message)


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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``) the one subcommand being run in full and the others as
    bare names: each subcommand's module imports what it needs, and `envcheck probe` should
    not pay for the rules, the matrix and the planners."""
    parser = _Parser(
        prog="envcheck",
        description="Pre-flight checks for GPU training nodes.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 internal error, "
        "4 the package index could not be reached (fix, lock).",
    )
    parser.add_argument("--version", action="version", version=f"envcheck {__version__}")
    parser.add_argument(
        "--isolated",
        action="store_true",
        help="ignore settings files (envcheck.toml, [tool.envcheck]) and $ENVCHECK_MATRIX "
        "overlays; accepted by every command, anywhere on the line",
    )
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


def _stopped(exc: BaseException) -> int:
    """End the children, say which signal stopped the command; 128 + its number."""
    from envcheck.probes.run import signal_name, stop_for_good

    ended = stop_for_good()
    name = signal_name(exc)
    children = f"; ended {ended} child process(es)" if ended else ""
    sys.stderr.write(f"envcheck: stopped by {name}{children}\n")
    return 128 + int(signal.Signals[name])


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command with guarded standard streams (``formats.stdout``): everything printed
    is redacted and degraded to what the streams can carry; a stream that cannot be written
    (a full disk, a closed descriptor) makes the exit code 2 with one line."""
    from envcheck.cli.signals import handled
    from envcheck.formats.stdout import guarded
    from envcheck.probes.run import Terminated

    with guarded() as (out, err), handled():
        try:
            code = _run(argv)
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
        except (KeyboardInterrupt, Terminated) as exc:
            code = _stopped(exc)
        out.flush()
        if out.failure:
            err.write(f"envcheck: error: cannot write to standard output: {out.failure}\n")
            code = EXIT_USAGE
        err.flush()
        if err.failure and code == EXIT_OK:
            code = EXIT_USAGE
    return code


def _working_directory() -> None:
    """A working directory that was deleted under us is one line, not an exception from the
    first relative path."""
    try:
        os.getcwd()
    except FileNotFoundError:
        from envcheck.errors import UsageError

        raise UsageError(
            "the working directory no longer exists (it was deleted); cd to a directory that "
            "exists and run again"
        ) from None
    except OSError as exc:
        from envcheck.errors import UsageError

        raise UsageError(f"the working directory cannot be read: {exc.strerror}") from None


def _check_output_target(args: argparse.Namespace) -> None:
    """``-o FILE`` is checked before any work is done (unless the command writes a directory)."""
    output = getattr(args, "output", None)
    if (
        output is None
        or not getattr(args, "output_is_file", True)
        or getattr(args, "dry_run", False)
    ):
        return  # no -o, a directory (matrix refresh), or a dry run that writes nothing
    from envcheck.cli.output import expand
    from envcheck.output import check_target

    args.output = expand(str(output))  # %N, {hostname}, %j, %t: srun leaves them to us
    check_target(args.output, overwrite=getattr(args, "force", True) is not False)


def _isolated(args_list: list[str]) -> list[str]:
    """``--isolated`` taken out of the command line (before a ``--``), wherever it stands:
    settings files and ``ENVCHECK_MATRIX`` are then ignored for the rest of this process."""
    end = args_list.index("--") if "--" in args_list else len(args_list)
    if "--isolated" not in args_list[:end]:
        return args_list
    from envcheck.matrix import ENV_VAR
    from envcheck.settings import isolate

    isolate()
    os.environ.pop(ENV_VAR, None)
    return [a for a in args_list[:end] if a != "--isolated"] + args_list[end:]


# the commands that read settings files (the others only load the matrix, or neither)
_SETTINGS_COMMANDS = frozenset({"check", "fix", "triage", "lock", "cluster", "diff"})
_MATRIX_COMMANDS = _SETTINGS_COMMANDS | {"explain", "rules", "matrix"}


def _name_applied(args: argparse.Namespace) -> str:
    """Every output names the settings file and overlays this run applies: ``applied`` in every
    JSON envelope (``common.json_text``) and the line returned here, which goes to standard
    error after the command ran ('' when nothing is applied)."""
    if args.command not in _MATRIX_COMMANDS:
        return ""
    from envcheck.cli import common
    from envcheck.settings import applied, describe

    found = applied(
        [str(d) for d in getattr(args, "matrix", None) or ()],
        with_settings=args.command in _SETTINGS_COMMANDS,
    )
    common.APPLIED[:] = found
    return describe(found)


def _run(argv: Sequence[str] | None) -> int:
    args_list = _isolated(list(sys.argv[1:] if argv is None else argv))
    # `envcheck` and `envcheck --json ...` mean `envcheck check ...`
    if not args_list or (
        args_list[0].startswith("-") and args_list[0] not in ("-h", "--help", "--version")
    ):
        args_list.insert(0, "check")
    if args_list[:2] == ["lock", "diff"] and any(a in ("-h", "--help") for a in args_list[2:]):
        from envcheck.cli.lock_diff import print_help  # `diff` is lock's first positional

        print_help()
        return EXIT_OK
    try:
        parser = build_parser(args_list[0] if args_list[0] in COMMANDS else None)
    except ImportError as exc:
        problem = _import_problem(exc)
        if problem is None:
            raise
        sys.stderr.write(f"envcheck: error: {problem}\n")
        return EXIT_USAGE
    try:
        args = parser.parse_args(args_list)
    except UsageExit as exc:
        _error_envelope(_wants_json(args_list), args_list[0], exc.message)
        raise
    _normalize_format(args)
    if one_shot() and not getattr(args, "collector_off", False):
        gc.enable()
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        _working_directory()
        _refuse_contradictions(args)
        _check_output_target(args)
        line = _name_applied(args)
        code: int = args.run(args)
        if line:  # after the command's own lines: an error stays the one line it prints
            sys.stderr.write(f"envcheck: {line}\n")
        return code
    except EnvcheckError as exc:
        sys.stderr.write(f"envcheck: error: {exc.one_line()}\n")
        _error_envelope(bool(getattr(args, "json", False)), command_name(args), exc.one_line())
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except ImportError as exc:
        problem = _import_problem(exc)
        if problem is None:
            raise
        sys.stderr.write(f"envcheck: error: {problem}\n")
        return EXIT_USAGE
    except RecursionError:
        sys.stderr.write("envcheck: error: input nested too deeply\n")
        return EXIT_USAGE

    except Exception as exc:  # the last line of defence: one line, exit 3
        if os.environ.get("ENVCHECK_DEBUG"):
            import traceback

            traceback.print_exc()
        sys.stderr.write(
            f"envcheck: internal error: {type(exc).__name__}: {exc} "
            "(set ENVCHECK_DEBUG=1 for a traceback; please report it)\n"
        )
        _error_envelope(
            bool(getattr(args, "json", False)),
            command_name(args),
            f"internal error: {type(exc).__name__}: {exc}",
            EXIT_INTERNAL,
        )
        return EXIT_INTERNAL


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether a command line that argparse refused asked for JSON."""
    return any(
        a in ("--json", "--output-format=json") or (a == "--output-format" and b == "json")
        for a, b in zip(argv, [*argv[1:], ""], strict=True)
    )


def command_name(args: argparse.Namespace) -> str:
    """The envelope's ``command``: "check", "matrix validate", "lock diff"."""
    name = str(getattr(args, "command", None) or "check")
    sub = getattr(args, "matrix_command", None)
    if isinstance(sub, str):
        return f"{name} {sub}"
    if name == "lock" and list(getattr(args, "requirements", None) or [])[:1] == ["diff"]:
        return "lock diff"
    return name


def _error_envelope(wanted: bool, command: str, message: str, code: int = EXIT_USAGE) -> None:
    """With ``--json``, an error is an envelope too (status "error", the exit code, the message
    in ``errors``); the one stderr line stays."""
    if not wanted:
        return
    from envcheck.model.envelope import dumps, envelope

    sys.stdout.write(dumps(envelope(command, "error", code, None, [{"message": message}])))


def _normalize_format(args: argparse.Namespace) -> None:
    """One ``args.output_format`` from --output-format, --json or --markdown (argparse refuses
    two of them together), with ``args.json``/``args.markdown`` kept true to it."""
    if not hasattr(args, "output_format"):
        return
    chosen = args.output_format
    if getattr(args, "json", False):
        chosen = "json"
    elif getattr(args, "markdown", False):
        chosen = "markdown"
    args.output_format = chosen or "text"
    args.json = args.output_format == "json"
    args.markdown = args.output_format == "markdown"


def _import_problem(exc: ImportError) -> str | None:
    """One line for a dependency that cannot be imported (a PYTHONPATH directory shadowing
    `packaging`, a broken install); None for envcheck's own modules (a bug: exit 3)."""
    name = exc.name or _failing_module(exc) or ""
    top = name.split(".")[0]
    if not top or top == "envcheck":
        return None
    where = next(
        (
            os.path.join(p, top)
            for p in sys.path
            if p and (os.path.exists(os.path.join(p, top)) or os.path.exists(f"{p}/{top}.py"))
        ),
        None,
    )
    found = f" ({top} was found at {where})" if where else ""
    return (
        f"cannot import {name or top}: {exc.msg if hasattr(exc, 'msg') else exc}{found}; "
        "is a directory on PYTHONPATH shadowing it?"
    )


def _failing_module(exc: BaseException) -> str | None:
    """The top-level module whose own code raised ``exc`` (the deepest frame outside
    envcheck), found by which sys.path entry holds its file."""
    tb = exc.__traceback__
    found = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        for entry in sys.path:
            if entry and filename.startswith(entry.rstrip("/") + "/"):
                rel = filename[len(entry.rstrip("/")) + 1 :]
                found = rel.split("/")[0].removesuffix(".py")
                break
        tb = tb.tb_next
    return found


GC_YOUNG = 10_000  # allocations between collections of the young generation (700 by default)
_ONE_SHOT: list[bool] = []  # entry() runs: this process runs one command, then exits


def one_shot() -> bool:
    """Whether this process ends with the command it runs (the console script, ``python -m
    envcheck``), not a caller's process that runs ``main()`` and goes on."""
    return bool(_ONE_SHOT)


def entry() -> NoReturn:
    """The ``envcheck`` console script and ``python -m envcheck``: run with standard output and
    error that tolerate a reader leaving early (the exit code stays the command's), then exit
    without the interpreter's final garbage collection walking every object the run made
    (gc.freeze(); reference counting has freed what is garbage). That walk was a fifth of a
    probe's time. The command's own process creates its dataclasses from the method code
    compiled with the package (``envcheck.dataclass_code``), not compiled again at every run,
    and finds the programs of the regular expressions it compiles made already
    (``envcheck.regex_code``)."""
    from envcheck import dataclass_code, regex_code

    regex_code.install()

    # a run builds its objects once and keeps them to the end: the young generation is
    # collected every 10,000 allocations rather than every 700 (each collection of an older
    # generation walks the modules' objects too); reference counting frees what is garbage
    gc.set_threshold(GC_YOUNG, 10, 10)
    # no collection while the modules are imported and the arguments parsed: `_run` turns the
    # collector on for the commands that do not keep it off (``collector_off``: `check`)
    gc.disable()
    dataclass_code.install()
    _ONE_SHOT.append(True)
    try:
        code = main()
    finally:
        dataclass_code.uninstall()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    gc.freeze()
    bounded = sys.modules.get("envcheck.probes.bounded")  # only loaded when a probe ran
    if bounded is not None and bounded.abandoned():
        # a call that never returned (a wedged NVML) must not keep the process alive, nor
        # let interpreter shutdown wait on its thread; the output is flushed above
        os._exit(code)
    sys.exit(code)
