"""A signal that lands where Python cannot raise its exception still stops the command
(envcheck/cli/signals.py): inside an import (raising there can leave the import lock held and
deadlock the rules' loading thread) the stop waits until the import is done; inside a
finalizer (where Python prints "Exception ignored" and drops it) it is sent again. A real
Python process, a real signal to itself at that moment."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envcheck.cli.signals import handled

REPO = Path(__file__).resolve().parents[2]
STOPS = [
    (signal.SIGTERM, "Terminated"),
    (signal.SIGHUP, "Terminated"),
    (signal.SIGINT, "KeyboardInterrupt"),
]

RUNNER = """
import os, signal, sys, time
sys.path[:0] = [{repo!r}, {here!r}]
from envcheck.cli.signals import handled
from envcheck.probes.run import Terminated

SIGNUM = {signum}

def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass

with handled():
    try:
{body}
        end = time.monotonic() + 10
        while time.monotonic() < end:
            time.sleep(0.01)
        print("not stopped", flush=True)
    except (Terminated, KeyboardInterrupt) as exc:
        print("stopped by", type(exc).__name__, flush=True)
        print("module loaded:", "slowmod" in sys.modules, flush=True)
"""


def _run(tmp_path: Path, signum: int, body: str) -> subprocess.CompletedProcess[str]:
    script = RUNNER.format(
        repo=str(REPO), here=str(tmp_path), signum=int(signum), body=textwrap.indent(body, " " * 8)
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )


@pytest.mark.parametrize(("signum", "raised"), STOPS)
def test_a_signal_during_an_import_stops_once_the_import_is_done(
    tmp_path: Path, signum: int, raised: str
) -> None:
    (tmp_path / "slowmod.py").write_text(
        "import os, signal, time\n"
        f"os.kill(os.getpid(), {int(signum)})\n"
        "end = time.monotonic() + 0.3\n"
        "while time.monotonic() < end:\n"
        "    pass\n",
        encoding="utf-8",
    )
    done = _run(tmp_path, signum, "import slowmod\nsys.stdout.write('imported\\n')\n")
    assert done.stdout.splitlines() == ["imported", f"stopped by {raised}", "module loaded: True"]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("signum", "raised"), STOPS)
def test_a_signal_in_a_finalizer_is_not_dropped(tmp_path: Path, signum: int, raised: str) -> None:
    body = (
        "class Dropped:\n"
        "    def __del__(self):\n"
        "        os.kill(os.getpid(), SIGNUM)\n"
        "        spin(0.05)\n"
        "Dropped()\n"
    )
    done = _run(tmp_path, signum, body)
    assert done.stdout.splitlines()[0] == f"stopped by {raised}"
    assert "Exception ignored" not in done.stderr
    assert "Traceback" not in done.stderr


def test_outside_the_command_the_handlers_are_the_previous_ones() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGXFSZ)}
    hook = sys.unraisablehook
    with handled():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
        assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN
        assert sys.unraisablehook is not hook
    assert {s: signal.getsignal(s) for s in before} == before
    assert sys.unraisablehook is hook
