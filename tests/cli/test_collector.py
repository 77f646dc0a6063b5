"""The cyclic garbage collector during a command: off for `check` in the command's own process
(entry(): it keeps what it builds and exits), on for every other command and in a caller's
process that runs main() and goes on."""

from __future__ import annotations

import argparse
import gc
from collections.abc import Iterator

import pytest

import envcheck.cli as cli
import envcheck.cli.check as check_cli
import envcheck.cli.probe as probe_cli


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()  # entry() freezes what is left at its end
    if was:
        gc.enable()
    else:
        gc.disable()
    cli._ONE_SHOT.clear()


def _recording(monkeypatch: pytest.MonkeyPatch, module: object) -> list[bool]:
    seen: list[bool] = []

    def run(args: argparse.Namespace) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(module, "run", run)
    return seen


@pytest.mark.parametrize(
    ("argv", "module", "collecting"),
    [(["check"], check_cli, False), (["probe"], probe_cli, True)],
)
def test_the_command_line_process(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], module: object, collecting: bool
) -> None:
    seen = _recording(monkeypatch, module)
    monkeypatch.setattr("sys.argv", ["envcheck", *argv])
    with pytest.raises(SystemExit) as exited:
        cli.entry()
    assert exited.value.code == 0
    assert seen == [collecting]


@pytest.mark.parametrize(("argv", "module"), [(["check"], check_cli), (["probe"], probe_cli)])
def test_a_callers_process_keeps_its_collector(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], module: object
) -> None:
    seen = _recording(monkeypatch, module)
    gc.enable()
    assert cli.main(argv) == 0
    assert seen == [True]
    assert gc.isenabled()
