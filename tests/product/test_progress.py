"""Progress on standard error only when it is a terminal (a pseudo-terminal here)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "tests" / "fixtures" / "triage" / "tinyzero_h20.log"


def run_with_stderr(argv: list[str], *, tty: bool, stdin: bytes = b"") -> tuple[int, str, str]:
    env = cli_env(COLUMNS="80", TERM="xterm")
    env.pop("ENVCHECK_NO_PROGRESS", None)
    if not tty:
        proc = subprocess.run(
            argv, input=stdin, capture_output=True, env=env, timeout=60, check=False
        )
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=follower, env=env
    )
    os.close(follower)
    out, _ = proc.communicate(stdin, timeout=60)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


def test_a_scan_of_standard_input_shows_a_spinner_on_a_terminal_only() -> None:
    argv = [sys.executable, "-m", "envcheck", "triage", "-", "--no-probe", "--json"]
    code, out, err = run_with_stderr(argv, tty=True, stdin=LOG.read_bytes())
    assert code == 1 and '"command": "triage"' in out
    assert "scanning -" in err
    code, out, err = run_with_stderr(argv, tty=False, stdin=LOG.read_bytes())
    assert code == 1 and "scanning" not in err and "\x1b" not in err
    assert err.startswith("envcheck: 17 lines;")


def test_the_off_switch() -> None:
    code = "from envcheck.formats.progress import enabled; print(enabled())"
    for extra, expected in (({}, "True"), ({"ENVCHECK_NO_PROGRESS": "1"}, "False")):
        leader, follower = pty.openpty()
        env = {**cli_env(TERM="xterm"), **extra}
        if not extra:
            env.pop("ENVCHECK_NO_PROGRESS", None)
        proc = subprocess.run(
            [sys.executable, "-c", code],
            stderr=follower,
            capture_output=False,
            stdout=subprocess.PIPE,
            env=env,
            timeout=30,
            check=True,
        )
        os.close(follower)
        os.close(leader)
        assert proc.stdout.decode().strip() == expected
