"""Benchmark what ``--deep`` adds to ``envcheck check --json``, with the test fakes at the edges.

No GPU is needed: the fake libcuda (tests/fakes/libcuda_fake.c, built here with the system C
compiler) answers the CUDA driver calls and the fake pynvml (tests/fakes/pynvml.py) the NVML
health queries, for 1 and for 8 GPUs, plus a GPU-less node (no libcuda, no NVML). What this
measures is envcheck's own cost: two child interpreters started side by side, their imports, the
parsing, the /sys walk and the rules. A real driver adds its own time (cuInit, one context per
GPU); docs/gpu.md says how to measure that on a GPU node (scripts/gpu_deep.sh).

    python scripts/bench_deep.py --runs 9

Target (issue 15): ``check --deep`` adds <= 1 s on an 8-GPU node.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import measure, table

REPO = Path(__file__).resolve().parent.parent
FAKES = REPO / "tests" / "fakes"


def _libcuda(out: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("needs a C compiler (cc) to build the fake libcuda")
    real = out / "libcuda.so.550.54.15"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(real), str(FAKES / "libcuda_fake.c")], check=True
    )
    link = out / "libcuda.so.1"
    link.symlink_to(real.name)
    return link


def _scenario(out: Path, gpus: int) -> Path:
    import importlib

    sys.path.insert(0, str(FAKES))
    fakes = importlib.import_module("nvml_scenarios")
    HEALTHY, _hgx = fakes.HEALTHY, fakes._hgx

    data = {
        "driver": "535.104.05",
        "cuda": 12020,
        "devices": [_hgx(HEALTHY, i) for i in range(gpus)],
        "p2p": [[0] * gpus for _ in range(gpus)],
    }
    path = out / f"nvml-{gpus}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _steps(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """Duration of each --deep step, from the report, median of 5 runs."""
    runs: dict[str, list[float]] = {}
    for _ in range(5):
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False).stdout
        report = json.loads(out)["data"]["reports"][0]
        for step in report["deep"]["data"]["steps"]:
            runs.setdefault(step["name"], []).append(step["duration_ms"])
        runs.setdefault("deep (whole)", []).append(report["deep"]["duration_ms"])
    return {k: statistics.median(v) for k, v in runs.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    base = dict(os.environ)
    base["PYTHONPATH"] = os.pathsep.join([str(FAKES), str(REPO), base.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "envcheck", "check", "--json"]
    rows = []
    steps = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        lib = _libcuda(out)
        gpu_less = {**base, "FAKE_PYNVML_SCENARIO": "none", "ENVCHECK_LIBCUDA": str(out / "no")}
        plain = measure("check (GPU-less)", cmd, args.runs, env=gpu_less)
        deep = measure("check --deep (GPU-less)", [*cmd, "--deep"], args.runs, env=gpu_less)
        rows += [plain, deep]
        for gpus in (1, 8):
            env = {
                **base,
                "FAKE_PYNVML_JSON": str(_scenario(out, gpus)),
                "ENVCHECK_LIBCUDA": str(lib),
                "FAKE_CUDA_DEVICES": str(gpus),
            }
            rows.append(measure(f"check ({gpus} fake GPU)", cmd, args.runs, env=env))
            rows.append(
                measure(f"check --deep ({gpus} fake GPU)", [*cmd, "--deep"], args.runs, env=env)
            )
            steps[gpus] = _steps([*cmd, "--deep"], env)
    print(f"{args.runs} runs each, Python {sys.version.split()[0]}\n")
    print(table(rows, baseline=rows[0]))
    print("\nadded by --deep (median wall):")
    for i in range(0, len(rows), 2):
        print(f"  {rows[i + 1].label}: +{rows[i + 1].median_wall_s - rows[i].median_wall_s:.3f} s")
    print("\n--deep steps (median of 5, ms):")
    for gpus, durations in steps.items():
        text = ", ".join(f"{k} {v:.0f}" for k, v in durations.items())
        print(f"  {gpus} GPU: {text}")
    worst = max(rows[i + 1].median_wall_s - rows[i].median_wall_s for i in range(0, len(rows), 2))
    print(f"\ntarget (adds <= 1 s with 8 GPUs): {'met' if worst <= 1.0 else 'NOT met'} (fakes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
