"""Benchmark ``envcheck triage --no-probe`` on a small log (a pasted one) next to grep.

Most logs users paste are a few hundred bytes to a few KB: there the time is the start (the interpreter, the matrix,
compiling the signatures), not the scan. grep with the same patterns is the tool a user would
otherwise run; ``--source DIR`` adds another checkout in the same interleaved runs.

    python scripts/bench_triage_small.py [--log FILE] [--runs 11] [--source DIR ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_triage import patterns_file
from benchlib import (
    add_source_option,
    load_average,
    measure_interleaved,
    neutral_directory,
    source_commands,
    table,
)

REPO = Path(__file__).resolve().parent.parent
# the corpus's longest log (its logs are what users pasted: a few hundred bytes to 1.4 KB)
DEFAULT_LOG = REPO / "tests" / "corpus" / "ucx-8229" / "log.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--runs", type=int, default=11)
    add_source_option(parser)
    args = parser.parse_args()
    if not args.log.is_file():
        print(f"--log {args.log}: no such file", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="envcheck-bench-") as tmp:
        patterns = patterns_file(Path(tmp))
        # the same cache bench_check.py and bench_triage.py use: other checkouts' runs on a
        # shared machine must not evict this one's compiled matrix between runs
        env = dict(os.environ, ENVCHECK_CACHE_DIR=str(REPO / ".bench" / "cache"))
        log = str(args.log.resolve())
        commands: list[tuple[str, list[str], dict[str, str] | None]] = [
            (
                "grep -c -E -f patterns.txt",
                ["sh", "-c", 'exec grep -c -E -f "$1" "$2" > /dev/null', "sh", str(patterns), log],
                None,
            )
        ]
        argv = ["triage", log, "--no-probe"]
        commands += source_commands(Path(sys.executable), [REPO, *args.source], argv, env)
        commands += [
            (
                f"envcheck triage --engine grep ({REPO.name} source)",
                [sys.executable, "-m", "envcheck", *argv, "--engine", "grep"],
                dict(env, PYTHONPATH=str(REPO)),
            )
        ]
        rows = measure_interleaved(commands, args.runs, cwd=neutral_directory())
    size = args.log.stat().st_size
    print(f"log: {args.log} ({size:,} bytes); {args.runs} runs each, interleaved")
    print(f"{load_average()} at the end\n")
    print(table(rows, baseline=rows[0]))
    for row in rows[1:]:
        print(f"{row.label}: {row.median_wall_s / rows[0].median_wall_s:.1f}x grep's time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
