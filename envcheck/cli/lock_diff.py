"""``envcheck lock diff OLD NEW``: render ``envcheck.commands.lock_diff`` for the CLI."""

from __future__ import annotations

import argparse
import sys

from envcheck.cli import common


def run_diff(args: argparse.Namespace) -> int:
    from envcheck.cli.lock_args import options_from
    from envcheck.commands.lock import choose_target
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
    target = choose_target(options, spec_report, None)
    report = spec_report if spec_report is not None else target_report(target)
    matrix = load([*find_settings().matrix, *args.matrix])
    diff = diff_locks(paths[0], paths[1], report, matrix, all_rules(matrix), args.severity)
    if args.json:
        from envcheck.model.envelope import envelope

        status = "findings" if diff.code else "ok"
        common.emit(common.json_text(envelope("lock", status, diff.code, diff.to_json())))
    else:
        common.emit(render(diff))
    sys.stderr.write(
        f"envcheck: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.moved)} "
        f"moved; new lock {diff.new.verdict}; exit {diff.code}\n"
    )
    return diff.code
