"""SIM causes from what a log states: iray's refusal of a Blackwell GPU establishes SIM105 and
its finding names the Isaac Sim upgrade and, for staying on 4.5, a torch build with sm_120
kernels; BEHAVIOR-1K's missing omni.kit.usd and Kit's rtx.scenedb.plugin crash leave their
causes to the node's facts. Lines as Isaac Sim prints them (sources in matrices/signatures*)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix

IRAY = (
    "2025-04-06 08:20:33 [6,565ms] [Warning] [rtx.neuraylib.plugin] [IRAY:RENDER] 1.1 IRAY   "
    "rend warn : GPU 1 (NVIDIA GeForce RTX {model}) with CUDA compute capability {cc} is "
    "unsupported by this version of iray photoreal. please look for an update\n"
)


def test_iray_blackwell_line_confirms_sim105_with_a_cu128_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "kit.log"
    log.write_text(IRAY.format(model="5080", cc="12.0"))
    sim105 = _causes(cli, log)["SIM105"]
    assert (sim105["verdict"], sim105["evidence"]) == ("confirmed", "confirmed from line 1")
    (finding,) = sim105["findings"]
    assert "NVIDIA GeForce RTX 5080 (sm_120)" in finding["message"]
    assert "Isaac Sim >= 5.0" in _fix(sim105)
    assert "torch 2.7.0+cu128" in _fix(sim105)
    assert "--index-url https://download.pytorch.org/whl/cu128" in _fix(sim105)


def test_iray_line_for_another_architecture_rules_sim105_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "kit.log"
    log.write_text(IRAY.format(model="4090", cc="8.9"))
    assert _causes(cli, log)["SIM105"]["verdict"] == "ruled_out"


def test_missing_omni_kit_usd_with_declared_omnigibson_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """BEHAVIOR-1K#916: Isaac Sim 4.2.0, OmniGibson's release not stated."""
    log = tmp_path / "og.log"
    log.write_text("ModuleNotFoundError: No module named 'omni.kit.usd'\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\nisaacsim = "4.2.0"\n\n[workload]\nruns = ["omnigibson"]\n')
    sim107 = _causes(cli, log, "--spec", str(spec))["SIM107"]
    assert sim107["verdict"] == "unknown"
    assert "release is not stated" in sim107["reason"]


def test_scenedb_crash_on_a_declared_isaac_sim_51_with_driver_595_confirms_sim104(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "kit.log"
    log.write_text(
        "2026-03-16T16:11:44Z [21,750ms] [Fatal] [carb.crashreporter-breakpad.plugin] 000: "
        "rtx.scenedb.plugin.dll!carbOnPluginStartup+0x252db\n"
    )
    spec = tmp_path / "spec.toml"
    spec.write_text('[gpu]\ndriver = "595.79"\n\n[packages]\nisaacsim = "5.1.0.0"\n')
    sim104 = _causes(cli, log, "--spec", str(spec))["SIM104"]
    assert sim104["verdict"] == "confirmed"
    assert "580.65.06" in _fix(sim104)


def test_nvdiffrast_egl_line_names_its_cuda_rasterizer_not_mujoco(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nvdiffrast's own LOG(FATAL) line names the program: SIM109's fix offers its CUDA
    rasterizer and the image's glvnd EGL loader, and MuJoCo's backends (SIM120) are not it."""
    log = tmp_path / "comfy.log"
    log.write_text("[F1216 14:33:13.286945381 glutil.cpp:338] eglInitialize() failed\n")
    found = _causes(cli, log)
    assert found["SIM109"]["verdict"] == "confirmed"
    fix = _fix(found["SIM109"])
    assert "dr.RasterizeCudaContext()" in fix
    assert "apt install libglvnd0 libegl1" in fix
    assert "MUJOCO_GL" not in fix
    assert found["SIM120"]["verdict"] != "confirmed"


def test_bare_egl_line_keeps_mujoco_backends(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: eglInitialize() failed\n")
    found = _causes(cli, log)
    assert "MUJOCO_GL=osmesa" in _fix(found["SIM109"])
    assert "RasterizeCudaContext" not in _fix(found["SIM109"])
    assert found["SIM120"]["verdict"] == "confirmed"


def test_display_unset_points_display_at_the_session(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """GLFW's 'DISPLAY environment variable is missing': a shell without DISPLAY on a machine
    that may have a desktop (splatviz#5) is export DISPLAY=:0 first, xvfb-run headless."""
    log = tmp_path / "viewer.log"
    log.write_text("GLFWError: (65544) b'X11: The DISPLAY environment variable is missing'\n")
    sim150 = _causes(cli, log)["SIM150"]
    assert sim150["verdict"] == "confirmed"
    assert "DISPLAY unset" in sim150["findings"][0]["message"]
    fix = _fix(sim150)
    assert "export DISPLAY=:0" in fix
    assert "xvfb-run -a <command>" in fix
    assert "xhost" not in fix


def test_named_display_not_opened_is_x_access(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """GLFW's 'Failed to open display :1': DISPLAY is set, the X server is not reachable or
    refuses (instant-ngp#512 in a container: xhost local:root)."""
    log = tmp_path / "testbed.log"
    log.write_text("GLFW error #65544: X11: Failed to open display :1\n")
    sim150 = _causes(cli, log)["SIM150"]
    assert "X display :1 could not be opened" in sim150["findings"][0]["message"]
    fix = _fix(sim150)
    assert "xhost +local:root" in fix
    assert "-v /tmp/.X11-unix:/tmp/.X11-unix" in fix


def test_open3d_glfw_line_is_not_mujocos(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """Open3D's own '[Open3D WARNING] Failed to initialize GLFW' names its program: MuJoCo's
    GLFW backend (SIM121, MUJOCO_GL=egl) is not the fix."""
    log = tmp_path / "viz.log"
    log.write_text("[Open3D WARNING] Failed to initialize GLFW\n")
    found = _causes(cli, log)
    assert found["SIM121"]["verdict"] != "confirmed"
    log.write_text("mujoco.FatalError: gladLoadGL error\n")
    assert _causes(cli, log)["SIM121"]["verdict"] == "confirmed"
