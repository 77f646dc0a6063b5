"""``--from FILE|-`` and ``--from-format``: a node described by text other tools wrote."""

from __future__ import annotations

import argparse


def add_from_options(p: argparse.ArgumentParser) -> None:
    from envcheck.ingest.detect import FORMATS

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
        help=f"skip detection: {', '.join(FORMATS)} (once for all --from, or once per --from)",
    )
