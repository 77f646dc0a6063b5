"""DRV150/DRV151: any CUDA runtime or driver error, and any NVML or nvidia-smi failure, that a log
states, explained from the ``[[cuda_error]]`` table (matrices/cuda/errors.toml: every
``cudaError_t``, ``CUresult`` and ``nvmlReturn_t`` with the text NVIDIA's libraries print, the
lines nvidia-smi prints when it fails, and the cause and fix of each code that is a node
problem). A line is matched to its entry by the error's name, else by the library's message in
the line, else by its number: the same reading serves torch's `CUDA error: ...`, NCCL's
`Cuda failure 'msg'`, cuda-samples' `code=N(cudaErrorX)`, CTranslate2's `CUDA failed with
error ...` and any other library that prints NVIDIA's text. NVML's `Driver/library version
mismatch` is GPU102's cause (the user-space driver against the kernel module), worded here from
the same table."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import CudaError
from envcheck.model.finding import Action, Fix, Severity
from envcheck.model.report import Gpu
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, StatedOtherwise, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.container_engine import no_cgroups_hit
from envcheck.rules.node.gpu_oom_size import oversize
from envcheck.rules.node.locked_memory import pinned_oom_fix
from envcheck.rules.node.memory import (
    GIB,
    gpu_oom_fix,
    listed_processes,
    oom_held_hit,
    oom_share,
)
from envcheck.rules.node.nvml_blocked import os_blocked_hit

CUDA_APIS = ("runtime", "driver")
NVML_APIS = ("nvidia-smi", "nvml")
# codes whose cause a rule of its own explains from a stated error too (GPU101: Fabric Manager,
# 802); 803 and 804 (GPU102/GPU103 read them from --deep's calls only) are worded here
_READ_STATED = {802}
# out of GPU memory: the fix comes from torch's allocator numbers (memory.gpu_oom_fix)
# torch's own wording of error 35 (THC's 'cuda runtime error (35)', ATen/c10's CUDA checks)
_TORCH_LINE = lazy(r"\btorch\b|THC|ATen|c10|_cuda_init|CUDAFunctions")
_OUT_OF_MEMORY = {"cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY"}
# torch's device out-of-memory exception by its type alone (memory.toml): error 2 by definition
_DEVICE_OOM_NAMED = frozenset(
    {
        "torch-device-oom-exception",
        "cuda-module-oom-exception",
        "warp-gpu-allocation-failed",
        "ggml-compute-buffer-allocation-failed",
        "tensorrt-gpu-out-of-memory",
    }
)


def _number(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def stated_error(facts: Facts, line: LogLine, apis: tuple[str, ...]) -> CudaError | None:
    """The table's entry for the error ``line`` states: by name, message or number."""
    named = line.stated.get("cuda_error_name") or line.stated.get("nvml_error")
    if named is None and (found := _ERROR_NAME.search(line.text)) is not None:
        named = found.group(0)  # cuda-samples' 'code=35(cudaErrorInsufficientDriver)'
    if named is not None and named in {m.group(1) for m in _COMPARED.finditer(line.text)}:
        named = None  # the check's condition, not the error: the message after it says which
    number = _number(line.stated.get("cuda_error"))
    tail = _AFTER_CUDA_ERROR.search(line.text) or _AFTER_CHECK.search(line.text)
    if named is None and number is None and tail is not None:
        # the text after 'cuda error: ' is cudaGetErrorString's: it decides before the words
        # around it ('initialization error: cuda error: unknown error' is 999, not 3)
        entry = facts.matrix.cuda_error(text=tail.group(1), apis=apis)
        if entry is not None:
            return entry
    entry = facts.matrix.cuda_error(number=number, name=named, text=line.text, apis=apis)
    if entry is None and named is None:
        entry = before_renumbering(facts, number, apis)
    return entry


# cudaError_t's numbers that CUDA 10.1 changed (CUDA 10.0's include/driver_types.h, enum
# cudaError: cudaErrorUnknown = 30, cudaErrorNoDevice = 38; since 10.1 999 and 100), which no
# error of today's runtime has: a program built with CUDA <= 10.0 still prints them
# ('cudaGetDeviceCount returned 30' from an old deviceQuery)
_BEFORE_10_1 = {30: "cudaErrorUnknown", 38: "cudaErrorNoDevice"}


def before_renumbering(facts: Facts, number: int | None, apis: tuple[str, ...]) -> CudaError | None:
    """The runtime error a number printed by a CUDA <= 10.0 program names, where today's
    runtime has no error of that number."""
    name = _BEFORE_10_1.get(number) if number is not None and "runtime" in apis else None
    if name is None:
        return None
    return facts.matrix.cuda_error(name=name, apis=apis)


# the message a library prints after 'CUDA error: ' (torch's C10_CUDA_CHECK, the container
# runtime's 'cuda error: unknown error')
_AFTER_CUDA_ERROR = lazy(r"(?i)\bcuda error: (.+)$")
# a CUDA check macro's condition names the codes it accepts, dmlc's CUDA_CALL (mshadow, DGL,
# TVM): 'Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading: CUDA: out of memory';
# the failure is cudaGetErrorString's text after 'CUDA: ' (dmlc/dgl src/runtime/cuda/
# cuda_common.h: CHECK(e == cudaSuccess || e == cudaErrorCudartUnloading) << "CUDA: " << ...)
_COMPARED = lazy(r"[=!]= *(cudaError[A-Z]\w+|CUDA_ERROR_[A-Z_]+)")
_AFTER_CHECK = lazy(r"\bCUDA: (.+)$")
# the name an error is printed with where the signature extracted none
_ERROR_NAME = lazy(r"\bcudaError[A-Z]\w+|\bCUDA_ERROR_[A-Z_]+\b")


def _label(entry: CudaError) -> str:
    number = f" {entry.number}" if entry.number is not None and entry.api != "nvidia-smi" else ""
    return f"{entry.name}{number}"


def _hit(entry: CudaError, line: LogLine, what: str, facts: Facts | None = None) -> Hit:
    from envcheck.rules.node.driver_upgrade import DRIVER_UPGRADE, upgrade_fix

    if entry.cause is None or entry.fix is None:
        raise NotStated(
            f"line {line.line} states {_label(entry)} ('{entry.message}'), which the table gives "
            "no node cause for: it comes from the failing call itself (its arguments or the "
            "kernel), so the traceback, not the node, says more",
            "log.cuda_error",
        )
    program = entry.fault == "program"
    return Hit(
        f"{what} {_label(entry)} ('{entry.message}', line {line.line}): {entry.cause}"
        + (" (the program's own error, not the node's)" if program else ""),
        evidence={
            "line": line.line,
            "api": entry.api,
            "name": entry.name,
            "number": entry.number,
            "message": entry.message,
        },
        fix=(
            upgrade_fix(facts, entry, line.text)
            if facts is not None and entry.name in DRIVER_UPGRADE
            else _fix(_branch_named(entry.fix, facts))
        ),
        severity=Severity.WARNING if program else None,
    )


def _branch_named(text: str, facts: Facts | None) -> str:
    """The table's `nvidia-driver-<branch>` as the node's own package where a pasted text
    states the installed driver (dpkg/apt rows, dkms status, modinfo): the branch to reinstall
    or rebuild is the one installed, not a new one."""
    if facts is None or "<branch>" not in text:
        return text
    try:
        version = facts.gpu_info().driver_version
    except Skip:
        return text
    major = str(version or "").split(".")[0]
    return text.replace("nvidia-driver-<branch>", f"nvidia-driver-{major}") if major else text


def _fix(text: str) -> Fix:
    """The table's fix: its first step as the summary; the commands it quotes (`...`), each
    a step of its own in the table's order (what threads run: the concrete ones first), then
    the whole text."""
    first = _first_step(text)
    quoted = dict.fromkeys(
        m.group(1) for m in _QUOTED.finditer(text) if _RUNNABLE.match(m.group(1))
    )
    return fix(first, "manual", *(manual(c) for c in quoted), manual(text))


def table_fix(text: str) -> Fix:
    """The fix a ``[[cuda_error]]`` entry's text gives, as steps (see ``_fix``)."""
    return _fix(text)


def _first_step(text: str) -> str:
    """The text up to its first `; ` outside parentheses and quotes."""
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "()":
            depth += 1 if ch == "(" else -1
        elif not quoted and depth <= 0 and text.startswith("; ", i):
            return text[:i].rstrip(".")
    return text.rstrip(".")


# a command the table quotes: `sudo ...`, `nvidia-smi ...`, `export ...`, `pip ...`
_QUOTED = lazy(r"`([^`]+)`")
_RUNNABLE = lazy(
    r"(?:sudo|nvidia-smi|nvidia-modprobe|export|pip|conda|apt|docker|modprobe|rmmod)\b"
)


@rule("DRV150", "cuda-error-stated", Severity.ERROR)
def cuda_error_stated(facts: Facts) -> Iterable[Hit]:
    """A CUDA runtime or driver call failed; its error code names the cause

    ## What it checks
    The CUDA error codes a log or a declared node states (`gpu.cuda_errors`: torch's
    `CUDA error: <message>`, `cudaErrorX` / `CUDA_ERROR_X` names, `cuda runtime error (N)`,
    NCCL's `Cuda failure 'msg'`, any library that prints NVIDIA's own text), looked up by name,
    message and number in the `[[cuda_error]]` table of matrices/cuda/errors.toml, which holds
    every `cudaError_t` and `CUresult` with the text `cudaGetErrorString`/`cuGetErrorString`
    return. Codes the table marks as the program's own (an invalid argument, an illegal address,
    a device-side assert) are a warning with the table's debugging step in triage and are not
    counted against a node; 802 is GPU101's. A pasted text may state the error by its number,
    its name or the runtime's message alone (`CUDA_ERROR_NO_DEVICE`, torch's `CUDA
    initialization: ... Error 804: ...`): each is looked up the same way.

    ## Why it matters
    The same failure reaches the user in many wordings (`CUDA error: out of memory`,
    `cudaErrorNoDevice`, `CUDA_ERROR_NOT_INITIALIZED`, `Cuda failure 'initialization error'`),
    and the fix depends on the code, not on the library that printed it: no device visible
    (100) is a container or CUDA_VISIBLE_DEVICES problem, the stub library (34) a
    LD_LIBRARY_PATH one, an uncorrectable ECC error (214) a drain-and-reset, 999 a GPU that
    needs a reset.

    ## Example
    `RuntimeError: CUDA error: no CUDA-capable device is detected` (cudaErrorNoDevice, 100) in a
    container started without `--gpus`.

    ## Fix
    The table's fix for the code, e.g. for 100: check `echo $CUDA_VISIBLE_DEVICES`,
    `nvidia-smi -L` and the container's GPU flags (`--gpus all`, the `nvidia.com/gpu`
    resource); for 34: remove the toolkit's `stubs` directory from `LD_LIBRARY_PATH`. For out
    of memory (2), the numbers of the line decide: one allocation larger than the whole GPU (or
    the job's live tensors plus it) needs the work split (a smaller batch or input for that
    tensor, sharding, offload, a larger GPU), not memory freed or expandable_segments.

    ## References
    - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
    - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
    """
    from envcheck.rules.node.driver_upgrade import DRIVER_UPGRADE, upgrade_fix

    info = facts.gpu_info()  # no CUDA error stated: nothing failed
    hits = []
    seen: set[str] = set()
    for text in info.cuda_errors:
        number = _number(text)
        if number in _READ_STATED:
            continue
        entry = facts.matrix.cuda_error(
            number=number,
            name=text if number is None else None,
            text=text if number is None else None,
            apis=CUDA_APIS,
        ) or before_renumbering(facts, number, CUDA_APIS)
        if entry is None or entry.cause is None or entry.fix is None or entry.fault != "node":
            continue
        if entry.name in seen or entry.number in _READ_STATED:
            continue
        seen.add(entry.name)
        renumbered = (
            f", printed as {number} by a program built with CUDA 10.0 or older"
            if number in _BEFORE_10_1 and entry.number != number
            else ""
        )
        hits.append(
            Hit(
                f"CUDA error {_label(entry)}{renumbered} ('{entry.message}'): {entry.cause}",
                evidence={"name": entry.name, "number": number, "message": entry.message},
                fix=(
                    upgrade_fix(facts, entry, text)
                    if entry.name in DRIVER_UPGRADE
                    else _fix(entry.fix)
                ),
            )
        )
    return hits


@from_log("DRV150")
def cuda_error_in_log(facts: Facts, line: LogLine) -> Hit:
    """The error the line names, from the table: its cause and fix; a code with no node cause
    (an application bug) stays open with the reason."""
    from envcheck.rules.node.driver_upgrade import TOO_OLD

    entry = stated_error(facts, line, CUDA_APIS)
    if entry is None and line.signature in _DEVICE_OOM_NAMED:
        # torch's device out-of-memory exception named without its message: error 2's entry
        entry = facts.matrix.cuda_error(
            number=None, name="cudaErrorMemoryAllocation", text=line.text, apis=CUDA_APIS
        )
    if entry is None:
        raise NotStated(
            f"line {line.line} names no CUDA error (name, message or number) that the table "
            "knows (NCCL's 'unhandled cuda error' says which only with NCCL_DEBUG=INFO)",
            "log.cuda_error",
        )
    if entry.name in TOO_OLD and line.signature == "driver-insufficient":
        if _TORCH_LINE.search(line.text):
            raise NotStated(
                f"line {line.line} is torch's own error 35: DRV101 reads it against the CUDA "
                "torch was built with",
                "log.cuda_error",
            )
        if facts.matrix.gpu_build(line.text) is not None:
            raise NotStated(
                f"line {line.line} is a GPU library's own error 35: DRV220 reads it",
                "log.cuda_error",
            )
    api = "CUDA runtime error" if entry.api == "runtime" else "CUDA driver error"
    hit = _hit(entry, line, api, facts)
    printed = _number(line.stated.get("cuda_error"))
    if printed in _BEFORE_10_1 and entry.number != printed:
        hit = dataclasses.replace(
            hit,
            message=hit.message.replace(
                f"{_label(entry)} (",
                f"{_label(entry)}, printed as {printed} by a program built with CUDA 10.0 or "
                "older (",
                1,
            ),
        )
    pinned = line.stated.get("pinned_call")
    if entry.name in _OUT_OF_MEMORY and pinned:  # the failed allocation was pinned host memory
        summary, steps, said = pinned_oom_fix(pinned, line.line)
        hit = dataclasses.replace(
            hit, message=hit.message + said, fix=fix(summary, "manual", *steps)
        )
    elif entry.name in _OUT_OF_MEMORY:  # the allocator's numbers pick the fix
        summary, steps, said = gpu_oom_fix(line.text, facts)
        big = oversize(line.text, facts)
        message = (  # the job larger than the GPU: the numbers state the cause by themselves
            f"{api} {_label(entry)} ('{entry.message}', line {line.line}): {big.said()}"
            if big is not None
            else hit.message + said
        )
        hit = dataclasses.replace(hit, message=message, fix=fix(summary, "manual", *steps))
    return hit


@rule("DRV151", "nvml-failure-stated", Severity.ERROR)
def nvml_failure_stated(facts: Facts) -> Iterable[Hit]:
    """NVML (nvidia-smi, DCGM, pynvml) cannot reach the driver or the GPU

    ## What it checks
    A line NVML or nvidia-smi prints when it fails (`Failed to initialize NVML: <message>`,
    `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`, `No devices
    were found`, `Unable to determine the device handle for GPU...: GPU is lost`, pynvml's
    `NVMLError_...`), looked up in the `[[cuda_error]]` table (`api = "nvml"`: every
    `nvmlReturn_t` with `nvmlErrorString`'s text; `api = "nvidia-smi"`: nvidia-smi's own
    failure lines with their exit codes). A pasted input that states the driver is not loaded
    for a reason of the host's (`lsmod` with no nvidia module, `lsmod | grep nvidia` printing
    nothing, modprobe's `Module nvidia not found`, no `/dev/nvidia*`, nvidia-smi's message cut
    short) is read as `NVML_ERROR_DRIVER_NOT_LOADED` where torch's CUDA is not stated (DRV103
    covers a CUDA build of torch). Only a log states these: on a node, `--deep` asks
    NVML directly: `nvmlInit`'s own error, looked up the same way (on a node with an NVIDIA
    driver: without one, NVML failing is expected).

    ## Why it matters
    When NVML fails, so do schedulers' GPU discovery, monitoring, and every framework that asks
    NVML first; the message names the cause precisely: the kernel module not loaded (after a
    kernel update without a DKMS rebuild), a container that lost its device nodes after
    `systemctl daemon-reload` (`Unknown Error`), /dev/nvidia* permissions, a GPU fallen off the
    bus.

    ## Example
    `Failed to initialize NVML: Unknown Error` inside a container that worked until the host
    ran `systemctl daemon-reload`.

    ## Fix
    The table's fix for the message, e.g. for a container's `Unknown Error`: restart the
    container, and on the host configure the NVIDIA Container Toolkit so device cgroup rules
    survive a systemd reload (nvidia-ctk's `--cdi` mode or the documented
    `systemd.unified_cgroup_hierarchy` / `no-cgroups` setting); for `couldn't communicate with
    the NVIDIA driver`: load the module (`modprobe nvidia`, `dkms status`).

    ## References
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html
    - https://github.com/NVIDIA/nvidia-docker/issues/1730
    - https://docs.nvidia.com/deploy/nvidia-smi/index.html
    """
    stated = stated_nvidia_smi_failure(facts)
    if stated is not None and stated.message.endswith("Unknown Error"):
        cgroups = no_cgroups_hit(facts, "as the input states")  # config.toml pasted with it
        if cgroups is not None:
            return [cgroups]
    if stated is not None and stated.name != MISMATCH:
        return [_stated_hit(stated)]
    absent = _absence_hit(facts) if stated is None else None
    if absent is not None:
        return [absent]
    facts.cuda_check()  # Skip without --deep, and on a node with no NVIDIA driver at all
    hits = []
    for step in facts.deep().steps:
        reason = step.reason or ""
        if step.name != "nvml_health" or step.status != "unavailable" or "NVML" not in reason:
            continue
        entry = facts.matrix.cuda_error(text=reason, apis=NVML_APIS)
        if entry is None or entry.cause is None or entry.fix is None or entry.fault != "node":
            continue
        hits.append(
            Hit(
                f"nvmlInit failed with {_label(entry)} ('{entry.message}'): {entry.cause}",
                evidence={"step": step.name, "reason": reason, "name": entry.name},
                fix=_fix(entry.fix),
            )
        )
    return hits


MISMATCH = "NVML_ERROR_LIB_RM_VERSION_MISMATCH"
NOT_LOADED = "NVML_ERROR_DRIVER_NOT_LOADED"

# a stated absence whose reason is the host's (the module not built, not loaded, refused,
# displaced by nouveau, the driver not installed) rather than a container's missing GPUs
HOST_REASON = lazy(
    r"kernel module|nouveau|Secure Boot|not installed|probe routine|modprobe|NVIDIA driver is "
    r"not loaded|found no usable NVIDIA driver"
)


def _torch_cuda_stated(facts: Facts) -> bool:
    try:
        return facts.torch_cuda() is not None
    except Skip:  # no package facts
        return False


def _absence_hit(facts: Facts) -> Hit | None:
    """A pasted input that states the host has no driver for a reason of the host's (lsmod
    without an nvidia module, modprobe's or the shell's line, nvidia-smi's message cut short):
    NVML's NVML_ERROR_DRIVER_NOT_LOADED, with the table's fix. Where torch is a CUDA build,
    DRV103 says it with torch's versions instead."""
    section = facts.report.gpu
    reason = section.reason or ""
    said = reason.startswith("no usable NVIDIA driver") or HOST_REASON.search(reason)
    if not section.stated_absent or not said or _torch_cuda_stated(facts):
        return None
    entry = facts.matrix.cuda_error(name=NOT_LOADED, apis=NVML_APIS)
    if entry is None or entry.fix is None or entry.cause is None:
        return None
    return Hit(
        f"As the input states, {reason.rstrip('.')}. NVML, nvidia-smi and CUDA cannot reach "
        f"the GPU ({_label(entry)}): {entry.cause}",
        evidence={"name": entry.name, "reason": reason, "source": section.source or "input"},
        fix=_fix(entry.fix),
    )


_SMI_SAID = ("nvidia-smi failed: ", "nvidia-smi found no usable NVIDIA driver: ")


def nvidia_smi_said(facts: Facts) -> str | None:
    """What a pasted nvidia-smi failure output said: the GPU section's reason when nothing
    else stated the GPUs, else its note (another section of the paste gave the driver)."""
    section = facts.report.gpu
    texts = [section.reason or ""] if not section.is_ok else list(section.notes)
    return next((t for t in texts if any(p in t for p in _SMI_SAID)), None)


def stated_nvidia_smi_failure(facts: Facts) -> CudaError | None:
    """The table's entry for the failure a pasted nvidia-smi output states (the GPU section is
    then unknown, its reason the message: ``ingest/nvidia_smi.parse_failure``)."""
    said = nvidia_smi_said(facts)
    if said is None:
        return None
    entry = facts.matrix.cuda_error(text=said, apis=NVML_APIS)
    if entry is None or entry.cause is None or entry.fix is None or entry.fault != "node":
        return None
    return entry


def _stated_hit(entry: CudaError) -> Hit:
    assert entry.fix is not None  # stated_nvidia_smi_failure returns entries with a fix
    return Hit(
        f"nvidia-smi failed with {_label(entry)} ('{entry.message}', as the input states): "
        f"{entry.cause}",
        evidence={"name": entry.name, "message": entry.message, "source": "input"},
        fix=_fix(entry.fix),
    )


@from_log("DRV151")
def nvml_failure_in_log(facts: Facts, line: LogLine) -> Hit:
    """The NVML or nvidia-smi failure the line states, from the table."""
    entry = stated_error(facts, line, NVML_APIS)
    if entry is None:
        raise NotStated(
            f"line {line.line} states no NVML return code the table knows", "log.nvml_error"
        )
    if entry.message == _NO_DEVICES:
        seen = _gpus_seen(facts)
        if seen:  # the node's NVML enumerates GPUs: the command chose none of them
            model = seen[0].name or "model not reported"
            return Hit(
                f"nvidia-smi printed '{_NO_DEVICES}' (line {line.line}), yet the node's NVML "
                f"sees {len(seen)} GPU(s) ({model}): the command selected a GPU that is "
                "not there (`-i`/`--id` past the last index, another node's UUID or bus id), "
                "or it ran where no GPU was given (a container without GPUs, a Slurm step "
                "without --gres)",
                evidence={"line": line.line, "name": entry.name, "gpus": len(seen)},
                fix=fix(
                    "Select a GPU the node has: `nvidia-smi -L` lists the indices and UUIDs",
                    "manual",
                    manual("nvidia-smi -L   # then pass an index or UUID it lists"),
                ),
            )
    if entry.message.endswith("Unknown Error"):
        stated = no_cgroups_hit(facts, f"line {line.line}")  # config.toml pasted beside it
        if stated is not None:
            return stated
    if entry.name == "NVML_ERROR_OPERATING_SYSTEM":  # WSL 2's TCC GPUs, containers' cgroups
        return os_blocked_hit(facts, line, entry)
    return _hit(entry, line, "NVML / nvidia-smi failed with", facts)


_NO_DEVICES = "No devices were found"


def _gpus_seen(facts: Facts) -> tuple[Gpu, ...]:
    """The GPUs the node's own NVML reported (none where the node was not read)."""
    try:
        return facts.gpus() if facts.gpu_info().driver_source == "nvml" else ()
    except Skip:
        return ()


@from_log("GPU102")
def driver_library_mismatch_in_log(facts: Facts, line: LogLine) -> Hit:
    """NVML's `Driver/library version mismatch` (NVML_ERROR_LIB_RM_VERSION_MISMATCH) and CUDA's
    803 both say the user-space driver libraries are another version than the loaded kernel
    module: after a driver update without a reboot, or a container carrying its own driver
    libraries. The kernel module's version, where the node states it, is named; the kernel's
    own `NVRM: API mismatch` line states both versions."""
    api = _API_MISMATCH.search(line.text)
    entry = stated_error(facts, line, (*NVML_APIS, *CUDA_APIS))
    if api is None and (entry is None or entry.fix is None):
        raise Skip("the table has no entry for the line")
    try:
        kernel: str | None = str(facts.gpu_info().driver_version or "") or None
    except Skip:
        kernel = None
    if api is not None and api.group("kernel"):  # the kernel's own words
        kernel = api.group("kernel")
    module = f" (the node's driver: {kernel})" if kernel else ""
    # nvidia-smi's 'NVML library version: 535.183' under the mismatch: the user-space side
    library = line.stated.get("nvml_library_version")
    if library:
        module += f"; the user-space driver (NVML library) is {library}"
    if api is not None:
        versions = ", ".join(
            f"{what} {api.group(key)}"
            for what, key in (("user-space driver", "client"), ("kernel module", "kernel"))
            if api.group(key)
        )
        said = f"NVRM: API mismatch ({versions + '; ' if versions else ''}line {line.line})"
    else:
        assert entry is not None
        said = f"{_label(entry)} ('{entry.message}', line {line.line})"
    step = (
        "reboot the node (or stop every GPU process and reload the modules: `rmmod nvidia_uvm "
        "nvidia_drm nvidia_modeset nvidia && modprobe nvidia`) so the kernel module matches the "
        "installed user-space driver; compare `cat /proc/driver/nvidia/version` with the "
        "libnvidia-ml / libcuda version; in a container, do not ship driver libraries: let the "
        "NVIDIA container runtime mount the host's"
    )
    summary = (
        "Make the kernel module and the driver libraries the same version: sudo reboot "
        "after the driver update (or, with no GPU process left, reload the modules: sudo "
        "rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia); if a "
        "reboot does not help, reinstall one driver branch (sudo apt install --reinstall "
        f"nvidia-driver-{library.split('.')[0] if library else '<branch>'})"
    )
    actions = [
        manual("sudo reboot"),
        manual("sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"),
        manual(step),
    ]
    if library:
        branch = library.split(".")[0]
        actions.append(
            manual(
                f"cat /proc/driver/nvidia/version  (the loaded module; the libraries are "
                f"{library}): after the reboot it should be {branch}.x; if not, sudo apt "
                f"install --reinstall nvidia-driver-{branch} nvidia-dkms-{branch} and reboot"
            )
        )
    if entry is not None and entry.number == 803:
        # CUDA's 803: threads fix it by a reboot, a driver (re)install that brings libcuda and
        # the module to one release (easydiffusion#134, #379), or a compat libcuda taken off
        # the loader's path
        package = f"nvidia-driver-{kernel.split('.')[0]}" if kernel else "nvidia-driver-<branch>"
        summary += (
            f"; for this node: sudo apt install --reinstall {package} so libcuda and the "
            "module are one release; take a cuda-compat libcuda (/usr/local/cuda*/compat) off "
            "LD_LIBRARY_PATH"
        )
        actions.append(
            manual(
                f"sudo apt install --reinstall {package}  (or the driver from NVIDIA's "
                "installer), then reboot"
            )
        )
    if entry is not None and entry.number == 803 and _in_container(facts):
        # in a container the libcuda that loads is the image's, not the host's: its CUDA
        # forward-compatibility copy (/usr/local/cuda/compat) or driver libraries it carries
        summary, actions = _container_803_fix(kernel)
        return Hit(
            f"{said}, in a container ({_container_evidence(facts)}): the libcuda the process "
            "loads is not the host driver's that the NVIDIA runtime mounts, but one the image "
            "carries: its CUDA forward-compatibility libcuda (/usr/local/cuda*/compat, for "
            "datacenter GPUs on the driver branches NVIDIA lists) or driver libraries installed "
            f"in it, used with a host kernel module it does not support{module}",
            evidence={
                "line": line.line,
                "name": entry.name,
                "kernel_driver": kernel,
                "container": True,
            },
            fix=fix(summary, "manual", *actions),
        )
    return Hit(
        f"{said}: the NVIDIA kernel module and "
        f"the user-space driver libraries are different versions{module}: the driver was "
        "updated without a reboot, or a container carries its own driver libraries",
        evidence={
            "line": line.line,
            "name": entry.name if entry is not None else "NVRM API mismatch",
            "kernel_driver": kernel,
        },
        fix=fix(summary, "manual", *actions),
    )


def _in_container(facts: Facts) -> bool:
    system = facts.report.system
    return bool(system.is_ok and system.data and system.data.container not in (None, "none"))


def _container_evidence(facts: Facts) -> str:
    system = facts.report.system
    data = system.data if system.is_ok else None
    return (data.container_evidence if data is not None else None) or "as the input states"


def _container_803_fix(kernel: str | None) -> tuple[str, list[Action]]:
    """803 in a container: the image's libcuda off the loader's path (the host's, which the
    NVIDIA runtime mounts, then loads), or a host driver the image's CUDA supports."""
    summary = (
        "Let the container load the host's libcuda: take the image's compat directory off the "
        "loader's path (unset LD_LIBRARY_PATH entries under /usr/local/cuda*/compat, or drop "
        "the cuda-compat package from the image) and do not install driver libraries in the "
        "image; or upgrade the host driver to the CUDA the image needs (then reboot the host)"
    )
    actions = [
        manual(
            "in the container: ldconfig -p | grep libcuda.so.1; echo $LD_LIBRARY_PATH  (a "
            "/usr/local/cuda*/compat/libcuda.so.1 first is the image's forward-compatibility "
            "copy)"
        ),
        manual(
            "export LD_LIBRARY_PATH=$(echo $LD_LIBRARY_PATH | tr ':' '\\n' | grep -v compat | "
            "paste -sd:)  (or remove cuda-compat-* from the image)"
        ),
        manual(
            "on the host: nvidia-smi; cat /proc/driver/nvidia/version"
            + (f"  (the module is {kernel})" if kernel else "")
            + ": upgrade the host driver to one that supports the image's CUDA, then reboot"
        ),
        manual(
            "docker run --gpus all ...  (the NVIDIA runtime mounts the host's libcuda; an image "
            "must not ship libcuda.so.* or libnvidia-*.so.* of its own)"
        ),
    ]
    return summary, actions


# the kernel module's own line (dmesg, journalctl) when a client of another version opens it
_API_MISMATCH = lazy(
    r"API mismatch: the client (?:'[^']*' \(pid [0-9]+\) )?"
    r"(?:has the version (?P<client>[0-9.]+))?"
    r"(?:.*?this kernel module has(?:\s|NVRM:|#012)*the version (?P<kernel>[0-9.]+))?"
)
_OTHER_PROCESS = lazy(r"Process (?P<pid>[0-9]+) has (?P<held>[0-9.]+ [KMGT]iB) memory in use")


@from_log("DRV104")
def memory_held_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """torch's out-of-memory message (since 2.1) names every other process holding memory on
    the GPU ('Process 4242 has 61.20 GiB memory in use'; the process itself is 'this process'):
    those establish the cause; without them, total - free - this process's own memory does
    (memory.oom_held_hit). Inside a container torch cannot tell itself from the others (NVML
    reports the host's pids): the one listed process that holds all PyTorch allocated and
    reserved is the job itself, not another holder (memory.listed_processes)."""
    if line.stated.get("pinned_call"):
        return None  # the allocation that failed pinned host memory: not the GPU's memory
    listed = listed_processes(line.text)
    others = [
        (m.group("pid"), m.group("held"))
        for m in _OTHER_PROCESS.finditer(line.text)
        if m.group("pid") != listed.itself
    ]
    if listed.itself is not None and not others:
        # the one process listed is this one under the host's pid (a container): what is
        # left of the GPU beside it says whether anything else held memory
        own = dict(listed.processes)[listed.itself]
        if listed.total is None or listed.free is None:
            return None
        rest = listed.total - listed.free - own
        if rest < GIB or rest < 0.1 * listed.total:
            return None
        raise NotStated(
            f"line {line.line} lists only this process (pid {listed.itself} from the host's "
            f"view), yet {rest / GIB:.2f} GiB of the GPU is held beside it",
            "gpu.processes",
        )
    big = oversize(line.text, facts)
    if big is not None:  # the job alone is larger than the GPU: nothing others free makes room
        raise StatedOtherwise(f"line {line.line}: {big.said()}", "gpu.processes")
    if not others:
        stated = oom_held_hit(line.line, line.text)  # the numbers say others held it
        if stated is not None:
            return stated
        share = oom_share(line.text)
        if share is not None and not listed.processes:
            # total - free - this process's own: what anything else on the GPU held
            raise StatedOtherwise(
                f"line {line.line}'s numbers leave {share.others / GIB:.2f} GiB for other "
                f"processes (GPU {share.gpu}: {share.total / GIB:.2f} GiB, "
                f"{share.free / GIB:.2f} GiB free, this process {share.own / GIB:.2f} GiB)",
                "gpu.processes",
            )
        raise NotStated(
            f"line {line.line} does not name other processes holding GPU memory", "gpu.processes"
        )
    held = ", ".join(f"process {pid} holds {size}" for pid, size in others)
    return Hit(
        f"the GPU ran out of memory while other processes held it (line {line.line}: {held})",
        evidence={"line": line.line, "processes": [pid for pid, _ in others]},
        fix=fix(
            "Stop the processes holding the GPU's memory before the job starts",
            "manual",
            manual(
                "nvidia-smi --query-compute-apps=pid,used_memory --format=csv; kill "
                + " ".join(pid for pid, _ in others)
                + " (a stale run's workers, a vLLM server, Ray workers: ray stop --force)"
            ),
        ),
    )
