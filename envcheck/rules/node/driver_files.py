"""DRV170-171: the driver as its files show it (kernel module against the user-space
libraries), and the hardware the user says the node must have (``--expect``)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts, name_matches
from envcheck.facts.skip import Skip
from envcheck.model.expect import Expectation
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.binaries import binaries


def _numbers(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def at_least(have: str, floor: str) -> bool:
    """Driver versions compared number by number ("550.54.15" >= "550")."""
    need = _numbers(floor)
    return _numbers(have)[: len(need)] >= need


def expectation(facts: Facts) -> Expectation | None:
    section = facts.report.expect
    return section.data if section.is_ok else None


@rule("DRV170", "driver-module-userspace-mismatch", Severity.ERROR)
def module_mismatch(facts: Facts) -> Iterable[Hit]:
    """The loaded NVIDIA kernel module and the user-space driver libraries differ

    ## What it checks
    The kernel module's version (`/proc/driver/nvidia/version`) against the version in the
    file name of the `libcuda.so.1` and `libnvidia-ml.so.1` the loader finds
    (`libcuda.so.550.54.15`).

    ## Why it matters
    After a driver update without a reboot (or a container image that ships its own driver
    libraries) every CUDA call fails: `nvidia-smi` says `Failed to initialize NVML: Driver/library
    version mismatch`, torch says `CUDA driver initialization failed`.

    ## Example
    Kernel module 535.129.03; `libcuda.so.550.54.15`.

    ## Fix
    Reboot the node (or reload the module: stop every GPU process, `rmmod nvidia_uvm nvidia_drm
    nvidia_modeset nvidia; modprobe nvidia`), or remove the driver libraries the image carries.

    ## References
    - https://docs.nvidia.com/deploy/driver-persistence/index.html
    """
    driver = binaries(facts).driver
    if driver is None or driver.kernel_module is None:
        raise Skip("kernel module version unknown (/proc/driver/nvidia/version)", "binaries.driver")
    libs = {"libcuda": driver.libcuda, "NVML": driver.nvml_library}
    wrong = {k: v for k, v in libs.items() if v and v != driver.kernel_module}
    if not wrong:
        return []
    return [
        Hit(
            f"kernel module {driver.kernel_module} is loaded but the user-space driver is "
            + ", ".join(f"{k} {v}" for k, v in wrong.items())
            + ": 'Driver/library version mismatch' (a driver update without a reboot?)",
            evidence={
                "kernel_module": driver.kernel_module,
                **wrong,
                "libcuda_path": driver.libcuda_path,
            },
            fix=fix(
                "Reboot so the new kernel module loads",
                "manual",
                manual("reboot the node (or reload the nvidia modules with no GPU process)"),
            ),
        )
    ]


@rule("DRV171", "node-short-of-expectation", Severity.ERROR)
def expectation_unmet(facts: Facts) -> Iterable[Hit]:
    """The node lacks the GPUs or driver the user says it must have (--expect)

    ## What it checks
    `--expect` (or `expect` in envcheck.toml / `[tool.envcheck]`): `8x H100` (at least 8
    visible GPUs whose names hold H100), `gpus=8`, `driver>=550`, against the GPUs and driver
    the probe sees; `no-gpu` states a GPU-less node (an image build, a CPU worker), which
    fails when GPUs are visible.

    ## Why it matters
    A job that starts on a node with fewer or other GPUs than planned fails later (NCCL world
    size, out of memory) or runs at a fraction of the speed; a Slurm prolog or init container
    catches it before any work is scheduled.

    ## Example
    `--expect "8x H100, driver>=550"` on a node that shows 7 GPUs (one fell off the bus).

    ## Fix
    Drain the node and repair it, or correct the expectation.

    ## References
    - https://slurm.schedmd.com/prolog_epilog.html
    """
    want = expectation(facts)
    if want is None:
        raise Skip("no --expect given", "expect")
    info = facts.report.gpu.data if facts.report.gpu.is_ok else None
    gpus = (info.gpus or ()) if info is not None else ()
    problems = []
    if want.no_gpu:
        if gpus:
            problems.append(f"{len(gpus)} GPU(s) visible on a node expected to have none")
    else:
        matching = [g for g in gpus if not want.gpu_model or name_matches(want.gpu_model, g.name)]
        need = want.gpu_count or (1 if want.gpu_model else 0)
        if len(matching) < need:
            seen = ", ".join(sorted({g.name or "?" for g in gpus})) or "no GPU"
            what = f"{need}x {want.gpu_model}" if want.gpu_model else f"{need} GPU(s)"
            problems.append(f"expected {what}, found {len(matching)} ({seen})")
        if want.min_driver:
            have = info.driver_version if info is not None else None
            if have is None:
                problems.append(f"expected driver >= {want.min_driver}, no driver visible")
            elif not at_least(have, want.min_driver):
                problems.append(f"expected driver >= {want.min_driver}, found {have}")
    return [
        Hit(
            f"node short of --expect {want.text!r}: {p}",
            evidence={"expect": want.text},
            fix=fix("Repair or drain the node", "manual", manual("drain the node and repair it")),
        )
        for p in problems
    ]
