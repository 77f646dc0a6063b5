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


def test_an_x_error_on_a_glx_request_reboots_after_a_driver_update_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "X Error of failed request:  BadValue (integer parameter out of range for operation)",
        "  Major opcode of failed request:  152 (GLX)",
        "  Minor opcode of failed request:  24 (X_GLXCreateNewContext)",
    )
    found = causes(cli, log)
    text = fix_text(found["SIM150"])
    assert found["SIM150"]["verdict"] == "confirmed"
    assert text.index("reboot") < text.index("xvfb-run -a")


def test_glxbadfbconfig_under_mesa_overrides_the_gl_version_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "glfw error 65543: GLX: Failed to create context: GLXBadFBConfig")
    text = fix_text(causes(cli, log)["SIM150"])
    assert text.index("MESA_GL_VERSION_OVERRIDE=4.5") < text.index("reboot")


def test_libgl_without_a_driver_keeps_its_own_fix(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "libGL error: failed to load driver: swrast")
    text = fix_text(causes(cli, log)["SIM150"])
    assert "reboot" not in text
    assert "libgl1-mesa-dri" in text
