"""SIGINT and SIGTERM to a running envcheck: the children it started (uv for `lock`, pip for
`fix --apply`, grep for triage) are ended with their process groups, its temporary files and
directories are removed, `fix --apply` reports the snapshot and what ran, and the exit code is
128 + the signal's number, as a shell reports it. A real child process (a fake uv or pip that
records its pid and sleeps) and a real signal to a real `python -m envcheck`."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.distfactory import make_dist
from tests.security.helpers import (
    alive,
    base_env,
    fake_program,
    kill_leftover,
    start_envcheck,
    wait_for,
)

SLEEPER = 'echo $$ >> "{pids}"\nexec sleep 300\n'


def _stop(proc: subprocess.Popen[str], signum: int) -> tuple[int, str]:
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("envcheck did not end within 30 s of the signal") from None
    return proc.returncode, err


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_lock_ends_uv_and_removes_its_project(tmp_path: Path, signum: int, code: int) -> None:
    pids = tmp_path / "uv.pids"
    uv = fake_program(
        tmp_path / "bin" / "uv",
        'if [ "$1" = "--version" ]; then echo "uv 0.5.0"; exit 0; fi\n' + SLEEPER.format(pids=pids),
    )
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = start_envcheck(
        "lock",
        "torch",
        "--python",
        "3.11",
        "--index-url",
        "http://127.0.0.1:9/simple",
        cwd=tmp_path,
        env=base_env(tmp, ENVCHECK_UV=str(uv)),
    )
    uv_pid = int(wait_for(pids).split()[0])
    try:
        assert any(tmp.iterdir())  # the throwaway uv project exists while uv runs
        returncode, err = _stop(proc, signum)
        assert returncode == code, err
        assert f"stopped by {signal.Signals(signum).name}" in err
        assert "Traceback" not in err
        time.sleep(0.2)
        assert not alive(uv_pid), "uv was left running"
        assert list(tmp.iterdir()) == [], "the temporary project was left behind"
    finally:
        kill_leftover(uv_pid)
        kill_leftover(proc.pid)


def _fake_python(tmp_path: Path, pids: Path) -> Path:
    """A venv's interpreter behind a wrapper whose `-m pip` is fake: `freeze` answers, any
    other pip command records its pid and sleeps (a pip install that is still running)."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    make_dist(site, "numpy", "2.1.3")
    make_dist(site, "vllm", "0.6.3", requires=("numpy<2",))
    return fake_program(
        tmp_path / "bin" / "python",
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
        '  if [ "$3" = "freeze" ]; then\n'
        "    printf 'numpy==2.1.3\\nvllm==0.6.3\\n'\n"
        "    printf -- '--extra-index-url https://alice:s3cret@private.example/simple\\n'\n"
        "    exit 0\n"
        "  fi\n" + SLEEPER.format(pids=pids).replace("\n", "\n  ") + "fi\n"
        f'exec "{venv}/bin/python" "$@"\n',
    )


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_fix_apply_ends_pip_and_reports_the_snapshot(
    tmp_path: Path, signum: int, code: int
) -> None:
    pids = tmp_path / "pip.pids"
    python = _fake_python(tmp_path, pids)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = start_envcheck(
        "fix",
        "--python",
        str(python),
        "--no-resolve",
        "--apply",
        "--select",
        "PKG104",
        cwd=tmp_path,
        env=base_env(tmp),
    )
    pip_pid = int(wait_for(pids).split()[0])
    try:
        returncode, err = _stop(proc, signum)
        assert returncode == code, err
        assert "Traceback" not in err
        name = signal.Signals(signum).name
        assert f"stopped by {name} while running `{python} -m pip install" in err
        assert "0 step(s) had run before it" in err
        snapshots = list(tmp_path.glob("envcheck-freeze-*.txt"))
        assert len(snapshots) == 1
        assert f"snapshot of the environment before any change: {snapshots[0].name}" in err
        assert f"to roll back: {python} -m pip install --no-deps -r {snapshots[0].name}" in err
        time.sleep(0.2)
        assert not alive(pip_pid), "pip was left running"
        assert list(tmp.iterdir()) == []
    finally:
        kill_leftover(pip_pid)
        kill_leftover(proc.pid)


def _is_grep_with_patterns(cmdline: Path) -> bool:
    try:
        argv = cmdline.read_bytes().split(b"\0")
    except OSError:  # gone already
        return False
    return Path(argv[0].decode(errors="replace")).name == "grep" and b"-f" in argv


def test_triage_grep_engine_child_and_patterns_file_are_removed(tmp_path: Path) -> None:
    """triage reading a pipe that never ends: grep waits on it; SIGTERM ends grep and removes
    the signatures file grep was reading."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = start_envcheck("triage", "--engine", "grep", "-", cwd=tmp_path, env=base_env(tmp))
    assert proc.stdin is not None
    proc.stdin.write("CUDA error: out of memory\n" * 10)
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    grep_pids: list[int] = []
    while time.monotonic() < deadline and not grep_pids:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        grep_pids = (
            [
                int(p)
                for p in children.read_text(encoding="utf-8").split()
                # grep itself, with its patterns file: not a child forked to run it that has
                # not exec'd yet (its command line is still envcheck's, "--engine grep"), nor
                # the `grep --version` that comes before the patterns file is written
                if _is_grep_with_patterns(Path(f"/proc/{p}/cmdline"))
            ]
            if children.exists()
            else []
        )
        time.sleep(0.1)
    if not grep_pids:
        proc.kill()
        pytest.skip("GNU grep engine did not start (no GNU grep?)")
    try:
        assert any(tmp.iterdir())  # the signatures file grep reads
        returncode, err = _stop(proc, signal.SIGTERM)
        assert returncode == 143, err
        time.sleep(0.2)
        assert not any(alive(p) for p in grep_pids), "grep was left running"
        assert list(tmp.iterdir()) == []
    finally:
        for pid in grep_pids:
            kill_leftover(pid)
        kill_leftover(proc.pid)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_check_ends_a_probe_child_its_worker_thread_waits_on(
    tmp_path: Path, signum: int, code: int
) -> None:
    """`check` of this node while nvidia-smi hangs (a probe's worker thread waits on it, up to
    --timeout): the signal ends nvidia-smi at once instead of the pool joining that worker for
    the whole timeout (found by the signals fuzz family: 60 s with --timeout 60)."""
    pids = tmp_path / "smi.pids"
    bin_dir = tmp_path / "bin"
    fake_program(bin_dir / "nvidia-smi", SLEEPER.format(pids=pids))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = base_env(tmp)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    proc = start_envcheck("check", "--timeout", "120", cwd=tmp_path, env=env)
    smi_pid = int(wait_for(pids).split()[0])
    try:
        started = time.monotonic()
        returncode, err = _stop(proc, signum)
        assert time.monotonic() - started < 15, "waited for the probe's timeout"
        assert returncode == code, err
        assert f"stopped by {signal.Signals(signum).name}; ended 1 child process(es)" in err
        assert "Traceback" not in err
        time.sleep(0.2)
        assert not alive(smi_pid), "nvidia-smi was left running"
        assert list(tmp.iterdir()) == []
    finally:
        kill_leftover(smi_pid)
        kill_leftover(proc.pid)


def test_a_stopped_pool_refuses_new_children_only_while_it_joins() -> None:
    """While a signal-stopped worker_pool joins its workers, a worker cannot start a child (it
    would outlive the cleanup); afterwards children start again (the API, a REPL after
    Ctrl-C), and the CLI's count includes those the pool ended."""
    import threading

    from envcheck.probes.run import forget, spawn, terminate_children, worker_pool

    started = threading.Event()

    def work() -> str:
        started.set()
        time.sleep(0.5)  # the signal arrives meanwhile
        try:
            proc = spawn(["true"])
        except OSError as exc:
            return str(exc)
        proc.wait(10)
        forget(proc)
        return "started"

    sleeper = spawn(["sleep", "300"])
    with pytest.raises(KeyboardInterrupt), worker_pool(2, "test") as pool:
        future = pool.submit(work)
        started.wait(10)
        raise KeyboardInterrupt
    assert future.result() == "envcheck is stopping (a signal)"
    assert sleeper.poll() is not None  # ended at once, not when the pool was done
    again = spawn(["true"])
    assert again.wait(10) == 0
    forget(again)
    assert terminate_children() == 1  # the sleeper, ended by the pool, counted once
    assert terminate_children() == 0


def test_the_cli_s_stop_lets_no_child_start_afterwards() -> None:
    """After the CLI was stopped by a signal no worker thread may start its next command: the
    interpreter's exit would wait that child's timeout (a fuzz case saw a SIGHUP'd `check`
    outlive 30 s under load)."""
    import subprocess as sp

    from envcheck.probes import run

    sleeper = run.spawn(["sleep", "300"])
    try:
        assert run.stop_for_good() == 1
        assert sleeper.poll() is not None
        with pytest.raises(OSError, match="envcheck is stopping"):
            run.spawn(["true"], stdout=sp.DEVNULL)
    finally:
        with run._live_lock:
            run._refusing.clear()
        run.terminate_children()


def test_a_signal_while_grep_checks_the_patterns_leaves_no_patterns_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM can land while `grep -E -f <patterns>` checks that it reads every pattern (a
    third of a second of grep's CPU on a loaded node): the patterns file goes with it."""
    import tempfile

    from envcheck.matrix_validate import load
    from envcheck.probes.run import Terminated
    from envcheck.triage import run
    from envcheck.triage.grep_engine import GrepScanner, gnu_grep

    if gnu_grep() is None:
        pytest.skip("no GNU grep")

    def interrupted(self: GrepScanner) -> bool:
        assert list(tmp_path.iterdir())  # the file grep would read
        raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(GrepScanner, "usable", interrupted)
    with pytest.raises(Terminated):
        run._scanner(load(), "grep")
    assert list(tmp_path.iterdir()) == []
