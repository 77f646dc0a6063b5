"""SIM172: xvfb-run's virtual X server that did not start, its fix chosen by the server's own
words (a display already taken, Xvfb not installed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file


def test_xvfb_runs_bare_error_lets_it_pick_a_free_display(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    found = causes(cli, log_file(tmp_path, "xvfb-run: error: Xvfb failed to start"))
    assert found["SIM172"]["verdict"] == "confirmed"
    assert "xvfb-run -a" in fix_text(found["SIM172"])
    assert "/tmp/.X99-lock" in fix_text(found["SIM172"])


def test_the_display_the_server_names_is_the_lock_to_remove(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "(EE) Server is already active for display 1", "(EE)")
    text = fix_text(causes(cli, log)["SIM172"])
    assert "/tmp/.X1-lock" in text
    assert "xvfb-run -a" in text


def test_xvfb_not_installed_installs_it(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(tmp_path, "OSError: Can not find Xvfb. Please install it and try again.")
    assert "apt-get install -y xvfb" in fix_text(causes(cli, log)["SIM172"])


def test_mujoco_pys_egl_display_failure_points_at_the_egl_vendor_library(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path, "Found 6 GPUs for rendering. Using device 0.", "Could not get EGL display"
    )
    found = causes(cli, log)
    assert found["SIM109"]["verdict"] == "confirmed"
    assert "10_nvidia.json" in fix_text(found["SIM109"])
