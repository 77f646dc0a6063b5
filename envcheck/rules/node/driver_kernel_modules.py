"""The NVIDIA kernel module's flavour against the GPU: the open module (nvidia-open, the
.run installer's default from 560 on) drives only GPUs with a GSP, Turing and newer (DRV227).
Stated by the module's own dmesg lines; the fix is the proprietary module of the same
release, in the package manager's, the .run installer's and akmods' words."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual


@rule("DRV227", "open-kernel-module-without-gsp", Severity.ERROR)
def open_module_without_gsp(facts: Facts) -> Iterable[Hit]:
    """The open NVIDIA kernel module is loaded on a GPU without GSP (before Turing)

    ## What it checks
    Only a log states it: the module's own dmesg lines `NVRM: installed in this system is
    not supported by open` / `NVRM: nvidia.ko because it does not include the required GPU`
    / `NVRM: System Processor (GSP).` (on a vGPU host: `... is not supported by` / `open
    nvidia.ko.`), printed for a GPU that is not firmware-capable.

    ## Why it matters
    The open kernel modules run the GPU through its GSP firmware and have no code path
    without it, so Maxwell, Pascal and Volta GPUs (GeForce 900/10 series, Tesla P100/V100,
    Quadro P) are skipped: `nvidia-smi` says `No devices were found` and CUDA sees no GPU.
    From 560 on the .run installer and several distributions (negativo17's, Fedora's
    akmods, Arch's nvidia-open) install the open flavour by default, so an upgrade alone
    can leave such a GPU without a driver.

    ## Example
    `NVRM: installed in this system is not supported by open` after installing
    `nvidia-driver-560-open` on a GeForce GTX 1080.

    ## Fix
    Install the proprietary kernel module of the same release: Ubuntu's nvidia-driver-<branch>
    package in place of nvidia-driver-<branch>-open, the .run installer with its -m=kernel
    option, negativo17's packages with kernel-open changed to kernel in
    /etc/nvidia/kernel.conf and the modules rebuilt (akmods --rebuild); reboot. Where the
    branch has dropped the GPU, its last branch (R580 for Maxwell, Pascal, Volta).

    ## References
    - NVIDIA/open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/osapi.c
    - https://github.com/NVIDIA/open-gpu-kernel-modules/issues/820
    - https://github.com/negativo17/nvidia-driver/issues/158
    """
    raise Skip("only the kernel module's own lines state that it skipped a GPU", "log")


@from_log("DRV227")
def open_module_without_gsp_in_log(facts: Facts, line: LogLine) -> Hit:
    steps = (
        "lspci -nnk -d 10de:  (the GPU's PCI ID; Maxwell, Pascal and Volta have no GSP)",
        "Ubuntu/Debian: sudo apt install nvidia-driver-<branch>  (the proprietary module; "
        "remove nvidia-driver-<branch>-open)",
        "NVIDIA's .run installer: sudo sh NVIDIA-Linux-x86_64-<version>.run -m=kernel",
        "negativo17 / akmods: sudo sed -i -e 's/kernel-open$/kernel/g' "
        "/etc/nvidia/kernel.conf && sudo akmods --rebuild",
        "sudo reboot",
    )
    return Hit(
        f"the open NVIDIA kernel module skipped a GPU without GSP (line {line.line}): the open "
        "module drives only Turing and newer GPUs, this one needs the proprietary module",
        evidence={"line": line.line},
        fix=fix(
            "Install the proprietary NVIDIA kernel module of the same release instead of the "
            "open one (nvidia-driver-<branch> without -open, the .run installer's -m=kernel, "
            "kernel-open -> kernel in /etc/nvidia/kernel.conf), then reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )
