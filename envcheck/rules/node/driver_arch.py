"""DRV110: the NVIDIA driver against the GPUs' architecture (not against torch's CUDA); from a
log, the kernel module's own lines that it ignores a GPU (a legacy branch it names, or a GPU
its release does not know)."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.choose import arch_driver_problem, driver_text, sm
from envcheck.rules.fixes import fix, manual


@rule("DRV110", "driver-does-not-know-gpu-architecture", Severity.ERROR)
def driver_for_architecture(facts: Facts) -> Iterable[Hit]:
    """The driver is too old for the GPU's architecture, or has dropped it

    ## What it checks
    Each GPU's architecture against the driver branch: at least the branch of the first CUDA
    toolkit that supports the architecture (Blackwell sm_100/sm_120: CUDA 12.8, R570; Hopper
    sm_90 and Ada sm_89: CUDA 11.8, R520; Ampere: CUDA 11.0/11.1, R450/R455), and at most the
    architecture's last branch (Volta, Pascal, Maxwell: R580; Kepler: R470). Both come from
    the matrix (`[[sm]]` in matrices/cuda/drivers.toml, from NVIDIA's toolkit/driver/architecture matrix).
    From a log: the NVIDIA kernel module's own lines that it ignores a GPU, `supported through
    the NVIDIA 470.xx Legacy drivers ... The 535.129.03 NVIDIA driver will ignore this GPU`
    (the legacy branch named) or `installed in this system is not supported by the NVIDIA
    550.120 driver release` (a GPU the release does not know); Debian's nvidia-detect, `Your
    card is not supported by any driver version up to 580.119.02` with the card it checked.

    ## Why it matters
    A driver that predates the GPU does not drive it: `nvidia-smi` shows no device or
    `No devices were found`, CUDA reports `no CUDA-capable device is detected` or
    `cudaErrorNoDevice`, and torch says `torch.cuda.is_available()` is False. This holds for
    every torch build, so a newer torch does not help. CUDA forward compatibility (the
    cuda-compat package on datacenter GPUs) lets an old driver run a newer CUDA; it does not
    teach an old driver a new GPU.

    ## Example
    An NVIDIA GeForce RTX 5090 (sm_120) on driver 550.144.03, or an H100 (sm_90) on driver
    470.256.02.

    ## Fix
    Install a driver of the named branch or newer (keep the GPUs; for Blackwell R570+, for
    Hopper R520+, usually the newest production branch), then re-check which torch builds that
    driver runs.
    A GPU the kernel module sends to a legacy branch: that branch's packages (Ubuntu's
    nvidia-driver-470, RPM Fusion's akmod-nvidia-470xx), and torch builds for its newest CUDA.
    A GPU newer than the driver a log states: the next branch of the driver table above it
    (and at or above the GPU's first CUDA's driver), `nvidia-driver-<branch>-open` from
    Blackwell on (those GPUs run on the open kernel modules only).

    ## References
    - https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html
    - https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
    - https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    """
    driver = facts.driver()
    gpus = facts.gpus()
    seen: set[str] = set()
    hits = []
    for gpu in gpus:
        cc = facts.compute_capability(gpu)
        name = gpu.name or f"GPU {gpu.index}"
        problem = arch_driver_problem(facts.matrix, name, cc, driver)
        if problem is None or name in seen:
            continue
        seen.add(name)
        support = facts.matrix.sm(sm(cc))
        dropped = support is not None and support.last_driver_branch is not None
        step = (
            f"Install an R{support.last_driver_branch} driver (the last branch for {sm(cc)})"
            if dropped and support is not None
            else f"Upgrade the NVIDIA driver: {problem.split(' needs ', 1)[-1]}"
        )
        steps: tuple[str, ...] = (step,)
        package = None if dropped else _package_for(facts, cc, driver_text(driver))
        if package is not None:
            step = f"{step}: {package} or newer"
            steps = (f"{step}  (Ubuntu/Debian: sudo apt install {package}, then sudo reboot)",)
        hits.append(
            Hit(
                f"driver {driver_text(driver)}: {problem}; the GPU is not usable by any CUDA "
                "build on this driver",
                evidence={
                    "gpu": gpu.name,
                    "compute_capability": str(cc),
                    "driver": driver_text(driver),
                    "first_cuda": str(support.first_cuda) if support else None,
                    "last_driver_branch": support.last_driver_branch if support else None,
                },
                fix=fix(
                    f"{step}; keep the GPUs and the torch build choice for after the upgrade",
                    "manual",
                    *(manual(s) for s in steps),
                ),
            )
        )
    return hits


def _legacy_steps(branch: str) -> tuple[str, ...]:
    """How each packaging installs a legacy branch (Ubuntu's nvidia-driver-N, RPM Fusion's
    N-xx packages as https://github.com/negativo17/nvidia-driver/issues/60 installs them)."""
    return (
        f"Ubuntu/Debian: sudo apt install nvidia-driver-{branch}  (remove the newer "
        "nvidia-driver-* first: sudo apt purge 'nvidia-driver-*')",
        f"Fedora/RHEL (RPM Fusion): sudo dnf install akmod-nvidia-{branch}xx "
        f"xorg-x11-drv-nvidia-{branch}xx-cuda",
        f"NVIDIA's installer: the newest NVIDIA-Linux-x86_64-{branch}.*.run from the legacy "
        "driver archive",
        "sudo reboot",
    )


@from_log("DRV110")
def driver_ignores_gpu_in_log(facts: Facts, line: LogLine) -> Hit:
    branch = line.stated.get("legacy_branch")
    driver = line.stated.get("driver_version")
    gpu = line.stated.get("gpu_name")
    release = f"the {driver} driver" if driver else "this driver release"
    what = f"the NVIDIA {gpu}" if gpu else "a GPU"
    if branch:
        newest = facts.matrix.max_cuda_for_driver(Version(branch))
        ceiling = (
            f"; the {branch} branch runs CUDA up to {newest.max_cuda}: pick the torch/CUDA "
            "builds for that"
            if newest is not None
            else ""
        )
        steps = _legacy_steps(branch)
        return Hit(
            f"{release} ignores {what} (line {line.line}): its architecture is only driven by "
            f"the {branch}.xx legacy branch{ceiling}",
            evidence={"line": line.line, "gpu": gpu, "driver": driver, "branch": branch},
            fix=fix(
                f"Install the NVIDIA {branch}.xx legacy driver (Ubuntu: nvidia-driver-{branch}) "
                f"in place of {release}, then reboot",
                "manual",
                *(manual(s) for s in steps),
            ),
        )
    newer = _newer_branch(facts, gpu, driver)
    if newer is not None:
        return _newer_branch_hit(line, release, what, newer)
    steps = (
        "lspci -nn -d 10de:  (the GPU and its PCI ID)",
        "ubuntu-drivers devices  (the driver branches that support it; 'recommended')",
        "a GPU newer than the release: install a newer branch (sudo apt install "
        "nvidia-driver-<newer branch>); an old GPU: its legacy branch (NVIDIA's legacy GPU "
        "list)",
        "sudo reboot",
    )
    return Hit(
        f"{release} does not support a GPU of this node (line {line.line}): the GPU is newer "
        "than the release or the release dropped it",
        evidence={"line": line.line, "driver": driver},
        fix=fix(
            "Install a driver branch that supports the GPU (ubuntu-drivers devices lists them: a "
            "newer branch for a new GPU, the legacy branch for an old one), then reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )


# Blackwell and later GPUs are driven by the open kernel modules only (NVIDIA's driver README,
# "Open Linux Kernel Modules": https://download.nvidia.com/XFree86/Linux-x86_64/570.144/README/
# kernel_open.html); compute capability 10.0 is the first Blackwell's
_OPEN_ONLY_FROM_CC = Version("10.0")


def _package_for(facts: Facts, cc: Version, driver: str) -> str | None:
    """Ubuntu's driver package for a GPU of compute capability ``cc`` that ``driver`` is too
    old for: the first branch the matrix lists at or above the minimum driver of the first
    CUDA for its architecture (and above ``driver``'s), -open from Blackwell on."""
    try:
        floor = Version(driver).major + 1
    except ValueError:
        floor = 0
    support = facts.matrix.sm(sm(cc))
    toolkit = facts.matrix.toolkit(support.first_cuda) if support is not None else None
    if toolkit is not None and toolkit.min_driver is not None:
        floor = max(floor, toolkit.min_driver.major)
    branch = _branch_at_least(facts, floor)
    if branch is None:
        return None
    return f"nvidia-driver-{branch}{'-open' if cc >= _OPEN_ONLY_FROM_CC else ''}"


def _branch_at_least(facts: Facts, floor: int) -> int | None:
    """The first branch of the matrix's driver table at or above ``floor``."""
    branches = sorted(b.branch for b in facts.matrix.driver_branches)
    return next((b for b in branches if b >= floor), None)


def _newer_branch(facts: Facts, gpu: str | None, driver: str | None) -> tuple[str, bool] | None:
    """The driver branch to install for a GPU newer than the stated driver: the first branch
    of the matrix's driver table above the driver's (and at or above the minimum driver of the
    first CUDA for the GPU's architecture), and whether the GPU needs the open modules. None
    when the log names no GPU the matrix knows or no driver, or the GPU is not newer."""
    if not gpu or not driver:
        return None
    model = facts.matrix.gpu_model(gpu)
    try:
        stated = Version(driver)
    except ValueError:
        return None
    if model is None:
        return None
    support = facts.matrix.sm(sm(model.compute_capability))
    if support is not None and support.last_driver_branch is not None:
        return None  # a dropped architecture: its legacy branch, not a newer one
    floor = stated.major + 1
    toolkit = facts.matrix.toolkit(support.first_cuda) if support is not None else None
    if toolkit is not None and toolkit.min_driver is not None:
        floor = max(floor, toolkit.min_driver.major)
    branch = _branch_at_least(facts, floor)
    if branch is None:
        return None
    return str(branch), model.compute_capability >= _OPEN_ONLY_FROM_CC


def _newer_branch_hit(line: LogLine, release: str, what: str, newer: tuple[str, bool]) -> Hit:
    branch, open_only = newer
    package = f"nvidia-driver-{branch}{'-open' if open_only else ''}"
    modules = " (its GPUs are driven by the open kernel modules only)" if open_only else ""
    steps = (
        f"Ubuntu/Debian: sudo apt install {package}  (or a newer branch; remove the older "
        "nvidia-driver-* first: sudo apt purge 'nvidia-driver-*')",
        f"Fedora/RHEL (RPM Fusion): sudo dnf install akmod-nvidia{'-open' if open_only else ''}"
        f"  (its current branch, {branch} or newer)",
        f"NVIDIA's installer: NVIDIA-Linux-x86_64-{branch}.*.run"
        f"{' with -m=kernel-open' if open_only else ''}",
        "sudo reboot",
    )
    return Hit(
        f"{release} does not support {what} (line {line.line}): the GPU is newer than the "
        f"release; a newer branch supports it ({branch} is the next the driver table "
        f"lists){modules}",
        evidence={"line": line.line, "branch": branch, "open_modules": open_only},
        fix=fix(
            f"Install the NVIDIA {branch} driver or newer ({package}) in place of {release}, "
            "then reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )
