"""Fuzz family: SIGINT, SIGTERM or SIGHUP to a running `check` or `triage`, at a drawn moment
while it waits on a child or on its input (docs/security.md, "Signals").

Each case is a real ``python -m envcheck`` process (a signal needs one): `check` of this node
with a fake ``nvidia-smi`` first on PATH that records its pid and sleeps (a probe child that
is running), or `triage` reading a pipe that stays open (the `re` engine, or GNU grep as a
child). Once the run is seen waiting, the signal is sent after a drawn delay. Promises checked
besides the harness's contract: the exit code is 128 + the signal's number (as README's exit
code table says) with a "stopped by" line, or 0/1 when the run had already ended; every child
it started is gone; its temporary directory (``TMPDIR``) is empty; no ``-o`` file and no
half-written file is left; no traceback and no planted secret printed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hypothesis import strategies as st

from tests.fuzz.cases import LOG_LINES, Case, materialise
from tests.fuzz.harness import SECRET, Outcome

REPO = Path(__file__).resolve().parents[2]
READY_S = 30.0  # the run reaches the wait it is stopped in (a loaded machine is slow)
END_S = 30.0  # after the signal: the documented end is at most 2 s of SIGTERM to SIGKILL
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
SLEEPER = '#!/bin/sh\necho $$ >> "{pids}"\nexec sleep 300\n'
# `python -m envcheck` as a terminal starts it: with SIGINT's default action. A harness started
# in the background by a shell (`scripts/fuzz.py ... &`) has SIGINT ignored, children inherit
# that across exec, and envcheck rightly leaves an ignored SIGINT ignored (docs/security.md):
# `check` would then wait out its probe and `triage` read to its end, as if stopping had failed.
ENVCHECK = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('envcheck', run_name='__main__', alter_sys=True)"
)


@st.composite
def signal_case(draw: st.DrawFn) -> Case:
    signum = int(draw(st.sampled_from(SIGNALS)))
    delay = draw(st.sampled_from([0.0, 0.05, 0.2, 0.5]))
    if draw(st.booleans()):
        out = draw(st.sampled_from([(), ("--json",), ("-o", "{dir}/out.json")]))
        return Case(
            "signals", ("check", "--timeout", "60", *out), outputs=("out.json",),
            signal=(signum, delay),
        )  # fmt: skip
    engine = draw(st.sampled_from([("--engine", "re"), ("--engine", "grep")]))
    lines = draw(st.lists(st.sampled_from(LOG_LINES), min_size=1, max_size=4))
    text = "\n".join([*lines, f"HF_TOKEN=hf_{SECRET} python train.py"]) + "\n"
    fmt = draw(st.sampled_from([(), ("--json",)]))
    return Case(
        "signals",
        ("triage", "-", "--no-probe", *engine, *fmt),
        stdin=text.encode(),
        signal=(signum, delay),
    )


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="utf-8")
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _pids(path: Path) -> list[int]:
    try:
        return [int(p) for p in path.read_text(encoding="utf-8").split()]
    except (OSError, ValueError):
        return []


def _feed(proc: subprocess.Popen[bytes], data: bytes, fed: threading.Event) -> None:
    """Write the log and more than a pipe holds (so that finishing means the run is reading),
    then keep the pipe open: the run waits for more."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):
        proc.stdin.write(data + b"\n" * (1 << 18))
        proc.stdin.flush()
        fed.set()


def run_case(case: Case, directory: Path) -> tuple[list[str], Outcome]:
    argv, outputs = materialise(case, directory)
    signum, delay = case.signal or (int(signal.SIGTERM), 0.0)
    tmp, bin_dir, pids = directory / "tmp", directory / "bin", directory / "children.pids"
    tmp.mkdir()
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(SLEEPER.format(pids=pids), encoding="utf-8")
    smi.chmod(0o755)
    env = dict(os.environ)
    for name in ("FAKE_PYNVML_SCENARIO", "FAKE_PYNVML_JSON"):
        env.pop(name, None)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        TMPDIR=str(tmp),
        ENVCHECK_NO_PROGRESS="1",
        ENVCHECK_CACHE_DIR=str(directory / "cache"),
        PYTHONPATH=str(REPO),
        HF_TOKEN=f"hf_{SECRET}",
    )
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", ENVCHECK, *argv],
        cwd=directory,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a leftover is ended with its group below, not ours
    )
    extra: list[str] = []
    seen: set[int] = set()
    fed = threading.Event()
    feeder = threading.Thread(target=_feed, args=(proc, case.stdin, fed), daemon=True)
    if argv[0] == "triage":
        feeder.start()
    ready = False
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline and proc.poll() is None:
        seen.update(_children(proc.pid))
        if argv[0] == "check":
            ready = bool(_pids(pids))
        else:
            ready = fed.is_set() and ("grep" not in argv or bool(_children(proc.pid)))
        if ready:
            break
        time.sleep(0.02)
    time.sleep(delay)
    seen.update(_children(proc.pid))
    ended_before = proc.poll() is not None
    if not ended_before:
        os.kill(proc.pid, signum)
    hung = False
    try:
        stdout, stderr = proc.communicate(timeout=END_S)
    except subprocess.TimeoutExpired:
        hung = True
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    elapsed = time.monotonic() - started
    name = signal.Signals(signum).name
    allowed: tuple[int, ...] = (0, 1, 2) if ended_before else (128 + signum,)
    out, err = stdout.decode(errors="replace"), stderr.decode(errors="replace")
    if proc.returncode == 128 + signum and f"stopped by {name}" not in err:
        extra.append(f"exit {proc.returncode} without 'stopped by {name}': {err[-200:]!r}")
    if not ended_before and not ready:
        extra.append("the run never reached the wait it was to be stopped in")
    time.sleep(0.2)  # a SIGKILLed child is reaped by init a moment later
    left = [p for p in {*seen, *_pids(pids)} if _alive(p)]
    if left:
        extra.append(f"children left running: {sorted(left)}")
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    if any(tmp.iterdir()):
        extra.append(f"temporary files left: {sorted(p.name for p in tmp.iterdir())}")
    stray = [p.name for p in directory.iterdir() if p.name.startswith((".tmp", "tmp")) and p != tmp]
    if stray:
        extra.append(f"half-written files left: {stray}")
    written = {str(p): p.read_text(errors="replace") for p in outputs if p.exists()}
    if written and proc.returncode not in (0, 1):
        extra.append(f"wrote {sorted(written)} although it was stopped")
    written = {}  # checked above; a run that ended normally may have written it
    outcome = Outcome(argv[0], proc.returncode, out, err, elapsed, written, None, hung)
    outcome.allowed = allowed
    outcome.extra = extra
    return argv, outcome
