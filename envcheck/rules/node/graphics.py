"""The graphics family's cause no older rule names: SIM150, OpenGL through GLX (Mesa's or
glvnd's libGL) loading no driver; SIM160, Qt's xcb platform plugin not loading (OpenCV's bundled
Qt, a missing xcb library, no display); SIM161, CUDA_VISIBLE_DEVICES renumbering GPUs for CUDA but
not for Isaac Sim's renderer. EGL and Vulkan failures are SIM109/SIM120 (the NVIDIA EGL
vendor library or Vulkan ICD missing), render-node permissions SIM122 (the signatures in
matrices/signatures/graphics.toml)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual


@rule("SIM150", "glx-driver-not-loaded", Severity.WARNING)
def glx_driver_not_loaded(facts: Facts) -> Iterable[Hit]:
    """OpenGL (GLX) loaded no driver: no display, no NVIDIA GLX library, or no Mesa DRI driver

    ## What it checks
    libGL's own lines (Mesa's loader and glvnd): `libGL error: failed to load driver: swrast`,
    `libGL error: MESA-LOADER: failed to open iris`, `libGL error: No matching fbConfigs or
    visuals found`, `glXCreateContext failed`. On a node: GLX asked for
    (`MUJOCO_GL=glx`, `PYOPENGL_PLATFORM=glx`) in a container whose NVIDIA_DRIVER_CAPABILITIES
    lack graphics.

    ## Why it matters
    GLX needs an X display and a GL driver for it: on a headless node or in a container without
    the NVIDIA graphics libraries (NVIDIA_DRIVER_CAPABILITIES lacking `graphics`), libGL falls
    back to Mesa, and without Mesa's DRI drivers (libgl1-mesa-dri) it loads nothing: viewers,
    GLFW windows and `MUJOCO_GL=glx` rendering fail.

    ## Example
    `libGL error: MESA-LOADER: failed to open swrast: /usr/lib/dri/swrast_dri.so: cannot open
    shared object file` in a container rendering over a forwarded X display.

    ## Fix
    Render headless without GLX (`MUJOCO_GL=egl` / `PYOPENGL_PLATFORM=egl` with the NVIDIA EGL
    vendor library, or `osmesa` in software); for GLX in a container start it with
    `NVIDIA_DRIVER_CAPABILITIES=all` (graphics) so the NVIDIA GLX library is mounted, or install
    Mesa's drivers (`apt install libgl1-mesa-dri libglx-mesa0`) for software GL. No display:
    DISPLAY unset is `export DISPLAY=:0` where the machine has a desktop (else `ssh -X`,
    `xvfb-run -a`); a named display not opened is X access (`xhost +local:root`).

    ## References
    - https://docs.mesa3d.org/envvars.html
    - https://www.x.org/releases/current/doc/man/man1/xhost.1.xhtml
    - https://github.com/Florian-Barthel/splatviz/issues/5
    - https://github.com/NVlabs/instant-ngp/issues/512
    - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
    - https://github.com/NVIDIA/libglvnd
    """
    env = facts.env()
    glx = [
        f"{k}={env[k]}"
        for k in ("MUJOCO_GL", "PYOPENGL_PLATFORM")
        if env.get(k, "").lower() == "glx"
    ]
    caps = env.get("NVIDIA_DRIVER_CAPABILITIES")
    if not glx or caps is None or "graphics" in caps or "all" in caps:
        return []
    return [
        Hit(
            f"{' '.join(glx)} renders through GLX, but NVIDIA_DRIVER_CAPABILITIES={caps} lacks "
            "graphics: the container has no NVIDIA GL library, so libGL loads no driver",
            evidence={"glx": glx, "driver_capabilities": caps},
            fix=fix(
                "Start the container with NVIDIA_DRIVER_CAPABILITIES=all (or add graphics), or "
                "render through EGL",
                "manual",
                manual("docker run -e NVIDIA_DRIVER_CAPABILITIES=all ..."),
                manual("MUJOCO_GL=egl PYOPENGL_PLATFORM=egl"),
            ),
        )
    ]


# an X error on a GLX request, or GLFW's GLX context creation failing (glfw src/glx_context.c)
_GLX_REFUSED = lazy(
    r"Major opcode of failed request: +[0-9]+ \(GLX\)|GLX: Failed to create context|"
    r"X_GLXCreate(New)?Context|GLXBadFBConfig"
)


# a display the line names (GLFW's 'X11: Failed to open display :1', Xlib's 'cannot open
# display: localhost:10.0'): DISPLAY is set, the X server refuses or cannot be reached
_DISPLAY_NAMED = lazy(r"display:? +[\"']?(?P<name>(?:[A-Za-z0-9.-]+)?:[0-9]+(?:\.[0-9]+)?)")


def _display_steps(named: str | None) -> list[str]:
    """What opens an X display, told apart by the line: DISPLAY unset on a machine that may
    have a desktop session (splatviz#5: export DISPLAY=:0.0), or a named display the process
    may not open, a container's (instant-ngp#512: xhost local:root)."""
    if named is None:
        return [
            "the machine has a desktop session but this shell lacks DISPLAY (a VS Code or IDE "
            "terminal, sudo, tmux): export DISPLAY=:0 (ls /tmp/.X11-unix: X0 is :0, X1 is :1)",
            "over SSH: connect with ssh -X (or -Y) so a forwarded display is set",
            "with a GUI program on a headless node: run it under a virtual display: "
            "xvfb-run -a <command>, or the program's headless mode (--no-gui, --headless)",
        ]
    return [
        f"from a container: let it open the host's X server {named}: xhost +local:root on "
        "the host, and docker run -e DISPLAY -v /tmp/.X11-unix:/tmp/.X11-unix ...",
        "over SSH (localhost:10.0): the server needs xauth and X11Forwarding yes; connect "
        "with ssh -X",
        f"no X server at {named} (a session that ended): export DISPLAY=:0 for the running "
        "session, or the program's headless mode (--no-gui, --headless), or xvfb-run -a "
        "<command>",
    ]


@from_log("SIM150")
def glx_driver_in_log(facts: Facts, line: LogLine) -> Hit:
    """The driver libGL could not load, named from the line; the container's capabilities, where
    the node states them."""
    named = re.search(r"failed to (?:load driver|open):? ([A-Za-z0-9_]+)", line.text)
    driver = named.group(1) if named else None
    section = facts.report.graphics
    caps = section.data.driver_capabilities if section.is_ok and section.data else None
    lacking = caps is not None and "graphics" not in caps and "all" not in caps
    display = "display" in line.text.lower()
    shown = _DISPLAY_NAMED.search(line.text) if display else None
    display_name = shown.group("name") if shown else None
    what = (
        "the X server refused the GLX context"
        if _GLX_REFUSED.search(line.text)
        else f"X display {display_name} could not be opened"
        if display_name
        else "no X display to open (DISPLAY unset)"
        if display
        else f"libGL could not load the {driver} driver"
        if driver
        else "GLX found no GL driver"
    )
    # Mesa's loader found no usable DRI driver file: in a conda env, most often because the
    # env's older libstdc++ loads before the one the system's Mesa driver was built against
    # Mesa picks its DRI driver by the GPU's PCI vendor: nouveau means an NVIDIA GPU whose own
    # GL/EGL libraries glvnd did not find (a .run install with --no-opengl-files, no
    # libnvidia-gl package, a container without the graphics capability)
    nvidia = driver == "nouveau"
    mesa = "MESA-LOADER" in line.text and not nvidia
    own = (
        [
            "the GPU is NVIDIA's but Mesa's nouveau was tried: install the driver's GL/EGL "
            "libraries (apt install libnvidia-gl-<driver branch>), or reinstall a .run driver "
            "without --no-opengl-files; in a container NVIDIA_DRIVER_CAPABILITIES=all"
        ]
        if nvidia
        else []
    )
    conda = (
        [
            "in a conda environment: conda install -c conda-forge libstdcxx-ng (or gcc), or "
            "export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6: the env's older "
            f"libstdc++ keeps the system's {driver or 'Mesa'}_dri.so from loading"
        ]
        if mesa
        else []
    )
    # the X server refused the GLX context itself (an X error on a GLX request, GLFW's 'Failed
    # to create context: BadValue / GLXBadFBConfig'): what fixed it, by the threads' count
    refused = _GLX_REFUSED.search(line.text) is not None
    fbconfig = "GLXBadFBConfig" in line.text
    context = (
        [
            *(
                [
                    "Mesa (a VM, a software GL) without the GL version asked for: "
                    "export MESA_GL_VERSION_OVERRIDE=4.5"
                ]
                if fbconfig
                else []
            ),
            "just installed or updated the NVIDIA driver: reboot, so the loaded kernel module "
            "matches the new GLX library (cat /proc/driver/nvidia/version vs nvidia-smi)",
            "headless or over SSH (no local X server with GLX): run under a virtual display: "
            "xvfb-run -a <command>, or render through EGL",
            *([] if fbconfig else ["Mesa in a VM: export MESA_GL_VERSION_OVERRIDE=4.5"]),
        ]
        if refused
        else []
    )
    steps = [
        *context,
        *own,
        *conda,
        *(_display_steps(display_name) if display and not refused else []),
        "headless: export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl (no GLX; NVIDIA EGL vendor "
        "library), or MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa (software)",
        "in a container: start it with NVIDIA_DRIVER_CAPABILITIES=all (graphics) so the NVIDIA "
        "GLX/EGL libraries are mounted",
        "for Mesa's software GL: apt install libgl1-mesa-dri libglx-mesa0",
    ]
    caps_note = f"; NVIDIA_DRIVER_CAPABILITIES={caps} lacks graphics" if lacking else ""
    return Hit(
        f"{what} (line {line.line}){caps_note}: OpenGL through GLX has no usable driver",
        evidence={"line": line.line, "driver": driver, "driver_capabilities": caps},
        fix=fix(
            (
                "Install the NVIDIA driver's own GL/EGL libraries (libnvidia-gl-<branch>; a .run "
                "driver installed with --no-opengl-files has none: reinstall it without that "
                "flag); else render"
                if nvidia
                else "In a conda environment, give Mesa's driver the newer libstdc++: conda install "
                "-c conda-forge libstdcxx-ng (or export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/"
                "libstdc++.so.6); else render"
                if mesa
                else "After a driver install or update, reboot (kernel module and GLX library "
                "must match); on a node without a local X server run under xvfb-run -a; else render"
                if refused and not fbconfig
                else "Under Mesa (a VM), export MESA_GL_VERSION_OVERRIDE=4.5; after a driver "
                "update, reboot; else render"
                if refused
                else f"Let the process open X display {display_name} (a container: xhost "
                "+local:root and the X socket mounted); or render"
                if display_name
                else "Point DISPLAY at the machine's X display where it has one (export "
                "DISPLAY=:0; over SSH ssh -X), on a headless node run under xvfb-run -a; or "
                "render"
                if display
                else "Render"
            )
            + " headless through EGL (or OSMesa), or provide a GL driver: "
            "NVIDIA_DRIVER_CAPABILITIES=all in the container, or libgl1-mesa-dri",
            "manual",
            *(manual(s) for s in steps),
        ),
    )


@rule("SIM160", "qt-xcb-plugin-not-loaded", Severity.WARNING)
def qt_xcb_plugin_not_loaded(facts: Facts) -> Iterable[Hit]:
    """Qt's xcb platform plugin could not load: no display, OpenCV's bundled Qt, or missing xcb libraries

    ## What it checks
    Only a log says it: Qt's own lines, `qt.qpa.plugin: Could not load the Qt platform plugin
    "xcb" in ".../cv2/qt/plugins" even though it was found`, `This application failed to start
    because no Qt platform plugin could be initialized`, and Qt >= 6.5's `xcb-cursor0 or
    libxcb-cursor0 is needed to load the Qt xcb platform plugin`.

    ## Why it matters
    A GUI call (cv2.imshow, a matplotlib Qt backend, a labeling or viewer tool) aborts the
    process. The plugin directory says why: `cv2/qt/plugins` is the Qt that the GUI build of
    OpenCV (opencv-python) bundles, which breaks beside PyQt and on headless nodes; otherwise
    the X display is missing or a system xcb library is.

    ## Example
    `qt.qpa.plugin: Could not load the Qt platform plugin "xcb" in
    "/venv/lib/python3.10/site-packages/cv2/qt/plugins" even though it was found.` on a server.

    ## Fix
    With OpenCV's Qt (`cv2/qt/plugins`): `pip uninstall -y opencv-python opencv-contrib-python &&
    pip install opencv-python-headless` (nothing needs OpenCV's own windows on a server); with Qt
    >= 6.5: `apt install libxcb-cursor0`; other xcb libraries: `apt install libxcb-xinerama0
    libxkbcommon-x11-0`; no display at all: `export QT_QPA_PLATFORM=offscreen` (or run under
    `xvfb-run -a`).

    ## References
    - Qt qtbase src/gui/kernel/qguiapplication.cpp ('Could not load the Qt platform plugin
      "%s" in "%s" even though it was found.', 'This application failed to start because no Qt
      platform plugin could be initialized.')
    - https://github.com/vietanhdev/anylabeling/issues/108
    - https://github.com/stepjam/PyRep/issues/368
    - https://github.com/FatihMakes/Mark-LIII/issues/75
    """
    raise Skip("only a log line states a Qt platform plugin failure", "log.graphics")


@from_log("SIM160")
def qt_xcb_plugin_in_log(facts: Facts, line: LogLine) -> Hit:
    """Qt's line, read for the plugin directory (OpenCV's bundled Qt) and the library it needs."""
    where = line.stated.get("qt_plugin_dir") or ""
    opencv = "cv2/qt/plugins" in where or "cv2" in line.text
    cursor = "xcb-cursor0" in line.text
    steps = []
    if opencv:
        steps.append(
            "pip uninstall -y opencv-python opencv-contrib-python && pip install "
            "opencv-python-headless   # OpenCV without its bundled Qt"
        )
    if cursor:
        steps.append("apt install libxcb-cursor0   # Qt >= 6.5's xcb plugin needs it")
    steps += [
        "with a display: apt install libxcb-xinerama0 libxkbcommon-x11-0 libxcb-cursor0",
        "headless: export QT_QPA_PLATFORM=offscreen (or run under xvfb-run -a)",
    ]
    if opencv:
        summary = (
            "Replace OpenCV's GUI build by opencv-python-headless (its bundled Qt cannot load "
            "here): pip install opencv-python-headless"
        )
    elif cursor:
        summary = "Install the xcb library Qt names: apt install libxcb-cursor0"
    else:
        summary = (
            "Give Qt a display or a platform that needs none: QT_QPA_PLATFORM=offscreen, or "
            "install the xcb libraries"
        )
    what = (
        "the Qt that OpenCV (opencv-python) bundles"
        if opencv
        else "Qt, which needs libxcb-cursor0"
        if cursor
        else "Qt"
    )
    return Hit(
        f"{what} could not load its xcb platform plugin (line {line.line}): the process aborts at "
        "its first window",
        evidence={"line": line.line, "plugin_dir": where or None},
        fix=fix(summary, "manual", *(manual(s) for s in steps)),
    )


def _masked(visible: str) -> list[str] | None:
    """The CUDA_VISIBLE_DEVICES entries when they renumber GPUs (anything but 0, 1, ... n-1 in
    order), else None."""
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if not entries or entries == [str(i) for i in range(len(entries))]:
        return None
    return entries


@rule("SIM161", "isaac-renderer-gpu-masked", Severity.WARNING)
def isaac_renderer_gpu_masked(facts: Facts) -> Iterable[Hit]:
    """CUDA_VISIBLE_DEVICES renumbers the GPUs for CUDA but not for Isaac Sim's renderer

    ## What it checks
    Isaac Sim or Isaac Lab installed with `CUDA_VISIBLE_DEVICES` naming GPUs other than 0, 1,
    ... in order (`1,2`, `0,5`, `4,5,6,7`).

    ## Why it matters
    Kit's renderer picks its GPU through `/renderer/activeGpu`, an index into the graphics
    (Vulkan) device list, which `CUDA_VISIBLE_DEVICES` does not filter; Isaac Lab's launcher
    passed the masked CUDA index there. Ranks then render on another GPU than their CUDA
    device: `[gpu.foundation.plugin] No device could be created`, `CUDA error 700`, or only
    `cuda:0` active in multi-GPU training.

    ## Example
    `CUDA_VISIBLE_DEVICES=0,5 python -m torch.distributed.run --nproc_per_node=2
    scripts/rsl_rl/train.py --distributed` with Isaac Lab.

    ## Fix
    Use an Isaac Lab whose AppLauncher selects the renderer by CUDA index
    (`/renderer/multiGpu/activeCudaGpus`, isaac-sim/IsaacLab pull 7057), or do not mask: leave
    `CUDA_VISIBLE_DEVICES` unset and choose the GPUs with the launcher's `--device cuda:N`.

    ## References
    - https://github.com/isaac-sim/IsaacLab/issues/2756
    - https://github.com/isaac-sim/IsaacLab/pull/7057
    - https://github.com/isaac-sim/IsaacLab/issues/4012
    """
    from envcheck.rules.node.simulators import isaacsim_version

    isaac = isaacsim_version(facts)
    lab = facts.version("isaaclab")
    if isaac is None and lab is None:
        return []
    visible = facts.env().get("CUDA_VISIBLE_DEVICES") or ""
    entries = _masked(visible)
    if entries is None:
        return []
    who = f"isaaclab {lab}" if lab is not None else f"isaacsim {isaac}"
    return [
        Hit(
            f"CUDA_VISIBLE_DEVICES={visible} renumbers the GPUs for CUDA, not for the renderer "
            f"of {who}: Kit's /renderer/activeGpu indexes the unfiltered graphics device list, "
            "so ranks render on another GPU than their CUDA device",
            evidence={"CUDA_VISIBLE_DEVICES": visible, "installed": who},
            fix=fix(
                "Select the renderer by CUDA index (an Isaac Lab with "
                "/renderer/multiGpu/activeCudaGpus, IsaacLab pull 7057), or leave "
                "CUDA_VISIBLE_DEVICES unset and pass --device cuda:N",
                "manual",
                manual(
                    "unset CUDA_VISIBLE_DEVICES and choose the GPU with the launcher "
                    "(--device cuda:N; torchrun gives each rank its local rank)"
                ),
                manual(
                    "or update Isaac Lab to a release whose AppLauncher sets "
                    "/renderer/multiGpu/activeCudaGpus"
                ),
            ),
        )
    ]
