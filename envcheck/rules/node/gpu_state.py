"""The GPU node's state as the kernel and the programs state it in a log
(matrices/signatures/gpu_state.toml).

The NVIDIA kernel driver's Xid events (`NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen
off the bus.`) are read by their NUMBER from matrices/hardware/xid.toml (the driver's name for
it, what it means, who is at fault, what to do), for any Xid the table knows: DRV200 words the
node's faults (driver, hardware, thermal/power), DRV201 the program's own (13, 31, 43, 45: not a
node fault); uncorrectable ECC (48, 94, 95) is GPU110's cause and row remapping (63, 64) GPU111's.
The GPU the line names (its PCI bus id) goes into the reset command.

A program's own statement that CUDA is not usable (`torch.cuda.is_available()` printing False,
`type torch.cuda.FloatTensor not available`, an fp16 op that ran on the CPU) is TOR110's or
DRV103's cause by the torch build the log or the node states (``torch_build``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import Xid
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, ...` (older drivers: `NVRM: Xid (0000:01:00): 3, ...`)
_XID = lazy(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})?[^)]*\): (?P<number>[0-9]+)"
)
# `NVRM: GPU at PCI:0000:2b:00: ... has fallen off the bus` / `NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.`
_OFF_BUS = lazy(
    r"NVRM: GPU (?:at )?(?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[0-9.]*:? "
    r"(?:GPU )?has fallen off the bus"
)
FALLEN_OFF_THE_BUS = 79
_PID = lazy(r"pid=(?P<pid>[0-9]+)(?:, name=(?P<name>[^,]+))?")
# Xid 154's recovery action: 'GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)'
_RECOVERY = lazy(r"to 0x[0-9a-fA-F]+ \((?P<action>[^)]+)\)")

# the signatures of gpu_state.toml that say CUDA is not usable, and the one whose cause may be
# the program's own placement of the model (fp16 on the CPU)
REPL = "cuda-is-available-repl"
CUDA_UNUSABLE = (
    "cuda-is-available-false",
    REPL,
    "autocast-cuda-unavailable",
    "torch-cuda-tensor-type-unavailable",
    "half-op-on-cpu",
    "setup-py-cuda-unavailable-refusal",
)
HALF_ON_CPU = "half-op-on-cpu"
# torch's collect_env prints it for every report, wanted or not: it says CUDA is unusable only
# where the node has GPUs
_COLLECT_ENV = lazy(r"Is CUDA available")


def xid_of(line: LogLine) -> tuple[int, str | None] | None:
    """The Xid number a driver line names and the GPU's PCI bus id (0000:3b:00.0), if stated; a
    `GPU has fallen off the bus` line without an Xid is Xid 79."""
    found = _XID.search(line.text)
    if found is not None:
        pci = found.group("pci")
        return int(found.group("number")), f"{pci}.0" if pci else None
    off = _OFF_BUS.search(line.text)
    if off is not None:
        return FALLEN_OFF_THE_BUS, f"{off.group('pci')}.0"
    return None


def _steps(entry: Xid, pci: str | None) -> str:
    """The table's action with the GPU the line names in place of `<GPU>`."""
    return entry.action.replace("<GPU>", pci) if pci else entry.action


def _actions(entry: Xid, pci: str | None, text: str) -> list[str]:
    """Concrete commands for the Xid's class, the GPU named where the line names it."""
    gpu = pci or "<GPU index or PCI bus id>"
    reset = f"sudo nvidia-smi -r -i {gpu}  (stop the processes using that GPU first)"
    if entry.number == 154:
        wanted = _RECOVERY.search(text)
        if wanted is not None and "reboot" in wanted.group("action").lower():
            return ["sudo reboot", "dmesg | grep -i xid  (the Xid before it names the cause)"]
        return [reset, "sudo reboot  (if the reset fails)"]
    if entry.number == FALLEN_OFF_THE_BUS:
        return [
            "sudo reboot",
            "monitor the GPU's temperature (nvidia-smi -q -d TEMPERATURE,POWER); reseat the "
            "power connectors and the card in its slot; check or replace the PSU; update the "
            "system BIOS",
            "sudo nvidia-smi -lgc 300,1500  (lock the clocks below boost: tests for power trouble)",
            "lspci -d 10de: -vv | grep -i -e LnkSta -e LnkCap  (the link it trained at)",
        ]
    commands = [reset, "sudo reboot  (if the reset fails)"]
    if entry.fault == "hardware":
        commands.append("nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER")
    if entry.number in (119, 120):
        commands += [
            "sudo nvidia-smi -pm 1  (persistence mode)",
            "update the NVIDIA driver to a newer release of its branch",
            "proprietary kernel module only: echo 'options nvidia NVreg_EnableGpuFirmware=0' | "
            "sudo tee /etc/modprobe.d/nvidia-gsp.conf && sudo update-initramfs -u && sudo reboot",
        ]
    if entry.number == 74:
        commands += ["nvidia-smi nvlink -s", "nvidia-smi nvlink -e"]
    if entry.fault == "thermal-power" or entry.number == 62:
        commands.append("nvidia-smi -q -d TEMPERATURE,PERFORMANCE,POWER")
    return commands


def _xid_hit(facts: Facts, line: LogLine, faults: Iterable[str]) -> Hit | None:
    """The finding for an Xid line whose table entry is of one of ``faults``; None when the
    table puts it elsewhere, Skip when the line names no Xid."""
    named = xid_of(line)
    if named is None:
        raise Skip("the line names no Xid")
    number, pci = named
    entry = facts.matrix.xid(number)
    where = f"GPU {pci}" if pci else "a GPU"
    if entry is None:
        if "application" in faults:
            return None
        return Hit(
            f"The NVIDIA kernel driver logged Xid {number} on {where} (line {line.line}); "
            "matrices/hardware/xid.toml has no entry for it",
            evidence={"line": line.line, "xid": number, "pci": pci},
            fix=fix(
                f"Look Xid {number} up in NVIDIA's Xid catalog; reset the GPU or reboot the node "
                "if programs on it keep failing",
                "manual",
                manual("https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"),
                manual(f"sudo nvidia-smi -r -i {pci or '<GPU>'}  (or sudo reboot)"),
            ),
        )
    if entry.fault not in faults:
        return None
    pid = _PID.search(line.text)
    program = (
        f" (pid {pid.group('pid')}"
        + (f", {pid.group('name').strip()}" if pid.group("name") else "")
        + ")"
        if pid
        else ""
    )
    if entry.fault == "application":
        return Hit(
            f"Xid {number} ({entry.name}) on {where} (line {line.line}): {entry.meaning} The "
            f"program that ran{program} caused it; it is not a fault of the node.",
            evidence={"line": line.line, "xid": number, "pci": pci, "fault": entry.fault},
            fix=fix(
                entry.action,
                "manual",
                manual("CUDA_LAUNCH_BLOCKING=1 python <the program>  (the failing kernel's stack)"),
                manual("compute-sanitizer python <the program>  (the illegal access)"),
            ),
        )
    return Hit(
        f"Xid {number} ({entry.name}) on {where} (line {line.line}; likely {entry.fault} "
        f"fault): {entry.meaning}",
        evidence={"line": line.line, "xid": number, "pci": pci, "fault": entry.fault},
        fix=fix(
            _steps(entry, pci), "manual", *(manual(c) for c in _actions(entry, pci, line.text))
        ),
    )


_NODE_FAULTS = ("driver", "hardware", "thermal-power")


@rule("DRV200", "nvidia-xid", Severity.ERROR)
def nvidia_xid(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA kernel driver logged an Xid error that points at the GPU, its driver or firmware

    ## What it checks
    Only a log states it: the kernel's `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen
    off the bus.` (dmesg, journalctl -k, a job log that captured it). The Xid's number is looked
    up in matrices/hardware/xid.toml (NVIDIA's nverror.h and its "XID Errors" document): 61/62
    (the GPU's micro-controller), 74 (NVLink), 79 (fallen off the bus), 92 (high single-bit ECC
    rate), 119/120 (GSP firmware), 154 (the recovery action the GPU now needs). Xids of the
    program's own fault are DRV201; uncorrectable ECC GPU110; row remapping GPU111.

    ## Why it matters
    After these the GPU (or the whole node) stays unusable or unreliable until it is reset or
    repaired: every job placed on it fails again (CUDA error: unspecified launch failure,
    NCCL hangs, `nvidia-smi` saying 'Unable to determine the device handle').

    ## Example
    `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.`

    ## Fix
    What the table says for the Xid: reset the GPU (`sudo nvidia-smi -r -i <GPU>`) or reboot;
    for 79 reboot and check the GPU's power, seating and cooling; for 119/120 persistence mode,
    a newer driver, or GSP firmware off (`NVreg_EnableGpuFirmware=0`, proprietary module); RMA
    when hardware Xids recur.

    ## References
    - https://docs.nvidia.com/deploy/xid-errors/index.html
    - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    - https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/common/sdk/nvidia/inc/nverror.h
    """
    raise Skip("only the kernel log states an Xid", "log.gpu_state")


@rule("DRV201", "nvidia-xid-application", Severity.INFO)
def nvidia_xid_application(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA kernel driver logged an Xid that the program's own fault causes (not the node)

    ## What it checks
    Only a log states it: `NVRM: Xid (PCI:...): 13|31|43|45, pid=...` (graphics engine
    exception, GPU memory page fault, GPU stopped processing, preemptive cleanup), as
    matrices/hardware/xid.toml classes them from NVIDIA's "XID Errors" document.

    ## Why it matters
    These follow the program's own illegal memory access or exception (or its exit); the GPU
    stays healthy, so draining or resetting the node does not help: the program must be fixed.

    ## Example
    `NVRM: Xid (PCI:0000:3b:00): 31, pid=2171, Ch 00000010, intr 10000000. MMU Fault: ...`

    ## Fix
    Debug the program the pid names: rerun with `CUDA_LAUNCH_BLOCKING=1` or under
    `compute-sanitizer`. Only when the Xids follow one GPU across programs, or come with
    hardware Xids (48, 63, 64, 79, 94, 95), look at the GPU.

    ## References
    - https://docs.nvidia.com/deploy/xid-errors/index.html
    """
    raise Skip("only the kernel log states an Xid", "log.gpu_state")


@from_log("DRV200")
def xid_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """An Xid of the node's fault (driver, hardware, thermal/power), worded from the table."""
    return _xid_hit(facts, line, _NODE_FAULTS)


@from_log("DRV201")
def application_xid_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """An Xid the program's own fault causes: named as the program's, not the node's."""
    return _xid_hit(facts, line, ("application",))


@from_log("GPU110")
def uncorrectable_ecc_xid_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Xid 48/94/95: an uncorrectable ECC error of the GPU the line names."""
    return _xid_hit(facts, line, ("hardware",))


@from_log("GPU111")
def row_remap_xid_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Xid 63/64: a retirement/remapping pending (reset to apply) or failed (replace the GPU)."""
    return _xid_hit(facts, line, ("hardware",))


def torch_build(facts: Facts) -> Literal["cpu", "cuda"] | None:
    """Whether the torch the log or the node states is a CPU-only build (+cpu) or a CUDA build
    (+cuXYZ); None when neither is stated."""
    try:
        version = facts.torch_version()
    except Skip:
        return None
    local = (version.local or "").lower()
    if local == "cpu" or facts.torch_is_cpu() is True:  # +cpu, 'CUDA used to build: None'
        return "cpu"
    if local.startswith("cu"):
        return "cuda"
    try:
        build = facts.torch()
    except Skip:
        return None
    return "cuda" if build is not None and build.cuda else None


def cuda_unusable_cause(facts: Facts, line: LogLine, code: str) -> None:
    """For a line that says CUDA is not usable: return when ``code`` (TOR110 or DRV103) is the
    cause the torch build establishes, raise NotStated when the log does not say which, and
    RuledOut (returned by the caller as None) is signalled by raising LookupError."""
    if line.signature == REPL:  # what the call returned is on the next line
        returned = line.stated.get("cuda_available") if line.stated else None
        if returned is None:
            raise NotStated("the REPL line is not followed by what is_available() returned")
        if returned == "True":
            raise LookupError("CUDA is available")
    build = torch_build(facts)
    if _COLLECT_ENV.search(line.text):
        try:
            gpus = facts.gpus()
        except Skip:
            gpus = ()
        if not gpus:
            raise NotStated("collect_env prints 'Is CUDA available' on every node: no GPU is known")
    if build is None:
        raise NotStated(
            "the log does not state the torch build (+cpu: a CPU-only build; +cuXYZ: a CUDA "
            "build that sees no driver or GPU)",
            fact="torch",
        )
    wanted = "cpu" if code == "TOR110" else "cuda"
    if build != wanted:
        raise LookupError(build)
    if code == "DRV103" and line.signature == HALF_ON_CPU:
        raise NotStated(
            "a CUDA build ran an fp16 op on the CPU: the program may not have moved the model "
            "to the GPU (model.to('cuda')), or no GPU is visible"
        )
