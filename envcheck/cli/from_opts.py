"""``--from FILE|-`` and ``--from-format``: a node described by text other tools wrote."""

from __future__ import annotations

import argparse

from envcheck.errors import UsageError
from envcheck.model.report import NodeReport

# the names of envcheck.ingest.detect.FORMATS, kept here so that building the command line does
# not import every parser (a test keeps the two equal)
FORMAT_NAMES = (
    "collect-env",
    "vllm-env",
    "sglang-env",
    "pip-freeze",
    "uv-pip-freeze",
    "pip-list",
    "pip-json",
    "conda-list",
    "conda-env",
    "nvidia-smi",
    "nvidia-smi-q",
    "nvidia-smi-csv",
    "env-text",
)


def add_from_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("reports other tools wrote")
    group.add_argument(
        "--from",
        dest="from_",
        action="append",
        default=[],
        metavar="FILE",
        help="check the node described by FILE ('-' for stdin): collect_env, vLLM/SGLang env "
        "reports, pip freeze/list, uv pip freeze, conda list/env export, nvidia-smi "
        "(screen, -q, --query-gpu CSV). Repeatable: the sources combine into one node; "
        "--spec adds what they lack",
    )
    group.add_argument(
        "--from-format",
        action="append",
        default=[],
        metavar="FORMAT",
        help=f"skip detection: {', '.join(FORMAT_NAMES)} (once for all --from, or once per --from)",
    )


def report_from(args: argparse.Namespace) -> NodeReport:
    """The node the --from texts describe, with a --spec merged in (the spec wins conflicts)."""
    from envcheck.ingest.sources import load_sources

    if getattr(args, "report", None):
        raise UsageError("--from and --report are alternatives; give one")
    if getattr(args, "python", None):
        raise UsageError("--from describes another node; --python does not apply")
    spec = None
    if getattr(args, "spec", None):
        from envcheck.ingest.spec import load_spec

        spec = load_spec(args.spec)
    report = load_sources(args.from_, args.from_format, spec)
    if getattr(args, "redact", False) and not report.redacted:
        from envcheck.redact import anonymize

        report = anonymize(report)
    return report


def check_from_format(args: argparse.Namespace) -> None:
    if getattr(args, "from_format", None) and not getattr(args, "from_", None):
        raise UsageError("--from-format needs --from")
