"""Subprocesses: argv lists, a hard timeout, capped output, never a shell, never an exception.

Every child envcheck starts runs in a process group of its own and is recorded while it runs
(``spawn``/``forget``), so that a signal to envcheck (SIGINT, SIGTERM) ends them too:
``terminate_children`` sends each group SIGTERM, waits a short grace and then SIGKILLs what is
left. The CLI calls it when a signal ends a command; ``run_bounded`` does it for its own child
when it is interrupted. What a child prints is kept up to ``OUTPUT_CAP`` bytes per stream; a
child that prints more (an ``nvidia-smi`` printing forever) is killed as a group at the cap.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

OUTPUT_CAP = 32 * 1024 * 1024  # bytes kept per stream of one child
TERM_GRACE_S = 2.0  # after SIGTERM, before SIGKILL, when envcheck itself is stopped
_GRACE_S = 1.0  # after SIGKILL, for the pipes to drain

_live: set[subprocess.Popen[Any]] = set()
_live_lock = threading.Lock()
_refusing: list[bool] = []  # set while a stopped worker_pool joins its workers
_ended_early: list[int] = []  # children a stopped worker_pool ended, for the CLI's count


class Terminated(BaseException):
    """SIGTERM (or SIGHUP) as an exception, like KeyboardInterrupt for SIGINT: raised in the
    main thread by the CLI's handler so that ``finally`` blocks run (temporary directories
    removed, children ended, what ran reported)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def signal_name(exc: BaseException) -> str:
    if isinstance(exc, Terminated):
        return signal.Signals(exc.signum).name
    return "SIGINT"


@dataclass(frozen=True)
class RunResult:
    """A finished (or failed) subprocess: its argv, exit code, output and problem."""

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
        if self.returncode is not None and self.returncode < 0:
            with contextlib.suppress(ValueError):
                name = signal.Signals(-self.returncode).name
                return f"killed by {name}" + (f": {tail}" if tail else "")
        return f"exited with {self.returncode}" + (f": {tail}" if tail else "")


def which(command: str, env: Mapping[str, str]) -> str | None:
    """Find ``command`` on the PATH of ``env`` (not of this process), in its absolute
    directories only: an empty or relative component would mean the working directory, where
    anyone may have left an ``nvidia-smi`` (docs/security.md)."""
    path = env.get("PATH", os.defpath)
    absolute = os.pathsep.join(p for p in path.split(os.pathsep) if p and os.path.isabs(p))
    return _which(command, absolute) if absolute else None


def _which(command: str, path: str) -> str | None:
    """``shutil.which(command, path=path)`` (Python 3.10-3.13) without importing shutil (it
    loads the bz2 and lzma modules, about 1% of a `check`): the first directory of ``path``
    holding an executable ``command`` that is not a directory."""
    if sys.platform == "win32":  # PATHEXT and the working directory first: shutil's own
        import shutil

        return shutil.which(command, path=path)
    if os.path.dirname(command):
        return command if _runnable(command) else None
    seen = set()
    for folder in path.split(os.pathsep):
        normdir = os.path.normcase(folder)
        if normdir not in seen:
            seen.add(normdir)
            name = os.path.join(folder, command)
            if _runnable(name):
                return name
    return None


def _runnable(name: str) -> bool:
    return os.path.exists(name) and os.access(name, os.F_OK | os.X_OK) and not os.path.isdir(name)


def spawn(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``Popen`` in a new process group, recorded until ``forget``; raises OSError (also once
    a signal is stopping envcheck: a worker thread starts no new child then)."""
    with _live_lock:
        if _refusing:
            raise OSError("envcheck is stopping (a signal)")
        proc: subprocess.Popen[Any] = subprocess.Popen(
            tuple(argv), start_new_session=True, **kwargs
        )
        _live.add(proc)
    return proc


@contextlib.contextmanager
def worker_pool(workers: int, prefix: str) -> Iterator[ThreadPoolExecutor]:
    """A thread pool whose workers wait on children (the probe's): a signal in the main thread
    (KeyboardInterrupt, ``Terminated``) ends every recorded child at once and lets no new one
    start while the pool joins its workers, so the join does not wait out their timeouts
    (``nvidia-smi`` hanging for ``--timeout``). Children may start again afterwards (the API
    and a REPL go on after a Ctrl-C); the CLI's ``terminate_children`` counts those ended."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=prefix)
    try:
        yield pool
    except (KeyboardInterrupt, Terminated):
        with _live_lock:
            _refusing.append(True)
        try:
            _ended_early.append(terminate_children(reset=False))
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            with _live_lock:
                _refusing.clear()
        raise
    finally:
        pool.shutdown(wait=True)


def forget(proc: subprocess.Popen[Any]) -> None:
    with _live_lock:
        _live.discard(proc)


def _signal_group(proc: subprocess.Popen[Any], signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(OSError):
            proc.send_signal(signum)


def end_group(proc: subprocess.Popen[Any], grace: float = TERM_GRACE_S) -> None:
    """SIGTERM to the child's group, SIGKILL after ``grace`` seconds; the child is reaped."""
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    _signal_group(proc, signal.SIGKILL)  # grandchildren that ignored SIGTERM, too
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_GRACE_S)
    forget(proc)


def terminate_children(grace: float = TERM_GRACE_S, *, reset: bool = True) -> int:
    """End every recorded child's group (SIGTERM, then SIGKILL after ``grace``); how many,
    with those a stopped ``worker_pool`` ended before (``reset``: counted once)."""
    with _live_lock:
        procs = list(_live)
        earlier = sum(_ended_early) if reset else 0
        if reset:
            _ended_early.clear()
    for proc in procs:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        _signal_group(proc, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_GRACE_S)
        forget(proc)
    return len(procs) + earlier


def stop_for_good() -> int:
    """The CLI's end after a signal: from now on no child starts (a probe's worker thread that
    is still running would otherwise start its next command after the cleanup, and the
    interpreter's exit would wait that child's whole timeout), then every recorded child is
    ended; how many, as ``terminate_children``."""
    with _live_lock:
        _refusing.append(True)
    return terminate_children()


@dataclass(frozen=True)
class Bounded:
    """What a bounded child left: its exit status and output, or why there is none."""

    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False  # killed at the deadline; stdout/stderr hold what it had written
    start_error: OSError | None = None
    overflow: bool = False  # printed more than the cap: killed, the first bytes kept


class _Drain:
    """Reads one pipe in a thread, keeping at most ``cap`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int, wake: threading.Event) -> None:
        self.kept = bytearray()
        self.over = False
        self.done = False
        self._stream, self._cap, self._wake = stream, cap, wake
        self.thread = threading.Thread(target=self._work, name="envcheck-drain", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        try:
            while chunk := read(64 * 1024):
                room = self._cap - len(self.kept)
                self.kept += chunk[: max(room, 0)]
                if len(chunk) > room:
                    self.over = True
                    return
        except (OSError, ValueError):
            return
        finally:
            self.done = True
            self._wake.set()

    def text(self) -> str:
        return bytes(self.kept).decode("utf-8", errors="replace")


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cap: int = OUTPUT_CAP,
) -> Bounded:
    """Run argv in its own process group with a hard deadline and capped output; never raises
    (but an interrupt, KeyboardInterrupt or ``Terminated``, ends the child's group and is
    raised again).

    On timeout, or when either stream passes ``cap`` bytes, the whole group is killed, so a
    wrapper script whose grandchild hangs cannot keep us waiting on its pipes, and the output
    written so far is kept. A child stuck in the kernel (a wedged driver) is abandoned after a
    short grace period.
    """
    try:
        proc = spawn(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
        )
    except OSError as exc:
        return Bounded(start_error=exc)
    assert proc.stdout is not None and proc.stderr is not None
    wake = threading.Event()
    drains = (_Drain(proc.stdout, cap, wake), _Drain(proc.stderr, cap, wake))
    deadline = time.monotonic() + timeout
    timed_out = overflow = False
    try:
        while not all(d.done for d in drains):
            overflow = any(d.over for d in drains)
            left = deadline - time.monotonic()
            if overflow or left <= 0:
                timed_out = not overflow
                break
            wake.wait(left)
            wake.clear()
        if not (timed_out or overflow):
            left = max(deadline - time.monotonic(), 0.0)
            try:
                proc.wait(left)  # both pipes closed: the child is (nearly always) gone
            except subprocess.TimeoutExpired:
                timed_out = True
    except BaseException:
        end_group(proc)
        raise
    if timed_out or overflow:
        _signal_group(proc, signal.SIGKILL)
    for drain in drains:
        drain.thread.join(_GRACE_S if (timed_out or overflow) else None)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_GRACE_S)
    forget(proc)
    for stream in (proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            stream.close()
    out, err = drains[0].text(), drains[1].text()
    if overflow:
        return Bounded(proc.returncode, out, err, overflow=True)
    return Bounded(proc.returncode, out, err, timed_out=timed_out)


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cap: int = OUTPUT_CAP,
) -> RunResult:
    """Run argv; a missing program, a hang, endless output or a crash becomes ``problem``, not
    an exception (see :func:`run_bounded` for how the child is bounded)."""
    args = tuple(argv)
    got = run_bounded(args, timeout=timeout, env=env, cap=cap)
    if isinstance(got.start_error, FileNotFoundError):
        return RunResult(args, problem=f"{args[0]} not found")
    if got.start_error is not None:
        exc = got.start_error
        return RunResult(args, problem=f"could not start {args[0]}: {exc.strerror or exc}")
    if got.timed_out:
        return RunResult(args, problem=f"timed out after {round(timeout, 1):g} s")
    if got.overflow:
        return RunResult(
            args,
            got.returncode,
            got.stdout,
            got.stderr,
            problem=f"printed more than {cap} bytes; stopped",
        )
    return RunResult(args, got.returncode, got.stdout, got.stderr)
