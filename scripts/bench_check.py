"""Benchmark ``envcheck check --json`` on a real environment next to ``pip check``.

``envcheck check`` probes the node, loads the matrix and runs every rule (its PKG101 does what
``pip check`` does, with the node's marker environment). Target (issue 3): <= 0.5 s median.

    python scripts/bench_check.py [--venv .bench/probe-venv] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import (
    add_source_option,
    load_average,
    measure_interleaved,
    neutral_directory,
    source_commands,
    table,
)

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--venv",
        type=Path,
        default=REPO / ".bench" / "probe-venv",
        help="a venv with envcheck installed (see bench_probe.py --setup)",
    )
    parser.add_argument("--runs", type=int, default=7)
    add_source_option(parser)
    args = parser.parse_args()
    venv = args.venv if (args.venv / "bin" / "envcheck").exists() else Path(sys.prefix)
    python = venv / "bin" / "python"
    count = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print(sum(1 for _ in m.distributions()))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # a cache of its own: the machine's other envcheck runs (other checkouts, other code)
    # share ~/.cache/envcheck and would evict this one's compiled matrix between runs
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(REPO / ".bench" / "cache")}
    commands: list[tuple[str, list[str], dict[str, str] | None]] = [
        ("python -m pip check", [str(python), "-m", "pip", "check"], None),
        ("envcheck check --json", [str(venv / "bin" / "envcheck"), "check", "--json"], env),
    ]
    uv = shutil.which("uv") or str(Path(sys.prefix) / "bin" / "uv")
    if Path(uv).exists():
        commands.append(("uv pip check", [uv, "pip", "check", "--python", str(python)], None))
    has_uv = len(commands) == 3
    commands += source_commands(python, args.source, ["check", "--json"], env)
    rows = measure_interleaved(
        commands, args.runs, cwd=neutral_directory()
    )  # taking turns: the same load for each
    pip, envcheck = rows[0], rows[1]
    print(f"venv: {venv} ({count} distributions); {args.runs} runs each, interleaved")
    print(f"{load_average()} at the end\n")
    print(table(rows, baseline=pip))
    ratio = pip.median_wall_s / envcheck.median_wall_s
    print(f"\nenvcheck vs pip check: {ratio:.1f}x faster (target >= 3x)")
    if has_uv:
        slower = envcheck.median_wall_s / rows[2].median_wall_s
        print(f"envcheck vs uv pip check: {slower:.1f}x uv's time (target <= 10x)")
    for row in rows[3 if has_uv else 2 :]:
        line = f"{row.label}: {pip.median_wall_s / row.median_wall_s:.1f}x faster than pip check"
        if has_uv:
            line += f", {row.median_wall_s / rows[2].median_wall_s:.1f}x uv's time"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
