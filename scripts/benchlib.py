"""Shared benchmark helpers: run a command N times, report median wall time and peak RSS.

Machines are shared and noisy, so every figure is a median of several runs and comparisons
are quoted as ratios against the tool a user would otherwise run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    wall_s: float
    peak_rss_mib: float
    returncode: int
    cpu_s: float = 0.0  # user + system time of exactly this child


@dataclass(frozen=True)
class Summary:
    label: str
    runs: int
    median_wall_s: float
    min_wall_s: float
    max_wall_s: float
    median_rss_mib: float
    returncodes: tuple[int, ...]
    median_cpu_s: float = 0.0  # user + system CPU: steadier than wall time on a loaded machine


def run_once(
    argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None
) -> Sample:
    """One run; peak RSS from wait4() of exactly this child (not all children so far)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Sample(
        wall_s=wall,
        peak_rss_mib=usage.ru_maxrss / 1024,
        returncode=proc.returncode,
        cpu_s=usage.ru_utime + usage.ru_stime,
    )


def measure(
    label: str,
    argv: Sequence[str],
    runs: int,
    env: Mapping[str, str] | None = None,
    warmup: int = 1,
    cwd: str | None = None,
) -> Summary:
    for _ in range(warmup):
        run_once(argv, env, cwd)
    return _summary(label, [run_once(argv, env, cwd) for _ in range(runs)])


def _summary(label: str, samples: Sequence[Sample]) -> Summary:
    walls = [s.wall_s for s in samples]
    return Summary(
        label=label,
        runs=len(samples),
        median_wall_s=statistics.median(walls),
        min_wall_s=min(walls),
        max_wall_s=max(walls),
        median_rss_mib=statistics.median(s.peak_rss_mib for s in samples),
        returncodes=tuple(sorted({s.returncode for s in samples})),
        median_cpu_s=statistics.median(s.cpu_s for s in samples),
    )


def measure_interleaved(
    commands: Sequence[tuple[str, Sequence[str], Mapping[str, str] | None]],
    runs: int,
    warmup: int = 1,
    cwd: str | None = None,
) -> list[Summary]:
    """Each (label, argv, env) ``runs`` times, the commands taking turns (A B C A B C ...), so
    that all of them see the same machine load: on a shared machine the load changes within
    seconds, and a block of runs of one command against a later block of another compares
    the load, not the commands."""
    for _ in range(warmup):
        for _label, argv, env in commands:
            run_once(argv, env, cwd)
    samples: list[list[Sample]] = [[] for _ in commands]
    for _ in range(runs):
        for row, (_label, argv, env) in zip(samples, commands, strict=True):
            row.append(run_once(argv, env, cwd))
    return [_summary(label, row) for row, (label, _a, _e) in zip(samples, commands, strict=True)]


def neutral_directory() -> str:
    """An empty working directory with no pyproject.toml above it: where a user runs a command
    on a node, rather than inside envcheck's own source tree (whose pyproject.toml envcheck
    would read, looking for [tool.envcheck] settings)."""
    import tempfile

    return tempfile.mkdtemp(prefix="envcheck-bench-")


def load_average() -> str:
    """The machine's 1/5/15-minute load averages, for the record beside the figures."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min)"


def table(rows: Sequence[Summary], baseline: Summary | None = None) -> str:
    lines = [
        "| command | runs | median wall | min–max | median CPU | median peak RSS | exit codes "
        "| vs baseline |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = ""
        if baseline is not None and row is not baseline and row.median_wall_s > 0:
            speed = baseline.median_wall_s / row.median_wall_s
            ratio = f"{speed:.1f}× faster" if speed >= 1 else f"{1 / speed:.1f}× slower"
        elif row is baseline:
            ratio = "baseline"
        lines.append(
            f"| `{row.label}` | {row.runs} | {row.median_wall_s:.3f} s | "
            f"{row.min_wall_s:.3f}–{row.max_wall_s:.3f} s | {row.median_cpu_s:.3f} s | "
            f"{row.median_rss_mib:.1f} MiB | "
            f"{','.join(map(str, row.returncodes))} | {ratio} |"
        )
    return "\n".join(lines)


def add_source_option(parser: argparse.ArgumentParser) -> None:
    """``--source DIR`` (repeatable): another checkout measured in the same interleaved runs."""
    parser.add_argument(
        "--source",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also run envcheck from this source tree (PYTHONPATH=DIR, the venv's Python) in "
        "the same interleaved runs: before/after comparisons of two checkouts (repeatable)",
    )


def source_commands(
    python: Path, trees: Sequence[Path], argv: Sequence[str], env: Mapping[str, str]
) -> list[tuple[str, list[str], dict[str, str]]]:
    """``python -m envcheck ARGV`` from each source tree (its code and matrices, the venv's
    dependencies), with bytecode written as an installed copy has it."""
    commands = []
    for tree in trees:
        tree_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        tree_env["PYTHONPATH"] = str(tree.resolve())
        label = f"envcheck {' '.join(argv)} ({tree.resolve().name} source)"
        commands.append((label, [str(python), "-m", "envcheck", *argv], tree_env))
    return commands
