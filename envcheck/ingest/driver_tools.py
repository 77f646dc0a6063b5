"""What people paste about the driver from the tools they run to install or test it:

- CUDA samples' ``deviceQuery``: ``CUDA Driver Version / Runtime Version  12.2 / 11.8`` (the
  newest CUDA the driver supports, the runtime's), ``Device 0: "NVIDIA GeForce RTX 3090"`` and
  ``CUDA Capability Major/Minor version number:  8.6``; or its failure, ``cudaGetDeviceCount
  returned 35`` / ``-> CUDA driver version is insufficient for CUDA runtime version``;
- ``dkms status``: ``nvidia/535.104.05, 5.15.0-86-generic, x86_64: installed`` (newer DKMS:
  ``nvidia/535.104.05, 5.15.0-86-generic, x86_64: installed`` or ``nvidia/535.104.05: added``):
  the driver modules DKMS built, per kernel;
- apt's words about the driver package: ``nvidia-driver-535 is already the newest version
  (535.129.03-0ubuntu0.22.04.1).``, ``Setting up nvidia-driver-535 (535.129.03-0ubuntu1) ...``;
- ``ubuntu-drivers devices``: ``model : AD102 [GeForce RTX 4090]`` and the driver packages it
  offers (``driver : nvidia-driver-535 - distro non-free recommended``);
- the shell's and modprobe's words when the driver is not there: ``Command 'nvidia-smi' not
  found``, ``nvidia-smi: command not found``, ``modprobe: FATAL: Module nvidia not found in
  directory /lib/modules/<kernel>``, ``modprobe: ERROR: could not insert 'nvidia': Key was
  rejected by service`` (Secure Boot refused the unsigned module), ``... No such device``.

Each becomes the GPU section: what the tool states (a driver version, the CUDA it supports, the
GPUs, a CUDA error number) and, in its notes, which version it is (a built module, an installed
package) and what it offers.
"""

from __future__ import annotations

import re

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import STATED_ABSENT, Section, Status

DEVICE_QUERY = "deviceQuery"
DKMS = "dkms status"
APT = "apt (driver package)"
UBUNTU_DRIVERS = "ubuntu-drivers devices"
NO_DRIVER = "driver not loaded (shell, modprobe)"

# a line deviceQuery prints first or alone: where its section starts
DEVICE_QUERY_START = re.compile(
    r"^\s*(?:\S*deviceQuery Starting|CUDA Device Query \(Runtime API\)|Detected [0-9]+ CUDA "
    r"Capable device|cudaGetDeviceCount returned [0-9]+|There (?:are|is) no available device)"
)
# its other lines: indented properties, 'Device N: "name"', '-> message', the result lines
DEVICE_QUERY_LINE = re.compile(
    r"^\s+\S|^\s*(?:Device [0-9]+: \"|-> |Result = |deviceQuery, CUDA Driver|Detected [0-9]+ "
    r"CUDA|cudaGetDeviceCount returned|CUDA Device Query|\S*deviceQuery Starting|> Peer access)"
)
_DRIVER_RUNTIME = re.compile(
    r"CUDA Driver Version / Runtime Version\s+(?P<driver>[0-9]+\.[0-9]+)\s*/\s*"
    r"(?P<runtime>[0-9]+\.[0-9]+)"
)
_SUMMARY = re.compile(
    r"CUDA Driver Version = (?P<driver>[0-9]+\.[0-9]+), CUDA Runtime Version = "
    r"(?P<runtime>[0-9]+\.[0-9]+)"
)
_DEVICE = re.compile(r"^\s*Device (?P<index>[0-9]+): \"(?P<name>[^\"]+)\"")
_CAPABILITY = re.compile(r"CUDA Capability Major/Minor version number:\s+(?P<cc>[0-9]+\.[0-9]+)")
_RETURNED = re.compile(r"cudaGetDeviceCount returned (?P<code>[0-9]+)")
_MESSAGE = re.compile(r"^\s*-> (?P<message>.+?)\s*$", re.MULTILINE)

DKMS_LINE = re.compile(
    r"^\s*nvidia(?:-open|-srv)?[/,]\s*(?P<version>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)"
    r"(?:,\s*(?P<kernel>[^,\s]+))?(?:,\s*[^:]+)?:\s*(?P<state>added|built|installed)\b"
)
APT_LINE = re.compile(
    r"(?P<name>nvidia-(?:driver|utils|headless(?:-no-dkms)?|dkms)-(?P<branch>[0-9]{3})"
    r"(?:-server|-open)?) is already the newest version \((?P<v1>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)"
    r"|Setting up (?P<name2>nvidia-(?:driver|utils|dkms)-[0-9]{3}(?:-server|-open)?)"
    r"(?::\w+)? \((?P<v2>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)"
)
UBUNTU_DRIVERS_LINE = re.compile(
    r"^\s*(?:== /sys/devices/\S+ ==|modalias\s*:|vendor\s*:|model\s*:|manual_install\s*:|"
    r"driver\s*:\s*\S)"
)
_UD_MODEL = re.compile(r"^\s*model\s*:\s*(?P<model>.+?)\s*$", re.MULTILINE)
_UD_VENDOR = re.compile(r"^\s*vendor\s*:\s*NVIDIA", re.MULTILINE)
_UD_DRIVER = re.compile(
    r"^\s*driver\s*:\s*(?P<package>nvidia-driver-[0-9]{3}(?:-server|-open|-server-open)?)"
    r"(?P<rest>.*)$",
    re.MULTILINE,
)


def _gpu(source: Source, label: str, info: GpuInfo, notes: tuple[str, ...]) -> NodeReport:
    return blank(source, label).with_sections(gpu=Section.ok(info, source=label, notes=notes))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def parse_device_query(source: Source) -> NodeReport:
    text = source.text
    versions = _DRIVER_RUNTIME.search(text) or _SUMMARY.search(text)
    gpus: list[Gpu] = []
    for line in text.splitlines():
        device = _DEVICE.match(line)
        if device:
            gpus.append(Gpu(index=int(device.group("index")), name=device.group("name")))
            continue
        capability = _CAPABILITY.search(line)
        if capability and gpus:
            last = gpus[-1]
            gpus[-1] = Gpu(index=last.index, name=last.name, compute_capability=capability["cc"])
    returned = _RETURNED.search(text)
    if versions is None and not gpus and returned is None:
        raise FormatError(f"format not recognised as {DEVICE_QUERY}: no driver, device or error")
    notes: list[str] = []
    if versions is not None:
        notes.append(
            f"deviceQuery: the driver supports CUDA {versions['driver']}; the sample's runtime is "
            f"CUDA {versions['runtime']}"
        )
    errors: tuple[str, ...] = ()
    reason = None
    if returned is not None:
        errors = (returned["code"],)
        said = _MESSAGE.search(text)
        reason = f"deviceQuery: cudaGetDeviceCount returned {returned['code']}" + (
            f" ({said['message']})" if said else ""
        )
        notes.append(reason)
    info = GpuInfo(
        cuda_driver_version=versions["driver"] if versions else None,
        driver_source=DEVICE_QUERY if versions else None,
        gpus=tuple(gpus) if gpus else None,
        gpus_reason=None if gpus else (reason or "deviceQuery listed no device"),
        cuda_errors=errors,
    )
    return _gpu(source, DEVICE_QUERY, info, tuple(notes))


def parse_dkms(source: Source) -> NodeReport:
    built = [m for m in map(DKMS_LINE.match, source.text.splitlines()) if m]
    if not built:
        raise FormatError(f"format not recognised as {DKMS}: no nvidia module line")
    installed = [m for m in built if m["state"] == "installed"] or built
    newest = max((m["version"] for m in installed), key=_key)
    each = "; ".join(
        f"{m['version']}" + (f" for kernel {m['kernel']}" if m["kernel"] else "") + f" {m['state']}"
        for m in built
    )
    info = GpuInfo(driver_version=valid_version(newest), driver_source=DKMS)
    return _gpu(
        source,
        DKMS,
        info,
        (f"the driver modules DKMS built ({each}); the loaded module may differ until a reboot",),
    )


def parse_apt(source: Source) -> NodeReport:
    found = [m for m in map(APT_LINE.search, source.text.splitlines()) if m]
    if not found:
        raise FormatError(f"format not recognised as {APT}: no NVIDIA driver package line")
    versions = [m["v1"] or m["v2"] for m in found]
    newest = max(versions, key=_key)
    names = sorted({m["name"] or m["name2"] for m in found})
    info = GpuInfo(driver_version=valid_version(newest), driver_source=APT)
    return _gpu(
        source,
        APT,
        info,
        (
            f"the installed driver package's version ({', '.join(names)}, as apt states it); "
            "the loaded kernel module may differ until a reboot",
        ),
    )


def _ud_name(model: str) -> str:
    """'AD102 [GeForce RTX 4090]' -> 'NVIDIA GeForce RTX 4090'."""
    marketing = re.search(r"\[([^\]]+)\]", model)
    name = marketing.group(1).split("/")[0].strip() if marketing else model
    return name if name.startswith(("NVIDIA", "Tesla", "Quadro")) else f"NVIDIA {name}"


def parse_ubuntu_drivers(source: Source) -> NodeReport:
    text = source.text
    drivers = list(_UD_DRIVER.finditer(text))
    if not drivers and not _UD_VENDOR.search(text):
        raise FormatError(f"format not recognised as {UBUNTU_DRIVERS}: no NVIDIA device")
    models = [_ud_name(m["model"]) for m in _UD_MODEL.finditer(text)]
    recommended = [m["package"] for m in drivers if "recommended" in m["rest"]]
    offered = ", ".join(m["package"] for m in drivers)
    notes = [f"ubuntu-drivers offers: {offered}" if offered else "ubuntu-drivers offers none"]
    if recommended:
        notes.append(f"recommended: {recommended[0]}")
    info = GpuInfo(
        gpus=tuple(Gpu(index=i, name=name) for i, name in enumerate(models)) or None,
        gpus_reason=None if models else "ubuntu-drivers named no model",
    )
    return _gpu(source, UBUNTU_DRIVERS, info, tuple(notes))


# what says the driver is not usable on this node, and why (the reason each line gives)
NO_DRIVER_LINE = re.compile(
    r"Command 'nvidia-smi' not found|nvidia-smi: command not found|'nvidia-smi' is not "
    r"recognized as an internal or external command|command not found: nvidia-smi"
    r"|nvidia-smi: not found|The term 'nvidia-smi' is not recognized as (?:the|a) name of a cmdlet"
    r"|modprobe: FATAL: Module nvidia\S* not found"
    r"|modinfo: ERROR: Module nvidia\S* not found\."
    r"|modprobe: ERROR: could not insert 'nvidia\w*': .+"
    r"|Found no NVIDIA driver on your system"
    r"|/proc/driver/nvidia/version: No such file or directory"
    r"|^\s*ERROR: NVIDIA driver is not loaded"
    r"|Failed to initialize the NVIDIA kernel module"
    r"|cannot access '?/dev/nvidia[\w*]*'?: No such file or directory"
)
_WHY = (
    (
        re.compile(r"Key was rejected by service|Required key not available"),
        (
            "Secure Boot refused the unsigned NVIDIA kernel module (enroll the DKMS key with "
            "mokutil --import, or disable Secure Boot)"
        ),
    ),
    (
        re.compile(r"Module nvidia\S* not found in directory /lib/modules/(?P<kernel>\S+)"),
        (
            "no NVIDIA kernel module is built for the running kernel {kernel} (DKMS did not build "
            "it, or the kernel changed since the driver was installed)"
        ),
    ),
    (
        # kmod's modinfo (tools/modinfo.c: 'Module %s not found.'): no module for this kernel
        re.compile(r"modinfo: ERROR: Module nvidia\S* not found\."),
        (
            "no NVIDIA kernel module is installed for the running kernel (DKMS did not build "
            "it, or the kernel changed since the driver was installed)"
        ),
    ),
    (
        re.compile(r"could not insert 'nvidia\w*': No such device"),
        (
            "the NVIDIA module found no GPU it drives (the driver branch does not support the GPU, "
            "or nouveau holds it)"
        ),
    ),
    (
        re.compile(
            r"nvidia-smi' not found|nvidia-smi: command not found|not recognized as an"
            r"|command not found: nvidia-smi|nvidia-smi: not found|'nvidia-smi' is not recognized"
        ),
        ("nvidia-smi is not installed: no NVIDIA driver (its utilities) on this system"),
    ),
    (
        re.compile(r"Found no NVIDIA driver on your system"),
        (
            "torch found no NVIDIA driver (no kernel module loaded on the host, or a container "
            "started without the GPUs: --gpus all)"
        ),
    ),
    (
        re.compile(r"/proc/driver/nvidia/version: No such file|ERROR: NVIDIA driver is not loaded"),
        (
            "the NVIDIA kernel module is not loaded (/proc/driver/nvidia is missing; nvidia-settings"
            " and NVML say 'NVIDIA driver is not loaded')"
        ),
    ),
    (
        re.compile(r"Failed to initialize the NVIDIA kernel module"),
        (
            "the X server's NVIDIA driver could not initialize the kernel module (not loaded, or "
            "its version differs from the user-space driver's: see the kernel log's NVRM lines)"
        ),
    ),
    (
        re.compile(r"cannot access '?/dev/nvidia"),
        (
            "no NVIDIA device nodes (/dev/nvidia*): the driver is not loaded on the host, or a "
            "container started without the GPUs (--gpus all)"
        ),
    ),
)


def parse_no_driver(source: Source) -> NodeReport:
    lines = [line.strip() for line in source.text.splitlines() if NO_DRIVER_LINE.search(line)]
    if not lines:
        raise FormatError(f"format not recognised as {NO_DRIVER}: no line says so")
    whole = " ".join(lines)
    reasons = []
    for regex, why in _WHY:
        found = regex.search(whole)
        if found:
            reasons.append(why.format(**{k: v or "" for k, v in found.groupdict().items()}))
    reason = "; ".join(dict.fromkeys(reasons)) or "the NVIDIA driver is not loaded"
    offered = re.findall(r"sudo apt install (nvidia-utils-[0-9]{3}(?:-server)?)", source.text)
    notes: tuple[str, ...] = (STATED_ABSENT, f"as stated: {lines[0]}")
    if offered:
        notes += (f"the shell offers: {', '.join(dict.fromkeys(offered))}",)
    section: Section[GpuInfo] = Section(
        Status.UNAVAILABLE,
        reason=f"no usable NVIDIA driver: {reason}",
        source=NO_DRIVER,
        notes=notes,
    )
    return blank(source, NO_DRIVER).with_sections(gpu=section)
