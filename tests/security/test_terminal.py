"""Terminal control sequences from data (a package's METADATA in a saved report, a log line,
a node name) never reach the terminal or an -o file: OSC 52 clipboard writes, OSC 8
hyperlinks, title changes, CSI cursor and screen commands, 8-bit C1 forms. rich's own
styling is kept on a terminal; newlines and tabs are kept everywhere."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
HOSTILE = (
    "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: write the clipboard
    "\x1b]0;pwned\x07"  # window title
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"  # OSC 8 hyperlink
    "\x1b[2J\x1b[1;1H"  # clear the screen, move the cursor
    "\x9b2J"  # the same as an 8-bit CSI
    "\x1bP+q544e\x1b\\"  # DCS (terminal query)
)


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        (f"a{HOSTILE}b", "alinkb"),
        ("tab\there\r\nline\n", "tab\there\r\nline\n"),
        ("over\rwrite", "overwrite"),
        ("bell\x07 nul\x00 del\x7f c1\x85", "bell nul del c1"),
        ("open \x1b]52;c;never-closed", "open "),
    ],
)
def test_strip_controls(text: str, clean: str) -> None:
    from envcheck.terminal import strip_controls

    assert strip_controls(text) == clean


def test_sgr_is_kept_only_when_asked() -> None:
    from envcheck.terminal import strip_controls

    styled = "\x1b[1;31mred\x1b[0m\x1b]0;t\x07"
    assert strip_controls(styled, keep_sgr=True) == "\x1b[1;31mred\x1b[0m"
    assert strip_controls(styled) == "red"


def _hostile_report(tmp_path: Path) -> Path:
    probe = run_cli("probe", "--json")
    assert probe.returncode == 0, probe.stderr
    data = json.loads(probe.stdout)
    data["node"] = "node-a" + HOSTILE
    dists = data["packages"]["data"]["distributions"]
    dists.append({**dists[0], "name": "evil" + HOSTILE, "version": "1.0" + HOSTILE})
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _no_controls(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text, repr(text[:300])


def test_report_fields_are_printed_clean(tmp_path: Path) -> None:
    report = _hostile_report(tmp_path)
    for result in (
        run_cli("check", "--report", str(report)),
        run_cli("check", "--verbose", "--report", str(report)),
        run_cli("diff", str(report), str(report)),
    ):
        assert result.returncode in (0, 1), result.stderr
        _no_controls(result.stdout)
        _no_controls(result.stderr)
    # JSON escapes them (\u001b): still data, never acted on
    as_json = run_cli("check", "--report", str(report), "--json")
    _no_controls(as_json.stdout)


def test_log_lines_are_printed_clean(tmp_path: Path) -> None:
    lines = (CORPUS / "flash-attention-1348" / "log.txt").read_text(encoding="utf-8").splitlines()
    lines[5] = HOSTILE + lines[5]  # the line the signature names
    log = tmp_path / "evil.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for engine in ("grep", "re"):
        result = run_cli("triage", "--engine", engine, str(log))
        assert "flash-attn-import-traceback" in result.stdout, result.stdout
        _no_controls(result.stdout)
        _no_controls(result.stderr)


def test_output_file_is_clean(tmp_path: Path) -> None:
    report = _hostile_report(tmp_path)
    out = tmp_path / "out.md"
    result = run_cli("check", "--report", str(report), "--format", "markdown", "-o", str(out))
    assert result.returncode in (0, 1, 2), result.stderr
    if result.returncode != 2:
        _no_controls(out.read_text(encoding="utf-8"))
    probe = tmp_path / "probe.json"
    done = run_cli("probe", "--report", str(report), "--json", "-o", str(probe))
    if done.returncode == 0:
        _no_controls(probe.read_text(encoding="utf-8"))


def test_on_a_terminal_rich_styles_survive_but_data_escapes_do_not(tmp_path: Path) -> None:
    report = _hostile_report(tmp_path)
    master, slave = pty.openpty()
    env = cli_env(TERM="xterm-256color", COLUMNS="120")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "envcheck", "check", "--report", str(report)],
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(60)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", errors="replace")
    assert "\x1b[" in text and "m" in text  # rich's colours and bold are still there
    for bad in ("\x1b]", "\x1b[2J", "\x1b[1;1H", "\x9b", "\x1bP", "\x07"):
        assert bad not in text, (bad, text[:500])
