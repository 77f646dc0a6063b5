"""Options and steps several subcommands share: where a report comes from, the matrix, output."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from envcheck.errors import ReportError, UsageError
from envcheck.model.finding import Severity
from envcheck.model.report import NodeReport
from envcheck.numeric import seconds_arg


def add_source_options(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("which node")
    src.add_argument(
        "--spec", metavar="FILE", help="check a declared stack (TOML) instead of this node"
    )
    src.add_argument("--report", metavar="FILE", help="check a report saved by `envcheck probe -o`")
    src.add_argument("--python", metavar="PATH", help="probe another interpreter's packages")
    src.add_argument(
        "--timeout",
        type=seconds_arg,
        default=5.0,
        metavar="S",
        help="per external command while probing (default 5)",
    )
    src.add_argument(
        "--redact", action="store_true", help="replace hostnames and IP addresses in the output"
    )
    add_deep_option(src)


def deep_arg(value: str) -> tuple[str, ...]:
    if value in ("", "gpu"):
        return ("gpu",)
    if value == "torch":
        return ("gpu", "torch")
    raise argparse.ArgumentTypeError("must be --deep or --deep=torch")


def add_deep_option(p: argparse._ActionsContainer) -> None:
    p.add_argument(
        "--deep",
        nargs="?",
        const=("gpu",),
        type=deep_arg,
        metavar="torch",
        help="also ask the CUDA driver and NVML (GPU health, PCIe ACS, IOMMU), each in a child "
        "bounded by --timeout; --deep=torch adds a GEMM and NCCL smoke test in the node's own "
        "Python (see docs/gpu.md)",
    )
    p.add_argument(
        "--deep-timeout",
        type=seconds_arg,
        default=120.0,
        metavar="S",
        help="limit of the --deep=torch smoke test (default 120)",
    )


def probe_context(args: argparse.Namespace, python: str | None) -> Any:
    """The ProbeContext for probing this node with the command's options."""
    from envcheck.probes.context import ProbeContext

    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    deep = getattr(args, "deep", None) or ()
    return ProbeContext(
        python=python,
        timeout=args.timeout,
        redact=args.redact,
        deep=tuple(deep),
        torch_timeout=getattr(args, "deep_timeout", 120.0),
    )


def add_matrix_option(p: argparse._ActionsContainer) -> None:
    p.add_argument(
        "--matrix",
        action="append",
        default=[],
        metavar="DIR",
        help="merge a site matrix overlay over the built-in one (repeatable; also $ENVCHECK_MATRIX)",
    )


def add_output_options(p: argparse.ArgumentParser) -> None:
    out = p.add_argument_group("output")
    fmt = out.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the versioned JSON envelope")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown")
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the result to FILE (JSON unless --markdown)",
    )


def load_report(path: str) -> NodeReport:
    """A saved report (``probe -o``, ``check --json``): read, capped and checked by
    ``envcheck.inputs``; its secrets are redacted again by ``NodeReport.from_dict``."""
    from envcheck.inputs import display_name, load_json_file

    data = load_json_file(path, what="a JSON object (a report)", error=ReportError)
    return NodeReport.from_dict(data, where=display_name(path))


def obtain_report(args: argparse.Namespace, *, anonymized: bool = True) -> NodeReport:
    """The node to check: a spec, a saved report, text other tools wrote, or this node now.
    With ``anonymized=False`` a ``--redact`` is left to the output (``check``: the rules see
    the real hostname and addresses; only what is printed and written is redacted)."""
    if not anonymized and getattr(args, "redact", False):
        view = argparse.Namespace(**{**vars(args), "redact": False})
        return obtain_report(view)
    if getattr(args, "from_", None) or getattr(args, "from_format", None):
        from envcheck.cli.from_opts import check_from_format, report_from

        check_from_format(args)
        return report_from(args)
    if args.spec and args.report:
        raise UsageError("--spec and --report are alternatives; give one")
    if getattr(args, "deep", None) and (args.spec or args.report):
        raise UsageError("--deep probes this node: it cannot be combined with --spec or --report")
    if args.spec:
        from envcheck.ingest.spec import load_spec

        report = load_spec(args.spec)
    elif args.report:
        report = load_report(args.report)
    else:
        from envcheck.probes import collect

        python = args.python
        if python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise UsageError(f"--python: {python} is not an executable file")
        if python:
            _require_python(python, args.timeout)
        return collect(probe_context(args, python))
    if args.redact and not report.redacted:
        from envcheck.redact import anonymize

        report = anonymize(report)
    return report


def severity_arg(value: str) -> Severity:
    try:
        return Severity(value.lower())
    except ValueError:
        raise argparse.ArgumentTypeError("must be one of: error, warning, info") from None


def codes_arg(value: str) -> list[str]:
    return [v.strip().upper() for v in value.split(",") if v.strip()]


def write_output(path: str, text: str, *, overwrite: bool = True) -> None:
    """Write a result file (redacted, atomic; see ``envcheck.output``)."""
    from envcheck.output import write

    write(path, text, overwrite=overwrite)
    sys.stderr.write(f"envcheck: wrote {path}\n")


def emit(text: str) -> None:
    sys.stdout.write(text)


def json_text(data: Any) -> str:
    from envcheck.formats.json import dumps

    return dumps(data)


_PYTHON_MARK = "envcheck-python-check"


def _require_python(path: str, timeout: float) -> None:
    """--python must name a Python interpreter: one bounded run of a stdlib one-liner."""
    from envcheck.probes.run import run

    done = run(
        [path, "-I", "-c", f"import sys; print('{_PYTHON_MARK}', *sys.version_info[:2])"],
        timeout=timeout,
    )
    words = done.stdout.split()
    if not (done.ok and words[:1] == [_PYTHON_MARK]):
        why = done.problem or (
            f"exited with {done.returncode}" if done.returncode else "it printed something else"
        )
        raise UsageError(f"--python: {path} is not a Python interpreter ({why})")
