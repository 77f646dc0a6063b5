"""Benchmark ``envcheck probe --json`` against ``python -m torch.utils.collect_env``.

Both run in one virtualenv that holds torch (CPU build) and ray, as on a training node.
Create it once with ``--setup`` (needs the package index), then run:

    python scripts/bench_probe.py --runs 7

Targets (issue 2): envcheck ≤ 0.3 s median wall, ≤ 60 MiB peak RSS, ≥ 10× faster than
collect_env.

``--binaries`` measures the cost of reading the installed packages' ELF files (issue 23) in a
venv with a CUDA torch: ``check --json`` warm (per-file cache filled), with the reading off
(``ENVCHECK_NO_BINARIES=1``), and cold (the binaries cache removed before each run); targets:
warm ≤ 2× off, cold ≤ 3 s.
"""

from __future__ import annotations

import argparse
import os
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
DEFAULT_VENV = REPO / ".bench" / "probe-venv"


def setup(venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "torch", "ray"], check=True)
    subprocess.run([*pip, str(REPO)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--runs", type=int, default=7)
    add_source_option(parser)
    parser.add_argument("--setup", action="store_true", help="create the venv first")
    parser.add_argument(
        "--binaries", action="store_true", help="measure the ELF reading of check (issue 23)"
    )
    args = parser.parse_args()
    if args.binaries:
        return bench_binaries(args.venv, args.runs)
    if args.setup:
        setup(args.venv)
    python = args.venv / "bin" / "python"
    if not python.exists():
        print(f"no benchmark venv at {args.venv}; run with --setup first", file=sys.stderr)
        return 2
    # measure this checkout's code, not whatever was installed last time
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
            str(REPO),
        ],
        check=True,
    )
    versions = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print(m.version('torch'), m.version('ray'), sum(1 for _ in m.distributions()))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(REPO / ".bench" / "cache")}
    rows = measure_interleaved(  # taking turns: the same load for each
        [
            (
                "python -m torch.utils.collect_env",
                [str(python), "-m", "torch.utils.collect_env"],
                None,
            ),
            (
                "envcheck probe --json",
                [str(args.venv / "bin" / "envcheck"), "probe", "--json"],
                env,
            ),
            *source_commands(python, args.source, ["probe", "--json"], env),
        ],
        args.runs,
        cwd=neutral_directory(),
    )
    collect_env, envcheck = rows[0], rows[1]
    print(
        f"venv: torch {versions[0]}, ray {versions[1]}, {versions[2]} distributions; "
        f"{args.runs} runs each, interleaved"
    )
    print(f"{load_average()} at the end\n")
    print(table(rows, baseline=collect_env))
    ok = envcheck.median_wall_s <= 0.3 and envcheck.median_rss_mib <= 60
    ok = ok and collect_env.median_wall_s / envcheck.median_wall_s >= 10
    print(f"\ntargets (≤ 0.3 s, ≤ 60 MiB, ≥ 10× faster): {'met' if ok else 'NOT met'}")
    ratio = collect_env.median_wall_s / envcheck.median_wall_s
    print(f"envcheck vs collect_env: {ratio:.1f}x faster (issue 11 target >= 15x)")
    return 0


def bench_binaries(venv: Path, runs: int) -> int:
    envcheck = str(venv.resolve() / "bin" / "envcheck")
    if not Path(envcheck).exists():
        print(f"no envcheck in {venv}: pip install this checkout there first", file=sys.stderr)
        return 2
    cache = REPO / ".bench" / "cache-binaries"
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(cache)}
    cold = f'rm -f "{cache}"/binaries-v*.json; exec "{envcheck}" check --json'
    rows = measure_interleaved(
        [
            (
                "check --json (binaries off)",
                [envcheck, "check", "--json"],
                {**env, "ENVCHECK_NO_BINARIES": "1"},
            ),
            ("check --json (binaries, warm)", [envcheck, "check", "--json"], env),
            ("check --json (binaries, cold)", ["sh", "-c", cold], env),
        ],
        runs,
        cwd=neutral_directory(),
    )
    off, warm, cold_row = rows
    print(f"venv: {venv}; {runs} runs each, interleaved; {load_average()}\n")
    print(table(rows, baseline=off))
    ratio = warm.median_wall_s / off.median_wall_s
    print(
        f"\nwarm / off: {ratio:.2f}x (target <= 2x); cold: {cold_row.median_wall_s:.2f} s "
        "(target <= 3 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
