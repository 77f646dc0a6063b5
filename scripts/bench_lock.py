"""Benchmark ``envcheck lock`` (spec to written, checked lock) against the uv commands it wraps:
``uv lock`` + ``uv export`` on the same throwaway project (same requirements, overrides,
explicit PyTorch index, environments), side by side in one run, runs interleaved.

Offline and repeatable: both resolve against two wheel indexes served on 127.0.0.1 (the tests'
wheel factory and loopback server; one plays the PyTorch index), so the figures measure
envcheck's own work (matrix, stack choice, rules before and after, the lock's comments) on
top of the resolver.

    python scripts/bench_lock.py --runs 7

Target (issue 24): envcheck's own overhead (median envcheck - median uv) <= 0.25 s (issue 13's
was 0.5 s). On a loaded machine the wall figures mostly measure waiting for a CPU, so the CPU
time is printed too: each run's user + system time from wait4(), which counts the uv
processes a run waited for, so the difference of the medians is envcheck's own CPU work.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import Summary, load_average, run_once, table

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / ".bench" / "lock"
SPEC = """\
[gpu]
driver = "535.104.05"
models = ["NVIDIA H20", "NVIDIA H20", "NVIDIA H20", "NVIDIA H20"]
[python]
version = "3.10.12"
[packages]
vllm = "0.6.3"
[system]
glibc = "2.35"
"""


def envcheck_bin() -> str:
    found = Path(sys.executable).parent / "envcheck"
    return str(found) if found.exists() else "envcheck"


def summary(label: str, walls: list[float], codes: set[int]) -> Summary:
    return Summary(
        label=label,
        runs=len(walls),
        median_wall_s=statistics.median(walls),
        min_wall_s=min(walls),
        max_wall_s=max(walls),
        median_rss_mib=0.0,
        returncodes=tuple(sorted(codes)),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from envcheck.matrix_validate import load
    from envcheck.model.plan import Target
    from envcheck.plan.resolve import IndexConfig, find_uv
    from envcheck.plan.stack import add_overrides, choose_stack
    from envcheck.plan.uvproject import LockRequest, LockTargets, project_text
    from envcheck.rules import all_rules
    from tests.index.wheels import WheelIndexes
    from tests.wheelfactory import STANDARD

    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(parents=True)
    served = WheelIndexes(WORK / "served")
    served.add("pypi", STANDARD)
    served.start()
    try:
        index = served.url("pypi")
        spec = WORK / "target.toml"
        spec.write_text(SPEC, encoding="utf-8")
        matrix = load()
        target = Target(
            python="3.10.12", glibc="2.35", driver="535.104.05", gpus=("NVIDIA H20",) * 4
        )
        stack = add_overrides(
            choose_stack(matrix, target, ["vllm==0.6.3"]), matrix, all_rules(matrix)
        )
        project = WORK / "project"
        project.mkdir()
        request = LockRequest(stack, IndexConfig(index_url=index), LockTargets(("3.10.12",)))
        (project / "pyproject.toml").write_text(project_text(request), encoding="utf-8")
        uv = find_uv()
        env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}
        env["XDG_CONFIG_HOME"] = env["XDG_CONFIG_DIRS"] = str(project)
        uv_argv = [
            "sh",
            "-c",
            f'rm -f uv.lock && "{uv}" lock --quiet --no-progress --python "{sys.executable}" '
            f'--no-python-downloads && "{uv}" export --frozen --quiet --no-header '
            "--format requirements.txt --no-emit-project > b.lock",
        ]
        out = Path(tempfile.mkdtemp(prefix="bench-lock-", dir=WORK))
        envcheck_argv = [
            envcheck_bin(),
            "lock",
            "--spec",
            str(spec),
            "--index-url",
            index,
            "-o",
            str(out / "a.lock"),
            "--force",
        ]
        # an installed envcheck has its bytecode compiled: let the warm-up write it
        own_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        # a cache of its own: other envcheck runs on the machine share ~/.cache/envcheck
        own_env["ENVCHECK_CACHE_DIR"] = str(WORK.parent / "cache")
        run_once(envcheck_argv, own_env, str(WORK))  # warm-up: uv's cache, Python's bytecode
        run_once(uv_argv, env, str(project))
        walls: dict[str, list[float]] = {"envcheck": [], "uv": []}
        cpus: dict[str, list[float]] = {"envcheck": [], "uv": []}
        codes: dict[str, set[int]] = {"envcheck": set(), "uv": set()}
        for _ in range(args.runs):  # interleaved: both see the same machine load
            for name, argv, run_env, cwd in (
                ("uv", uv_argv, env, str(project)),
                ("envcheck", envcheck_argv, own_env, str(WORK)),
            ):
                sample = run_once(argv, run_env, cwd)
                walls[name].append(sample.wall_s)
                cpus[name].append(sample.cpu_s)
                codes[name].add(sample.returncode)
    finally:
        served.stop()
    uv_row = summary("uv lock + uv export (same project)", walls["uv"], codes["uv"])
    envcheck_row = summary("envcheck lock --spec target.toml", walls["envcheck"], codes["envcheck"])
    print(f"loopback index {index}; target: 4x H20, driver 535.104.05, Python 3.10.12;")
    print(f"requirements: vllm==0.6.3 (+ torch==2.4.0, cuBLAS override); {args.runs} runs each")
    print(f"{load_average()} at the end\n")
    print(table([uv_row, envcheck_row], baseline=uv_row))
    overhead = envcheck_row.median_wall_s - uv_row.median_wall_s
    ok = overhead <= 0.25
    own_cpu = statistics.median(cpus["envcheck"]) - statistics.median(cpus["uv"])
    print(
        f"\nenvcheck's own overhead: {overhead:.3f} s median "
        f"({envcheck_row.median_wall_s / uv_row.median_wall_s:.1f}x uv's time); "
        f"target <= 0.25 s: {'met' if ok else 'NOT met'}"
    )
    print(
        f"CPU time (user + system, uv's included): envcheck {statistics.median(cpus['envcheck']):.3f} s, "
        f"uv {statistics.median(cpus['uv']):.3f} s median: envcheck's own CPU work {own_cpu:.3f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
