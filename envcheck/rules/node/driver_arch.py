"""DRV110: the NVIDIA driver against the GPUs' architecture (not against torch's CUDA)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, rule
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
                    manual(step),
                ),
            )
        )
    return hits
