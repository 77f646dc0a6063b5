"""SIM: what simulators render with: the Omniverse RTX driver floor, the NVIDIA Vulkan/EGL
userspace, /dev/dri access and the MuJoCo / PyOpenGL backends.

Each rule reads the node (a probe, a dump, a spec) and also the facts a log states about the
same things (a Kit log's driver check, a Vulkan loader or EGL error, a denied render node), so
``envcheck triage`` confirms a rendering failure from the log's own line and names the fix.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.model.report import GraphicsInfo
from envcheck.model.versions import DriverVersion
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual, set_env
from envcheck.rules.node.simulators import isaacsim_version

VULKAN_USERS = ("isaacsim", "omnigibson", "mani-skill", "sapien")
RTX_FLOOR = "omniverse.rtx_min_driver"


def _graphics(facts: Facts) -> GraphicsInfo:
    info: GraphicsInfo = facts._data(facts.report.graphics, "graphics userspace", "graphics")
    return info


def _stated(facts: Facts) -> GraphicsInfo | None:
    """The graphics facts when known (from a probe or a log), else None."""
    section = facts.report.graphics
    return section.data if section.is_ok and section.data is not None else None


# where NVIDIA's container toolkit mounts the driver's Vulkan ICD manifest, and SAPIEN's warning
# when /usr/share/vulkan/icd.d has none (haosulab/SAPIEN python/py_package/_vulkan_tricks.py;
# https://github.com/NVIDIA/nvidia-container-toolkit/issues/1392)
_CONTAINER_ICD = "/etc/vulkan/icd.d/nvidia_icd.json"
_SAPIEN_ICD_CHECK = "Failed to find Vulkan ICD file"


def _failures(facts: Facts, kind: str) -> list[str]:
    info = _stated(facts)
    prefix = kind + ": "
    return [f[len(prefix) :] for f in info.failures if f.startswith(prefix)] if info else []


def _renderers(facts: Facts) -> tuple[str, ...]:
    """The libraries whose own lines state a rendering failure ("nvdiffrast"), else ()."""
    info = _stated(facts)
    return info.renderers if info else ()


# nvdiffrast's rasterizer without OpenGL: RasterizeCudaContext (nvdiffrast 0.3.0 on, NVlabs/
# nvdiffrast docs/index.html 'Rasterizing with CUDA vs OpenGL'), the one-line change the
# threads of its EGL failure make instead of fixing EGL
_NVDIFFRAST_CUDA = (
    "nvdiffrast without EGL: dr.RasterizeCudaContext() in place of dr.RasterizeGLContext() "
    "(its CUDA rasterizer, nvdiffrast>=0.3.0)"
)


def _env(facts: Facts) -> dict[str, str]:
    return dict(facts.env()) if facts.report.env.is_ok else {}


def _installed(facts: Facts, names: Iterable[str]) -> list[str]:
    """The names installed; a partial package list (a log's) that lacks one says nothing."""
    found = []
    for name in names:
        try:
            if facts.version(name) is not None:
                found.append(name)
        except Skip:
            continue
    return found


def _driver_branch(facts: Facts) -> str:
    try:
        return str(facts.driver().release[0])
    except (Skip, IndexError):
        return "<driver branch>"


@rule("SIM103", "omniverse-rtx-driver-floor", Severity.ERROR)
def rtx_driver_floor(facts: Facts) -> Iterable[Hit]:
    """Driver below the Omniverse RTX floor (535.129)

    ## What it checks
    The NVIDIA driver against the minimum Omniverse Kit's RTX renderer accepts: 535.129 for Isaac
    Sim >= 4.0, or the floor a Kit log states itself (`The unsupported driver range: [0.0,
    535.129)`).

    ## Why it matters
    Kit refuses to start the RTX renderer below it: `The currently installed NVIDIA graphics
    driver is unsupported or has known issues ... rtx driver verification failed`, then
    `HydraEngine rtx failed creating scene renderer` and an empty viewport.

    ## Example
    Isaac Sim 4.5 (or a Kit log) on driver 535.18.

    ## Fix
    Upgrade the driver to 535.129 or newer: Isaac Sim 5.0 was released with 535.161.07
    recommended, Isaac Sim 5.1 is validated on 580.65.06 (IsaacAutomator moved to 580).

    ## References
    - https://github.com/isaac-sim/IsaacAutomator/issues/40
    - https://github.com/isaac-sim/IsaacLab/issues/4244
    - https://isaac-sim.github.io/IsaacLab/v2.2.0/source/refs/release_notes.html
    """
    info = _stated(facts)
    floor_text = info.rtx_min_driver if info else None
    who = "the Omniverse RTX app (its log states the unsupported range [0.0, {floor}))"
    if floor_text is None:
        isaac = isaacsim_version(facts)
        if isaac is None or isaac < Version("4.0"):
            return []
        constant = facts.matrix.constant(RTX_FLOOR)
        if constant is None:
            raise Skip("the Omniverse RTX driver floor is not in the matrix")
        floor_text = f"{constant:.3f}".rstrip("0")
        who = f"isaacsim {isaac}"
    try:
        floor = DriverVersion(floor_text)
    except InvalidVersion:
        raise Skip(f"driver floor {floor_text!r} is not a version") from None
    driver = facts.driver()
    if driver >= floor:
        return []
    return [
        Hit(
            f"driver {driver} is below {floor_text}, the minimum of {who.format(floor=floor_text)}:"
            " Kit refuses RTX rendering ('rtx driver verification failed')",
            evidence={"driver": str(driver), "min_driver": floor_text},
            fix=fix(
                f"Upgrade the NVIDIA driver to >= {floor_text} (535.161.07 was recommended for "
                "Isaac Sim 5.0; 580.65.06 is validated for Isaac Sim 5.1)",
                "manual",
                manual(
                    f"install NVIDIA driver {floor_text} or newer (the 580 branch for Isaac Sim 5.x)"
                ),
            ),
        )
    ]


def _userspace_fix(facts: Facts, egl: bool, vulkan: bool) -> list[str]:
    branch = _driver_branch(facts)
    steps = [
        "containers: NVIDIA_DRIVER_CAPABILITIES=all (or add graphics) so the runtime mounts the "
        "driver's graphics libraries",
        f"hosts: install the driver's GL/Vulkan userspace matching the driver (apt install "
        f"libnvidia-gl-{branch}, or libnvidia-gl-{branch}-server with the -server driver)",
    ]
    if vulkan:
        steps.append(
            "Vulkan: install the loader (apt install libvulkan1) and check that "
            "/usr/share/vulkan/icd.d/nvidia_icd.json exists and names libGLX_nvidia.so.0, "
            "which must exist too"
        )
        steps.append(
            "Vulkan with the ICD elsewhere (or several ICDs): export "
            "VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/nvidia_icd.json (newer loaders also read "
            "VK_DRIVER_FILES)"
        )
        steps.append(
            f"in a container: export VK_ICD_FILENAMES={_CONTAINER_ICD} where that file exists "
            "(NVIDIA's container toolkit mounts the ICD there; SAPIEN looks only in "
            "/usr/share/vulkan/icd.d and otherwise loads its own copy)"
        )
    if egl:
        # the container runtime mounts the driver's libEGL_nvidia.so.0 only: the glvnd loader
        # (libEGL.so.1) and the vendor manifest come from the image (NVlabs/nvdiffrast
        # docker/Dockerfile installs libglvnd0 libegl1 and copies 10_nvidia.json)
        steps.append(
            "container images: install glvnd's EGL loader, which the runtime does not mount "
            "(apt install libglvnd0 libegl1; RHEL/Fedora: libglvnd-egl; openSUSE: libEGL1)"
        )
        steps.append(
            "EGL: check that /usr/share/glvnd/egl_vendor.d/10_nvidia.json exists and names "
            "libEGL_nvidia.so.0"
        )
        steps.append(
            "EGL with a Mesa or conda libEGL loading first: export "
            "__EGL_VENDOR_LIBRARY_FILENAMES=/usr/share/glvnd/egl_vendor.d/10_nvidia.json"
        )
    return steps


@rule("SIM109", "headless-rendering-userspace", Severity.WARNING)
def headless_userspace(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA Vulkan ICD or EGL vendor library that headless rendering needs is missing

    ## What it checks
    With a simulator installed (Isaac Sim, OmniGibson, ManiSkill, SAPIEN need Vulkan; MuJoCo
    with `MUJOCO_GL=egl` needs EGL): the NVIDIA Vulkan ICD manifest (`nvidia_icd.json`), the glvnd
    EGL vendor manifest (`10_nvidia.json`) and `libEGL_nvidia.so.0`. In a log: the Vulkan loader
    or EGL failing to find a device (`ErrorIncompatibleDriver`, `enumeratePhysicalDevices:
    ErrorInitializationFailed`, `Cannot initialize a EGL device display`).

    ## Why it matters
    Compute-only driver installs and containers started without the graphics capability have
    none of these: Vulkan finds no device (`ERROR_INCOMPATIBLE_DRIVER`), MuJoCo fails with
    `The MUJOCO_EGL_DEVICE_ID environment variable must be an integer between 0 and 0`.

    ## Example
    A container started with `NVIDIA_DRIVER_CAPABILITIES=compute,utility`.

    ## Fix
    In containers set `NVIDIA_DRIVER_CAPABILITIES=all` (or add `graphics`); on hosts install the
    driver's GL package (`libnvidia-gl-<branch>`) and the Vulkan loader (`libvulkan1`), and make
    sure `nvidia_icd.json` (Vulkan) and `10_nvidia.json` (EGL) exist and name libraries that
    exist (`VK_ICD_FILENAMES` / `__EGL_VENDOR_LIBRARY_FILENAMES` point the loaders at them when
    another ICD or a conda Mesa libEGL is found first). NVIDIA's container toolkit mounts the
    ICD at `/etc/vulkan/icd.d/nvidia_icd.json`, where SAPIEN does not look (`Failed to find
    Vulkan ICD file`): `export VK_ICD_FILENAMES=/etc/vulkan/icd.d/nvidia_icd.json`. The runtime
    mounts only the driver's `libEGL_nvidia.so.0`: an image needs glvnd's EGL loader itself
    (`apt install libglvnd0 libegl1`, as nvdiffrast's Dockerfile does). MuJoCo can also render
    without EGL: `MUJOCO_GL=glx` with a display, `MUJOCO_GL=osmesa` in software; where the EGL
    line is nvdiffrast's own (`[F glutil.cpp:338] eglInitialize() failed`), its CUDA rasterizer
    needs no EGL: `dr.RasterizeCudaContext()`.

    ## References
    - RLinf/RLinf docs/source-en/rst_source/resources/faq.rst
    - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
    - https://github.com/mani-skill/ManiSkill/issues/159
    - https://github.com/mani-skill/ManiSkill/issues/160
    - https://github.com/NVIDIA/libnvidia-container/issues/55
    - https://github.com/NVIDIA/nvidia-container-toolkit/issues/1392
    - haosulab/SAPIEN python/py_package/_vulkan_tricks.py (_ensure_vulkan_icd)
    - https://github.com/ARISE-Initiative/robosuite/issues/616
    - KhronosGroup/Vulkan-Loader docs/LoaderInterfaceArchitecture.md (VK_ICD_FILENAMES,
      VK_DRIVER_FILES)
    - NVIDIA/libglvnd src/EGL/icd_enumeration.md (__EGL_VENDOR_LIBRARY_FILENAMES)
    - NVlabs/nvdiffrast docker/Dockerfile (libglvnd0 libegl1, 10_nvidia.json) and
      nvdiffrast/common/glutil.cpp
    - https://github.com/NVlabs/nvdiffrast/issues/58
    """
    vulkan_log, egl_log = _failures(facts, "vulkan"), _failures(facts, "egl")
    if vulkan_log or egl_log:
        return [_logged_failure(facts, vulkan_log, egl_log)]
    env = _env(facts)
    vulkan_users = [n for n in VULKAN_USERS if facts.version(n) is not None]
    egl_user = facts.version("mujoco") is not None and env.get("MUJOCO_GL") == "egl"
    if not vulkan_users and not egl_user:
        return []
    info = _graphics(facts)
    missing = []
    if vulkan_users and not info.nvidia_vulkan:
        missing.append("the NVIDIA Vulkan ICD (nvidia_icd.json)")
    egl = egl_user or "omnigibson" in vulkan_users
    if egl and not info.nvidia_egl:
        missing.append("the NVIDIA EGL vendor (10_nvidia.json and libEGL_nvidia.so.0)")
    if not missing:
        return []
    users = vulkan_users + (["mujoco (MUJOCO_GL=egl)"] if egl_user else [])
    caps = info.driver_capabilities
    note = f"; NVIDIA_DRIVER_CAPABILITIES={caps}" if caps else ""
    steps = _userspace_fix(facts, egl=egl, vulkan=bool(vulkan_users))
    return [
        Hit(
            f"headless rendering for {', '.join(users)} needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} missing{note}",
            evidence={
                "vulkan_icds": list(info.vulkan_icds),
                "egl_vendors": list(info.egl_vendors),
                "driver_capabilities": caps,
            },
            fix=fix(
                "Provide the driver's graphics userspace (libnvidia-gl, nvidia_icd.json, "
                "10_nvidia.json)",
                "manual",
                *(manual(s) for s in steps),
            ),
        )
    ]


def _logged_failure(facts: Facts, vulkan: list[str], egl: list[str]) -> Hit:
    said = "; ".join([*vulkan, *egl])
    steps = _userspace_fix(facts, egl=bool(egl), vulkan=bool(vulkan))
    summary = (
        "Provide the NVIDIA Vulkan userspace: nvidia_icd.json, libGLX_nvidia.so.0 "
        "(libnvidia-gl) and libvulkan1"
        if vulkan
        else "Provide the NVIDIA EGL vendor library (10_nvidia.json, libEGL_nvidia.so.0)"
    )
    if any(_SAPIEN_ICD_CHECK in v for v in vulkan):
        # SAPIEN's own check (python/py_package/_vulkan_tricks.py) reads only /usr/share's
        # manifest: in NVIDIA's containers the driver's is under /etc/vulkan/icd.d
        summary = (
            f"Point Vulkan at the driver's ICD: export VK_ICD_FILENAMES={_CONTAINER_ICD} "
            "where it exists (NVIDIA's container toolkit mounts it there; SAPIEN looks only "
            "in /usr/share/vulkan/icd.d); else " + summary[:1].lower() + summary[1:]
        )
    renderers = _renderers(facts)
    if egl and "nvdiffrast" in renderers:
        steps.append(_NVDIFFRAST_CUDA)
        summary += "; or rasterize with nvdiffrast's CUDA rasterizer (dr.RasterizeCudaContext())"
    elif egl and not renderers:
        steps.append(
            "MuJoCo without EGL: MUJOCO_GL=glx where a display exists, or MUJOCO_GL=osmesa "
            "PYOPENGL_PLATFORM=osmesa (software rendering, apt install libosmesa6)"
        )
        summary += "; or render with MUJOCO_GL=glx (a display) or MUJOCO_GL=osmesa (software)"
    info = _stated(facts)
    caps = info.driver_capabilities if info is not None else None
    lacking = caps is not None and "graphics" not in caps and "all" not in caps
    if lacking:
        summary = (
            f"Start the container with NVIDIA_DRIVER_CAPABILITIES=all (it is {caps}: no "
            "graphics libraries are mounted); " + summary[:1].lower() + summary[1:]
        )
    note = f"; NVIDIA_DRIVER_CAPABILITIES={caps} lacks graphics" if lacking else ""
    return Hit(
        f"the log shows {'Vulkan' if vulkan else 'EGL'} finding no usable NVIDIA device "
        f"({said}): the driver's {'Vulkan ICD' if vulkan else 'EGL vendor library'} is missing "
        f"or names a library that is not installed{note}",
        evidence={"vulkan": vulkan, "egl": egl},
        fix=fix(summary, "manual", *(manual(s) for s in steps)),
    )


@rule("SIM120", "mujoco-egl-no-device", Severity.WARNING)
def mujoco_egl_no_device(facts: Facts) -> Iterable[Hit]:
    """MuJoCo's EGL backend has no EGL device to render on

    ## What it checks
    `MUJOCO_GL=egl` (or a log where MuJoCo's EGL backend found no device) on a node without an
    NVIDIA GPU, or where EGL could not open a device display. An EGL line another library
    states as its own (nvdiffrast's `[F glutil.cpp:338] eglInitialize() failed`) is not
    MuJoCo's: SIM109 alone.

    ## Why it matters
    The EGL backend needs a GPU exposed as an EGL device (`EGL_EXT_platform_device`): on CPU-only
    compute nodes, or without the NVIDIA EGL vendor library, import fails with `Cannot initialize
    a EGL device display ... PLATFORM_DEVICE extension`.

    ## Example
    A batch job on a compute node without GPUs, `MUJOCO_GL=egl` inherited from the login node.

    ## Fix
    Render in software there: `MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa` (needs libosmesa6);
    on an NVIDIA node, install the driver's EGL vendor library instead (SIM109).

    ## References
    - https://github.com/Farama-Foundation/Gymnasium/issues/726
    - https://github.com/ARISE-Initiative/robosuite/issues/616
    - https://mujoco.readthedocs.io/en/stable/python.html#rendering
    """
    logged = _failures(facts, "egl")
    if logged and _renderers(facts):
        return []  # the EGL line is another library's own (nvdiffrast's), not MuJoCo's
    if not logged:
        env = _env(facts)
        if env.get("MUJOCO_GL") != "egl" or not _installed(facts, ("mujoco",)):
            return []
        if facts.gpus():
            return []
    what = (
        f"the log shows EGL finding no device ({logged[0]})"
        if logged
        else ("MUJOCO_GL=egl on a node with no NVIDIA GPU")
    )
    device = _env(facts).get("MUJOCO_EGL_DEVICE_ID", "")
    if logged and device.isdigit() and int(device) > 0:
        return [_egl_device_not_visible(what, device)]
    return [
        Hit(
            f"{what}: MuJoCo's EGL backend needs a GPU EGL device; without one render in software",
            evidence={"egl": logged},
            fix=fix(
                "Render with OSMesa where no GPU EGL device exists: MUJOCO_GL=osmesa "
                "PYOPENGL_PLATFORM=osmesa",
                "safe",
                set_env(MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa"),
                manual("apt install libosmesa6 (the OSMesa library)"),
            ),
        )
    ]


def _egl_device_not_visible(what: str, device: str) -> Hit:
    """MUJOCO_EGL_DEVICE_ID indexes the EGL devices this process sees (dm_control's
    egl_renderer.py), not the host's GPUs: a container given fewer GPUs, or CUDA_VISIBLE_DEVICES,
    leaves index N without a device (dm_control#415: 1 failed, 0 worked)."""
    return Hit(
        f"{what}, and the job sets MUJOCO_EGL_DEVICE_ID={device}: an index into the EGL devices "
        "this process can see, which a container given fewer GPUs (or CUDA_VISIBLE_DEVICES) "
        "does not have",
        evidence={"egl_device_id": device},
        fix=fix(
            "Render on an EGL device this process sees: MUJOCO_EGL_DEVICE_ID=0 (the first "
            f"visible GPU), or give the container GPU {device} (docker run --gpus all, or "
            f"--gpus '\"device={device}\"')",
            "manual",
            manual("export MUJOCO_EGL_DEVICE_ID=0"),
            manual("nvidia-smi -L   # the GPUs this container sees: indices 0..N-1"),
        ),
    )


@rule("SIM121", "mujoco-no-gl-context", Severity.WARNING)
def mujoco_no_gl_context(facts: Facts) -> Iterable[Hit]:
    """MuJoCo renders through GLFW on a node without a display

    ## What it checks
    MuJoCo installed, no `DISPLAY` and `MUJOCO_GL` unset (MuJoCo then uses GLFW, which needs an X
    server); in a log, MuJoCo's `an OpenGL platform library has not been loaded`.

    ## Why it matters
    Without a display GLFW creates no OpenGL context, and the first render fails.

    ## Example
    A Colab or container notebook that renders MuJoCo without setting `MUJOCO_GL`.

    ## Fix
    Set `MUJOCO_GL=egl` before mujoco is imported (NVIDIA GPU with its EGL vendor library, see
    SIM109), or `MUJOCO_GL=osmesa` without a GPU.

    ## References
    - https://github.com/kuds/mesozoic-labs/pull/22
    - https://mujoco.readthedocs.io/en/stable/python.html#rendering
    """
    logged = _failures(facts, "gl")
    if logged and _renderers(facts):
        return []  # the GLFW line is another library's own (Open3D's), not MuJoCo's
    if not logged:
        env = _env(facts)
        if "MUJOCO_GL" in env or "DISPLAY" in env or not facts.report.env.is_ok:
            return []
        if not _installed(facts, ("mujoco",)):
            return []
    what = (
        f"the log shows no OpenGL context ({logged[0]})"
        if logged
        else ("mujoco is installed, MUJOCO_GL is unset and there is no DISPLAY")
    )
    return [
        Hit(
            f"{what}: MuJoCo's default GLFW backend needs a display; use a headless backend",
            evidence={"gl": logged},
            severity=None if logged else Severity.INFO,
            fix=fix(
                "Set MUJOCO_GL=egl before importing mujoco (MUJOCO_GL=osmesa without a GPU)",
                "safe",
                set_env(MUJOCO_GL="egl"),
            ),
        )
    ]


@rule("SIM122", "dri-render-node-denied", Severity.WARNING)
def dri_denied(facts: Facts) -> Iterable[Hit]:
    """This user cannot open the GPU's /dev/dri render nodes

    ## What it checks
    The `/dev/dri/renderD*` nodes the probe found that this user cannot open read-write, or the
    ones a log says were denied (`libEGL warning: failed to open /dev/dri/renderD128: Permission
    denied`).

    ## Why it matters
    EGL and Mesa open the render node to reach the GPU; denied, EGL rendering (`MUJOCO_GL=egl`)
    falls back or fails.

    ## Example
    A user outside the `render` group on a headless server.

    ## Fix
    Add the user to the group that owns the render nodes (usually `render`, on older systems
    `video`): `sudo usermod -aG render $USER`, then log in again; in containers pass the
    devices and the group (`--device /dev/dri --group-add render`).

    ## References
    - https://github.com/google-deepmind/dm_control/issues/214
    """
    info = _stated(facts)
    if info is None or not info.render_nodes_denied:
        return []
    renderers = ("mujoco", *VULKAN_USERS)
    if not _failures(facts, "dri") and not _installed(facts, renderers):
        return []  # a compute-only node: CUDA does not use /dev/dri
    nodes = ", ".join(info.render_nodes_denied)
    return [
        Hit(
            f"{nodes}: permission denied for this user; EGL cannot reach the GPU through /dev/dri",
            evidence={"denied": list(info.render_nodes_denied)},
            fix=fix(
                "Add the user to the group that owns /dev/dri/renderD* (usually render)",
                "manual",
                manual("sudo usermod -aG render $USER  (check the group: ls -l /dev/dri)"),
            ),
        )
    ]


@rule("SIM123", "mujoco-pyopengl-mismatch", Severity.WARNING)
def backend_mismatch(facts: Facts) -> Iterable[Hit]:
    """MUJOCO_GL and PYOPENGL_PLATFORM name different backends

    ## What it checks
    `MUJOCO_GL` against `PYOPENGL_PLATFORM` (egl, osmesa and glx on both sides), from the
    environment or from a log (`'GLXPlatform' object has no attribute 'EGL'`: PyOpenGL loaded
    its GLX platform while MuJoCo / dm_control asked for EGL).

    ## Why it matters
    dm_control and MuJoCo render through PyOpenGL: when the two name different platforms the
    EGL (or OSMesa) functions are missing from the platform PyOpenGL loaded.

    ## Example
    `MUJOCO_GL=egl` with `PYOPENGL_PLATFORM=glx`.

    ## Fix
    Set both to the same backend (`MUJOCO_GL=egl PYOPENGL_PLATFORM=egl`, or both `osmesa`),
    before anything imports OpenGL; or leave PYOPENGL_PLATFORM unset so MuJoCo sets it.

    ## References
    - https://github.com/google-deepmind/dm_control/issues/129
    """
    env = _env(facts)
    gl, platform = env.get("MUJOCO_GL", "").lower(), env.get("PYOPENGL_PLATFORM", "").lower()
    backends = {"egl", "osmesa", "glx"}
    if gl not in backends or platform not in backends or gl == platform:
        return []
    return [
        Hit(
            f"MUJOCO_GL={gl} but PYOPENGL_PLATFORM={platform}: PyOpenGL loads another platform "
            "than MuJoCo renders with",
            evidence={"MUJOCO_GL": gl, "PYOPENGL_PLATFORM": platform},
            fix=fix(
                f"Set PYOPENGL_PLATFORM={gl} to match MUJOCO_GL (or both to osmesa for software "
                "rendering)",
                "safe",
                set_env(PYOPENGL_PLATFORM=gl),
            ),
        )
    ]
