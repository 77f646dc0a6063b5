"""Run one --deep child script: its own process group, a hard deadline, partial output kept.

The child scripts (cuda_child.py, nvml_child.py, torch_child.py) print one JSON object per line and
flush before every step, so when the deadline passes the lines read so far say where it stopped.
On timeout the whole process group is killed (a torch child's NCCL workers with it) and reaped.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envcheck.probes.run import run_bounded

_ENDS = ("end", "gemm", "allreduce", "torch", "no_torch")
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class ChildResult:
    events: list[dict[str, Any]] = field(default_factory=list)
    returncode: int | None = None
    timed_out: bool = False
    start_error: str | None = None
    stderr: str = ""
    duration_ms: float = 0.0

    @property
    def signal_name(self) -> str | None:
        """ "SIGFPE" when the child died of a signal."""
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def last_begin(self) -> dict[str, Any] | None:
        """The last step the child started and never finished, if any."""
        pending = None
        for event in self.events:
            if event.get("event") == "begin":
                pending = event
            elif event.get("event") in _ENDS:
                pending = None
        return pending


def parse_lines(text: str) -> list[dict[str, Any]]:
    events = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if isinstance(value, dict):
            events.append(value)
    return events


def run_child(
    python: str, script: str, args: Sequence[str], *, env: Mapping[str, str], timeout: float
) -> ChildResult:
    """Run ``python HERE/script args`` bounded by ``timeout`` seconds; never raises."""
    argv = [python, str(HERE / script), *args]
    start = time.perf_counter()
    got = run_bounded(argv, timeout=timeout, env=env)
    if got.start_error is not None:
        exc = got.start_error
        return ChildResult(start_error=f"could not start {python}: {exc.strerror or exc}")
    out, err, timed_out = got.stdout, got.stderr, got.timed_out
    ms = round((time.perf_counter() - start) * 1000, 2)
    return ChildResult(
        events=parse_lines(out or ""),
        returncode=got.returncode,
        timed_out=timed_out,
        stderr=(err or "")[-4000:],
        duration_ms=ms,
    )
