"""OpenGL libraries a renderer binds at run time rather than links: SIM170, mujoco-py's GLEW
finding no OpenGL version because libGLEW (and the GL driver's libGL) was not loaded into the
process first (the signature in matrices/signatures/graphics_layers.toml)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# Debian/Ubuntu's multiarch directory, where libglew-dev puts the unversioned libGLEW.so
_GLEW = "/usr/lib/x86_64-linux-gnu/libGLEW.so"


@rule("SIM170", "glew-missing-gl-version", Severity.WARNING)
def glew_missing_gl_version(facts: Facts) -> Iterable[Hit]:
    """GLEW found no OpenGL version: libGLEW was not preloaded for mujoco-py's GLFW context

    ## What it checks
    Only a log says it: mujoco-py's (and MuJoCo <= 2.1.3's) `GLEW initalization error:
    Missing GL version` (both spellings), printed when the first frame is rendered
    (`env.render()`, `sim.render()`, `gym.make` of a rendering env).

    ## Why it matters
    mujoco-py's GLFW extension is built without linking libGLEW: GLEW's entry points resolve
    only when libGLEW is already in the process, and without it `glewInit` sees no current GL
    version, on desktops with a display as well as over SSH. Rendering fails every time.

    ## Example
    `gym.make('Ant-v2')` then `env.render()` on Ubuntu with an NVIDIA GPU: `ERROR: GLEW
    initalization error: Missing GL version`.

    ## Fix
    Preload GLEW (and, where the NVIDIA libGL is not the one found first, the driver's libGL)
    before Python starts: `sudo apt install libglew-dev` and `export
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libGLEW.so` (add it to ~/.bashrc). Headless, render
    without GLFW instead: `MUJOCO_GL=egl` (or `osmesa`).

    ## References
    - https://github.com/openai/mujoco-py/pull/145 (the LD_PRELOAD of libGLEW and libGL)
    - https://github.com/openai/mujoco-py/issues/268
    - https://github.com/openai/gym/issues/917
    - https://github.com/ARISE-Initiative/robosuite/issues/340
    """
    raise Skip("only a log line states that GLEW found no GL version", "log.graphics")


@from_log("SIM170")
def glew_missing_gl_version_in_log(facts: Facts, line: LogLine) -> Hit:
    return Hit(
        f"GLEW found no OpenGL version (line {line.line}): libGLEW was not loaded into the "
        "process before mujoco-py's GLFW context, so the context has no GL entry points",
        evidence={"line": line.line},
        fix=fix(
            f"Preload GLEW before Python starts: sudo apt install libglew-dev, then export "
            f"LD_PRELOAD={_GLEW} (in ~/.bashrc; add the NVIDIA libGL after it when another "
            "libGL loads first); headless, render without GLFW: export MUJOCO_GL=egl",
            "manual",
            manual("sudo apt-get install -y libglew-dev"),
            manual(f"export LD_PRELOAD={_GLEW}"),
            manual(
                f"export LD_PRELOAD={_GLEW}:/usr/lib/x86_64-linux-gnu/libGL.so  (when a non-NVIDIA "
                "libGL is picked up first)"
            ),
            manual("headless: export MUJOCO_GL=egl  (or osmesa without a GPU)"),
        ),
    )
