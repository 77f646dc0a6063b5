"""The NVIDIA driver's installer (the .run file's nvidia-installer, also under DKMS) refusing to
install, in its own words, for the two causes the CUDA installation guide's pre-installation
steps name: nouveau holds the GPU (DRV222) and no kernel headers for the running kernel
(DRV223). The fix is the guide's step, then the installer again. DRV224: the module did not
compile for the kernel (DKMS, dpkg, nvidia-installer), worded from the kernel, the module's
version and the kernel's GCC the lines state."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.kernel_packages import headers_command, kernel_packages

_BLACKLIST = (
    "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
    "/etc/modprobe.d/blacklist-nouveau.conf"
)
_INITRAMFS = "sudo update-initramfs -u  (RHEL/Fedora: sudo dracut --force)"


@rule("DRV222", "nouveau-blocks-nvidia-installer", Severity.ERROR)
def nouveau_blocks_installer(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA driver installer stopped because the nouveau driver holds the GPU

    ## What it checks
    Only a log states it: nvidia-installer's `ERROR: The Nouveau kernel driver is currently in
    use by your system.  This driver is incompatible with the NVIDIA driver, and must be
    disabled before proceeding.`, and the loaded module's own `NVRM: The NVIDIA probe routine
    was not called for 1 device(s)` (another driver obtained the GPU first) or `NVRM: GPU
    0000:01:00.0 is already bound to NovaCore.` (the driver named: nova_core on kernel 7.0,
    vfio-pci for passthrough). nouveau's own dmesg line for the GPU (`nouveau 0000:01:00.0:
    NVIDIA GM204 (124020a1)`) or lspci -k's `Kernel driver in use: nouveau` says the same.

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
    - https://github.com/beclab/Olares/pull/3963 (nova_core)
    """
    raise Skip("only the installer's output states that nouveau blocked it", "log")


def _bound_elsewhere(holder: str, line: LogLine) -> Hit:
    """The NVIDIA module's own line naming the PCI driver that holds the GPU: that driver's
    blacklist (nova_core, the Rust successor of nouveau that kernel 7.0 builds, binds Turing to
    Ada GPUs and blacklisting nouveau does not stop it: beclab/Olares#3963), or vfio-pci's
    unbinding (a GPU set aside for a VM)."""
    name = holder.lower()
    where = f"the GPU is bound to {holder} (line {line.line}), so the NVIDIA module drives none"
    if name.startswith("nova"):
        conf = (
            "printf 'blacklist nova_core\\nblacklist nova_drm\\nblacklist nova\\nblacklist "
            "nouveau\\n' | sudo tee /etc/modprobe.d/blacklist-nova.conf"
        )
        return Hit(
            where + ": the kernel's nova_core driver (nouveau's successor) claimed it",
            evidence={"line": line.line, "holder": holder},
            fix=fix(
                "Blacklist nova_core, nova_drm and nova as well as nouveau, rebuild the "
                "initramfs, reboot, then load or install the NVIDIA driver",
                "manual",
                manual(conf),
                manual(_INITRAMFS),
                manual("sudo reboot; lspci -nnk -d 10de:  ('Kernel driver in use: nvidia')"),
            ),
        )
    if name.startswith("vfio"):
        return Hit(
            where + ": vfio-pci holds it for device passthrough to a VM",
            evidence={"line": line.line, "holder": holder},
            fix=fix(
                "Take the GPU away from vfio-pci (remove its vfio-pci.ids= entry from the "
                "kernel command line or /etc/modprobe.d, rebuild the initramfs, reboot), or use "
                "it inside the VM it was set aside for",
                "manual",
                manual("grep -r vfio /etc/modprobe.d /etc/default/grub"),
                manual(_INITRAMFS),
                manual("sudo reboot"),
            ),
        )
    return Hit(
        where,
        evidence={"line": line.line, "holder": holder},
        fix=fix(
            f"Stop {holder} from claiming the GPU (blacklist its module in /etc/modprobe.d), "
            "rebuild the initramfs, reboot",
            "manual",
            manual(
                f"printf 'blacklist {name}\\n' | sudo tee /etc/modprobe.d/blacklist-{name}.conf"
            ),
            manual(_INITRAMFS),
            manual("sudo reboot"),
        ),
    )


def _nouveau_bound(line: LogLine) -> Hit:
    """nouveau bound the GPU (its dmesg line or lspci -k): the blacklist in modprobe.d, in the
    initramfs and on the kernel command line (a blacklist in /etc/modprobe.d alone does not
    stop a nouveau the initramfs loads: negativo17/nvidia-driver#73, #75), and a look at why
    the NVIDIA module did not load first (a DKMS build that failed leaves nouveau as the
    fallback)."""
    return Hit(
        f"nouveau drives the NVIDIA GPU (line {line.line}), so the NVIDIA kernel module cannot",
        evidence={"line": line.line},
        fix=fix(
            "Keep nouveau off the GPU: blacklist it in /etc/modprobe.d (with 'install nouveau "
            "/bin/true'), put modprobe.blacklist=nouveau rd.driver.blacklist=nouveau on the "
            "kernel command line, rebuild the initramfs and reboot; then check that the NVIDIA "
            "module was built for the running kernel (dkms status)",
            "manual",
            manual(
                "printf 'blacklist nouveau\\noptions nouveau modeset=0\\ninstall nouveau "
                "/bin/true\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf"
            ),
            manual(
                "Fedora/RHEL: sudo grubby --update-kernel=ALL --args='modprobe.blacklist=nouveau "
                "rd.driver.blacklist=nouveau'; Ubuntu: add both to GRUB_CMDLINE_LINUX in "
                "/etc/default/grub, sudo update-grub"
            ),
            manual(_INITRAMFS),
            manual("dkms status  (the nvidia module built for $(uname -r)?)"),
            manual("sudo reboot; lspci -nnk -d 10de:  ('Kernel driver in use: nvidia')"),
        ),
    )


@from_log("DRV222")
def nouveau_blocks_installer_in_log(facts: Facts, line: LogLine) -> Hit:
    holder = line.stated.get("gpu_bound_driver")
    if holder and line.signature == _BOUND_ELSEWHERE:
        return _bound_elsewhere(holder, line)
    if line.signature == _NOUVEAU_BOUND:
        return _nouveau_bound(line)
    if line.signature == _PROBE_NOT_CALLED:
        return Hit(
            f"the NVIDIA module loaded but drives no GPU: another driver (nouveau, a framebuffer "
            f"driver, vfio-pci) obtained it first (line {line.line})",
            evidence={"line": line.line},
            fix=fix(
                "Find the driver that holds the GPU (lspci -k: 'Kernel driver in use'); nouveau: "
                "blacklist it, sudo update-initramfs -u, reboot; vfio-pci: unbind the GPU from it",
                "manual",
                manual("lspci -nnk -d 10de:  (the 'Kernel driver in use' line of each GPU)"),
                manual(_BLACKLIST),
                manual(_INITRAMFS),
                manual("sudo reboot"),
            ),
        )
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
    found`, and Arch Linux's DKMS hook, `==> ERROR: Missing <kernel> kernel headers for module
    nvidia/<version>.`).

    ## Why it matters
    The NVIDIA kernel module is compiled for the running kernel at install time (and by DKMS
    after each kernel update); without that kernel's headers nothing is built, so no module
    loads: nvidia-smi 'couldn't communicate with the NVIDIA driver'.

    ## Example
    `ERROR: Unable to find the kernel source tree for the currently running kernel.`

    ## Fix
    Install the headers of the running kernel (`sudo apt install linux-headers-$(uname -r)`;
    RHEL/Fedora `kernel-devel-$(uname -r)`), then install the driver again or let DKMS build it
    (`sudo dkms autoinstall`), and reboot. Where the log states the kernel release, its
    distribution's package (rules/node/kernel_packages.py): Arch's `linux-zen-headers` for
    `6.2.6-zen1-1-zen`, `linux-lts-headers` for `-lts`, dnf's `kernel-devel-<release>` for
    `.fc39`/`.el9`, zypper's `kernel-default-devel` for `-default`.

    ## References
    - https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (the kernel headers and development packages for the currently running kernel)
    """
    raise Skip("only the installer's or DKMS' output states the missing headers", "log")


@from_log("DRV223")
def no_kernel_headers_in_log(facts: Facts, line: LogLine) -> Hit:
    kernel = line.stated.get("kernel_release")
    headers = headers_command(kernel)
    known = kernel_packages(kernel)
    if known is not None:
        headers += f"  (the headers of kernel {kernel} on {known.distro})"
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


# the NVIDIA driver branch a line names: /var/lib/dkms/nvidia/535.161.07/, nvidia-dkms-535
_BRANCH = lazy(r"/dkms/nvidia[a-z0-9-]*/(?P<version>[0-9]{3})\.|nvidia-dkms-(?P<package>[0-9]{3})")
_MAKE_LOG = lazy(r"(?P<path>/var/lib/dkms/nvidia[a-z0-9-]*/[0-9][0-9.]*/build/make\.log)")
_INSTALLER_LOG = "/var/log/nvidia-installer.log"
_NOT_FOUND = "modprobe-nvidia-not-found"  # modprobe finds no module: it was never built
_PROBE_NOT_CALLED = "nvrm-probe-not-called"  # the module loaded, another driver holds the GPU
_NOUVEAU_BOUND = "nouveau-bound-to-gpu"  # nouveau's own dmesg line, lspci -k
_BOUND_ELSEWHERE = "nvrm-gpu-bound-to-another-driver"  # ... and the module names that driver
# GCC 12 is the first release with -ftrivial-auto-var-init (gcc.gnu.org/gcc-12/changes.html)
_AUTO_VAR_INIT_GCC = "12"


@rule("DRV224", "nvidia-module-build-failed", Severity.ERROR)
def module_build_failed(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA kernel module did not compile for the running kernel (DKMS or nvidia-installer)

    ## What it checks
    Only a log states it: DKMS' `Error! Bad return status for module build on kernel: <kernel>
    (x86_64)` with `Consult /var/lib/dkms/nvidia/<version>/build/make.log`, dpkg's `error
    processing package nvidia-dkms-<branch> (--configure)`, nvidia-installer's `ERROR: An
    error occurred while performing the step: "Building kernel modules"` / `Unable to build the
    NVIDIA kernel module`, and the compiler lines that say why: `gcc-12: not found`,
    `unrecognized command-line option '-ftrivial-auto-var-init=zero'` and the kernel's `The
    kernel was built by: ... 12.3.0`; modprobe's `Module nvidia not found in directory
    /lib/modules/<kernel>` and modinfo's `Module nvidia not found.` (no module was built for
    it). The kernel release, the module's
    version and the kernel's GCC are read from the lines.

    ## Why it matters
    The driver's kernel module is compiled for each kernel; when that fails no module exists
    for the kernel the node boots, and after the reboot nvidia-smi 'couldn't communicate with
    the NVIDIA driver'. The usual causes: the kernel was built by a newer GCC than the one on
    PATH (Ubuntu 22.04's 6.x HWE kernels are built by gcc-12, the system's gcc is 11), the
    kernel is newer than the driver branch's module source supports, or its headers are
    missing (DRV223).

    ## Example
    `Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)` /
    `Consult /var/lib/dkms/nvidia/535.161.07/build/make.log for more information.`

    ## Fix
    When the lines name the kernel's compiler: install that GCC (`sudo apt install gcc-12`)
    and make it the one the build runs (`update-alternatives`), then rebuild (`sudo dpkg
    --configure -a` or `sudo dkms autoinstall`) and reboot. Otherwise: read the first `error:`
    in the make.log the line names; install the kernel's headers; on Ubuntu take the prebuilt
    module package for the kernel (`linux-modules-nvidia-<branch>-$(uname -r)`, what
    `ubuntu-drivers install` picks) or a newer driver branch that supports the kernel; or boot
    the previous kernel.

    ## References
    - https://github.com/dell/dkms (dkms.in: the build error and the make.log it names)
    - https://gcc.gnu.org/gcc-12/changes.html (-ftrivial-auto-var-init is new in GCC 12)
    - https://forums.developer.nvidia.com/t/i-cant-install-nvidia-driver-an-error-occurred-while-performing-the-step-building-kernel-modules/72239
    """
    raise Skip("only DKMS', dpkg's or the installer's output states a failed module build", "log")


def _kernel_gcc(line: LogLine) -> str | None:
    """The GCC major the kernel was built with: stated by a line of the log, or implied by the
    GCC 12 flag the compiler on PATH did not know."""
    stated = line.stated.get("kernel_gcc")
    if stated:
        return stated
    if "-ftrivial-auto-var-init" in line.text:
        return _AUTO_VAR_INIT_GCC
    return None


@from_log("DRV224")
def module_build_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    kernel = line.stated.get("kernel_release")
    version = line.stated.get("module_version")
    on = f" for kernel {kernel}" if kernel else " for the running kernel"
    what = f"the NVIDIA kernel module{f' {version}' if version else ''} did not compile{on}"
    branch_match = _BRANCH.search(line.text)
    branch = (
        (branch_match.group("version") or branch_match.group("package"))
        if branch_match
        else (version.split(".")[0] if version else None)
    )
    make_log = _MAKE_LOG.search(line.text)
    log_path = (
        make_log.group("path")
        if make_log
        else (f"/var/lib/dkms/nvidia/{version}/build/make.log" if version else _INSTALLER_LOG)
    )
    rebuild = "sudo dpkg --configure -a  (or sudo dkms autoinstall; the .run installer: run it again), then sudo reboot"
    gcc = _kernel_gcc(line)
    if gcc is not None:
        steps: tuple[str, ...] = (
            f"sudo apt install gcc-{gcc} g++-{gcc}  (RHEL/Fedora: the gcc the kernel's "
            "kernel-devel names)",
            f"sudo update-alternatives --install /usr/bin/gcc gcc /usr/bin/gcc-{gcc} 50",
            rebuild,
        )
        return Hit(
            f"{what} (line {line.line}): the kernel was built by gcc-{gcc}, the build ran "
            "another GCC, which does not know the kernel's flags or is not installed",
            evidence={"line": line.line, "kernel": kernel, "kernel_gcc": gcc},
            fix=fix(
                f"Install gcc-{gcc} (the kernel's compiler) and make it the build's gcc, then "
                "rebuild the module and reboot",
                "manual",
                *(manual(s) for s in steps),
            ),
        )
    target = kernel or "$(uname -r)"
    modules = f"linux-modules-nvidia-{branch or '<branch>'}-{target}"
    if line.signature == _NOT_FOUND:
        return _no_module_for_kernel(line, target, modules, rebuild)
    known = kernel_packages(kernel)
    if known is not None and not known.apt:
        return _module_build_failed_off_apt(line, what, log_path, known.distro, known.headers)
    steps = (
        f"grep -m1 -B2 -A5 'error:' {log_path}  (the first compile error says which cause)",
        f"{headers_command(target)}  (the kernel's headers: DRV223)",
        f"Ubuntu: the prebuilt module instead of a DKMS build: sudo apt install {modules}  "
        "(or sudo ubuntu-drivers install)",
        "a kernel newer than the driver branch supports: install a newer branch (sudo apt "
        "install nvidia-driver-<newer branch>) or boot the previous kernel (GRUB's "
        "'Advanced options')",
        rebuild,
    )
    return Hit(
        f"{what} (line {line.line}): no module will load after the next boot",
        evidence={"line": line.line, "kernel": kernel, "module_version": version},
        fix=fix(
            f"Read the first error in {log_path}; install the kernel's headers, the prebuilt "
            f"{modules} (Ubuntu) or a driver branch that supports the kernel, then rebuild and "
            "reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )


def _module_build_failed_off_apt(
    line: LogLine, what: str, log_path: str, distro: str, headers: str
) -> Hit:
    """The module build failed on a distribution the kernel release names that is not
    Ubuntu's or Debian's: its own headers package and DKMS' rebuild, no apt or dpkg step."""
    steps = (
        f"grep -m1 -B2 -A5 'error:' {log_path}  (the first compile error says which cause)",
        f"{headers}  (the kernel's headers on {distro}: DRV223)",
        "a kernel newer than the driver branch supports: update the driver package or boot "
        "the previous kernel",
        "sudo dkms autoinstall  (or reinstall the driver's DKMS package), then sudo reboot",
    )
    return Hit(
        f"{what} (line {line.line}): no module will load after the next boot",
        evidence={"line": line.line, "distro": distro},
        fix=fix(
            f"Read the first error in {log_path}; install the kernel's headers ({headers}) "
            "or a driver that supports the kernel, then rebuild the module and reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )


def _no_module_for_kernel(line: LogLine, kernel: str, modules: str, rebuild: str) -> Hit:
    """modprobe found no NVIDIA module for the running kernel: build or install one for it."""
    steps = (
        "dkms status  (the kernels DKMS built the NVIDIA module for)",
        f"{headers_command(kernel).split('  (')[0]} && sudo dkms autoinstall  (DKMS builds it "
        "for this kernel)",
        f"Ubuntu: sudo apt install {modules}  (the prebuilt module; or sudo ubuntu-drivers "
        "install)",
        "no driver installed at all: install the driver package (sudo ubuntu-drivers install, or "
        "NVIDIA's installer); in a container the module is the host's: load it on the host",
        rebuild,
    )
    return Hit(
        f"no NVIDIA kernel module exists for kernel {kernel} (line {line.line}): the driver was "
        "not built or installed for the running kernel",
        evidence={"line": line.line, "kernel": kernel},
        fix=fix(
            f"Build or install the NVIDIA module for kernel {kernel} (dkms autoinstall with its "
            f"headers, or Ubuntu's prebuilt {modules}), then load it or reboot",
            "manual",
            *(manual(s) for s in steps),
        ),
    )


@rule("DRV225", "nvidia-module-signature-rejected", Severity.ERROR)
def module_signature_rejected(facts: Facts) -> Iterable[Hit]:
    """Secure Boot: the kernel refused the NVIDIA module's signature

    ## What it checks
    Only a log states it: modprobe's `could not insert 'nvidia': Key was rejected by service`
    (or `Required key not available`), the kernel's answer when it enforces module signatures
    (Secure Boot) and the module is unsigned or signed by a key it does not trust;
    nvidia-installer's own `The kernel module failed to load. Secure boot is enabled on this
    system, so this is likely because it was not signed by a key that is trusted by the
    kernel`;
    nvidia-installer's `Unable to load the 'nvidia-drm' kernel module` names it or nouveau
    (DRV222) as the cause; NVML's `couldn't communicate with the NVIDIA driver` / `driver not
    loaded` in a log that also says `SecureBoot enabled` (mokutil --sb-state, bootctl), ruled
    out where it says `SecureBoot disabled`.

    ## Why it matters
    DKMS and the .run installer build the module on the node; under Secure Boot it must be
    signed with a key enrolled in the machine's MOK list, or the kernel will not load it, and
    nvidia-smi then 'couldn't communicate with the NVIDIA driver'.

    ## Example
    `modprobe: ERROR: could not insert 'nvidia': Key was rejected by service`

    ## Fix
    Enroll the key DKMS signs with (`sudo mokutil --import /var/lib/shim-signed/mok/MOK.der`,
    reboot, enroll it in the MOK manager), or on Ubuntu install the prebuilt modules Canonical
    signed (`linux-modules-nvidia-<branch>-$(uname -r)`, `sudo ubuntu-drivers install`), or
    sign the .run installer's module (`--module-signing-secret-key`/`--module-signing-public-key`),
    or disable Secure Boot in the firmware.

    ## References
    - https://wiki.ubuntu.com/UEFI/SecureBoot/DKMS
    - NVIDIA driver README, "Installing the NVIDIA Driver on Systems with Secure Boot"
    """
    state = secure_boot(facts)
    if state is None:
        raise Skip("only modprobe's or the installer's output states the rejected signature", "log")
    if state != "enabled":
        return []  # no Secure Boot: signatures do not stop the module
    gpu = facts.report.gpu
    reason = gpu.reason or ""
    if not (gpu.stated_absent and _MODULE_NOT_LOADED.search(reason)):
        raise Skip(
            "Secure Boot is enabled (mokutil --sb-state); the input does not say the NVIDIA "
            "module failed to load",
            "gpu",
        )
    return [
        Hit(
            f"the input says the NVIDIA kernel module is not loaded ({reason.rstrip('.')}) and "
            "mokutil says Secure Boot is enabled: the kernel refuses a module signed by a key "
            "it does not trust (a DKMS or .run build whose key is not enrolled)",
            evidence={"secure_boot": state, "reason": reason},
            fix=_signing_fix(),
        )
    ]


# a stated absence of the driver that a refused module explains (not a container's missing GPUs)
_MODULE_NOT_LOADED = lazy(
    r"kernel module is not loaded|not loaded|modprobe|Secure Boot|lsmod|NVIDIA driver is not "
    r"loaded|couldn't communicate"
)


def secure_boot(facts: Facts) -> str | None:
    """Secure Boot's state as a pasted mokutil --sb-state states it (system.secure_boot)."""
    system = facts.report.system
    return system.data.secure_boot if system.is_ok and system.data is not None else None


_SIGNING_STEPS = (
    "mokutil --sb-state  (SecureBoot enabled: the kernel only loads signed modules)",
    "sudo mokutil --import /var/lib/shim-signed/mok/MOK.der  (DKMS' signing key), sudo "
    "reboot, then 'Enroll MOK' in the blue MOK manager screen",
    "Ubuntu: sudo apt install linux-modules-nvidia-<branch>-$(uname -r)  (modules Canonical "
    "signed; or sudo ubuntu-drivers install)",
    "NVIDIA's .run installer: sign the module it builds (--module-signing-secret-key=... "
    "--module-signing-public-key=..., the key enrolled with mokutil)",
    "or disable Secure Boot in the firmware settings",
)


def _signing_fix() -> Fix:
    return fix(
        "Enroll the DKMS signing key (sudo mokutil --import /var/lib/shim-signed/mok/MOK.der, "
        "reboot, Enroll MOK), install Ubuntu's signed prebuilt modules, or disable Secure Boot",
        "manual",
        *(manual(s) for s in _SIGNING_STEPS),
    )


# NVML's words for a kernel module that is not loaded, the line Secure Boot leaves behind when
# it refused the module (nvidia-smi, the container runtime, nvmlErrorString)
_NOT_LOADED = lazy(
    r"couldn't communicate with the NVIDIA driver|nvml error: driver not loaded"
    r"|NVML_ERROR_DRIVER_NOT_LOADED|Failed to initialize NVML: Driver Not Loaded"
)


@from_log("DRV225")
def module_signature_rejected_in_log(facts: Facts, line: LogLine) -> Hit | None:
    if line.signature == "nvml-failure":
        # NVML found no module loaded: Secure Boot's refusal when the log says it is on
        state = (line.stated.get("secure_boot") or secure_boot(facts) or "").lower()
        if not _NOT_LOADED.search(line.text) or state == "disabled":
            return None
        if state != "enabled":
            raise NotStated("the log does not say whether Secure Boot is enabled", "log")
    said = (
        f"the NVIDIA kernel module is not loaded (line {line.line}) and the log says Secure "
        "Boot is enabled: the kernel refuses a module signed by a key it does not trust"
        if line.signature == "nvml-failure"
        else f"the kernel refused the NVIDIA module's signature (line {line.line}): Secure Boot "
        "enforces module signatures and the key that signed it is not enrolled"
    )
    return Hit(said, evidence={"line": line.line}, fix=_signing_fix())


@rule("DRV226", "nvidia-modules-in-use-during-install", Severity.ERROR)
def modules_in_use(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA driver installer stopped: the loaded driver's modules are in use

    ## What it checks
    Only a log states it: nvidia-installer's `ERROR: An NVIDIA kernel module 'nvidia-drm'
    appears to already be loaded in your kernel.  This may be because it is in use (for example,
    by an X server, a CUDA program, or the NVIDIA Persistence Daemon)`.

    ## Why it matters
    The installer replaces the kernel modules; while the display manager, a CUDA program or
    nvidia-persistenced holds them they cannot be unloaded, so the new driver is not installed
    (or half-installed beside the old one: a 'Driver/library version mismatch' follows).

    ## Example
    `ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.`

    ## Fix
    Leave the graphical session (`sudo systemctl isolate multi-user.target`), stop
    nvidia-persistenced and the programs using the GPU (`sudo fuser -v /dev/nvidia*`), unload
    the modules (`sudo modprobe -r nvidia_drm nvidia_modeset nvidia_uvm nvidia`), run the
    installer again and return to the graphical target (or reboot).

    ## References
    - nvidia-installer's message (kernel.c)
    """
    raise Skip("only the installer's output states the modules in use", "log")


@from_log("DRV226")
def modules_in_use_in_log(facts: Facts, line: LogLine) -> Hit:
    steps = (
        "sudo systemctl isolate multi-user.target  (leave the graphical session: the display "
        "manager holds nvidia-drm)",
        "sudo systemctl stop nvidia-persistenced; sudo fuser -v /dev/nvidia*  (the programs "
        "still using the GPU: stop them)",
        "sudo modprobe -r nvidia_drm nvidia_modeset nvidia_uvm nvidia",
        "run the installer again (sudo sh NVIDIA-Linux-x86_64-<version>.run), then sudo "
        "systemctl isolate graphical.target (or sudo reboot)",
    )
    return Hit(
        f"the NVIDIA installer found the driver's modules loaded and in use (line {line.line}): "
        "the new driver was not installed",
        evidence={"line": line.line},
        fix=fix(
            "Stop what uses the GPU (sudo systemctl isolate multi-user.target, stop "
            "nvidia-persistenced), unload the modules (sudo modprobe -r nvidia_drm "
            "nvidia_modeset nvidia_uvm nvidia), then run the installer again",
            "manual",
            *(manual(s) for s in steps),
        ),
    )
