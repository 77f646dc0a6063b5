"""The fix of a CUDA error that says the driver is older than the CUDA the program needs
(``cudaErrorInsufficientDriver`` / ``CUDA_ERROR_INSUFFICIENT_DRIVER``, 35) or that CUDA's
forward-compatibility libraries were loaded on a GPU that does not support them
(``cudaErrorCompatNotSupportedOnDevice``, 804, the usual sign of a container image built for a
newer CUDA than the host's driver): the forms threads use, as commands, the facts choosing the
first.

- the driver branch to install, as Ubuntu's package (``nvidia-driver-<branch>``): the first
  branch of matrices/cuda/drivers.toml whose newest CUDA covers the CUDA torch was built with,
  when the node states it; else Ubuntu's recommended branch (``ubuntu-drivers``);
- WSL 2 (the line or the node names ``/usr/lib/wsl`` or a ``microsoft`` kernel): the driver is the
  Windows one; nothing is installed inside the distribution;
- 804 (or a ``/compat/`` library in the line): the compat directory off the loader's path, or an
  image built for the host driver's CUDA; on a host whose driver was just updated, a reboot (the
  loaded module older than the new libcuda: rapidsai/cusignal#398);
- the table's own text last.
"""

from __future__ import annotations

import contextlib

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import major_minor
from envcheck.matrix.schema import CudaError
from envcheck.model.finding import Action, Fix
from envcheck.rules.fixes import fix, manual

TOO_OLD = frozenset({"cudaErrorInsufficientDriver", "CUDA_ERROR_INSUFFICIENT_DRIVER"})
COMPAT = frozenset(
    {"cudaErrorCompatNotSupportedOnDevice", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"}
)
DRIVER_UPGRADE = TOO_OLD | COMPAT
# WSL 2 gives Linux the Windows driver: NVIDIA's CUDA on WSL user guide (no Linux driver inside
# the distribution; WSL 1 has no GPU), its libcuda in /usr/lib/wsl/lib
WSL_STEPS = (
    "wsl --set-version <distro> 2  (in Windows: `wsl -l -v` lists each distribution's WSL "
    "version; WSL 1 has no GPU), then wsl --update",
    "install NVIDIA's Windows driver, not a Linux driver inside WSL; then "
    "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH",
)


def _wanted(facts: Facts) -> Version | None:
    try:
        return facts.torch_cuda()
    except Skip:
        return None


def _branch(facts: Facts, cuda: Version) -> int | None:
    wanted = major_minor(cuda)
    fits = sorted(
        b.branch for b in facts.matrix.driver_branches if major_minor(b.max_cuda) >= wanted
    )
    return fits[0] if fits else None


def wsl_kernel(facts: Facts) -> bool | None:
    """Whether the node's kernel is WSL 2's (a Microsoft kernel: 5.15.x-microsoft-standard-WSL2);
    None when the kernel is not known."""
    kernel = None
    with contextlib.suppress(Skip, AttributeError):
        kernel = facts.system().kernel
    if not kernel:
        return None
    lowered = kernel.lower()
    return "microsoft" in lowered or "wsl" in lowered


def on_wsl(facts: Facts, text: str) -> bool:
    """Whether the line or the node says WSL (its /usr/lib/wsl libraries, a microsoft kernel)."""
    return "/usr/lib/wsl" in text or "WSL" in text or bool(wsl_kernel(facts))


def upgrade_fix(facts: Facts, entry: CudaError, text: str) -> Fix:
    """The driver-upgrade steps for ``entry`` (one of DRIVER_UPGRADE) stated on a line
    ``text``, then the table's fix."""
    cuda = _wanted(facts)
    branch = _branch(facts, cuda) if cuda is not None else None
    compat = entry.name in COMPAT or "/compat/" in text
    actions: list[Action] = []
    if on_wsl(facts, text):
        summary = (
            "Upgrade the NVIDIA driver on Windows (WSL 2 uses the Windows driver, whose "
            "libcuda is in /usr/lib/wsl/lib; install no Linux driver inside the distribution)"
        )
        actions += [
            manual("wsl --update  (in Windows; then install NVIDIA's current Windows driver)"),
            manual("export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH"),
        ]
    elif branch is not None:
        summary = (
            f"Upgrade the NVIDIA driver to branch {branch} or newer (it runs CUDA "
            f"{major_minor(cuda) if cuda else ''}, the CUDA torch was built with)"
        )
        actions.append(manual(f"sudo apt install nvidia-driver-{branch} && sudo reboot"))
        actions.append(manual("sudo ubuntu-drivers autoinstall && sudo reboot"))
    else:
        summary = (
            "Upgrade the NVIDIA driver to one whose CUDA (nvidia-smi's 'CUDA Version') is at "
            "least the program's"
        )
        actions += [
            manual("sudo ubuntu-drivers autoinstall && sudo reboot"),
            manual(
                "sudo apt install nvidia-driver-<branch>  (`ubuntu-drivers devices` lists the "
                "branches for the GPU; NVIDIA's installer: sudo sh NVIDIA-Linux-x86_64-<version>.run)"
            ),
        ]
    if compat:
        summary += (
            "; in a container, run an image built for the host driver's CUDA, or take the "
            "cuda-compat libraries (/usr/local/cuda*/compat) off LD_LIBRARY_PATH; on a "
            "host whose driver was just updated, reboot first (the loaded kernel module is "
            "older than the new libcuda)"
        )
        # a driver updated without a reboot: libcuda newer than the loaded module tries forward
        # compatibility (rapidsai/cusignal#398: 'Rebooting resolved this issue' on a Quadro RTX
        # 6000; SYSTRAN/faster-whisper#653: reboot or reload the driver's modules)
        actions.append(manual("sudo reboot  (after a driver update: the module matches again)"))
        actions.append(
            manual(
                "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | "
                "grep -v /compat | paste -sd:)"
            )
        )
    else:
        summary += "; or install the program's build for the CUDA the driver runs"
    if entry.fix:
        actions.append(manual(entry.fix))
    return fix(summary, "manual", *actions)
