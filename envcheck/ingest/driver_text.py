"""What people paste about the NVIDIA driver when nvidia-smi is not enough (or fails):

- ``cat /proc/driver/nvidia/version``: ``NVRM version: NVIDIA UNIX x86_64 Kernel Module
  535.104.05  Sat Aug 19 ...`` (``Open Kernel Module`` for the open modules): the LOADED kernel
  module's version;
- ``nvidia-container-cli info``: ``NVRM version:   535.104.05``, ``CUDA version:   12.2``, then
  per device ``Model:``, ``Architecture: 8.0`` (libnvidia-container's own labels);
- ``modinfo nvidia``: ``version:        535.104.05`` beside ``filename: .../nvidia.ko``: the
  module on disk (after an update without a reboot it differs from the loaded one);
- ``dpkg -l | grep nvidia`` / ``rpm -qa | grep nvidia``: the driver packages installed
  (``ii  nvidia-driver-535  535.104.05-0ubuntu1  amd64 ...``, ``nvidia-driver-535.104.05-1.el8``):
  the user-space driver that is installed, noted as such.

Each gives the GPU section's driver (and, for nvidia-container-cli, the CUDA it supports and the
GPUs); which of the versions it is (loaded module, file on disk, package) is in its notes.
"""

from __future__ import annotations

import re

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import QUERY_FAILED, STATED_ABSENT, Section, Status

PROC = "/proc/driver/nvidia/version"
CONTAINER_CLI = "nvidia-container-cli info"
MODINFO = "modinfo nvidia"
PACKAGES = "driver packages (dpkg/rpm)"

PROC_LINE = re.compile(
    r"NVRM version: NVIDIA UNIX (?:Open )?\S*\s*(?:Open )?Kernel Module(?: for \S+)?\s+"
    r"(?P<version>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)"
)
CLI_LINE = re.compile(r"^\s*(?:NVRM version|CUDA version|Device Index|Model|Architecture):\s+\S")
MODINFO_LINE = re.compile(
    r"^\s*(?:filename|version|license|description|alias|depends|vermagic|srcversion|firmware|retpoline|intree|name|sig_\w+|signer|parm|supported|author|import_ns):\s"
)
_MODINFO_NVIDIA = re.compile(r"^\s*filename:\s+\S*/nvidia(?:\.ko|\.ko\.\w+)\s*$", re.MULTILINE)
PACKAGE_LINE = re.compile(
    r"^\s*(?:[a-z]{2}\s+)?(?P<name>(?:nvidia-driver|nvidia-utils|libnvidia-compute|nvidia-dkms|"
    r"nvidia-kernel-common|libnvidia-gl|xserver-xorg-video-nvidia|nvidia-headless(?:-no-dkms)?)"
    r"-(?P<branch>[0-9]{3})(?:-server|-open)?(?::\w+)?)\s+(?P<version>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)"
    r"|^\s*(?P<rpm>nvidia-driver(?:-cuda)?(?:-libs)?)-(?:3:)?(?P<rpm_version>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)-"
)


def _gpu(source: Source, label: str, info: GpuInfo, note: str) -> NodeReport:
    section = Section.ok(info, source=label, notes=(note,))
    return blank(source, label).with_sections(gpu=section)


def parse_proc(source: Source) -> NodeReport:
    found = PROC_LINE.search(source.text)
    if found is None:
        raise FormatError(f"format not recognised as {PROC}: no 'NVRM version: ...' line")
    info = GpuInfo(driver_version=valid_version(found.group("version")), driver_source=PROC)
    return _gpu(source, PROC, info, "the loaded kernel module's version")


def parse_container_cli(source: Source) -> NodeReport:
    driver = cuda = None
    gpus: list[Gpu] = []
    for line in source.text.splitlines():
        key, _, value = line.strip().partition(":")
        value = value.strip()
        if key == "NVRM version":
            driver = valid_version(value)
        elif key == "CUDA version":
            cuda = valid_version(value)
        elif key == "Model" and value:
            gpus.append(Gpu(index=len(gpus), name=value))
        elif key == "Architecture" and gpus and valid_version(value):
            last = gpus[-1]
            gpus[-1] = Gpu(index=last.index, name=last.name, compute_capability=value)
    if driver is None:
        raise FormatError(f"format not recognised as {CONTAINER_CLI}: no 'NVRM version:' line")
    info = GpuInfo(
        driver_version=driver,
        cuda_driver_version=cuda,
        driver_source=CONTAINER_CLI,
        gpus=tuple(gpus) or None,
        gpus_reason=None if gpus else "nvidia-container-cli listed no device",
    )
    return _gpu(
        source,
        CONTAINER_CLI,
        info,
        "the kernel module's version, as the container runtime reads it",
    )


def parse_modinfo(source: Source) -> NodeReport:
    version = re.search(
        r"^\s*version:\s+([0-9]{3}\.[0-9]+(?:\.[0-9]+)?)\s*$", source.text, re.MULTILINE
    )
    if version is None or not _MODINFO_NVIDIA.search(source.text):
        raise FormatError(f"format not recognised as {MODINFO}: no nvidia.ko 'version:' line")
    info = GpuInfo(driver_version=valid_version(version.group(1)), driver_source=MODINFO)
    return _gpu(
        source,
        MODINFO,
        info,
        "the version of the nvidia.ko file on disk (the loaded module differs until a reboot)",
    )


def parse_packages(source: Source) -> NodeReport:
    versions: list[str] = []
    for line in source.text.splitlines():
        found = PACKAGE_LINE.match(line)
        if found:
            versions.append(found.group("version") or found.group("rpm_version"))
    if not versions:
        raise FormatError(f"format not recognised as {PACKAGES}: no NVIDIA driver package")
    newest = max(versions, key=lambda v: tuple(int(p) for p in v.split(".")))
    info = GpuInfo(driver_version=valid_version(newest), driver_source=PACKAGES)
    note = "the installed driver package's version (the loaded kernel module may differ)"
    if len(set(versions)) > 1:
        note += f"; the packages name several versions: {', '.join(sorted(set(versions)))}"
    return _gpu(source, PACKAGES, info, note)


LSPCI = "lspci"
KERNEL_LOG = "kernel log (NVRM)"

LSPCI_LINE = re.compile(
    r"^\s*(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9]\s+"
    r"(?:VGA compatible controller|3D controller|Display controller)(?: \[[0-9a-f]{4}\])?:\s+"
    r"NVIDIA Corporation\s+(?P<chip>.+?)(?:\s+\(rev [0-9a-fA-F]+\))?\s*$"
)
# lspci's other NVIDIA functions (audio, USB) of the same cards: part of its output, not GPUs
LSPCI_ANY = re.compile(r"^\s*(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9]\s+\S")
# a kernel log line of the module (dmesg's '[  12.3] NVRM: ...', journalctl's '... kernel: NVRM: ')
_NVRM_START = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?NVRM: ")


def nvrm_line(line: str) -> bool:
    """A line of the NVIDIA kernel module's log (the substring test first: linear on any line)."""
    return "NVRM: " in line and (
        "kernel: NVRM: " in line
        or _NVRM_START.match(line) is not None
        or _SYSLOG_NVRM.match(line) is not None  # journalctl / syslog: 'kernel: [  5.12] NVRM: '
    )


_SYSLOG_NVRM = re.compile(r"^.{0,80}? kernel: \[[^\]]{1,20}\]\s*NVRM: ")


_NVRM_KERNEL = (
    # the kernel module's own lines (nv.c): the API mismatch names the loaded module's version,
    # and a module load prints it
    re.compile(
        r"this kernel module has(?:\s|NVRM:)*the version (?P<version>[0-9]{3}\.[0-9.]+?)\.?(?:\s|$)"
    ),
    re.compile(
        r"NVRM: loading NVIDIA UNIX (?:Open )?\S* ?(?:Open )?Kernel Module(?: for \S+)?\s+(?P<version>[0-9]{3}\.[0-9.]+[0-9])"
    ),
)
_NVRM_CLIENT = re.compile(
    r"the client (?:'[^']*' \(pid [0-9]+\) )?has the version (?P<version>[0-9]{3}\.[0-9.]+[0-9])"
)


def _lspci_name(chip: str) -> str:
    """'GA102 [GeForce RTX 3090]' -> 'NVIDIA GeForce RTX 3090'; else the chip as lspci says."""
    marketing = re.search(r"\[([^\]]+)\]", chip)
    if marketing is None:
        return chip
    name = marketing.group(1).split("/")[0].strip()
    return name if name.startswith(("NVIDIA", "Tesla", "Quadro")) else f"NVIDIA {name}"


def parse_lspci(source: Source) -> NodeReport:
    gpus = [
        Gpu(index=i, name=_lspci_name(m.group("chip")))
        for i, m in enumerate(m for m in map(LSPCI_LINE.match, source.text.splitlines()) if m)
    ]
    if not gpus:
        raise FormatError(f"format not recognised as {LSPCI}: no NVIDIA display controller")
    info = GpuInfo(driver_source=None, gpus=tuple(gpus))
    return _gpu(source, LSPCI, info, "the GPUs on the PCI bus (lspci): present, driver unknown")


def parse_kernel_log(source: Source) -> NodeReport:
    kernel = next(
        (m.group("version") for regex in _NVRM_KERNEL if (m := regex.search(source.text))), None
    )
    if kernel is None:
        return _module_without_version(source)
    client = _NVRM_CLIENT.search(source.text)
    note = "the loaded kernel module's version, as its own log line states"
    if client is not None:
        note += f"; a user-space driver component of version {client.group('version')} was refused"
    info = GpuInfo(driver_version=valid_version(kernel), driver_source=KERNEL_LOG)
    return _gpu(source, KERNEL_LOG, info, note)


# the module's lines that say it drives no GPU, or could not bring one up (nv.c, nv-pci.c)
_RM_INIT = re.compile(
    r"NVRM: GPU (?P<bus>[0-9A-Fa-f:.]+): RmInitAdapter failed! \((?P<code>[^)]*)\)"
)
_NO_GPU = re.compile(
    r"NVRM: (?:The NVIDIA probe routine was not called for [0-9]+ device|No NVIDIA GPU found"
    r"|No NVIDIA graphics adapter (?:found|probed))"
)


def _module_without_version(source: Source) -> NodeReport:
    """Kernel-log lines that state no module version but what the module did: it could not
    initialise a GPU (``RmInitAdapter failed!``), or it drives none (another driver, such as
    nouveau, took the GPUs)."""
    failed = list(dict.fromkeys(m.group("bus") for m in _RM_INIT.finditer(source.text)))
    if failed:
        code = next(m.group("code") for m in _RM_INIT.finditer(source.text))
        reason = (
            f"the NVIDIA kernel module could not initialise GPU {', '.join(failed)} "
            f"(RmInitAdapter failed! ({code})): the driver is loaded, the GPU is not usable"
        )
        notes: tuple[str, ...] = (QUERY_FAILED,)
    elif (none := _NO_GPU.search(source.text)) is not None:
        reason = (
            f"no usable NVIDIA driver: {none.group(0).removeprefix('NVRM: ')}... (another driver, "
            "such as nouveau, obtained the GPUs: blacklist nouveau and reboot)"
        )
        notes = (STATED_ABSENT,)
    else:
        raise FormatError(f"format not recognised as {KERNEL_LOG}: no module version stated")
    section: Section[GpuInfo] = Section(
        Status.UNAVAILABLE, reason=reason, source=KERNEL_LOG, notes=notes
    )
    return blank(source, KERNEL_LOG).with_sections(gpu=section)
