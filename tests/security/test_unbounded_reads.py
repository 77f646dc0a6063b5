"""Unbounded reads and output: `--profile /dev/zero` or a FIFO nobody writes to, a program
that prints forever (an `nvidia-smi` gone wrong), a 50 MB matching line through the grep
engine. Each is capped: one clear line or a bounded result, in seconds, without holding the
whole input in memory."""

from __future__ import annotations

import io
import os
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest

from envcheck.probes.run import run
from envcheck.triage.grep_engine import GrepScanner, gnu_grep
from envcheck.triage.scan import MAX_MATCHED
from tests.conftest import run_cli
from tests.security.helpers import fake_program


def test_profile_dev_zero_is_cut_off() -> None:
    start = time.monotonic()
    result = run_cli("lock", "--profile", "/dev/zero", "--python", "3.11", "--dry-run", timeout=60)
    assert result.returncode == 2
    assert "/dev/zero: over 64 MiB" in result.stderr and "Traceback" not in result.stderr
    assert time.monotonic() - start < 30


def test_profile_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "profile.toml"
    os.mkfifo(fifo)
    result = run_cli("lock", "--profile", str(fifo), "--python", "3.11", "--dry-run", timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert str(fifo) in result.stderr


def test_a_program_printing_forever_is_stopped_at_the_cap(tmp_path: Path) -> None:
    smi = fake_program(tmp_path / "nvidia-smi", "exec yes 'GPU 0: NVIDIA H100 80GB HBM3'\n")
    start = time.monotonic()
    result = run([str(smi)], timeout=60, cap=4 << 20)
    assert time.monotonic() - start < 20  # stopped at the cap, not at the timeout
    assert result.problem == f"printed more than {4 << 20} bytes; stopped"
    assert len(result.stdout) <= 4 << 20 and result.stdout.startswith("GPU 0: NVIDIA H100")


def test_default_cap_bounds_a_probe_subprocess(tmp_path: Path) -> None:
    smi = fake_program(tmp_path / "nvidia-smi", "exec yes\n")
    result = run([str(smi)], timeout=60)
    assert result.problem is not None and "printed more than" in result.problem


class _Endless(io.RawIOBase):
    """A log of one matching line of ``size`` bytes, then a newline (generated, not stored)."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.head = (
            b"RuntimeError: CUDA error: no kernel image is available for execution on the device "
        )

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.left <= 0:
            if self.left == 0:
                self.left = -1
                buffer[:1] = b"\n"
                return 1
            return 0
        chunk = self.head if self.head else b"x" * min(len(buffer), self.left)
        self.head = b""
        n = min(len(buffer), len(chunk), self.left)
        buffer[:n] = chunk[:n]
        self.left -= n
        return n


@pytest.mark.skipif(gnu_grep() is None or shutil.which("grep") is None, reason="no GNU grep")
def test_grep_engine_keeps_8_kib_of_a_50_mb_line() -> None:
    from envcheck.matrix_validate import load

    matrix = load([])
    scanner = GrepScanner(matrix.signatures, gnu_grep() or "grep")
    try:
        tracemalloc.start()
        result = scanner.scan(io.BufferedReader(_Endless(50 << 20)))  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        scanner.close()
    assert result.lines == 1
    assert result.tallies, "the line was not named"
    for tally in result.tallies.values():
        assert len(tally.first.text) <= MAX_MATCHED + 1
    assert peak < 16 << 20, f"peak {peak} bytes: the line was held in memory"
