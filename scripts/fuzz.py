"""Fuzz every command with generated hostile input and print the figures.

    python scripts/fuzz.py --seed 1 --examples 10000

Runs the strategies of ``tests/fuzz/cases.py`` through the real CLI entry point in-process
(``tests/fuzz/harness.py``), spread evenly over the kinds of input (spec, report, diff, dump,
log, overlay, options, tests/fuzz/hostile.py's controls and hostile index, tests/fuzz/state.py's
settings files and caches, tests/fuzz/signals.py's signals to a running process; costly kinds
run fewer, ``cases.COST``), and counts per
command: cases, tracebacks, exit 3s, hangs, leaks of a planted secret, terminal control
sequences printed, other contract breaks (exit 2 without one error line, a file written on error).
Exit status 1 when any count but ``cases`` is not zero. The first few problems are printed
with the argv that produced them.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.fuzz.cases import Case  # noqa: E402
from tests.fuzz.kinds import ALL, examples_for  # noqa: E402
from tests.fuzz.run import run_case  # noqa: E402

COLUMNS = (
    "cases",
    "tracebacks",
    "exit3",
    "hangs",
    "leaks",
    "controls",
    "other",
    "exit0",
    "exit1",
    "exit2",
    "stopped",
)


def _classify(problem: str) -> str:
    if problem.startswith("traceback"):
        return "tracebacks"
    if problem.startswith("exit 3"):
        return "exit3"
    if problem == "hang":
        return "hangs"
    if problem.startswith("leaked"):
        return "leaks"
    if problem.startswith("control sequence"):
        return "controls"
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=1000, help="in total (default 1000)")
    parser.add_argument("--kinds", default=",".join(sorted(ALL)), help="comma-separated")
    parser.add_argument("--show", type=int, default=5, help="problems to print (default 5)")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    per_kind = max(1, args.examples // len(kinds))
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    shown: list[str] = []
    slowest = (0.0, "")
    started = time.monotonic()
    for kind in kinds:

        @seed(args.seed)
        @settings(
            max_examples=examples_for(kind, per_kind),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(ALL[kind]())
        def one(case: Case) -> None:
            nonlocal slowest
            with tempfile.TemporaryDirectory(prefix="envcheck-fuzz-") as tmp:
                argv, outcome = run_case(case, Path(tmp))
            command = " ".join(argv[:2]) if argv[:1] == ["matrix"] else argv[0]
            row = table[command]
            row["cases"] += 1
            if outcome.code in (0, 1, 2):
                row[f"exit{outcome.code}"] += 1
            elif outcome.code is not None and outcome.code > 128:  # a signal stopped it
                row["stopped"] += 1
            if outcome.elapsed > slowest[0]:
                slowest = (outcome.elapsed, " ".join(argv))
            for problem in outcome.problems():
                row[_classify(problem)] += 1
                if len(shown) < args.show:
                    shown.append(f"{problem}\n    envcheck {' '.join(argv)}")
                    print(f"PROBLEM {shown[-1]}", flush=True)

        one()
        print(
            f"[{kind}: done, {sum(r['cases'] for r in table.values())} cases so far, "
            f"{time.monotonic() - started:.0f} s]",
            flush=True,
        )
        _print_table(table)
    total: collections.Counter[str] = collections.Counter()
    for row in table.values():
        total.update(row)
    elapsed = time.monotonic() - started
    print(
        f"\nseed {args.seed}: {total['cases']} cases in {elapsed:.0f} s "
        f"({total['cases'] / max(elapsed, 1e-9):.1f}/s); slowest case {slowest[0]:.2f} s: "
        f"envcheck {slowest[1][:160]}"
    )
    bad = sum(total[c] for c in ("tracebacks", "exit3", "hangs", "leaks", "controls", "other"))
    return 1 if bad else 0


def _print_table(table: dict[str, collections.Counter[str]]) -> None:
    width = max((len(c) for c in table), default=5) + 2
    print(f"{'command':<{width}}" + "".join(f"{c:>11}" for c in COLUMNS))
    total: collections.Counter[str] = collections.Counter()
    for command in sorted(table):
        total.update(table[command])
        print(f"{command:<{width}}" + "".join(f"{table[command][c]:>11}" for c in COLUMNS))
    print(f"{'total':<{width}}" + "".join(f"{total[c]:>11}" for c in COLUMNS), flush=True)


if __name__ == "__main__":
    sys.exit(main())
