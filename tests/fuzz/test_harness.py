"""The fuzz harness itself can fail: it sees leaks, exit 3, tracebacks, hangs, several error
lines and files written on error (a suite that cannot fail proves nothing)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import envcheck.cli
from tests.fuzz import harness


def _fake_main(behaviour: str, target: Path):  # type: ignore[no-untyped-def]
    def main(argv: list[str]) -> int:
        if behaviour == "leak":
            sys.stdout.write(f"token {harness.SECRET}\n")
            return 0
        if behaviour == "exit3":
            sys.stderr.write("envcheck: internal error: KeyError\n")
            return 3
        if behaviour == "raise":
            raise KeyError("boom")
        if behaviour == "hang":
            time.sleep(5)
            return 0
        if behaviour == "two-lines":
            sys.stderr.write("usage: envcheck\nenvcheck: error: bad\n")
            return 2
        if behaviour == "wrote":
            target.write_text("{}")
            sys.stderr.write("envcheck: error: bad\n")
            return 2
        sys.stderr.write("envcheck: error: bad\n")
        return 2

    return main


@pytest.mark.parametrize(
    ("behaviour", "problem"),
    [
        ("leak", "leaked"),
        ("exit3", "exit 3"),
        ("raise", "traceback: KeyError"),
        ("hang", "hang"),
        ("two-lines", "exit 2 without exactly one error line"),
        ("wrote", "wrote"),
    ],
)
def test_harness_sees_every_breach(
    monkeypatch, tmp_path: Path, behaviour: str, problem: str
) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "out.json"
    monkeypatch.setattr(envcheck.cli, "main", _fake_main(behaviour, target))
    outcome = harness.run(["check"], outputs=[target], bound=0.5)
    assert any(p.startswith(problem) for p in outcome.problems()), outcome.problems()


def test_harness_passes_a_clean_exit_2(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(envcheck.cli, "main", _fake_main("clean", tmp_path / "x"))
    assert harness.run(["check"]).problems() == []


def test_state_families_see_their_own_breaches(tmp_path: Path) -> None:
    """The settings and caches families' own promises can fail: a pickle that ran, an error
    line that names no file of the case, a verdict a corrupted cache or --isolated changed."""
    from tests.fuzz.cases import Case
    from tests.fuzz.state import _BASELINES, after

    def outcome(code: int, stderr: str = "", stdout: str = "") -> harness.Outcome:
        return harness.Outcome("check", code, stdout, stderr, 0.1)

    settings = Case("settings", ("check", "--spec", "{dir}/node.toml"), {"envcheck.toml": b""})
    assert (
        after(settings, outcome(2, f"envcheck: error: {tmp_path}/envcheck.toml:1: x"), tmp_path)
        == []
    )
    assert after(settings, outcome(2, "envcheck: error: bad"), tmp_path)
    (tmp_path / "pwned").mkdir()
    assert "pickle" in after(settings, outcome(1), tmp_path)[0]
    (tmp_path / "pwned").rmdir()
    cache = Case("caches", ("check", "--spec", "{dir}/node.toml", "--json"), same_verdict=True)
    _BASELINES[(cache.argv, b"")] = (1, ["CUD102"])
    findings = '{"data": {"findings": [{"code": "CUD102"}]}}'
    assert after(cache, outcome(1, stdout=findings), tmp_path) == []
    assert after(cache, outcome(0, stdout='{"data": {"findings": []}}'), tmp_path)
