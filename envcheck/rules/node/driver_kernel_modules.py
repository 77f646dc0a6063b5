"""The NVIDIA kernel module's flavour against the GPU: the open module (nvidia-open, the
.run installer's default from 560 on) drives only GPUs with a GSP, Turing and newer (DRV227).
Stated by the module's own dmesg lines; the fix is the proprietary module of the same
release, in the package manager's, the .run installer's and akmods' words. The module loaded
and found the GPU but could not initialise it, RmInitAdapter (DRV228): the fix from what the
module's lines state, its GSP firmware, a reset, power, the PCI address window."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
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


@rule("DRV228", "gpu-initialisation-failed", Severity.ERROR)
def gpu_initialisation_failed(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA kernel module is loaded but could not initialise a GPU (RmInitAdapter failed)

    ## What it checks
    Only a log states it: the kernel module's dmesg lines `NVRM: GPU 0000:01:00.0:
    RmInitAdapter failed! (0x62:0x40:2168)` and `rm_init_adapter failed, device minor number
    0`, and the lines that say why before them: `RmInitAdapter: Cannot initialize GSP firmware
    RM`, `unexpected WPR2 already up, cannot proceed with booting GSP`, `GPU does not have the
    necessary power cables connected.`, `This PCI I/O region assigned to your NVIDIA device is
    invalid`. RmInitAdapter's two numbers are read against `hardware/nvrm_init.toml`: the
    stage that failed (osinit.c's rm_init_status; 0x60-0x62 the GSP firmware) and the
    NV_STATUS code (0xf the GPU lost from the bus, 0x45 its interrupt not firing, 0x65 a
    timeout).

    ## Why it matters
    The driver, its version and nouveau are all in order, yet the GPU is not usable:
    `nvidia-smi` says `No devices were found` (or hangs), CUDA sees no device. Reinstalling the
    same driver does not help; what does depends on the stage: the GSP firmware against the
    module flavour (the open modules always boot GSP; the proprietary ones can run Turing to
    Hopper without it, `NVreg_EnableGpuFirmware=0`; NVIDIA's README says Blackwell and later
    are only supported by the open modules), a GPU left in a bad state that needs a full power
    cycle, the GSP firmware file of the driver's release missing, missing auxiliary power, or a
    PCI address window the system firmware did not assign.

    ## Example
    `NVRM: GPU 0000:05:00.0: RmInitAdapter failed! (0x62:0xffff:1622)` after `RmInitAdapter:
    Cannot initialize GSP firmware RM` with the open module 525.60.11 on an RTX 3060 Ti.

    ## Fix
    By what the lines state. GSP firmware with the open module: the proprietary module of the
    same release (nvidia-driver-<branch> without -open, the .run installer's
    --kernel-module-type=proprietary) with GSP off (`options nvidia NVreg_EnableGpuFirmware=0`
    in /etc/modprobe.d); with the proprietary module on a Blackwell GPU: the open module
    (nvidia-driver-<branch>-open, --kernel-module-type=open). No firmware image found (0x61):
    reinstall the driver package that ships /lib/firmware/nvidia/<version>/. WPR2 already up:
    power the node off and on (the BMC's power cycle), not a warm reboot. R515-R525's open
    module on a GPU that is not a data-center one (`Open nvidia.ko is only ready for use on
    Data Center GPUs`): `options nvidia NVreg_OpenRmEnableUnsupportedGpus=1`, or the
    proprietary module of the release. Power: connect the
    GPU's PCIe power cables. PCI region invalid: Above 4G Decoding in the firmware setup, or `pci=realloc`.
    The proprietary module's own refusal of a Blackwell GPU, `NVRM: installed in this system
    requires use of the NVIDIA open kernel modules.` (or a report saying the open kernel
    modules are required): the open module of the same release.
    Otherwise: the NVRM lines above, reseat the GPU, its power and slot, `nvidia-bug-report.sh`.

    ## References
    - NVIDIA/open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/osinit.c
    - NVIDIA/open-gpu-kernel-modules kernel-open/common/inc/nvstatuscodes.h
    - NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/nv-reg.h (EnableGpuFirmware)
    - https://github.com/NVIDIA/open-gpu-kernel-modules/issues/820
    - https://forums.developer.nvidia.com/t/unix-graphics-feature-deprecation-schedule/60588
    - https://download.nvidia.com/XFree86/Linux-x86_64/570.144/README/kernel_open.html
    """
    raise Skip("only the kernel module's own lines state that a GPU failed to initialise", "log")


_INIT_PAIR = lazy(r"RmInitAdapter failed! \((?P<stage>0x[0-9a-fA-F]+):(?P<status>0x[0-9a-fA-F]+)")
_GSP_LINE = lazy(r"GSP|gsp|bootstrap")
_WPR2 = lazy(r"WPR2 already up|may need to be reset")
_POWER = lazy(r"necessary power cables")
_NO_IMAGE = lazy(r"No firmware image found")
_FIRMWARE_FETCH = 0x61
_BAR = lazy(r"PCI I/O region assigned to your NVIDIA device is invalid")
_OPEN_REQUIRED = lazy(
    r"requires use of the NVIDIA open kernel modules|open kernel modules? (?:being|is|are) required"
    r"|(?:need|require)s? (?:the )?(?:NVIDIA )?open kernel modules?"
)
# R515-R525's open module refusing a GPU that is not a data-center one (its README: GeForce
# and workstation support needs NVreg_OpenRmEnableUnsupportedGpus=1)
_OPEN_DATACENTER_ONLY = lazy(r"Open nvidia\.ko is only ready for use on Data Center GPUs")
_STAGE = "nvrm.init_status."
_STATUS = "nvrm.status."
_FIRMWARE_STAGES = (0x60, 0x61, 0x62)
_INSUFFICIENT_POWER = 0x1C
_GPU_LOST = 0x0F


def _named(matrix: Matrix, prefix: str, value: int) -> tuple[str, str] | None:
    """The constant of ``prefix`` whose value is ``value``: its name's last part and note."""
    for name, const in matrix.constants.items():
        if name.startswith(prefix) and int(const.value) == value:
            return name.removeprefix(prefix), const.note or ""
    return None


def _decoded(matrix: Matrix, pair: str) -> tuple[int, int, str] | None:
    """'0x62:0x40' -> (stage, status, the words for both) from hardware/nvrm_init.toml."""
    match = _INIT_PAIR.search(f"RmInitAdapter failed! ({pair}")
    if match is None:
        return None
    stage, status = int(match.group("stage"), 16), int(match.group("status"), 16)
    words = []
    if (named := _named(matrix, _STAGE, stage)) is not None:
        words.append(f"stage {named[1]}")
    if (named := _named(matrix, _STATUS, status)) is not None:
        words.append(f"status {named[0]} ({named[1]})")
    return stage, status, "; ".join(words)


def _gsp_fix(flavour: str | None) -> tuple[str, tuple[str, ...]]:
    """The module flavour against the GSP firmware, from the flavour the log states."""
    to_proprietary = (
        "Ubuntu/Debian: sudo apt install nvidia-driver-<branch>  (the proprietary module; "
        "remove nvidia-driver-<branch>-open)",
        "NVIDIA's .run installer: sudo sh NVIDIA-Linux-x86_64-<version>.run "
        "--kernel-module-type=proprietary",
        "echo 'options nvidia NVreg_EnableGpuFirmware=0' | sudo tee "
        "/etc/modprobe.d/nvidia-gsp.conf  (proprietary module only; not on Blackwell)",
    )
    to_open = (
        "Ubuntu/Debian: sudo apt install nvidia-driver-<branch>-open  (Blackwell and later "
        "need the open module)",
        "NVIDIA's .run installer: sudo sh NVIDIA-Linux-x86_64-<version>.run "
        "--kernel-module-type=open",
    )
    rebuild = ("sudo update-initramfs -u  (dracut -f on Fedora/RHEL)", "sudo reboot")
    if flavour is not None and flavour.startswith("Open"):
        return (
            "The open kernel module could not boot the GPU's GSP firmware: install the "
            "proprietary module of the same release and turn GSP off "
            "(NVreg_EnableGpuFirmware=0), then reboot",
            to_proprietary + rebuild,
        )
    if flavour is not None:
        return (
            "The proprietary kernel module could not boot the GPU's GSP firmware: on a "
            "Blackwell or later GPU install the open module of the same release "
            "(nvidia-driver-<branch>-open); on Turing to Hopper turn GSP off "
            "(NVreg_EnableGpuFirmware=0); then reboot",
            (*to_open, to_proprietary[2], *rebuild),
        )
    return (
        "The kernel module could not boot the GPU's GSP firmware: change the module flavour "
        "(`cat /proc/driver/nvidia/version` says which is loaded): with the open module, the "
        "proprietary one with GSP off (NVreg_EnableGpuFirmware=0); with the proprietary "
        "module on Blackwell or later, the open one (nvidia-driver-<branch>-open); then reboot",
        (
            "cat /proc/driver/nvidia/version  (Open Kernel Module or not)",
            *to_proprietary,
            *to_open,
            *rebuild,
        ),
    )


@from_log("DRV228")
def gpu_initialisation_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    text = line.text
    pair = _INIT_PAIR.search(text)
    decoded = (
        _decoded(facts.matrix, f"{pair.group('stage')}:{pair.group('status')}") if pair else None
    )
    if decoded is None and (stated := line.stated.get("nvrm_init")):
        decoded = _decoded(facts.matrix, stated)
    said = f"; {decoded[2]}" if decoded and decoded[2] else ""
    where = f"line {line.line}"
    steps: tuple[str, ...]
    if _OPEN_REQUIRED.search(text):
        summary = (
            "This GPU (Blackwell and later) is driven only by the open NVIDIA kernel modules and "
            "the proprietary module is loaded: install the open module of the same release "
            "(nvidia-driver-<branch>-open), then reboot"
        )
        steps = (
            "Ubuntu/Debian: sudo apt install nvidia-driver-<branch>-open  (replaces "
            "nvidia-driver-<branch>; the prebuilt linux-modules-nvidia-<branch>-open-$(uname -r) "
            "where the kernel has them)",
            "NVIDIA's .run installer: sudo sh NVIDIA-Linux-x86_64-<version>.run "
            "--kernel-module-type=open",
            "Fedora (negativo17/akmods): kernel-open in /etc/nvidia/kernel.conf, sudo akmods "
            "--rebuild; NixOS: hardware.nvidia.open = true",
            "sudo reboot",
        )
        why = "the proprietary module does not drive it; the open kernel modules are required"
    elif _OPEN_DATACENTER_ONLY.search(text):
        summary = (
            "This release's open kernel module drives only data-center GPUs by default: set "
            "its NVreg_OpenRmEnableUnsupportedGpus=1 parameter (or install the proprietary "
            "module of the same release, nvidia-driver-<branch>), then reboot"
        )
        steps = (
            "echo 'options nvidia NVreg_OpenRmEnableUnsupportedGpus=1' | sudo tee "
            "/etc/modprobe.d/nvidia-open.conf",
            "or the proprietary module: sudo apt install nvidia-driver-<branch>  (remove "
            "nvidia-driver-<branch>-open; .run: --kernel-module-type=proprietary)",
            "sudo update-initramfs -u  (dracut -f on Fedora/RHEL), then sudo reboot",
        )
        why = (
            "the open module of this release refuses GPUs that are not data-center ones "
            "unless OpenRmEnableUnsupportedGpus is set"
        )
    elif _WPR2.search(text):
        summary = (
            "The GPU was left in a bad state (its GSP's protected region still set up): reset it "
            "by powering the node off and on (not a warm reboot), then load the driver again"
        )
        steps = (
            "sudo systemctl poweroff, then power on  (or the BMC's: ipmitool chassis power cycle)",
            "a VM: stop it and reset the GPU on the host before giving it to the guest again",
        )
        why = "its GSP firmware could not boot: the GPU needs a reset"
    elif _POWER.search(text) or (decoded is not None and decoded[1] == _INSUFFICIENT_POWER):
        summary = "Connect the GPU's auxiliary PCIe power cables (and a supply that can feed it)"
        steps = ("power off, connect the GPU's 6/8/12-pin power connectors, power on",)
        why = "the GPU has too little power: its power cables are not connected"
    elif _BAR.search(text):
        summary = (
            "The system firmware assigned the GPU no PCI address window: enable Above 4G "
            "Decoding in the firmware setup, or boot with pci=realloc"
        )
        steps = (
            "firmware setup: Above 4G Decoding = Enabled (and Resizable BAR as the board allows)",
            "or add pci=realloc to GRUB_CMDLINE_LINUX in /etc/default/grub, "
            "sudo update-grub, sudo reboot",
        )
        why = "its PCI address window (BAR) is invalid"
    elif _NO_IMAGE.search(text) or (decoded is not None and decoded[0] == _FIRMWARE_FETCH):
        summary = (
            "The GSP firmware file of the driver's release is missing: reinstall the driver "
            "package (it installs /lib/firmware/nvidia/<version>/gsp_*.bin), or with a module "
            "built by hand, the .run installer of the same version without its kernel modules"
        )
        steps = (
            "ls /lib/firmware/nvidia/$(cat /sys/module/nvidia/version)/  (gsp_*.bin expected)",
            "Ubuntu/Debian: sudo apt install --reinstall nvidia-driver-<branch>-open  (or the "
            "proprietary nvidia-driver-<branch>)",
            "a hand-built open module: sudo sh NVIDIA-Linux-x86_64-<version>.run "
            "--no-kernel-modules  (the same version as the module)",
            "sudo update-initramfs -u  (the firmware goes into the initramfs), sudo reboot",
        )
        why = "the GSP firmware file of its release is missing"
    elif _GSP_LINE.search(text) or (decoded is not None and decoded[0] in _FIRMWARE_STAGES):
        summary, steps = _gsp_fix(line.stated.get("kernel_module"))
        why = "its GSP firmware did not boot"
    else:
        lost = decoded is not None and decoded[1] == _GPU_LOST
        summary = (
            "The kernel module could not initialise the GPU: read the NVRM lines above this one "
            "(sudo dmesg | grep NVRM) for the part that failed; check the GPU's power "
            "and seating and its PCIe slot or riser"
            + (" (the GPU fell off the bus)" if lost else "")
            + ", update the system firmware, and in a VM the GPU's passthrough"
        )
        steps = (
            "sudo dmesg | grep -i nvrm",
            "power off; reseat the GPU and its power cables; try another slot",
            "sudo nvidia-bug-report.sh  (for NVIDIA or the vendor)",
        )
        why = "the module could not bring it up"
    return Hit(
        f"the NVIDIA kernel module is loaded but could not initialise the GPU ({where}{said}): "
        f"{why}",
        evidence={"line": line.line},
        fix=fix(summary, "manual", *(manual(s) for s in steps)),
    )
