"""GPU1xx (CUDA driver): what cuInit and friends answered in the --deep child, mapped to causes.

CUresult values are those of the CUDA driver API (cuda.h, ``CUresult``); what each means on a
node and its fix are read from the ``[[cuda_error]]`` table (matrices/cuda/errors.toml).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.address_space import (
    OUT_OF_MEMORY,
    START_CALLS,
    address_space_limited,
)
from envcheck.rules.node.driver_errors import (
    MISMATCH,
    nvidia_smi_said,
    stated_nvidia_smi_failure,
)

if TYPE_CHECKING:  # the --deep records are imported when a --deep report is read
    from envcheck.model.deep import CudaCall, CudaDriverCheck

SYSTEM_NOT_READY, DRIVER_MISMATCH, COMPAT_NOT_SUPPORTED = 802, 803, 804
_OWN_RULES = (SYSTEM_NOT_READY, DRIVER_MISMATCH, COMPAT_NOT_SUPPORTED)


def _cuinit(check: CudaDriverCheck) -> CudaCall | None:
    return next((c for c in check.calls if c.call == "cuInit"), None)


def _failed_with(check: CudaDriverCheck, code: int) -> list[CudaCall]:
    return [c for c in check.calls if c.result == code]


@rule("GPU101", "cuda-system-not-ready", Severity.ERROR)
def system_not_ready(facts: Facts) -> Iterable[Hit]:
    """CUDA error 802 (system not ready): Fabric Manager is not running on an NVSwitch node

    ## What it checks
    The CUresult of `cuInit` and of creating a context on each GPU, asked of libcuda directly
    in a child process by `--deep`: `CUDA_ERROR_SYSTEM_NOT_READY` (802); in `triage`, a log's
    `cuda runtime error (802) : system not yet initialized` / `cudaErrorSystemNotReady`.

    ## Why it matters
    802 means "the system is not yet ready to start any CUDA work": on NVSwitch systems (HGX
    A100/H100/H200/B200) the NVIDIA Fabric Manager must be running, at exactly the driver's
    version, before any CUDA program can use the GPUs. Without it every framework fails at its
    first CUDA call (`Error 802: system not yet initialized`), although nvidia-smi looks healthy.

    ## Example
    cuInit returned 802 (CUDA_ERROR_SYSTEM_NOT_READY) with driver 535.104.05 and 4 NVSwitches.

    Fabric Manager's own refusal in the journal states the same cause: `fabric manager NVIDIA
    GPU driver interface version 590.48.01 don't match with driver version 580.126.09`.

    ## Fix
    Install `nvidia-fabricmanager-<branch>` matching the driver version exactly (for driver
    535.104.05: `nvidia-fabricmanager-535` version 535.104.05) and
    `systemctl enable --now nvidia-fabricmanager`; check `systemctl status nvidia-fabricmanager`.

    ## References
    - https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/
    - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
    - https://github.com/pytorch/pytorch/issues/35710
    - https://github.com/NVIDIA/gpu-driver-container/issues/735
    """
    stated = facts.report.gpu.data if facts.report.gpu.is_ok else None
    switches: int | None = None
    if stated is not None and "802" in stated.cuda_errors:
        call = "CUDA (the log's error 802)"
    else:
        check = facts.cuda_check()
        failed = _failed_with(check, SYSTEM_NOT_READY)
        if not failed:
            return []
        call = failed[0].call
        health = facts.deep().health
        switches = health.nvswitch_count if health is not None else None
    return [_not_ready(facts, call, switches)]


def _not_ready(facts: Facts, call: str, switches: int | None) -> Hit:
    """802's finding: the Fabric Manager package of the driver's branch, at its exact version."""
    try:
        driver: str | None = str(facts.gpu_info().driver_version or "") or None
    except Skip:
        driver = None
    branch = driver.split(".")[0] if driver else "<driver branch>"
    where = f" on a node with {switches} NVSwitch(es)" if switches else ""
    version = f" version {driver}" if driver else " at the driver's exact version"
    return Hit(
        f"{call} returned 802 (CUDA_ERROR_SYSTEM_NOT_READY){where}: the NVIDIA "
        f"Fabric Manager is not running or does not match driver {driver or '(unknown)'}",
        evidence={
            "call": call,
            "result": 802,
            "driver": driver,
            "nvswitches": switches,
        },
        fix=fix(
            f"Install and start nvidia-fabricmanager-{branch}{version}",
            "manual",
            manual(
                f"apt-cache policy nvidia-fabricmanager-{branch} (or dnf list --showduplicates); "
                f"install the build of version {driver or 'the driver'}: apt-get install "
                f"nvidia-fabricmanager-{branch}=<that version>"
            ),
            manual(
                "systemctl enable --now nvidia-fabricmanager; systemctl status nvidia-fabricmanager"
            ),
        ),
    )


_STATES_802 = lazy(
    r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|\b802\b"
)


# matrices/signatures/driver_states.toml: nv-fabricmanager's start-up refusal
FM_MISMATCH = "fabric-manager-driver-version-mismatch"


def fabric_manager_mismatch(line: LogLine) -> Hit:
    """The Fabric Manager's own refusal names both versions: its package must be rebuilt at the
    loaded driver's exact version (the apt/dnf package of that driver branch), or the driver
    moved to the Fabric Manager's."""
    fm, driver = line.stated.get("fm_version"), line.stated.get("fm_driver")
    branch = driver.split(".")[0] if driver else "<driver branch>"
    want = driver or "<the loaded driver's version>"
    return Hit(
        f"the NVIDIA Fabric Manager did not start (line {line.line}): it was built for driver "
        f"{fm or '(another release)'} and the loaded driver is {driver or '(another)'}, so the "
        "NVSwitch fabric is never set up (CUDA 802, NCCL hangs or NVLS failures)",
        evidence={"line": line.line, "fabric_manager": fm, "driver": driver},
        fix=fix(
            f"Install nvidia-fabricmanager at the loaded driver's exact version ({want}), "
            "then restart it; or move the driver to the Fabric Manager's version",
            "manual",
            manual(f"apt-get install nvidia-fabricmanager-{branch}={want}-1"),
            manual(f"apt-cache policy nvidia-fabricmanager-{branch}   # the builds there"),
            manual("systemctl restart nvidia-fabricmanager"),
            manual(f"apt-mark hold nvidia-fabricmanager-{branch}   # and the driver package"),
            manual("cat /proc/driver/nvidia/version   # the driver loaded now"),
        ),
    )


@from_log("GPU101")
def cuda_system_not_ready_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """NVIDIA's message for 802 ('system not yet initialized') as a wrapper prints it without
    the number (llama.cpp's ggml, gpu-burn, a C++ exception text); None for a line of such a
    wrapper that states another CUDA error. The Fabric Manager's own refusal names the versions
    that decide the fix."""
    if line.signature == FM_MISMATCH:
        return fabric_manager_mismatch(line)
    if not _STATES_802.search(line.text):
        return None
    return _not_ready(facts, f"CUDA (line {line.line}: 'system not yet initialized')", None)


@rule("GPU102", "cuda-driver-mismatch", Severity.ERROR)
def driver_mismatch(facts: Facts) -> Iterable[Hit]:
    """CUDA error 803: the loaded libcuda does not match the kernel driver

    ## What it checks
    `CUDA_ERROR_SYSTEM_DRIVER_MISMATCH` (803) from `cuInit` in the `--deep` child, with the
    libcuda file the child actually mapped (read from its `/proc/<pid>/maps`) and its version,
    against the kernel module's version.

    ## Why it matters
    803 means the user-space driver library and the loaded kernel module are different
    versions: a driver upgraded without a reboot (the old module is still loaded), a CUDA
    forward-compatibility library (`cuda-compat`, `/usr/local/cuda/compat`) on `LD_LIBRARY_PATH`
    that does not fit the kernel driver, or a container carrying its own libcuda.

    ## Example
    libcuda 550.54.15 loaded from /usr/local/cuda-12.4/compat/libcuda.so.550.54.15; kernel
    module 535.104.05.

    ## Fix
    If the library is a compat one, remove its directory from `LD_LIBRARY_PATH` (or the ldconfig
    configuration) unless the GPU and driver branch support forward compatibility; if the
    driver was upgraded, reboot (or unload and reload the nvidia modules) so the kernel module
    matches; in a container, do not ship libcuda: let the NVIDIA container runtime mount the
    host's.

    ## References
    - https://docs.nvidia.com/deploy/cuda-compatibility/
    - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
    - https://github.com/easydiffusion/easydiffusion/issues/379
    """
    stated = stated_nvidia_smi_failure(facts)
    if stated is not None and stated.name == MISMATCH:
        return [_stated_mismatch(facts)]
    check = facts.cuda_check()
    failed = _failed_with(check, DRIVER_MISMATCH)
    if not failed:
        return []
    try:
        kernel: str | None = facts.gpu_info().driver_version
    except Skip:
        kernel = None
    lib = check.library or "libcuda.so.1 (path unknown)"
    lib_version = check.library_version or "unknown"
    if check.compat:
        summary = "Take the CUDA compat library off the library path"
        step = f"remove {lib.rsplit('/', 1)[0]} from LD_LIBRARY_PATH / ldconfig (compat libcuda {lib_version})"
    else:
        summary = "Make libcuda and the kernel module the same version"
        step = (
            "reboot (or reload the nvidia kernel modules) after a driver upgrade; in a container, "
            "let the NVIDIA container runtime provide libcuda"
        )
    return [
        Hit(
            f"cuInit returned 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH): libcuda {lib_version} "
            f"loaded from {lib}"
            + (" (a forward-compatibility library)" if check.compat else "")
            + f"; kernel driver {kernel or 'unknown'}",
            evidence={
                "library": check.library,
                "library_version": check.library_version,
                "compat": check.compat,
                "kernel_driver": kernel,
            },
            fix=fix(summary, "manual", manual(step)),
        )
    ]


def _stated_mismatch(facts: Facts) -> Hit:
    """nvidia-smi's 'Failed to initialize NVML: Driver/library version mismatch', pasted."""
    reason = nvidia_smi_said(facts) or ""
    return Hit(
        f"{reason}: the NVIDIA kernel module still loaded is another version than the "
        "user-space driver libraries, nearly always a driver updated without a reboot",
        evidence={"stated": reason},
        fix=fix(
            "Reboot so the kernel module matches the installed driver (or reload the nvidia "
            "modules)",
            "manual",
            manual(
                "sudo reboot  (or, with no GPU process running: sudo rmmod nvidia_uvm "
                "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia); then compare `cat "
                "/proc/driver/nvidia/version` with the NVML library version nvidia-smi prints, "
                "and hold the driver packages against unattended upgrades (sudo apt-mark hold "
                "'nvidia-*')"
            ),
        ),
    )


def _consumer(name: str) -> bool:
    lowered = name.lower()
    return "geforce" in lowered or "titan" in lowered


@rule("GPU103", "cuda-compat-unsupported-device", Severity.ERROR)
def compat_unsupported(facts: Facts) -> Iterable[Hit]:
    """CUDA error 804: forward compatibility used on a GPU that does not support it

    ## What it checks
    `CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE` (804) from the `--deep` CUDA driver check, with
    the libcuda it loaded and the GPUs' names.

    ## Why it matters
    The CUDA forward-compatibility package lets an older data-center driver run a newer CUDA;
    it is supported on data-center GPUs only. On a GeForce (or other non-data-center) GPU the
    compat libcuda refuses to initialise: `Error 804: forward compatibility was attempted on
    non supported HW`.

    ## Example
    cuInit returned 804 with /usr/local/cuda/compat/libcuda.so.550.54.15 on an RTX 3090.

    ## Fix
    Remove the compat directory from `LD_LIBRARY_PATH` (or uninstall `cuda-compat-*`) and
    upgrade the driver to one that supports the CUDA version natively, or use a CUDA build of
    the framework that the installed driver supports.

    ## References
    - https://docs.nvidia.com/deploy/cuda-compatibility/
    - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
    - https://github.com/PKU-YuanGroup/Video-LLaVA/issues/22
    """
    check = facts.cuda_check()
    failed = _failed_with(check, COMPAT_NOT_SUPPORTED)
    if not failed:
        return []
    try:
        names = [g.name for g in facts.gpus() if g.name]
    except Skip:
        names = list(check.device_names)
    consumer = [n for n in names if _consumer(n)]
    part = (
        f" on {', '.join(consumer)} (not a data-center GPU)"
        if consumer
        else f" on {', '.join(names)}"
        if names
        else ""
    )
    lib = check.library or "libcuda.so.1"
    return [
        Hit(
            f"{failed[0].call} returned 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE){part}: "
            f"forward compatibility through {lib} is not supported on this GPU",
            evidence={"library": check.library, "gpus": names},
            fix=fix(
                "Drop the CUDA compat library and use a driver that supports this CUDA natively",
                "manual",
                manual(
                    f"remove {lib.rsplit('/', 1)[0]} from LD_LIBRARY_PATH (uninstall cuda-compat-*)"
                ),
                manual(
                    "upgrade the NVIDIA driver, or install a framework build for the CUDA the driver supports"
                ),
            ),
        )
    ]


@rule("GPU104", "cuda-init-failed", Severity.ERROR)
def cuda_failed(facts: Facts) -> Iterable[Hit]:
    """The CUDA driver refused to initialise or to create a context on a GPU

    ## What it checks
    Every CUresult of the `--deep` CUDA driver check (`cuInit`, `cuDriverGetVersion`,
    `cuDeviceGetCount`, `cuDeviceGet` and `cuDevicePrimaryCtxRetain` on each GPU) other than
    success and the codes GPU101-GPU103 explain: 100 (no device), 101 (invalid device), 999
    (unknown), 34 (stub library), 46 (device unavailable), 214 (uncorrectable ECC), 304 (OS
    call failed) and any other. 2 (out of memory) from cuInit or a primary context under a
    finite `ulimit -v` is SYS192's, which that result confirms.

    ## Why it matters
    Frameworks report these late and vaguely ("CUDA unknown error", `torch.cuda.is_available()`
    is False). Asking the driver directly names the call and the code before a job starts.

    ## Example
    cuInit returned 100 (CUDA_ERROR_NO_DEVICE) with CUDA_VISIBLE_DEVICES="".

    ## Fix
    Depends on the code; the finding gives the meaning and the usual fix for it.

    ## References
    - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
    - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html
    """
    check = facts.cuda_check()
    hits = []
    for call in check.calls:
        if call.result in (None, 0) or call.result in _OWN_RULES:
            continue
        code = int(call.result)  # mypy: not None here
        if code == OUT_OF_MEMORY and call.call in START_CALLS and address_space_limited(facts):
            continue  # the driver's reservation under ulimit -v: SYS192 confirms and fixes it
        entry = facts.matrix.cuda_error(number=code, name=call.name, apis=("driver",))
        meaning = (entry.cause or entry.message) if entry else "see the CUresult table"
        on = f" on GPU {call.device}" if call.device is not None else ""
        try:
            visible = facts.env().get("CUDA_VISIBLE_DEVICES") if code in (100, 101) else None
        except Skip:
            visible = None
        extra = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
        step = entry.fix if entry and entry.fix else None
        hits.append(
            Hit(
                f"{call.call}{on} returned {code} ({call.name or 'unnamed'}): {meaning}{extra}",
                evidence={"call": call.call, "result": code, "device": call.device},
                fix=fix(
                    step or "Check dmesg for Xid errors and the driver installation",
                    "manual",
                    manual(step or "dmesg | grep -i xid; nvidia-smi -q"),
                ),
            )
        )
    return hits


@rule("GPU105", "gpu-query-hung", Severity.ERROR)
def query_hung(facts: Facts) -> Iterable[Hit]:
    """The CUDA driver or NVML did not answer in time, or its process crashed

    ## What it checks
    Whether the `--deep` children that ask libcuda and NVML finished within `--timeout`: a
    `cuInit` (or any call) that never returns, NVML queries that hang, or a child killed by a
    signal.

    ## Why it matters
    A wedged GPU or driver (after an Xid error, a fallen-off-the-bus GPU, a stuck Fabric
    Manager) makes every CUDA program hang at start-up with no error at all: training jobs sit
    at "initialising" until a watchdog kills them. envcheck kills the child and reports which
    call hung.

    ## Example
    cuInit did not return within 5 s; the child was killed.

    ## Fix
    Check `dmesg` for Xid errors and `nvidia-smi`; reset the GPU (`nvidia-smi -r`) or reboot
    the node, and drain it from the scheduler until it answers.

    ## References
    - https://docs.nvidia.com/deploy/xid-errors/index.html
    - https://docs.nvidia.com/deploy/gpu-debug-guidelines/index.html
    """
    deep = facts.deep()
    hits = []
    for step in deep.steps:
        if step.name in ("cuda", "nvml_health") and step.status in ("hung", "crashed"):
            what = "CUDA driver" if step.name == "cuda" else "NVML"
            hits.append(
                Hit(
                    f"{what} check {step.status}: {step.reason}",
                    evidence={"step": step.name, "status": step.status, "ms": step.duration_ms},
                    fix=fix(
                        "Find out why the GPU does not answer; drain the node meanwhile",
                        "manual",
                        manual(
                            "dmesg | grep -i xid; nvidia-smi; nvidia-smi -r (or reboot the node)"
                        ),
                    ),
                )
            )
    if not hits and deep.cuda is None and deep.health is None:
        raise Skip("neither the CUDA driver nor NVML check ran", "deep")
    return hits
