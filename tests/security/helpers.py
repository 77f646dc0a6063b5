"""Shared helpers for the security tests: a real ``python -m envcheck`` child to signal, fake
programs that record their process id and sleep, and a check that a process is gone."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import cli_env

REPO = Path(__file__).resolve().parents[2]


def fake_program(path: Path, body: str) -> Path:
    """An executable shell script (``#!/bin/sh`` + body)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def start_envcheck(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "envcheck", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, timeout: float = 60.0) -> str:
    """The text of ``path`` once a child has written it (the fake program started)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="utf-8").strip():
            time.sleep(0.3)  # let envcheck settle into waiting on it
            return path.read_text(encoding="utf-8")
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, already dead, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill_leftover(pid: int) -> None:
    """Clean up after a failing test (the child envcheck should have ended)."""
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = cli_env(TMPDIR=str(tmp), ENVCHECK_NO_PROGRESS="1", **extra)
    env["PYTHONPATH"] = str(REPO)
    return env
