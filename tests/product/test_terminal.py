"""What a user sees at 80 columns (COLUMNS=80): fix commands whole on one line, no trailing
spaces, one value column for every section of `probe`, wrapped reasons indented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli
from tests.specs import TINYZERO

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "tests" / "fixtures" / "triage" / "tinyzero_h20.log"
COLUMNS_80 = cli_env(COLUMNS="80", GLOO_SOCKET_IFNAME="nosuch0", TERM="dumb")


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "tinyzero.toml"
    path.write_text(TINYZERO, encoding="utf-8")
    return path


def no_trailing_spaces(text: str) -> None:
    bad = [i for i, line in enumerate(text.splitlines(), 1) if line != line.rstrip()]
    assert bad == [], f"trailing spaces on lines {bad}"


def test_check_fix_commands_are_whole_at_80_columns(spec: Path) -> None:
    table = run_cli("check", "--spec", str(spec), "--verbose", env=COLUMNS_80)
    data = run_cli("check", "--spec", str(spec), "--json", env=COLUMNS_80).json()
    commands = [c for f in data["data"]["findings"] for c in (f["fix"] or {}).get("commands", [])]
    assert any(len(c) > 40 for c in commands)  # long enough to have wrapped before
    lines = table.stdout.splitlines()
    for command in commands:
        assert any(line.strip() in (f"$ {command}", command) for line in lines), command
    no_trailing_spaces(table.stdout)
    prose = [line for line in lines if not line.lstrip().startswith(("$ ", "#"))]
    for line in prose:  # only a word longer than the line (a URL, a path) may pass column 80
        assert len(line) <= 80 or len(max(line.split(), key=len)) > 40, line


def test_the_loopback_fix_is_one_pasteable_line() -> None:
    out = run_cli("check", "--select", "NET", env=COLUMNS_80).stdout
    joined = [line.strip() for line in out.splitlines() if "GLOO_SOCKET_IFNAME=" in line]
    assert any(
        re.fullmatch(r"\$ export GLOO_SOCKET_IFNAME=\S+( NCCL_SOCKET_IFNAME=\S+)?", j)
        for j in joined
    )
    assert not any(line.strip().startswith("NCCL_SOCKET_IFNAME=") for line in out.splitlines())


def test_skipped_reasons_wrap_under_their_first_line(spec: Path) -> None:
    out = run_cli("check", "--spec", str(spec), "--verbose", env=COLUMNS_80).stdout
    skipped = out.split("Skipped (facts unknown):\n", 1)[1].splitlines()
    assert skipped
    first = re.match(r"  (\S+ +)", skipped[0])
    assert first is not None
    indent = 2 + len(first.group(1))
    for line in skipped[1:]:
        if not re.match(r"  [A-Z]{2,4}\d{3}", line):  # a continuation line
            assert line.startswith(" " * indent) and line[indent] != " ", line


def test_probe_value_column_is_the_same_in_every_section() -> None:
    out = run_cli("probe", env=COLUMNS_80).stdout
    no_trailing_spaces(out)
    starts = set()
    for line in out.splitlines():
        m = re.match(r"  (\S[^ ]*(?: \S+)*?)  +(\S)", line)
        if m and not line.startswith("    "):
            starts.add(m.start(2))
    assert len(starts) == 1, starts


def test_triage_keeps_commands_whole_and_indents_wrapped_text(spec: Path) -> None:
    out = run_cli("triage", str(LOG), "--spec", str(spec), env=COLUMNS_80).stdout
    no_trailing_spaces(out)
    lines = out.splitlines()
    assert "         $ pip install nvidia-cublas-cu12==12.3.4.1" in lines
    ranked = [
        (i, m) for i, line in enumerate(lines) if (m := re.match(r"  1\. CUD102 CONFIRMED +", line))
    ]
    assert ranked
    index, head = ranked[0]
    following = lines[index + 1]  # the title's second line, under the title
    assert following.startswith(" " * head.end()) and following[head.end()] != " "


def test_diff_output_has_no_trailing_spaces(tmp_path: Path) -> None:
    saved = run_cli("probe", "--json").stdout
    (tmp_path / "a.json").write_text(saved)
    (tmp_path / "b.json").write_text(saved.replace('"ray": "', '"ray-x": "'))
    out = run_cli("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), env=COLUMNS_80)
    assert out.returncode in (0, 1)
    no_trailing_spaces(out.stdout)


def test_fix_plan_prose_fits_80_columns(spec: Path) -> None:
    """The plan's headings wrap like its reasons (the 'still reported once the plan is
    applied' heading ran to column 92); commands and manual steps stay whole."""
    out = run_cli("fix", "--spec", str(spec), "--no-resolve", env=COLUMNS_80).stdout
    no_trailing_spaces(out)
    lines = out.splitlines()
    assert any(line.startswith("  still reported once the plan is applied") for line in lines)
    prose = [line for line in lines if not line.lstrip().startswith(("$ ", "by hand: "))]
    for line in prose:
        assert len(line) <= 80 or len(max(line.split(), key=len)) > 40, line


def test_triage_quotes_a_long_log_line_within_80_columns(spec: Path) -> None:
    """The matched log line is cut at the terminal's width (it ran to 162 columns); the JSON
    keeps the line as read."""
    out = run_cli("triage", str(LOG), "--spec", str(spec), env=COLUMNS_80).stdout
    quoted = [line for line in out.splitlines() if line.startswith("  (raylet) A worker died")]
    assert quoted and all(len(line) <= 80 and line.endswith("…") for line in quoted), quoted
    data = run_cli("triage", str(LOG), "--spec", str(spec), "--json", env=COLUMNS_80).json()
    assert any(len(m["first"]["text"]) > 80 for m in data["data"]["matches"])
