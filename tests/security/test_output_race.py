"""-o without --force claims the name atomically (link(2)): of parallel runs writing one name,
exactly one writes and the others are told the file exists. Streams are targets too:
-o /dev/stdout, /dev/null and a process substitution's /dev/fd/N."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from envcheck.errors import InputError
from envcheck.fileio import write_atomic
from envcheck.output import check_target, write
from tests.conftest import cli_env, run_cli


def test_parallel_no_clobber_writes_have_one_winner(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    outcomes: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(12)

    def one(n: int) -> None:
        start.wait()
        try:
            write_atomic(target, f"writer {n}\n", overwrite=False)
            result = f"wrote {n}"
        except InputError as exc:
            result = f"refused: {exc.message}"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if o.startswith("wrote")]
    assert len(winners) == 1, outcomes
    assert target.read_text(encoding="utf-8") == f"writer {winners[0].split()[1]}\n"
    assert all("file exists" in o for o in outcomes if o.startswith("refused"))
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left


def test_a_run_that_wins_the_race_is_not_clobbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race made certain: another run creates the file after this one checked that the
    name is free and before it renames its temporary into place. A check followed by a
    rename replaced the winner's file (both "wrote"); link(2) refuses."""
    import tempfile

    target = tmp_path / "report.json"
    real_mkstemp = tempfile.mkstemp

    def competitor_first(*args: Any, **kwargs: Any) -> tuple[int, str]:
        if not target.exists():
            target.write_text("the other run's report\n", encoding="utf-8")
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", competitor_first)
    with pytest.raises(InputError, match="file exists"):
        write_atomic(target, "this run's report\n", overwrite=False)
    assert target.read_text(encoding="utf-8") == "the other run's report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_parallel_cli_runs_one_writes(tmp_path: Path) -> None:
    """Two real `envcheck probe -o` runs racing for one name: one writes, one exits 2."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "envcheck", "probe", "--json", "-o", "same.json"],
            cwd=tmp_path,
            env=cli_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    codes = sorted(p.wait(120) for p in procs)
    errs = [p.stderr.read() for p in procs if p.stderr is not None]
    # never both "wrote": the loser is refused at the check before work or at link(2)
    assert codes == [0, 2], errs
    assert any("file exists" in e for e in errs)
    json.loads((tmp_path / "same.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("target", ["/dev/stdout", "/dev/null", "/dev/stderr"])
def test_streams_are_accepted_targets(target: str) -> None:
    assert str(check_target(target, overwrite=False)) == target


def test_a_closed_descriptor_is_refused() -> None:
    with pytest.raises(InputError, match="descriptor 987 is not open"):
        check_target("/dev/fd/987")


def test_probe_to_dev_stdout_prints_the_report() -> None:
    result = run_cli("probe", "--json", "-o", "/dev/stdout")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["schema"] == 1


def test_probe_to_dev_null_writes_nothing() -> None:
    result = run_cli("probe", "--json", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_process_substitution(tmp_path: Path) -> None:
    """bash's `-o >(cat > file)`: /dev/fd/N, written in place."""
    out = tmp_path / "via-fd.json"
    script = f'"{sys.executable}" -m envcheck probe --json -o >(cat > "{out}"); code=$?; wait; exit $code'
    done = subprocess.run(
        ["bash", "-c", script],
        check=False,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for _ in range(50):  # bash waits for the substitution; allow for a slow cat anyway
        if out.read_text(encoding="utf-8").strip():
            break
        time.sleep(0.1)
    assert json.loads(out.read_text(encoding="utf-8"))["schema"] == 1


def test_write_to_a_stream_is_redacted_and_clean(tmp_path: Path) -> None:
    r, w = os.pipe()
    try:
        write(f"/dev/fd/{w}", "TOKEN=abc123 \x1b]0;pwned\x07ok\n")
    finally:
        os.close(w)
    with open(r, encoding="utf-8") as handle:
        text = handle.read()
    assert "abc123" not in text and "\x1b" not in text and text.endswith("ok\n")
