"""``envcheck lock diff OLD NEW``: render ``envcheck.commands.lock_diff`` for the CLI."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from envcheck.cli import common


def run_diff(args: argparse.Namespace) -> int:
    from envcheck.cli.lock_args import options_from
    from envcheck.commands.lock import choose_target, derive_arch
    from envcheck.commands.lock_diff import diff_locks, render
    from envcheck.errors import UsageError
    from envcheck.ingest.spec import load_spec
    from envcheck.matrix_validate import load
    from envcheck.plan.target import target_report
    from envcheck.rules import all_rules
    from envcheck.settings import find_settings

    paths = args.requirements[1:]
    if len(paths) != 2:
        raise UsageError("lock diff needs two lock files: envcheck lock diff OLD NEW")
    from envcheck.inputs import open_binary

    for path in paths:  # a missing lock file is named before the target is asked for
        open_binary(path).close()
    options = options_from(args)
    spec_report = load_spec(args.spec) if args.spec else None
    if spec_report is None and not options.python:
        options = _target_from_headers(options, paths)
    target = choose_target(options, spec_report, None)
    matrix = load([*find_settings().matrix, *args.matrix])
    target, _why = derive_arch(options, spec_report, target, matrix)
    report = spec_report if spec_report is not None else target_report(target)
    diff = diff_locks(paths[0], paths[1], report, matrix, all_rules(matrix), args.severity)
    if args.json:
        from envcheck.model.envelope import envelope

        status = "findings" if diff.code else "ok"
        common.emit(common.json_text(envelope("lock diff", status, diff.code, diff.to_json())))
    else:
        common.emit(render(diff))
    sys.stderr.write(
        f"envcheck: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.moved)} "
        f"moved; new lock {diff.new.verdict}; exit {diff.code}\n"
    )
    return diff.code


def _target_from_headers(options: Any, paths: list[str]) -> Any:
    """The target the locks' headers state (the new lock's first), for what no flag gives."""
    from dataclasses import replace

    from envcheck.commands.lock_diff import stated_target

    stated = stated_target(paths[1]) or stated_target(paths[0])
    if not stated.get("python"):
        return options
    return replace(
        options,
        python=(stated["python"],),
        driver=options.driver or stated.get("driver"),
        gpus=options.gpus or stated.get("gpus", ()),
        arch=options.arch or ((stated["arch"],) if stated.get("arch") else ()),
        glibc=options.glibc or stated.get("glibc"),
    )


USAGE = """usage: envcheck lock diff OLD NEW [--spec FILE | --python X.Y [--driver D] [--gpu 'NAME xN']]
                          [--severity LEVEL] [--matrix DIR] [--json]

Compare two lock files: packages removed, added and moved (torch, vLLM, transformers and the
other packages that matter for a GPU stack first, then the rest), and the rules' verdict on
each side for the same target node. The target is the spec or the flags; without them, the
target the locks' own headers state ("# Target: Python 3.11; ...", written by `envcheck lock`).

Exit codes: 0 the new lock passes the rules, 1 it fails them, 2 bad input or usage.
"""


def print_help() -> None:
    sys.stdout.write(USAGE)
