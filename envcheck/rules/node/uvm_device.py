"""DRV229: CUDA's Unified Memory device, ``/dev/nvidia-uvm``, missing: the ``nvidia-uvm``
kernel module not loaded (or not installed for this driver and kernel), or a container not
given the device file.

Every CUDA program opens ``/dev/nvidia-uvm`` at cuInit; nvidia-smi does not, so a node whose
nvidia-smi works can still fail every CUDA call, with the unknown error (999; 30 before CUDA
10.1) or no device. The device file is made by nvidia-modprobe (NVIDIA/nvidia-modprobe
modprobe-utils/nvidia-modprobe-utils.c: ``-u`` loads the ``nvidia-uvm`` module and creates
``/dev/nvidia-uvm`` and ``/dev/nvidia-uvm-tools``; ``-c 0`` the GPU's ``/dev/nvidia0``), which
CUDA itself runs when it can, and which nvidia-docker 1.x ran at start
(NVIDIA/nvidia-docker@1.0 src/nvidia/nvidia.go: ``nvidia-modprobe -u -c=0``, else ``Could not
load UVM kernel module. Is nvidia-modprobe installed?``). Read from a pasted ``ls -l
/dev/nvidia*`` (the GPU section's ``device_nodes``) and from the lines that say so: that
message, modprobe refusing or not finding the uvm module, Docker not finding the device it was
told to pass."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

UVM = "/dev/nvidia-uvm"
# a module named for its driver branch: Ubuntu 14.04's packages nvidia-331-uvm,
# nvidia-331-updates-uvm, nvidia-340-uvm ('NVIDIA Unified Memory kernel module') carried it
_BRANCH_MODULE = lazy(r"\bnvidia_(?P<branch>[0-9]{3}(?:_updates)?)_uvm\b")
_LINE_SAYS = (
    (
        lazy(r"Could not load UVM kernel module"),
        "nvidia-docker's nvidia-modprobe -u -c=0 failed: nvidia-modprobe is missing, or the "
        "nvidia-uvm module, or the nvidia module it needs, did not load",
    ),
    (
        lazy(r"lstat /dev/nvidia-uvm(?:-tools)?: no such file"),
        "Docker found no /dev/nvidia-uvm to pass (the host's module not loaded since boot)",
    ),
    (lazy(r"could not insert '[^']*uvm'|could not find module by name='[^']*uvm'"), "modprobe"),
    (lazy(r"Module nvidia[-_]uvm not found"), "modprobe found no such module"),
)


def _container(facts: Facts) -> bool:
    system = facts.report.system
    return bool(system.is_ok and system.data and system.data.container not in (None, "none"))


def _severity(facts: Facts) -> Severity:
    """A listing alone: on a host CUDA loads nvidia_uvm and creates its device on first use
    (through nvidia-modprobe, setuid root), so before any CUDA program ran its absence is a
    warning; in a container nothing creates it, and a failed CUDA call the input states makes
    it the cause (an error)."""
    if _container(facts):
        return Severity.ERROR
    section = facts.report.gpu
    errors = section.data.cuda_errors if section.is_ok and section.data is not None else ()
    return Severity.ERROR if errors else Severity.WARNING


def uvm_fix(module: str | None = None, container: bool | None = None) -> Fix:
    """Load the module and create the device on the host; pass it to a container. ``module``:
    the branch-named module modprobe named (Ubuntu's nvidia-<branch>-uvm package holds it)."""
    steps = [
        manual(
            "sudo nvidia-modprobe -u -c=0  (on the host: loads nvidia-uvm and creates "
            "/dev/nvidia-uvm and /dev/nvidia-uvm-tools; then ls -l /dev/nvidia-uvm)"
        ),
        manual(
            "sudo modprobe nvidia-uvm  (where nvidia-modprobe is missing: it ships with the "
            "driver); with no GPU process running, sudo rmmod nvidia_uvm && sudo modprobe "
            "nvidia_uvm reloads a module left unusable (after a suspend)"
        ),
    ]
    summary = "Load the nvidia-uvm module and create /dev/nvidia-uvm: sudo nvidia-modprobe -u -c=0"
    branch = _BRANCH_MODULE.search(module or "")
    if branch is not None:
        package = f"nvidia-{branch['branch'].replace('_', '-')}-uvm"
        summary = (
            f"Install the driver's Unified Memory module, the {package} package (sudo apt-get "
            f"install {package}), then sudo nvidia-modprobe -u -c=0"
        )
        steps.insert(0, manual(f"sudo apt-get install {package}  (the uvm module of that driver)"))
    else:
        steps.append(
            manual(
                "if nvidia-smi fails too, or modprobe says the module is not found: the NVIDIA "
                "driver itself is not loaded or not built for this kernel, and nvidia-uvm loads "
                "only on top of it (dkms status; sudo dkms autoinstall, or reinstall the driver "
                "package for this kernel)"
            )
        )
    container_step = manual(
        "in a container: run it with the NVIDIA runtime (--gpus all), which passes "
        "/dev/nvidia-uvm, or pass it: --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools"
    )
    if container:
        steps.insert(0, container_step)
        summary += "; in a container: --gpus all, or --device /dev/nvidia-uvm"
    else:
        steps.append(container_step)
    return fix(summary, "manual", *steps)


@rule("DRV229", "cuda-uvm-device-missing", Severity.ERROR)
def uvm_device_missing(facts: Facts) -> Iterable[Hit]:
    """CUDA's Unified Memory device /dev/nvidia-uvm is missing

    ## What it checks
    A pasted listing of `/dev/nvidia*` (`ls -l /dev/nvidia*`) that shows the driver's control
    file `/dev/nvidiactl` or a GPU's `/dev/nvidia<N>` but no `/dev/nvidia-uvm`, or a pasted
    `lsmod` that lists the `nvidia` module but not `nvidia_uvm`. In a log: the
    lines that say the Unified Memory module did not load or its device is not there:
    nvidia-docker 1.x's `Could not load UVM kernel module`, modprobe refusing or not finding
    `nvidia_uvm` (or a branch's `nvidia_331_uvm`), Docker's `lstat /dev/nvidia-uvm: no such
    file or directory`.

    ## Why it matters
    Every CUDA program opens /dev/nvidia-uvm when it initialises; nvidia-smi does not. Without
    it CUDA fails with the unknown error (cudaErrorUnknown: 999, 30 before CUDA 10.1) or finds
    no device while nvidia-smi shows the GPUs. The module is loaded and the file created by
    nvidia-modprobe, which CUDA runs itself only where it may (not in a container, not
    without its setuid bit); after a suspend the module can also be left unusable. A listing
    alone, on a host where no CUDA program may have run yet, is a warning; in a container, or
    beside a CUDA error the input states, an error.

    ## Example
    `ls -l /dev/nvidia*` lists /dev/nvidia0 and /dev/nvidiactl only; torch says `CUDA unknown
    error`.

    ## Fix
    On the host: `sudo nvidia-modprobe -u -c=0` (loads nvidia-uvm, creates /dev/nvidia-uvm and
    /dev/nvidia-uvm-tools), or `sudo modprobe nvidia-uvm`; where modprobe finds no such module,
    install the driver's (Ubuntu 14.04's drivers kept it in a package of its own,
    `nvidia-<branch>-uvm`) or rebuild the driver's modules for the running kernel. In a
    container: start it with the NVIDIA runtime (`--gpus all`), or pass `--device
    /dev/nvidia-uvm --device /dev/nvidia-uvm-tools`.

    ## References
    - https://github.com/NVIDIA/nvidia-modprobe (modprobe-utils/nvidia-modprobe-utils.c)
    - https://github.com/NVIDIA/nvidia-docker/issues/106
    - https://github.com/pytorch/pytorch/issues/49081
    - https://github.com/NVlabs/nvbio-gpl/issues/7
    """
    section = facts.report.gpu
    info = section.data if section.is_ok else None
    nodes = info.device_nodes if info is not None else None
    modules = info.kernel_modules if info is not None else None
    if modules is not None and "nvidia" in modules and "nvidia_uvm" not in modules:
        return [
            Hit(
                f"lsmod lists the NVIDIA modules {', '.join(modules)} but not nvidia_uvm: "
                f"without it there is no {UVM}, which CUDA opens at initialisation (the "
                "unknown error, 999; or no device); nvidia-smi, which does not open it, may "
                "still work",
                evidence={"kernel_modules": list(modules)},
                fix=uvm_fix(container=_container(facts)),
                severity=_severity(facts),
            )
        ]
    if nodes is None:
        if modules is not None:
            return []  # lsmod lists nvidia_uvm loaded
        raise Skip("no listing of /dev/nvidia* given (ls -l /dev/nvidia*)", "gpu.device_nodes")
    names = {n.removeprefix("/dev/") for n in nodes}
    if "nvidia-uvm" in names:
        return []
    driver = "nvidiactl" in names or any(n[6:].isdigit() for n in names if n.startswith("nvidia"))
    if not driver:
        return []  # no driver file at all: the driver is not loaded (DRV103, DRV151)
    listed = ", ".join(sorted(nodes))
    return [
        Hit(
            f"the /dev/nvidia* listing has no {UVM} ({listed}): CUDA opens it at "
            "initialisation and fails without it (the unknown error, 999; or no device) while "
            "nvidia-smi, which does not open it, may still work: the nvidia-uvm module is not "
            "loaded" + (", or the container was not given the device" if _container(facts) else ""),
            evidence={"device_nodes": list(nodes)},
            fix=uvm_fix(container=_container(facts)),
            severity=_severity(facts),
        )
    ]


@from_log("DRV229")
def uvm_device_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    """The line's own words: the module did not load, or the device is not there."""
    said = next((what for regex, what in _LINE_SAYS if regex.search(line.text)), None)
    if said is None:
        raise Skip("the line says nothing of the uvm module or its device", "log")
    module = line.stated.get("uvm_module") or _module_in(line.text)
    named = f" ({module})" if module else ""
    return Hit(
        f"the NVIDIA Unified Memory module{named} is not loaded or {UVM} is missing (line "
        f"{line.line}: {said}): every CUDA program needs {UVM}; without it CUDA fails with "
        "the unknown error (999, 30 before CUDA 10.1); nvidia-smi, which does not open it, "
        "may still work",
        evidence={"line": line.line, "uvm_module": module},
        fix=uvm_fix(module, _container(facts) or None),
    )


def _module_in(text: str) -> str | None:
    found = re.search(r"'(nvidia[a-z0-9_-]*uvm)'", text)
    return found.group(1) if found else None
