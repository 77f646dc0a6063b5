"""OpenGL platforms an operating system does not have: SIM171, PyOpenGL told to load EGL (or
OSMesa) on Windows or macOS (the signature in matrices/signatures/nccl_transports.toml)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual


@rule("SIM171", "gl-platform-absent-on-os", Severity.ERROR)
def gl_platform_absent_on_os(facts: Facts) -> Iterable[Hit]:
    """PyOpenGL is told to use EGL or OSMesa on Windows or macOS, which have no such library

    ## What it checks
    Only a log says it: CPython's ctypes failing to load PyOpenGL's platform library by its
    short name, on Windows `Could not find module 'EGL' (or one of its dependencies)`, on macOS
    `dlopen(EGL, 6): image not found`, usually followed by PyOpenGL's `ImportError: ('Unable to
    load EGL library', ...)`.

    ## Why it matters
    `PYOPENGL_PLATFORM=egl` (or `osmesa`) selects a Linux GL platform: Windows renders through
    WGL and macOS through CGL, and neither ships libEGL or libOSMesa. Many research repositories
    set the variable in their own code (`os.environ['PYOPENGL_PLATFORM'] = 'egl'` at the top of
    a demo script, or `MUJOCO_GL=egl`), so every render fails on these systems however the GPU
    driver is installed.

    ## Example
    Running a pyrender demo on Windows 10: `FileNotFoundError: ("Could not find module 'EGL' (or
    one of its dependencies). ...")` then `ImportError: ('Unable to load EGL library', ...)`.

    ## Fix
    Let PyOpenGL use the OS's own platform: remove the line that sets
    `os.environ['PYOPENGL_PLATFORM'] = 'egl'` (or `osmesa`) from the script, and unset the
    variable (`set PYOPENGL_PLATFORM=` on Windows, `unset PYOPENGL_PLATFORM` on macOS); for
    MuJoCo use `MUJOCO_GL=glfw` (or `wgl` on Windows, `cgl` on macOS). Headless EGL rendering
    needs Linux (or WSL2).

    ## References
    - https://github.com/mcfletch/pyopengl/blob/master/OpenGL/platform/egl.py
    - https://github.com/PrimitiveAnything/PrimitiveAnything/issues/6
    - https://github.com/vchoutas/expose/issues/62
    - https://github.com/google-deepmind/dm_control/issues/207
    """
    raise Skip("only a log line states that PyOpenGL could not load EGL on this OS", "log.graphics")


# how ctypes words a library it could not load on Windows and on macOS (CPython's ctypes)
_NOT_LINUX = ("Could not find module", "dlopen(", "Library not loaded")


@from_log("SIM171")
def gl_platform_absent_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The ctypes failure in Windows' or macOS' words; PyOpenGL's own 'Unable to load EGL
    library' with Linux's dlopen text beside it is another cause (None: ruled out); MuJoCo's own
    refusal of a Linux-only MUJOCO_GL (matrices/signatures/graphics_layers.toml
    mujoco-gl-linux-only-value) says the same of MuJoCo's backend."""
    if "environment variable MUJOCO_GL" in line.text:
        return _mujoco_gl_off_linux(line)
    if not any(word in line.text for word in _NOT_LINUX):
        return None
    library = line.stated.get("gl_library") or "EGL"
    platform = "osmesa" if "osmesa" in library.lower() else "egl"
    macos = "dlopen(" in line.text or "Library not loaded" in line.text
    system = "macOS" if macos else "Windows"
    unset = "unset PYOPENGL_PLATFORM" if macos else "set PYOPENGL_PLATFORM="
    own = "cgl" if macos else "wgl"
    return Hit(
        f"PyOpenGL could not load {library} (line {line.line}): PYOPENGL_PLATFORM={platform} asks "
        f"for a Linux GL platform, and {system} has no lib{library}",
        evidence={"line": line.line, "library": library, "os": system},
        fix=fix(
            f"Remove os.environ['PYOPENGL_PLATFORM'] = '{platform}' from the script and unset "
            f"PYOPENGL_PLATFORM ({unset}), so PyOpenGL uses {system}'s own GL; for MuJoCo "
            f"MUJOCO_GL=glfw (or {own}); headless EGL needs Linux or WSL2",
            "manual",
            manual(
                f"delete the line os.environ['PYOPENGL_PLATFORM'] = '{platform}' "
                "(or MUJOCO_GL) from the script"
            ),
            manual(unset),
            manual(f"MuJoCo: {'export' if macos else 'set'} MUJOCO_GL=glfw"),
        ),
    )


def _mujoco_gl_off_linux(line: LogLine) -> Hit:
    """MuJoCo's ``invalid value for environment variable MUJOCO_GL: egl``: egl, glx and osmesa
    are valid only on Linux (google-deepmind/mujoco python/mujoco/__init__.py), so the process
    runs on Windows or macOS, which the line does not tell apart."""
    value = line.stated.get("mujoco_gl") or "egl"
    return Hit(
        f"MuJoCo refused MUJOCO_GL={value} (line {line.line}): {value} is a Linux backend, and "
        "this process runs on Windows or macOS",
        evidence={"line": line.line, "MUJOCO_GL": value},
        fix=fix(
            f"Remove MUJOCO_GL={value} (os.environ['MUJOCO_GL'] = '{value}' in the script, or the "
            "exported variable) so MuJoCo uses its default glfw, or set the OS's own backend: "
            "MUJOCO_GL=wgl on Windows, MUJOCO_GL=cgl on macOS; headless EGL needs Linux or WSL2",
            "manual",
            manual(f"delete os.environ['MUJOCO_GL'] = '{value}' from the script"),
            manual("Windows: set MUJOCO_GL=  (or set MUJOCO_GL=wgl)"),
            manual("macOS: unset MUJOCO_GL  (or export MUJOCO_GL=cgl)"),
        ),
    )
