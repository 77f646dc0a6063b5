"""The NVIDIA driver's installer (the .run file's nvidia-installer, also under DKMS) refusing to
install, in its own words, for the two causes the CUDA installation guide's pre-installation
steps name: nouveau holds the GPU (DRV222) and no kernel headers for the running kernel
(DRV223). The fix is the guide's step, then the installer again."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_BLACKLIST = (
    "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
    "/etc/modprobe.d/blacklist-nouveau.conf"
)
_INITRAMFS = "sudo update-initramfs -u  (RHEL/Fedora: sudo dracut --force)"
_HEADERS = "sudo apt install linux-headers-$(uname -r)  (RHEL/Fedora: sudo dnf install kernel-devel-$(uname -r) kernel-headers-$(uname -r))"


@rule("DRV222", "nouveau-blocks-nvidia-installer", Severity.ERROR)
def nouveau_blocks_installer(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA driver installer stopped because the nouveau driver holds the GPU

    ## What it checks
    Only a log states it: nvidia-installer's `ERROR: The Nouveau kernel driver is currently in
    use by your system.  This driver is incompatible with the NVIDIA driver, and must be
    disabled before proceeding.`

    ## Why it matters
    The open-source nouveau module binds the GPU at boot; the NVIDIA module cannot take it, so
    the installer stops and no driver is installed (nvidia-smi then fails, CUDA sees no GPU).

    ## Example
    `ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is
    incompatible with the NVIDIA driver, and must be disabled before proceeding.`

    ## Fix
    Disable nouveau as NVIDIA's installation guide says: `/etc/modprobe.d/blacklist-nouveau.conf`
    with `blacklist nouveau` and `options nouveau modeset=0`, `sudo update-initramfs -u`,
    reboot, run the installer again (or install the distribution's driver package, which
    blacklists nouveau itself: `sudo ubuntu-drivers autoinstall`).

    ## References
    - https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (Disabling Nouveau)
    - https://github.com/Oneflow-Inc/oneflow/issues/3106
    """
    raise Skip("only the installer's output states that nouveau blocked it", "log")


@from_log("DRV222")
def nouveau_blocks_installer_in_log(facts: Facts, line: LogLine) -> Hit:
    steps = (
        _BLACKLIST,
        _INITRAMFS,
        "sudo reboot, then run the NVIDIA installer again (sudo sh NVIDIA-Linux-x86_64-<version>.run)",
        "or install the distribution's driver package, which blacklists nouveau itself: sudo "
        "ubuntu-drivers autoinstall && sudo reboot",
    )
    return Hit(
        f"the NVIDIA installer found nouveau bound to the GPU and stopped (line {line.line})",
        evidence={"line": line.line},
        fix=fix(
            "Blacklist nouveau (blacklist nouveau, options nouveau modeset=0 in "
            "/etc/modprobe.d/blacklist-nouveau.conf), sudo update-initramfs -u, reboot, then "
            "install the driver again",
            "manual",
            *(manual(s) for s in steps),
        ),
    )


@rule("DRV223", "no-kernel-headers-for-driver", Severity.ERROR)
def no_kernel_headers(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA driver's kernel module could not be built: no headers for the running kernel

    ## What it checks
    Only a log states it: nvidia-installer's `ERROR: Unable to find the kernel source tree for
    the currently running kernel.  Please make sure you have installed the kernel source
    files for your kernel` (also DKMS' `Your kernel headers for kernel <version> cannot be
    found`).

    ## Why it matters
    The NVIDIA kernel module is compiled for the running kernel at install time (and by DKMS
    after each kernel update); without that kernel's headers nothing is built, so no module
    loads: nvidia-smi 'couldn't communicate with the NVIDIA driver'.

    ## Example
    `ERROR: Unable to find the kernel source tree for the currently running kernel.`

    ## Fix
    Install the headers of the running kernel (`sudo apt install linux-headers-$(uname -r)`;
    RHEL/Fedora `kernel-devel-$(uname -r)`), then install the driver again or let DKMS build it
    (`sudo dkms autoinstall`), and reboot.

    ## References
    - https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (the kernel headers and development packages for the currently running kernel)
    """
    raise Skip("only the installer's or DKMS' output states the missing headers", "log")


@from_log("DRV223")
def no_kernel_headers_in_log(facts: Facts, line: LogLine) -> Hit:
    headers = _HEADERS
    steps = (
        headers,
        "sudo dkms autoinstall  (or run the NVIDIA installer again), then sudo reboot",
        "a kernel updated since boot: reboot into it first, so `uname -r` names the kernel the "
        "module is built for",
    )
    return Hit(
        f"the driver's kernel module was not built: no headers for the running kernel (line "
        f"{line.line})",
        evidence={"line": line.line},
        fix=fix(
            f"Install the running kernel's headers ({headers.split('  (')[0]}), then rebuild the "
            "module (sudo dkms autoinstall, or the installer again) and reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )
