"""SIM: Isaac Sim and OmniGibson against Python, glibc, NumPy, GPUs and rendering userspace."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import IsaacSimRelease
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual, pip_install, set_env

# Isaac Sim's pip components carry the release's version (isaacsim-kernel 5.0.0.0 belongs to
# isaacsim 5.0.0.0); a node or log that names only a component still names the release
COMPONENTS = ("isaacsim-kernel", "isaacsim-rl", "isaacsim-app", "isaacsim-core")


def isaacsim_version(facts: Facts) -> Version | None:
    """The Isaac Sim release installed: isaacsim itself, else one of its components."""
    try:
        version = facts.version("isaacsim")
    except Skip:
        version = None
        unknown = True
    else:
        unknown = False
    if version is not None:
        return version
    for name in COMPONENTS:
        try:
            found = facts.version(name)
        except Skip:
            continue
        if found is not None:
            return found
    if unknown:
        facts.version("isaacsim")  # re-raise: the package list cannot say
    return None


def runs(facts: Facts, *names: str) -> bool:
    """Whether the job runs one of ``names`` by what the spec or a pasted issue template says
    (``workload.runs``), installed or not; False when the job's settings are unknown."""
    if not facts.report.workload.is_ok:
        return False
    return any(n in facts.workload().runs for n in names)


def system_glibc(facts: Facts) -> tuple[Version, str]:
    """The node's glibc and where it comes from: stated, else the one its OS release ships
    (the matrix's ``[[os_release]]``: Ubuntu 18.04 ships 2.27)."""
    system = facts.system()
    if system.glibc is not None:
        return Version(system.glibc), "this system has"
    known = facts.matrix.os_glibc(system.os_id, system.os_version)
    if known is None:
        raise Skip("glibc version unknown")
    name = f"{system.os_id.capitalize() if system.os_id else ''} {system.os_version}".strip()
    return known.glibc, f"{name} ships"


def _isaacsim(facts: Facts) -> tuple[Version, IsaacSimRelease] | None:
    version = isaacsim_version(facts)
    if version is None:
        return None
    release = facts.matrix.isaacsim_release(version)
    if release is None:
        raise Skip(f"isaacsim {version} is not in the matrix")
    return version, release


@rule("SIM101", "isaacsim-python", Severity.ERROR)
def isaacsim_python(facts: Facts) -> Iterable[Hit]:
    """Isaac Sim is installed for another Python

    ## What it checks
    The Python minor version against the one CPython the Isaac Sim release is built for
    (4.x: 3.10, 5.x: 3.11, 6.x: 3.12).

    ## Why it matters
    Isaac Sim's pip packages exist for exactly one Python: `No matching distribution found for
    isaacsim==X`, or BEHAVIOR's setup stops with `ERROR: Python 3.11 required, found 3.10`.

    ## Example
    isaacsim 5.1.0 declared for Python 3.10.

    ## Fix
    Create the environment with the Python the release needs.

    ## References
    - PyPI simple index of isaacsim (requires-python of each release)
    - StanfordVL/BEHAVIOR-1K setup.sh
    """
    found = _isaacsim(facts)
    if found is None:
        return []
    version, release = found
    if release.python is None:
        raise Skip(f"Python of Isaac Sim {release.version} unknown")
    py = facts.python_version()
    if f"{py.major}.{py.minor}" == release.python:
        return []
    return [
        Hit(
            f"isaacsim {version} is built for Python {release.python}; this is Python {py}",
            evidence={"isaacsim": str(version), "python": str(py), "needs": release.python},
            fix=fix(
                f"Use Python {release.python}",
                "manual",
                manual(f"conda create -n isaac python={release.python}"),
            ),
        )
    ]


@rule("SIM102", "isaacsim-glibc", Severity.ERROR)
def isaacsim_glibc(facts: Facts) -> Iterable[Hit]:
    """The system glibc is older than Isaac Sim's pip wheels need

    ## What it checks
    glibc against the manylinux tag of the Isaac Sim release's wheels (4.x: glibc 2.34,
    5.x/6.x: 2.35). A node that states only its OS release gets the glibc that release ships
    (Ubuntu 18.04: 2.27, 20.04: 2.31). A job declared to run Isaac Sim (`[workload] runs`, or
    an issue template's "Isaac Sim Version: Unable to install") whose release is not stated is
    held to the lowest floor of all releases (2.34), as a warning.

    ## Why it matters
    pip finds no wheel for the platform; on Ubuntu 20.04 (glibc 2.31) the placeholder package
    fails with `The installation of isaacsim for version X failed`, and renamed wheels crash
    with `GLIBC_2.34 not found`.

    ## Example
    isaacsim 5.1.0 on Ubuntu 20.04 (glibc 2.31).

    ## Fix
    Use an OS whose glibc is new enough (Ubuntu 22.04 or newer), or Isaac Sim's container or
    standalone build.

    ## References
    - https://isaac-sim.github.io/IsaacLab/v2.3.2/source/setup/installation/pip_installation.html
    - https://github.com/isaac-sim/IsaacSim/issues/211
    - https://github.com/isaac-sim/IsaacLab/issues/711
    - https://github.com/isaac-sim/IsaacLab/issues/3081
    """
    declared = runs(facts, "isaacsim")
    try:
        found = _isaacsim(facts)
    except Skip:
        if not declared:
            raise
        found = None
    if found is None and not declared:
        return []
    if found is not None:
        version, release = found
        if release.glibc is None:
            raise Skip(f"glibc needed by Isaac Sim {release.version} unknown")
        needs, what, severity = release.glibc, f"isaacsim {version} wheels need", None
    else:
        # the job runs Isaac Sim, release not stated: every release's wheels need this much
        floors = [r.glibc for r in facts.matrix.isaacsim_releases if r.glibc is not None]
        if not floors:
            raise Skip("glibc needed by Isaac Sim's releases unknown")
        needs, version = min(floors), None
        what = "the job runs Isaac Sim (release not stated); every Isaac Sim pip release needs"
        severity = Severity.WARNING
    glibc, has = system_glibc(facts)
    if glibc >= needs:
        return []
    return [
        Hit(
            f"{what} glibc >= {needs}; {has} {glibc}",
            evidence={
                "isaacsim": str(version) if version else None,
                "glibc": str(glibc),
                "needs": str(needs),
            },
            severity=severity,
            fix=fix(
                f"Use an OS with glibc >= {needs} (Ubuntu 22.04 or newer), or run Isaac "
                "Sim's container (docker) or standalone build",
                "manual",
                manual(
                    f"move to Ubuntu 22.04 or newer (glibc >= {needs}), or use the "
                    "nvcr.io/nvidia/isaac-sim container"
                ),
            ),
        )
    ]


@rule("SIM106", "no-rt-core-gpu", Severity.WARNING)
def no_rt_cores(facts: Facts) -> Iterable[Hit]:
    """Isaac Sim renders on a GPU without RT cores

    ## What it checks
    With Isaac Sim or OmniGibson installed, or declared as what the job runs (`[workload]
    runs`): whether any GPU has RT cores (the matrix marks
    A100/A800/A30, H100/H200/H800 and B200 without), and whether GPU 0, where OmniGibson renders
    by default, has them.

    ## Why it matters
    Isaac Sim's RTX renderer needs RT cores: on datacenter compute GPUs cameras render with
    artifacts or fail (`DLSS-RR is not supported ... NVIDIA A100`, `HydraEngine rtx failed
    creating scene renderer`, Kit's `Raytracing is not supported on GPU: 0`).

    ## Example
    omnigibson on 8x H100.

    ## Fix
    Run simulator workers on RTX GPUs (L40S, A40, RTX 30/40/50, RTX PRO); keep A100/H100 for
    training. With mixed GPUs, point OmniGibson at an RTX one with `OMNIGIBSON_GPU_ID`.

    ## References
    - https://github.com/isaac-sim/IsaacLab/issues/1519
    - RLinf/RLinf docs/source-en/rst_source/examples/embodied/behavior.rst
    - StanfordVL/BEHAVIOR-1K docs/getting_started/installation.md
    - https://github.com/wayrise/DexGarmentLab/issues/4
    - https://github.com/isaac-sim/IsaacAutomator/issues/25
    """
    if not runs(facts, "isaacsim", "omnigibson") and not any(
        facts.version(n) is not None for n in ("isaacsim", "omnigibson")
    ):
        return []
    gpus = facts.gpus()
    if not gpus:
        return []
    models = [facts.gpu_model(g) for g in gpus]
    rt = [m.rt_cores if m else None for m in models]
    if all(r is None for r in rt):
        raise Skip("whether these GPUs have RT cores is unknown")
    if not any(rt):
        if any(r is None for r in rt):
            raise Skip("some GPUs' RT cores are unknown")
        return [
            Hit(
                f"no GPU here has RT cores ({facts.gpu_summary()}): Isaac Sim's RTX renderer shows artifacts or fails",
                evidence={"gpus": [g.name for g in gpus]},
                fix=fix(
                    "Run simulators on RTX GPUs",
                    "manual",
                    manual(
                        "place simulator workers on nodes with RTX GPUs (L40S, A40, RTX 30/40/50)"
                    ),
                ),
            )
        ]
    first = gpus[0]
    env = facts.env() if facts.report.env.is_ok else {}
    if rt[0] is False and "OMNIGIBSON_GPU_ID" not in env:
        rtx = next(g for g, r in zip(gpus, rt, strict=True) if r)
        return [
            Hit(
                f"GPU 0 ({first.name}) has no RT cores and OMNIGIBSON_GPU_ID is not set; OmniGibson "
                f"renders on GPU 0 by default ('HydraEngine rtx failed creating scene renderer'). "
                f"GPU {rtx.index} ({rtx.name}) has RT cores",
                evidence={"gpu0": first.name, "rtx_gpu": rtx.index},
                fix=fix(
                    f"Render on GPU {rtx.index}", "safe", set_env(OMNIGIBSON_GPU_ID=str(rtx.index))
                ),
            )
        ]
    return []


@rule("SIM107", "omnigibson-isaacsim-pairing", Severity.ERROR)
def omnigibson_isaacsim(facts: Facts) -> Iterable[Hit]:
    """OmniGibson is paired with the wrong Isaac Sim or Python

    ## What it checks
    The OmniGibson release against the Isaac Sim release its kit files support (3.7.x: 4.5.0,
    3.8.x: 5.1.0, 1.1.x: 4.0.0/4.1.0) and the Python it needs.

    ## Why it matters
    OmniGibson asserts at launch that the installed Isaac Sim version is one of its kit files
    (`m.KIT_FILES`); any other release fails before a scene loads.

    ## Example
    omnigibson 3.8.0 with isaacsim 4.5.0.0.

    ## Fix
    Install the Isaac Sim release paired with the OmniGibson release (BEHAVIOR-1K's setup.sh
    does it), in the Python that release needs.

    ## References
    - StanfordVL/BEHAVIOR-1K OmniGibson/omnigibson/simulator.py (m.KIT_FILES)
    - StanfordVL/BEHAVIOR-1K setup.sh
    """
    version = facts.version("omnigibson")
    if version is None:
        if runs(facts, "omnigibson"):
            raise Skip("the job runs OmniGibson, but its release is not stated")
        return []
    release = facts.matrix.omnigibson_release(version)
    if release is None:
        raise Skip(f"omnigibson {version} is not in the matrix")
    problems = []
    isaac = facts.version("isaacsim")
    if release.isaacsim is not None:
        if isaac is None:
            raise Skip("no isaacsim distribution (a standalone Isaac Sim cannot be versioned)")
        if not release.isaacsim.contains(isaac, prereleases=True):
            problems.append(f"it needs isaacsim {release.isaacsim}, isaacsim {isaac} is installed")
    if release.python is not None:
        py = facts.python_version()
        if f"{py.major}.{py.minor}" != release.python:
            problems.append(f"it needs Python {release.python}, this is {py}")
    if not problems:
        return []
    return [
        Hit(
            f"omnigibson {version}: {'; '.join(problems)}: launch fails on OmniGibson's Isaac Sim version assertion",
            evidence={
                "omnigibson": str(version),
                "isaacsim": str(isaac) if isaac else None,
                "needs": str(release.isaacsim),
            },
            fix=fix(
                "Install the paired Isaac Sim",
                "manual",
                manual(f"install isaacsim {release.isaacsim} in Python {release.python}"),
            ),
        )
    ]


@rule("SIM108", "numpy2-isaacsim", Severity.ERROR)
def numpy2_isaacsim(facts: Facts) -> Iterable[Hit]:
    """NumPy 2 in an Isaac Sim 4.x/5.x environment

    ## What it checks
    The installed NumPy against the NumPy the Isaac Sim release ships (4.x and 5.x bundle NumPy
    1.26; `isaacsim-kernel 5.0.0.0` requires `numpy==1.26.0`; 6.x ships NumPy 2).

    ## Why it matters
    Kit's bundled extensions were built against NumPy 1: imports crash inside
    `pip_prebundle/numpy`, and Isaac Lab, OmniGibson and dex-retargeting pin `numpy<2`.

    ## Example
    isaacsim 5.1.0.0 with numpy 2.2.6.

    ## Fix
    `pip install 'numpy<2'` (1.26.x) and pin it for later installs: Isaac Sim 5.1 ships NumPy
    1.26.4, and going back to numpy==1.26.4 fixed Isaac Lab on 4.5 after Pinocchio pulled in
    another NumPy (IsaacLab#2235); 5.0's isaacsim-kernel pins numpy==1.26.0 exactly.

    ## References
    - https://github.com/isaac-sim/IsaacLab/issues/2235
    - https://github.com/isaac-sim/IsaacLab/pull/4216
    - https://github.com/isaac-sim/IsaacLab/pull/4081
    - https://github.com/unitreerobotics/unitree_sim_isaaclab/issues/82
    """
    found = _isaacsim(facts)
    if found is None:
        return []
    version, release = found
    numpy = facts.version("numpy")
    if numpy is None or release.numpy is None or release.numpy.contains(numpy, prereleases=True):
        return []
    return [
        Hit(
            f"numpy {numpy} with isaacsim {version}, which ships and needs numpy{release.numpy}",
            evidence={"isaacsim": str(version), "numpy": str(numpy), "needs": str(release.numpy)},
            fix=fix("Install NumPy 1.26", "safe", pip_install(f"numpy{release.numpy}")),
        )
    ]
