"""Benchmark ``envcheck lock`` (spec to written, checked lock) against plain ``uv pip compile``
on the same requirements, overrides and target.

Offline and repeatable: both resolve against a local PEP 503 index of small wheels built here
(the tests' wheel factory), so the figures measure envcheck's own work (matrix, stack choice,
rules before and after, the lock's comments) on top of the resolver. With ``--real`` it also
times a resolution of vLLM 0.6.3 against the index pip is configured with, when reachable.

    python scripts/bench_lock.py --runs 7 [--real]

Target (issue 4): envcheck's own overhead (median envcheck - median uv) <= 0.5 s.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import Summary, measure, table

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


def build_index(work: Path) -> str:
    sys.path.insert(0, str(REPO))
    from tests.wheelfactory import STANDARD, make_simple_index, make_wheels

    if work.exists():
        shutil.rmtree(work)
    wheels = make_wheels(work / "wheels", STANDARD)
    return make_simple_index(work / "simple", wheels)


def uv_bin() -> str:
    from uv import find_uv_bin

    return str(find_uv_bin())


def envcheck_bin() -> str:
    found = Path(sys.executable).parent / "envcheck"
    return str(found) if found.exists() else "envcheck"


def compare(label: str, index_args: list[str], work: Path, runs: int) -> tuple[Summary, Summary]:
    spec = work / "target.toml"
    spec.write_text(SPEC, encoding="utf-8")
    (work / "requirements.in").write_text("vllm==0.6.3\ntorch==2.4.0\n", encoding="utf-8")
    (work / "overrides.txt").write_text("nvidia-cublas-cu12==12.3.4.1\n", encoding="utf-8")
    envcheck = measure(
        f"envcheck lock --spec target.toml ({label})",
        [
            envcheck_bin(),
            "lock",
            "--spec",
            str(spec),
            *index_args,
            "-o",
            str(work / "a.lock"),
            "--force",
        ],
        runs,
        cwd=str(work),
    )
    uv = measure(
        f"uv pip compile ({label})",
        [
            uv_bin(),
            "pip",
            "compile",
            str(work / "requirements.in"),
            "--no-config",
            "--quiet",
            "--python-version",
            "3.10.12",
            "--python",
            sys.executable,
            "--python-platform",
            "x86_64-manylinux_2_35",
            "--generate-hashes",
            "--index-strategy",
            "unsafe-best-match",
            "--overrides",
            str(work / "overrides.txt"),
            *index_args,
            "-o",
            str(work / "b.lock"),
        ],
        runs,
        cwd=str(work),
    )
    return envcheck, uv


def real_index_args() -> list[str] | None:
    """The index pip is configured with, if a resolution of vllm==0.6.3 works within a minute."""
    sys.path.insert(0, str(REPO))
    from envcheck.plan.resolve import pip_index_config

    config = pip_index_config()
    args: list[str] = []
    if config.index_url:
        args += ["--index-url", config.index_url]
    for url in config.extra_index_urls:
        args += ["--extra-index-url", url]
    for link in config.find_links:
        args += ["--find-links", link]
    probe = subprocess.run(
        [
            uv_bin(),
            "pip",
            "compile",
            "-",
            "--no-config",
            "--quiet",
            "--python-version",
            "3.11",
            "--index-strategy",
            "unsafe-best-match",
            *args,
        ],
        input="vllm==0.6.3\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return args if probe.returncode == 0 else None


def report(rows: tuple[Summary, Summary]) -> bool:
    envcheck, uv = rows
    print(table([uv, envcheck], baseline=uv))
    overhead = envcheck.median_wall_s - uv.median_wall_s
    ok = overhead <= 0.5
    print(
        f"\nenvcheck's own overhead: {overhead:.3f} s median "
        f"({envcheck.median_wall_s / uv.median_wall_s:.1f}x uv's time); target <= 0.5 s: "
        f"{'met' if ok else 'NOT met'}\n"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--real", action="store_true", help="also time the configured index")
    args = parser.parse_args()
    url = build_index(WORK)
    print(f"local index: {url}; target: 4x H20, driver 535.104.05, Python 3.10.12, glibc 2.35;")
    print(f"requirements: vllm==0.6.3 (+ torch==2.4.0, cuBLAS override); {args.runs} runs each\n")
    ok = report(compare("local index", ["--index-url", url], WORK, args.runs))
    if args.real:
        index = real_index_args()
        if index is None:
            print("real index: not reachable (or vllm==0.6.3 does not resolve there); skipped")
        else:
            real = WORK / "real"
            real.mkdir(exist_ok=True)
            ok = report(compare("real index", index, real, max(3, args.runs // 2))) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
