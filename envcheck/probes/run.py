"""Subprocesses for probes: argv lists, a hard timeout, never a shell, never an exception."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RunResult:
    argv: tuple[str, ...]
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    problem: str | None = None  # "not found", "timed out after 5 s", "could not start: ..."

    @property
    def ok(self) -> bool:
        return self.problem is None and self.returncode == 0

    def describe_failure(self) -> str:
        if self.problem:
            return self.problem
        detail = (self.stderr or self.stdout).strip().splitlines()
        tail = detail[-1][:200] if detail else ""
        return f"exited with {self.returncode}" + (f": {tail}" if tail else "")


def which(command: str, env: Mapping[str, str]) -> str | None:
    """Find ``command`` on the PATH of ``env`` (not of this process), in its absolute
    directories only: an empty or relative component would mean the working directory, where
    anyone may have left an ``nvidia-smi`` (docs/security.md)."""
    path = env.get("PATH", os.defpath)
    absolute = os.pathsep.join(p for p in path.split(os.pathsep) if p and os.path.isabs(p))
    return shutil.which(command, path=absolute) if absolute else None


@dataclass(frozen=True)
class Bounded:
    """What a bounded child left: its exit status and output, or why there is none."""

    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False  # killed at the deadline; stdout/stderr hold what it had written
    start_error: OSError | None = None


def run_bounded(
    argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None
) -> Bounded:
    """Run argv in its own process group with a hard deadline; never raises.

    On timeout the whole group is killed, so a wrapper script whose grandchild hangs cannot
    keep us waiting on its pipes, and the output written so far is kept. A child stuck in the
    kernel (a wedged driver) is abandoned after a short grace period.
    """
    try:
        proc = subprocess.Popen(
            tuple(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except OSError as exc:
        return Bounded(start_error=exc)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            stdout, stderr = proc.communicate(timeout=_GRACE_S)
        except subprocess.TimeoutExpired:  # stuck in the kernel: give up on its pipes
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            stdout, stderr = "", ""
        return Bounded(proc.returncode, stdout or "", stderr or "", timed_out=True)
    return Bounded(proc.returncode, stdout, stderr)


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Run argv; a missing program, a hang or a crash becomes ``problem``, not an exception
    (see :func:`run_bounded` for how the child is bounded)."""
    args = tuple(argv)
    got = run_bounded(args, timeout=timeout, env=env)
    if isinstance(got.start_error, FileNotFoundError):
        return RunResult(args, problem=f"{args[0]} not found")
    if got.start_error is not None:
        exc = got.start_error
        return RunResult(args, problem=f"could not start {args[0]}: {exc.strerror or exc}")
    if got.timed_out:
        return RunResult(args, problem=f"timed out after {round(timeout, 1):g} s")
    return RunResult(args, got.returncode, got.stdout, got.stderr)


_GRACE_S = 1.0


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
