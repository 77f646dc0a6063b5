"""``--from FILE|-`` and ``--from-format``: a node described by text other tools wrote."""

from __future__ import annotations

import argparse

# the names of envcheck.ingest.detect.FORMATS, kept here so that building the command line does
# not import every parser (a test keeps the two equal)
FORMAT_NAMES = (
    "envcheck-markdown",
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
    "nvidia-smi-xml",
    "env-text",
    "net-text",
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
        "(screen, -q, --query-gpu CSV), ip addr / ifconfig / ibstat. Repeatable: the sources combine into one node; "
        "--spec adds what they lack",
    )
    group.add_argument(
        "--from-format",
        action="append",
        default=[],
        metavar="FORMAT",
        help=f"skip detection: {', '.join(FORMAT_NAMES)} (once for all --from, or once per --from)",
    )
