"""Options and steps several subcommands share: where a report comes from, the matrix, output."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from envcheck.numeric import seconds_arg

if TYPE_CHECKING:
    from envcheck.commands.source import SourceOptions
    from envcheck.model.finding import Severity
    from envcheck.model.report import NodeReport


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


def add_matrix_option(p: argparse._ActionsContainer) -> None:
    p.add_argument(
        "--matrix",
        action="append",
        default=[],
        metavar="DIR",
        help="merge a site matrix overlay over the built-in one (repeatable; also $ENVCHECK_MATRIX)",
    )


# --output-format values (ruff's name); --json and --markdown are aliases of two of them
OUTPUT_FORMATS = ("text", "json", "markdown", "github", "junit", "sarif")


def add_format_options(out: argparse._ActionsContainer) -> None:
    """``--output-format`` (as ruff names it) and its aliases ``--json`` and ``--markdown``."""
    fmt = out.add_mutually_exclusive_group()
    fmt.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        metavar="FORMAT",
        help="text (default), json (the versioned envelope), markdown, github (workflow "
        "annotations), junit (JUnit XML, one test case per rule), sarif (SARIF 2.1.0); "
        "see docs/recipes.md",
    )
    fmt.add_argument(
        "--json",
        action="store_true",
        help="print the versioned JSON envelope (--output-format json)",
    )
    fmt.add_argument(
        "--markdown", action="store_true", help="print Markdown (--output-format markdown)"
    )


def add_output_options(p: argparse.ArgumentParser) -> None:
    out = p.add_argument_group("output")
    add_format_options(out)
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the result to FILE (JSON, or the --output-format chosen other than "
        "text); %%N or {hostname} in FILE is this node's name, %%j the Slurm job id",
    )
    from envcheck.cli.output import add_force

    add_force(out)


def source_options(args: argparse.Namespace) -> SourceOptions:
    from envcheck.commands.source import SourceOptions

    return SourceOptions(
        spec=getattr(args, "spec", None),
        report=getattr(args, "report", None),
        from_=tuple(getattr(args, "from_", None) or ()),
        from_format=tuple(getattr(args, "from_format", None) or ()),
        python=getattr(args, "python", None),
        timeout=getattr(args, "timeout", 5.0),
        redact=getattr(args, "redact", False),
        deep=tuple(getattr(args, "deep", None) or ()),
        deep_timeout=getattr(args, "deep_timeout", 120.0),
    )


def obtain_report(args: argparse.Namespace, *, anonymized: bool = True) -> NodeReport:
    """The node to check: a spec, a saved report, text other tools wrote, or this node now.
    With ``anonymized=False`` a ``--redact`` is left to the output (see ``commands.source``)."""
    from envcheck.commands.source import obtain

    return obtain(source_options(args), anonymized=anonymized)


def severity_arg(value: str) -> Severity:
    from envcheck.model.finding import Severity  # `probe` needs no findings

    try:
        return Severity(value.lower())
    except ValueError:
        raise argparse.ArgumentTypeError("must be one of: error, warning, info") from None


def url_arg(value: str) -> str:
    """An index URL (or a local path, as pip and uv take): one that parses. ``http://[::1`` or
    a port out of range is a usage error, not an exception deep in the resolver."""
    from urllib.parse import urlsplit

    if not value.strip() or any(ord(c) < 0x20 or c == "\x7f" for c in value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a URL")
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises on a port that is not a number or out of range
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not a valid URL: {exc}") from None
    if parts.scheme and parts.scheme not in ("http", "https", "file") and len(parts.scheme) > 1:
        raise argparse.ArgumentTypeError(
            f"{value!r}: the scheme must be http, https or file (a path is taken as it is)"
        )
    if parts.scheme in ("http", "https") and not parts.hostname:
        raise argparse.ArgumentTypeError(f"{value!r} names no host")
    return value


def codes_arg(value: str) -> list[str]:
    return [v.strip().upper() for v in value.split(",") if v.strip()]


def write_output(path: str, text: str, *, overwrite: bool = True) -> None:
    """Write a result file (redacted, atomic; see ``envcheck.output``)."""
    from envcheck.output import write

    write(path, text, overwrite=overwrite)
    sys.stderr.write(f"envcheck: wrote {path}\n")


def summary(units: list[str]) -> None:
    """Write a command's closing summary to stderr, wrapped to the terminal's width
    (``COLUMNS``, else the terminal's, else 80 columns). ``units`` are the phrases never split across lines
    ("5 error(s),", "0 matter for the node); exit 1"); continuation lines are indented."""
    from envcheck.formats.wrapping import wrap_units
    from envcheck.terminal import terminal_size

    width = terminal_size((80, 24)).columns
    sys.stderr.write("\n".join(wrap_units(["envcheck:", *units], width)) + "\n")


def emit(text: str) -> None:
    sys.stdout.write(text)


# what this run applies besides the built-in matrix (``settings.applied``), set by the CLI
APPLIED: list[dict[str, str]] = []


def json_text(data: Any) -> str:
    """JSON text; a command envelope gains ``applied``: the settings file and overlays used."""
    from envcheck.model.envelope import dumps

    if isinstance(data, dict) and "schema" in data and "command" in data:
        data = {**data, "applied": list(APPLIED)}
    return dumps(data)
