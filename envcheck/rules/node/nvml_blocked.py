"""DRV151 for NVML_ERROR_OPERATING_SYSTEM, `Failed to initialize NVML: GPU access blocked by
the operating system`: the forms threads establish by where NVML ran. Under WSL 2 the Windows
driver serves only GPUs in WDDM mode (a data-center or workstation GPU in TCC mode is refused:
microsoft/WSL#12835, #9952), a Linux driver package inside the distribution shadows the
Windows driver's nvidia-smi (microsoft/WSL#9166), and a Docker container there needs the
NVIDIA Container Toolkit's cgroup handling on (no-cgroups = false: microsoft/WSL#9962). Outside
WSL, a container's device cgroup or SELinux/AppArmor denies /dev/nvidiactl."""

from __future__ import annotations

import re

from envcheck.facts.node import Facts
from envcheck.matrix.schema import CudaError
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.container_engine import NO_CGROUPS_OFF, RESTART
from envcheck.rules.node.driver_upgrade import on_wsl

_CONTAINER = lazy(r"\b(?:docker|container|podman|kubectl|pod)\b", re.IGNORECASE)

_WDDM = manual(
    "Windows, as administrator: nvidia-smi -i 0 -dm 0  (WDDM; WSL 2 serves no GPU in TCC "
    "mode), then reboot; H100 PCIe and other GPUs without WDDM cannot be used from WSL"
)
_NO_LINUX_DRIVER = manual(
    "inside WSL: sudo apt purge 'nvidia-utils-*' 'nvidia-driver-*' 'libnvidia-*'  (no Linux "
    "driver in WSL; /usr/lib/wsl/lib/nvidia-smi is the Windows driver's)"
)
_WSL_UPDATE = manual("Windows: wsl --update, and NVIDIA's current Windows driver")
_SECURITY = manual(
    "ls -l /dev/nvidia*; check the container's device cgroup rules and SELinux/AppArmor denials "
    "(ausearch -m avc, dmesg | grep -i apparmor)"
)


def os_blocked_hit(facts: Facts, line: LogLine, entry: CudaError) -> Hit:
    """NVML refused by the operating system: the steps for WSL 2 and for containers first
    where the log says the command ran there."""
    platform = (line.stated.get("host_platform") or "").lower()
    wsl = "wsl" in platform or on_wsl(facts, line.text) or bool(line.stated.get("windows_build"))
    container = bool(_CONTAINER.search(line.text))
    steps: list[Action] = []
    if wsl and container:
        summary = (
            "In a container on WSL 2: turn the NVIDIA Container Toolkit's cgroup handling back "
            "on (no-cgroups = false in /etc/nvidia-container-runtime/config.toml) and restart "
            "Docker; if nvidia-smi fails in WSL itself too, the Windows GPU must be in WDDM mode"
        )
        steps += [manual(NO_CGROUPS_OFF), manual(RESTART), _WDDM]
        where = "in a container on WSL 2"
    elif wsl:
        summary = (
            "Under WSL 2 the GPU must be in WDDM mode on Windows (WSL serves no GPU in TCC "
            "mode: switch it with nvidia-smi -dm 0 as administrator and reboot), and no Linux "
            "NVIDIA driver may be installed inside the distribution"
        )
        steps += [_WDDM, _NO_LINUX_DRIVER, _WSL_UPDATE]
        where = "under WSL 2"
    elif container:
        summary = (
            "In a container: let the NVIDIA Container Toolkit set up the device cgroup "
            "(no-cgroups = false unless Docker runs rootless) and restart Docker; check "
            "SELinux/AppArmor"
        )
        steps += [manual(NO_CGROUPS_OFF), manual(RESTART), _SECURITY]
        where = "in a container"
    else:
        summary = (
            f"{entry.fix} Under WSL 2: the GPU in WDDM mode on Windows (not TCC) and no Linux "
            "driver inside the distribution."
        )
        steps += [_SECURITY, manual(NO_CGROUPS_OFF), _WDDM]
        where = ""
    said = f" ({where})" if where else ""
    return Hit(
        f"NVML / nvidia-smi failed with {entry.name} ('{entry.message}', line {line.line})"
        f"{said}: the operating system refused access to the GPU",
        evidence={"line": line.line, "name": entry.name, "wsl": wsl, "container": container},
        fix=fix(summary, "manual", *steps),
    )
