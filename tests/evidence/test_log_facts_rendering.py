"""Rendering and build-prerequisite failures confirmed from the log's own lines: the extractors
read what the line states (the driver Kit reports, the Vulkan/EGL error, the denied render node,
the g++ and the CUDA range, the GLIBC_X.Y missing, the library that could not be opened), and
the rule that names the cause fires on those facts with a concrete fix. Lines are verbatim from
the threads named in matrices/signatures*.toml."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envcheck.triage.run import log_facts, scan_log
from tests.conftest import CliResult
from tests.evidence.shared import matrix

KIT_LOG = """\
2025-12-18 09:53:11 [8,503ms] [Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has known issues.

Reason for failure: The minimum Omniverse RTX requirement
Installed driver: 535.18
The unsupported driver range: [0.0, 535.129)

The recommended drivers: 535.129.03 (GameReady, Studio, RTX/Quadro, Grid/vGPU)
2025-12-18 09:53:11 [8,503ms] [Error] [carb.scenerenderer-rtx.plugin] rtx driver verification failed.
"""

# (signature, line, the facts it states)
LINES: list[tuple[str, str, dict[str, str]]] = [
    (
        "vulkan-no-device",
        "RuntimeError: vk::Instance::enumeratePhysicalDevices: ErrorInitializationFailed",
        {"vulkan_error": "enumeratePhysicalDevices: ErrorInitializationFailed"},
    ),
    (
        "vulkan-icd-library-missing",
        "> The NVIDIA driver was unable to open 'libnvidia-glvkspirv.so.430.14'.  This library "
        "is required at run time.",
        {
            "vulkan_error": "libnvidia-glvkspirv.so.430.14",
            "missing_lib": "libnvidia-glvkspirv.so.430.14",
        },
    ),
    (
        "egl-device-display",
        "ImportError: Cannot initialize a EGL device display. This likely means that your EGL "
        "driver does not support the PLATFORM_DEVICE extension, which is required for creating "
        "a headless rendering context.",
        {"egl_error": "Cannot initialize a EGL device display"},
    ),
    (
        "egl-dri-permission-denied",
        "libEGL warning: failed to open /dev/dri/renderD129: Permission denied",
        {"dri_denied": "/dev/dri/renderD129"},
    ),
    (
        "pyopengl-platform-mismatch",
        "        AttributeError: 'GLXPlatform' object has no attribute 'EGL'",
        {"pyopengl_platform": "GLX", "mujoco_gl": "EGL"},
    ),
    (
        "python-h-missing",
        "/home/u/axolotl/.venv/lib/python3.10/site-packages/torch/include/torch/csrc/"
        "python_headers.h:12:10: fatal error: Python.h: No such file or directory",
        {"missing_header": "Python.h", "site_python": "3.10"},
    ),
    (
        "gxx-outside-cuda-range",
        "RuntimeError: The current installed version of g++ (4.8.5) is less than the minimum "
        "required version by CUDA 11.7 (6.0.0). Please make sure to use an adequate version of "
        "g++ (>=6.0.0, <12.0).",
        # the CUDA release the line names is the build's nvcc (SYS131 takes its limit from it)
        {"gxx_version": "4.8.5", "gxx_needed": ">=6.0.0, <12.0", "nvcc_version": "11.7"},
    ),
    (
        "glibc-too-old",
        '[Bug]: Failed to import from vllm._C with ImportError("/lib64/libc.so.6: version '
        "`GLIBC_2.32' not found",
        {"glibc_lacks": "2.32"},
    ),
    (
        "system-library-cannot-open",
        "- `libGLU.so.1: cannot open shared object file`",
        {"missing_lib": "libGLU.so.1"},
    ),
    (
        "cuda-error-802",
        "RuntimeError: cuda runtime error (802) : system not yet initialized at "
        "/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50",
        {"cuda_error": "802"},
    ),
]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.log"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("sig_id", "line", "expected"), LINES, ids=[s for s, _, _ in LINES])
def test_extractor_reads_what_the_line_states(
    tmp_path: Path, sig_id: str, line: str, expected: dict[str, str]
) -> None:
    log = write(tmp_path, f"INFO start\n{line}\nINFO end\n")
    _name, scan = scan_log(str(log), matrix())
    assert list(scan.tallies) == [sig_id]
    facts = log_facts(str(log), scan)
    assert {f.name: f.value for f in facts} == expected


def test_kit_driver_check_reads_the_lines_after_it(tmp_path: Path) -> None:
    log = write(tmp_path, KIT_LOG)
    facts = {f.name: f.value for f in log_facts(str(log), scan_log(str(log), matrix())[1])}
    # and the Kit plugin that logged the check says the job runs a Kit app (Isaac Sim)
    assert facts == {
        "driver_version": "535.18",
        "rtx_min_driver": "535.129",
        "kit_plugin": "carb.scenerenderer-rtx.plugin",
    }


def triage(cli: Callable[..., CliResult], log: Path, *args: str) -> dict[str, dict[str, Any]]:
    result = cli("triage", str(log), *(args or ("--no-probe",)), "--json")
    assert result.returncode == 1, result.stderr
    return {c["code"]: c for m in result.json()["data"]["matches"] for c in m["causes"]}


def _fix(cause: dict[str, Any]) -> str:
    return " ".join(
        (f["fix"] or {}).get("summary", "") + " " + " ".join((f["fix"] or {}).get("commands", []))
        for f in cause["findings"]
    )


# (log text, the code it confirms, fragments of the finding's fix) from the threads
CONFIRMED = [
    (KIT_LOG, "SIM103", ["535.129", "580.65.06"]),
    (
        "RuntimeError: Cannot find a suitable rendering device\n",
        "SIM109",
        ["nvidia_icd.json", "libvulkan1", "libnvidia-gl"],
    ),
    (LINES[2][1] + "\n", "SIM109", ["MUJOCO_GL=glx", "osmesa", "10_nvidia.json"]),
    (LINES[2][1] + "\n", "SIM120", ["MUJOCO_GL=osmesa", "PYOPENGL_PLATFORM=osmesa"]),
    ("an OpenGL platform library has not been loaded\n", "SIM121", ["MUJOCO_GL=egl"]),
    (LINES[3][1] + "\n", "SIM122", ["render", "/dev/dri"]),
    (LINES[4][1] + "\n", "SIM123", ["PYOPENGL_PLATFORM=egl"]),
    (LINES[5][1] + "\n", "SYS130", ["python3.10-dev"]),
    (LINES[6][1] + "\n", "SYS131", [">=6.0.0, <12.0", "--no-build-isolation"]),
    (LINES[7][1] + "\n", "SYS132", ["glibc >= 2.32"]),
    (LINES[8][1] + "\n", "SYS133", ["libglu1-mesa"]),
    (LINES[9][1] + "\n", "GPU101", ["nvidia-fabricmanager"]),
    (
        "isaaclab 0.44.9 requires numpy<2, but you have numpy 2.2.6 which is incompatible.\n"
        "isaacsim-kernel 5.0.0.0 requires numpy==1.26.0, but you have numpy 2.2.6 which is "
        "incompatible.\n",
        "SIM108",
        ["numpy==1.26.0"],
    ),
]


@pytest.mark.parametrize(
    ("text", "code", "fix"), CONFIRMED, ids=[f"{c}-{i}" for i, (_, c, _) in enumerate(CONFIRMED)]
)
def test_the_log_alone_confirms_the_cause_with_its_fix(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, code: str, fix: str
) -> None:
    cause = triage(cli, write(tmp_path, text))[code]
    assert cause["verdict"] == "confirmed", cause
    assert cause["findings"], cause
    printed = _fix(cause)
    for fragment in fix:
        assert fragment in printed, (fragment, printed)


def test_a_driver_at_the_floor_is_not_blamed(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """The same Kit block with a driver at the floor (a 'known issues' range instead) does not
    confirm SIM103."""
    text = KIT_LOG.replace("Installed driver: 535.18", "Installed driver: 535.129.03")
    assert triage(cli, write(tmp_path, text))["SIM103"]["verdict"] == "ruled_out"


def test_glibc_from_the_spec_and_the_log_together(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Isaac Sim 5.0 on Rocky 8.9 (glibc 2.28): the log's GLIBC_2.33 and the declared release
    confirm SIM102 with the OS and container fix, and SYS132 with the glibc it lacks."""
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[packages]\nisaacsim = "5.0"\n\n[system]\nos = "Rocky Linux 8.9"\nglibc = "2.28"\n'
    )
    log = write(tmp_path, "/lib64/libc.so.6: version `GLIBC_2.33' or higher not found\n")
    found = triage(cli, log, "--spec", str(spec))
    assert found["SIM102"]["verdict"] == "confirmed"
    assert "glibc >= 2.35" in _fix(found["SIM102"]) and "container" in _fix(found["SIM102"])
    assert found["SYS132"]["verdict"] == "confirmed"
    assert "this system has 2.28" in found["SYS132"]["findings"][0]["message"]
