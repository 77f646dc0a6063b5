"""More of what people paste about the driver and the GPUs, beyond nvidia-smi and the driver
tools (``driver_text``, ``driver_tools``): the other programs' reports that name them.

- ``glxinfo``: ``OpenGL renderer string: NVIDIA GeForce RTX 3070/PCIe/SSE2`` and ``OpenGL
  (core profile) version string: 4.6.0 NVIDIA 535.129.03`` (the GLX driver's version);
- ``vulkaninfo`` (``--summary`` and the full report): ``deviceName = NVIDIA GeForce RTX 3070``,
  ``driverName = NVIDIA``, ``driverInfo = 535.129.03``;
- ``/proc/driver/nvidia/gpus/<bus>/information``: ``Model:  NVIDIA GeForce RTX 3070`` beside
  ``Video BIOS:`` / ``Bus Location:`` / ``Device Minor:``;
- the driver's library files in ``ls -l``, ``ldconfig -p``, ``find`` output or a loader's trace:
  ``libcuda.so.535.129.03``, ``libnvidia-ml.so.535.129.03`` (a file under ``.../compat/`` is
  the CUDA forward-compatibility package, not the host's driver: noted, not taken);
- package listings: ``apt list --installed`` (``nvidia-driver-535/jammy-updates,now
  535.129.03-0ubuntu0.22.04.1 amd64 [installed]``), apt's ``Unpacking libnvidia-compute-535:amd64
  (535.104.12-0ubuntu1) ...``, ``dnf list installed`` / ``rpm -qa`` rows of RPM Fusion's and
  NVIDIA's packages (``xorg-x11-drv-nvidia.x86_64  3:550.78-1.fc39``,
  ``akmod-nvidia-525.78.01-1.fc38.x86_64``);
- Numba's ``numba -s`` CUDA block (``CUDA Driver Version : 11020`` or ``(12, 2)``) and
  ``numba.cuda.detect()`` (``id 0  b'NVIDIA GeForce RTX 3090'  [SUPPORTED]``, ``Compute
  Capability: 8.6``);
- CuPy's ``cupy.show_config()`` (``CUDA Driver Version : 12020``, ``Device 0 Name :``,
  ``Device 0 Compute Capability : 86``);
- ``gpustat`` (``host  Mon Mar  4 10:12:33 2024  535.129.03`` then ``[0] NVIDIA A100-SXM4-80GB |
  34°C, 0 % | 4 / 81920 MB |``);
- ``nvidia-smi --query-gpu=... --format=csv,noheader`` after its command line (the columns are
  the command's), and ``cat /sys/module/nvidia/version`` after its command line;
- ``lshw -c display`` (``product: GA104 [GeForce RTX 3070]``, ``vendor: NVIDIA Corporation``,
  ``configuration: driver=nvidia``);
- the kernel log's lines of the NVIDIA modules loading without an NVRM line (``nvidia: module
  license 'NVIDIA' taints kernel.``, ``nvidia-modeset: Loading NVIDIA Kernel Mode Setting
  Driver for UNIX platforms  535.129.03``, ``nvidia-uvm: Loaded the UVM driver``): the module
  loaded, and the modeset banner's driver version.

The CUDA versions Numba and CuPy print are cuDriverGetVersion's (1000 * major + 10 * minor):
the newest CUDA the driver supports, as nvidia-smi's "CUDA Version". ``lsmod`` with an nvidia
module states which NVIDIA modules are loaded (nvidia_uvm among them or not: DRV229); ``lsmod`` with
nouveau and no nvidia module, ``lsmod | grep nvidia`` after a prompt with no output before the
next prompt, and ``ls`` finding no ``/dev/nvidia*``, state that no NVIDIA driver runs (the GPU section unavailable, stated absent).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from envcheck.ingest import nvidia_smi
from envcheck.ingest.common import FormatError, Source, blank, torch_section, valid_version
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import STATED_ABSENT, Section, Status

GLXINFO = "glxinfo"
VULKANINFO = "vulkaninfo"
GPU_INFORMATION = "/proc/driver/nvidia/gpus/*/information"
LIBRARY_FILES = "driver library files"
PACKAGE_LIST = "package list (apt/dnf/rpm)"
NUMBA = "numba -s"
CUPY = "cupy.show_config()"
GPUSTAT = "gpustat"
SMI_NOHEADER = "nvidia-smi --query-gpu (noheader)"
SYS_MODULE = "/sys/module/nvidia/version"
LSHW = "lshw -c display"
INXI = "inxi -G"
CUDA_SAMPLE = "CUDA sample"
PYTHON_PRINT = "python -c print(...)"
DEVICE_PROPERTIES = "torch.cuda.get_device_properties"
SETTINGS = "nvidia-settings --version"
WMIC = "wmic / Get-CimInstance Win32_VideoController"
APT_POLICY = "apt-cache policy"
MODINFO_VERSION = "modinfo nvidia (version)"
SMI_DRIVER_CSV = "nvidia-smi --query-gpu=driver_version"

_DRIVER = r"[0-9]{3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?"

_GLX_LINE = re.compile(
    r"^\s*(?:OpenGL (?:vendor|renderer|version|core profile|shading|ES profile|context|profile|"
    r"extensions)|(?:server|client) glx |direct rendering:|name of display:|display: \S+\s+screen:"
    r"|Extended renderer info|\s*(?:Vendor|Device|Version|Accelerated|Video memory|Unified memory|"
    r"Preferred profile|Max core profile version|Max compat profile version|Max GLES\S* profile "
    r"version):)"
)
_GLX_START = re.compile(r"^\s*OpenGL (?:vendor|renderer|(?:core profile )?version) string:")
_GLX_VERSION = re.compile(
    rf"^\s*OpenGL (?:core profile |compatibility profile )?version string:.*?\bNVIDIA "
    rf"(?P<driver>{_DRIVER})\b",
    re.MULTILINE,
)
_GLX_RENDERER = re.compile(r"^\s*OpenGL renderer string:\s*(?P<name>.+?)\s*$", re.MULTILINE)

_VK_LINE = re.compile(
    r"^\s*(?:(?:apiVersion|driverVersion|vendorID|deviceID|deviceType|deviceName|driverID|"
    r"driverName|driverInfo|conformanceVersion|deviceUUID|driverUUID)\s*=|GPU[0-9]+:|GPU id\s*[:=]|"
    r"Devices:|=+\s*$|VkPhysicalDeviceProperties:|-+\s*$)"
)
_VK_START = re.compile(r"^\s*(?:Devices:\s*$|GPU[0-9]+:\s*$|deviceName\s*=|driverName\s*=)")
_VK_FIELD = re.compile(
    r"^\s*(?P<key>deviceName|driverName|driverInfo|vendorID)\s*=\s*(?P<v>.+?)\s*$"
)

_INFO_FIRST = re.compile(r"^\s*Model:\s+(?P<name>\S.*?)\s*$")
_INFO_LINE = re.compile(
    r"^\s*(?:Model|IRQ|GPU UUID|Video BIOS|Bus Type|DMA Size|DMA Mask|Bus Location|Device Minor|"
    r"GPU Excluded|GPU Firmware):"
)
_INFO_OWN = re.compile(r"^\s*(?:Video BIOS|Bus Location|Device Minor|GPU Excluded):", re.MULTILINE)

LIBRARY_LINE = re.compile(
    rf"\blib(?P<lib>cuda|nvidia-ml|nvidia-ptxjitcompiler|nvidia-compiler|nvcuvid|nvidia-glcore)"
    rf"\.so\.(?P<version>{_DRIVER})\b"
)

_APT_ROW = re.compile(
    rf"^\s*(?P<name>(?:lib)?nvidia-[a-z0-9-]*?-(?P<branch>[0-9]{{3}})(?:-server|-open)?)/\S+\s+"
    rf"(?P<version>{_DRIVER})-\S+\s+\S+\s+\[(?:installed|upgradable)"
)
_APT_UNPACK = re.compile(
    rf"^\s*(?:Unpacking|Setting up|Preparing to unpack \S*?/)\s*(?P<name>(?:lib)?nvidia-[a-z0-9-]*?"
    rf"-[0-9]{{3}}(?:-server|-open)?)(?::\w+)?(?: \(|_)(?P<version>{_DRIVER})-"
)
_RPM_ROW = re.compile(
    rf"^\s*(?P<name>(?:xorg-x11-drv-nvidia|akmod-nvidia|kmod-nvidia|dkms-nvidia|nvidia-driver|"
    rf"nvidia-kmod-common|nvidia-open|libnvidia-ml|libnvidia-cfg|nvidia-persistenced|"
    rf"nvidia-modprobe|nvidia-settings)[a-z0-9-]*?)"
    rf"(?:\.(?:x86_64|aarch64|noarch|i686)\s+(?:[0-9]+:)?|-(?:[0-9]+:)?)(?P<version>{_DRIVER})-"
)

_NUMBA_START = re.compile(r"^\s*(?:__CUDA Information__|Found [0-9]+ CUDA devices)\s*$")
_NUMBA_LINE = re.compile(
    r"^\s*(?:__CUDA Information__|CUDA [\w /]+?\s*:|Found [0-9]+ CUDA devices|id [0-9]+\s+b?['\"]|"
    r"Summary:|[0-9]+/[0-9]+ devices are supported|[A-Za-z][\w /-]*:\s|\s+\S|Error:)"
)
_NUMBA_DRIVER = re.compile(
    r"^\s*CUDA Driver Version\s*:\s*(?:(?P<packed>[0-9]{4,6})|\((?P<major>[0-9]+),\s*"
    r"(?P<minor>[0-9]+)\))\s*$",
    re.MULTILINE,
)
_NUMBA_DEVICE = re.compile(r"^\s*id (?P<index>[0-9]+)\s+b?['\"](?P<name>[^'\"]+)['\"]")
_NUMBA_CC = re.compile(r"^\s*compute capability:\s*(?P<cc>[0-9]+\.[0-9]+)", re.IGNORECASE)

_CUPY_START = re.compile(r"^\s*(?:CuPy Version|CUDA Root|CUDA Build Version)\s*:")
_CUPY_LINE = re.compile(
    r"^\s*(?:CuPy|CUDA|NVCC|nvcc|cu[A-Z]\w*|NVRTC|NCCL|Thrust|CUB|cuDNN|cuTENSOR|Device [0-9]+|"
    r"Cython|NumPy|SciPy|Array API|Jitify)[\w ()-]*?\s*:"
)
_CUPY_DRIVER = re.compile(r"^\s*CUDA Driver Version\s*:\s*(?P<packed>[0-9]{4,6})\s*$", re.MULTILINE)
_CUPY_NAME = re.compile(r"^\s*Device (?P<index>[0-9]+) Name\s*:\s*(?P<name>\S.*?)\s*$")
_CUPY_CC = re.compile(
    r"^\s*Device (?P<index>[0-9]+) Compute Capability\s*:\s*(?P<cc>[0-9]{2,3})\s*$"
)

_GPUSTAT_HEAD = re.compile(
    rf"^\s*\S+\s+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+\w{{3}}\s+[0-9]+\s+[0-9:]+\s+[0-9]{{4}}\s+"
    rf"(?P<driver>{_DRIVER})\s*$"
)
_GPUSTAT_ROW = re.compile(
    r"^\s*\[(?P<index>[0-9]+)\]\s+(?P<name>[^|]+?)\s*\|[^|]*\|\s*(?P<used>[0-9]+)\s*/\s*"
    r"(?P<total>[0-9]+)\s*MB\s*\|"
)

_QUERY_COMMAND = re.compile(r"nvidia-smi\s.*--query-gpu[= ](?P<columns>[\w.,]+).*noheader")
_SYS_COMMAND = re.compile(r"cat\s+/sys/module/nvidia/version\s*$")
_VERSION_ONLY = re.compile(rf"^\s*(?P<version>{_DRIVER})\s*$")

_LSHW_START = re.compile(r"^\s*\*-display(?::[0-9]+)?\b")
_LSHW_LINE = re.compile(r"^\s+[a-z][a-z ]*:\s")
_INXI_DEVICE = re.compile(
    rf"^\s*(?:Graphics:\s+)?Device-[0-9]+:\s+NVIDIA\s+(?P<chip>.+?)\s+driver:\s*(?P<bound>\S+)"
    rf"(?:\s+v:\s*(?P<version>{_DRIVER})\b)?"
)
_SMI_Q_FIRST = re.compile(
    r"^\s*(?:(?:Driver Version|Attached GPUs)\s+:\s+[0-9]|Product Name\s{2,}:\s+\S)"
)
_SMI_Q_LINE = re.compile(r"^\s*[A-Za-z][\w ./()-]*?\s+:\s|^\s*GPU [0-9A-Fa-f]{4,8}:|^\s+\S")
# cuda-samples' Common/helper_cuda.h check(): 'CUDA error at %s:%d code=%d(%s) "%s"'; the samples'
# banners ('[CUDA Bandwidth Test] - Starting...', '[Vector addition of 50000 elements]') and device
# lines (' Device 0: NVIDIA A100-SXM4-80GB', 'GPU Device 0: "Ampere" with compute capability 8.0')
_SAMPLE_ERROR = re.compile(
    r"CUDA error at \S+:[0-9]+ code=(?P<code>[0-9]+)\((?P<name>\w+)\)|"
    r"\(error code (?P<message>[^)]+)\)!"
)
_SAMPLE_START = re.compile(r"^\s*\[[A-Z][^\]]{3,80}\](?: - Starting\.\.\.)?\s*$")
_SAMPLE_LINE = re.compile(
    r"^\s*(?:Running on|Device [0-9]+:|GPU Device [0-9]+:|Quick Mode|Shmoo Mode|CUDA error at|"
    r"Failed to |Result = |Test (?:passed|failed)|Done|> |\[|Copy |Launching |CUDA kernel launch|"
    r"Transfer Size|Host to Device|Device to Host|Device to Device|\s+[0-9])"
)
_SAMPLE_DEVICE = re.compile(
    r"^\s*(?:GPU )?Device (?P<index>[0-9]+): \"?(?P<name>[^\"\n]+?)\"?"
    r"(?: with compute capability (?P<cc>[0-9]+\.[0-9]+))?\s*$",
    re.MULTILINE,
)
_PRINT_COMMAND = re.compile(
    r"python[0-9.]*\s+-c\s+['\"](?P<code>.*print\((?P<args>[^'\"]*)\).*)['\"]"
)
_PRINTED = {
    "torch.__version__": "torch",
    "torch.version.cuda": "torch_cuda",
    "torch.cuda.is_available()": "available",
    "torch.backends.cudnn.version()": "cudnn",
    "torch.cuda.device_count()": "count",
}
_PROPERTIES = re.compile(
    r"_CudaDeviceProperties\(name='(?P<name>[^']+)', major=(?P<major>[0-9]+), "
    r"minor=(?P<minor>[0-9]+)(?:.*?total_memory=(?P<memory>[0-9]+)MB)?"
)
_SETTINGS = re.compile(rf"^\s*nvidia-settings:\s+version (?P<version>{_DRIVER})\b")
# an NVIDIA driver as Windows numbers it (Device Manager, dxdiag, wmic): 31.0.15.3623
_WINDOWS_DRIVER = re.compile(r"^\s*[0-9]{2}\.[0-9]+\.1[0-9]\.[0-9]{4}\s*$")
_WMIC_HEAD = re.compile(r"^\s*(?:DriverVersion\s+Name|Name\s+DriverVersion)\s*$")
_WMIC_ROW = re.compile(
    r"^\s*(?:(?P<v1>[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+)\s+(?P<n1>\S.*?)|(?P<n2>\S.*?)\s+"
    r"(?P<v2>[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+))\s*$"
)
_POLICY_HEAD = re.compile(
    r"^\s*(?P<name>(?:lib)?nvidia-[a-z0-9-]*?-[0-9]{3}(?:-server|-open)?|cuda-drivers(?:-[0-9]{3})?):\s*$"
)
_POLICY_LINE = re.compile(
    r"^\s+(?:Installed|Candidate|Version table):|^\s+(?:\*\*\*\s+)?[0-9]|^\s+[0-9]+ \S"
)
_POLICY_INSTALLED = re.compile(rf"^\s+Installed:\s*(?P<version>{_DRIVER})-", re.MULTILINE)
_MODINFO_COMMAND = re.compile(r"modinfo\s+(?:-F\s+version\s+)?nvidia\b")
_MODINFO_VERSION = re.compile(rf"^\s*(?:version:\s+)?(?P<version>{_DRIVER})\s*$")
_DRIVER_CSV_HEAD = re.compile(r"^\s*driver_version\s*(?:,\s*[\w.]+(?: \[[^\]]+\])?\s*)*$")
_LSMOD = re.compile(r"^\s*nvidia(?:_uvm|_drm|_modeset|_peermem)?\s+[0-9]+\s+[0-9]+\b")
# lsmod's rows of nouveau and of the modules it uses (mxm_wmi, drm_ttm_helper, ttm: their
# 'Used by' column names nouveau): the open-source driver bound to the GPU
_LSMOD_NOUVEAU = re.compile(
    r"^\s*(?:nouveau\s+[0-9]+\s+[0-9]+|[a-z0-9_]+\s+[0-9]+\s+[0-9]+\s+\S*\bnouveau\b)"
)
Finder = Callable[[Sequence[str], int, set[int]], "tuple[int, int] | None"]


def _gpu(source: Source, label: str, info: GpuInfo, notes: tuple[str, ...]) -> NodeReport:
    return blank(source, label).with_sections(gpu=Section.ok(info, source=label, notes=notes))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _packed_cuda(packed: str) -> str:
    """cuDriverGetVersion's 12020 -> '12.2'."""
    number = int(packed)
    return f"{number // 1000}.{number % 1000 // 10}"


def _nvidia_name(name: str) -> str:
    """'GeForce GTX 1660 SUPER/PCIe/SSE2' -> 'NVIDIA GeForce GTX 1660 SUPER'."""
    name = name.split("/", maxsplit=1)[0].strip()
    return name if name.startswith(("NVIDIA", "Tesla", "Quadro")) else f"NVIDIA {name}"


def _while(lines: Sequence[str], i: int, stops: set[int], ok: Callable[[str], bool]) -> int:
    """One past the last line from i on that is ok (a blank line inside counts when an ok line
    follows it); a stop (fence, prompt) ends the run."""
    while i < len(lines) and i not in stops:
        if ok(lines[i]) or (not lines[i].strip() and i + 1 < len(lines) and ok(lines[i + 1])):
            i += 1
            continue
        break
    return i


def _started(start: re.Pattern[str], line_ok: re.Pattern[str]) -> Finder:
    def find(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
        if not start.match(lines[i]):
            return None
        return i, _while(lines, i + 1, stops, lambda line: bool(line_ok.match(line)))

    return find


def _any_line(test: Callable[[str], object]) -> Finder:
    def find(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
        if not test(lines[i]):
            return None
        return i, _while(lines, i + 1, stops, lambda line: bool(test(line)))

    return find


def _previous(lines: Sequence[str], i: int) -> str:
    return lines[i - 1] if i > 0 else ""


# -- glxinfo -------------------------------------------------------------------------------


def parse_glxinfo(source: Source) -> NodeReport:
    text = source.text
    version = _GLX_VERSION.search(text)
    renderer = _GLX_RENDERER.search(text)
    name = renderer["name"] if renderer else None
    nvidia_renderer = name is not None and bool(
        re.match(r"(?:NVIDIA |GeForce|Quadro|Tesla|TITAN|RTX )", name)
    )
    if version is None and not nvidia_renderer:
        stated = re.search(r"^\s*OpenGL (?:core profile )?version string:\s*(.+?)\s*$", text, re.M)
        what = (
            f"the OpenGL renderer is {name}"
            if name
            else f"the OpenGL version is {stated.group(1)}"
            if stated
            else "no OpenGL renderer or version"
        )
        raise FormatError(f"{GLXINFO}: {what}, not NVIDIA's driver")
    gpus = (Gpu(index=0, name=_nvidia_name(name or "")),) if nvidia_renderer else None
    info = GpuInfo(
        driver_version=valid_version(version["driver"]) if version else None,
        driver_source=GLXINFO if version else None,
        gpus=gpus,
        gpus_reason=None if gpus else "glxinfo names no NVIDIA renderer",
    )
    note = (
        "the NVIDIA GLX driver's version (OpenGL version string) and the GPU rendering the display"
    )
    return _gpu(source, GLXINFO, info, (note,))


# -- vulkaninfo ----------------------------------------------------------------------------


def parse_vulkaninfo(source: Source) -> NodeReport:
    devices: list[dict[str, str]] = []
    for line in source.text.splitlines():
        field = _VK_FIELD.match(line)
        if field is None:
            continue
        key, value = field["key"], field["v"]
        if (key == "deviceName" and any("deviceName" in d for d in devices[-1:])) or not devices:
            devices.append({})
        devices[-1].setdefault(key, value)
    nvidia = [
        d
        for d in devices
        if d.get("driverName", "").startswith("NVIDIA")
        or d.get("vendorID", "").lower().startswith("0x10de")
    ]
    if not nvidia:
        raise FormatError(f"{VULKANINFO}: no device with NVIDIA's driver")
    drivers = [
        m["v"]
        for d in nvidia
        if (m := re.match(rf"^(?P<v>{_DRIVER})$", d.get("driverInfo", ""))) is not None
    ]
    gpus = tuple(
        Gpu(index=i, name=_nvidia_name(d["deviceName"]))
        for i, d in enumerate(d for d in nvidia if "deviceName" in d)
    )
    info = GpuInfo(
        driver_version=valid_version(drivers[0]) if drivers else None,
        driver_source=VULKANINFO if drivers else None,
        gpus=gpus or None,
        gpus_reason=None if gpus else "vulkaninfo names no NVIDIA device",
    )
    return _gpu(source, VULKANINFO, info, ("the Vulkan driver's version (driverInfo) and devices",))


# -- /proc/driver/nvidia/gpus/*/information --------------------------------------------------


def _info(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _INFO_FIRST.match(lines[i]):
        return None
    end = _while(lines, i + 1, stops, lambda line: bool(_INFO_LINE.match(line)))
    return (i, end) if _INFO_OWN.search("\n".join(lines[i:end])) else None


def parse_gpu_information(source: Source) -> NodeReport:
    names = [m["name"] for m in map(_INFO_FIRST.match, source.text.splitlines()) if m]
    if not names or not _INFO_OWN.search(source.text):
        raise FormatError(f"format not recognised as {GPU_INFORMATION}: no 'Model:' line")
    gpus = tuple(Gpu(index=i, name=_nvidia_name(n)) for i, n in enumerate(names))
    info = GpuInfo(gpus=gpus)
    return _gpu(
        source,
        GPU_INFORMATION,
        info,
        ("the GPUs the loaded NVIDIA kernel module drives (/proc/driver/nvidia/gpus)",),
    )


# -- the driver's library files --------------------------------------------------------------


def parse_library_files(source: Source) -> NodeReport:
    host: list[str] = []
    compat: list[str] = []
    for line in source.text.splitlines():
        for found in LIBRARY_LINE.finditer(line):
            (compat if "/compat/" in line else host).append(found["version"])
    if not host and not compat:
        raise FormatError(f"format not recognised as {LIBRARY_FILES}: no libcuda.so.<version>")
    notes: list[str] = []
    if compat:
        notes.append(
            f"a CUDA forward-compatibility libcuda {max(compat, key=_key)} (a .../compat/ "
            "directory): not the host's driver"
        )
    if not host:
        return _gpu(source, LIBRARY_FILES, GpuInfo(), tuple(notes))
    versions = sorted(set(host), key=_key)
    if len(versions) > 1:
        notes.append(
            f"the driver's libraries name several versions ({', '.join(versions)}): a driver "
            "update left old files, or it is not finished (the loaded module may be either)"
        )
    notes.insert(
        0, "the user-space driver libraries' version (file names); the loaded module may differ"
    )
    info = GpuInfo(driver_version=valid_version(versions[-1]), driver_source=LIBRARY_FILES)
    return _gpu(source, LIBRARY_FILES, info, tuple(notes))


# -- package listings ------------------------------------------------------------------------


def package_line(line: str) -> re.Match[str] | None:
    return _APT_ROW.match(line) or _APT_UNPACK.match(line) or _RPM_ROW.match(line)


def parse_package_list(source: Source) -> NodeReport:
    found = [m for m in map(package_line, source.text.splitlines()) if m]
    if not found:
        raise FormatError(f"format not recognised as {PACKAGE_LIST}: no NVIDIA driver package")
    versions = sorted({m["version"] for m in found}, key=_key)
    names = sorted({m["name"] for m in found})
    note = (
        f"the installed driver packages' version ({', '.join(names[:4])}"
        f"{', ...' if len(names) > 4 else ''}); the loaded kernel module may differ until a reboot"
    )
    if len(versions) > 1:
        note += f"; the packages name several versions: {', '.join(versions)}"
    info = GpuInfo(driver_version=valid_version(versions[-1]), driver_source=PACKAGE_LIST)
    return _gpu(source, PACKAGE_LIST, info, (note,))


# -- numba -s / numba.cuda.detect() -----------------------------------------------------------


def parse_numba(source: Source) -> NodeReport:
    text = source.text
    driver = _NUMBA_DRIVER.search(text)
    gpus: list[Gpu] = []
    for line in text.splitlines():
        device = _NUMBA_DEVICE.match(line)
        if device:
            gpus.append(Gpu(index=int(device["index"]), name=_nvidia_name(device["name"])))
            continue
        capability = _NUMBA_CC.match(line)
        if capability and gpus:
            last = gpus[-1]
            gpus[-1] = Gpu(index=last.index, name=last.name, compute_capability=capability["cc"])
    if driver is None and not gpus:
        raise FormatError(f"{NUMBA}: no CUDA driver version or device")
    cuda = None
    if driver is not None:
        cuda = (
            _packed_cuda(driver["packed"])
            if driver["packed"]
            else f"{driver['major']}.{driver['minor']}"
        )
    info = GpuInfo(
        cuda_driver_version=cuda,
        driver_source=NUMBA if cuda else None,
        gpus=tuple(gpus) or None,
        gpus_reason=None if gpus else "numba -s lists no device",
    )
    return _gpu(
        source, NUMBA, info, ("Numba's CUDA Driver Version: the newest CUDA the driver supports",)
    )


# -- cupy.show_config() ------------------------------------------------------------------------


def parse_cupy(source: Source) -> NodeReport:
    text = source.text
    driver = _CUPY_DRIVER.search(text)
    names: dict[int, str] = {}
    capabilities: dict[int, str] = {}
    for line in text.splitlines():
        if name := _CUPY_NAME.match(line):
            names[int(name["index"])] = _nvidia_name(name["name"])
        elif cc := _CUPY_CC.match(line):
            capabilities[int(cc["index"])] = f"{cc['cc'][:-1]}.{cc['cc'][-1]}"
    if driver is None and not names:
        raise FormatError(f"{CUPY}: no CUDA driver version or device")
    gpus = tuple(
        Gpu(index=i, name=names[i], compute_capability=capabilities.get(i)) for i in sorted(names)
    )
    cuda = _packed_cuda(driver["packed"]) if driver else None
    info = GpuInfo(
        cuda_driver_version=cuda,
        driver_source=CUPY if cuda else None,
        gpus=gpus or None,
        gpus_reason=None if gpus else "cupy.show_config() lists no device",
    )
    return _gpu(
        source, CUPY, info, ("CuPy's CUDA Driver Version: the newest CUDA the driver supports",)
    )


# -- gpustat ---------------------------------------------------------------------------------


def _gpustat(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _GPUSTAT_HEAD.match(lines[i]):
        return None
    end = _while(lines, i + 1, stops, lambda line: bool(_GPUSTAT_ROW.match(line)))
    return (i, end) if end > i + 1 else None


def parse_gpustat(source: Source) -> NodeReport:
    lines = source.text.splitlines()
    head = next((m for m in map(_GPUSTAT_HEAD.match, lines) if m), None)
    rows = [m for m in map(_GPUSTAT_ROW.match, lines) if m]
    if head is None or not rows:
        raise FormatError(f"format not recognised as {GPUSTAT}: no header or GPU row")
    gpus = tuple(
        Gpu(
            index=int(m["index"]),
            name=_nvidia_name(m["name"]),
            memory_used_mib=int(m["used"]),
            memory_total_mib=int(m["total"]),
        )
        for m in rows
    )
    info = GpuInfo(driver_version=valid_version(head["driver"]), driver_source=GPUSTAT, gpus=gpus)
    return _gpu(source, GPUSTAT, info, ("gpustat: the driver on its header line, the GPUs",))


# -- output under its command line -------------------------------------------------------------


def _smi_noheader(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    command = _QUERY_COMMAND.search(_previous(lines, i))
    if command is None or ("," not in lines[i] and "," in command["columns"]):
        return None
    commas = command["columns"].count(",")
    if lines[i].count(",") != commas:
        return None
    return i - 1, _while(lines, i + 1, stops, lambda line: line.count(",") == commas)


def parse_smi_noheader(source: Source) -> NodeReport:
    lines = [line for line in source.text.splitlines() if line.strip()]
    command = _QUERY_COMMAND.search(lines[0]) if lines else None
    header = command["columns"] if command else ""
    if nvidia_smi.csv_header(header) is None:
        raise FormatError(
            f"format not recognised as {SMI_NOHEADER}: the command's columns are not known"
        )
    return nvidia_smi.parse_csv(Source(name=source.name, text="\n".join([header, *lines[1:]])))


def _sys_module(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not (_SYS_COMMAND.search(_previous(lines, i)) and _VERSION_ONLY.match(lines[i])):
        return None
    return i - 1, i + 1


def parse_sys_module(source: Source) -> NodeReport:
    version = next(
        (m["version"] for m in map(_VERSION_ONLY.match, source.text.splitlines()) if m), None
    )
    if version is None:
        raise FormatError(f"format not recognised as {SYS_MODULE}: no version")
    info = GpuInfo(driver_version=valid_version(version), driver_source=SYS_MODULE)
    return _gpu(source, SYS_MODULE, info, ("the loaded kernel module's version",))


# -- lshw -c display ---------------------------------------------------------------------------


def parse_lshw(source: Source) -> NodeReport:
    blocks = re.split(r"^\s*\*-display", source.text, flags=re.MULTILINE)[1:]
    gpus: list[Gpu] = []
    drivers: list[str] = []
    for block in blocks:
        if not re.search(r"^\s*vendor:\s*NVIDIA", block, re.MULTILINE):
            continue
        product = re.search(r"^\s*product:\s*(?P<p>.+?)\s*$", block, re.MULTILINE)
        if product is None:
            continue
        gpus.append(Gpu(index=len(gpus), name=_nvidia_name(_bracketed(product["p"]))))
        bound = re.search(r"configuration:.*\bdriver=(?P<d>\S+)", block)
        drivers.append(bound["d"] if bound else "none")
    if not gpus:
        raise FormatError(f"format not recognised as {LSHW}: no NVIDIA display device")
    info = GpuInfo(gpus=tuple(gpus))
    bound_to = ", ".join(dict.fromkeys(drivers))
    note = f"lshw: the kernel driver bound to the GPUs is {bound_to}"
    if "nvidia" not in drivers:
        note += " (not NVIDIA's: its module is not loaded, or nouveau holds the GPU)"
    return _gpu(source, LSHW, info, (note,))


# -- inxi -G --------------------------------------------------------------------------------


def parse_inxi(source: Source) -> NodeReport:
    found = [m for m in map(_INXI_DEVICE.match, source.text.splitlines()) if m]
    if not found:
        raise FormatError(f"format not recognised as {INXI}: no NVIDIA device line")
    gpus = tuple(
        Gpu(index=i, name=_nvidia_name(_bracketed(m["chip"]))) for i, m in enumerate(found)
    )
    versions = [m["version"] for m in found if m["version"] and m["bound"] == "nvidia"]
    info = GpuInfo(
        driver_version=valid_version(versions[0]) if versions else None,
        driver_source=INXI if versions else None,
        gpus=gpus,
    )
    bound = ", ".join(dict.fromkeys(m["bound"] for m in found))
    return _gpu(source, INXI, info, (f"inxi: the kernel driver bound to the GPUs is {bound}",))


def _bracketed(chip: str) -> str:
    marketing = re.search(r"\[([^\]]+)\]", chip)
    return marketing.group(1) if marketing else chip


def _smi_q_fragment(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """nvidia-smi -q copied without its NVSMI LOG banner (from 'Driver Version' on)."""
    if not _SMI_Q_FIRST.match(lines[i]):
        return None
    end = _while(lines, i + 1, stops, lambda line: bool(_SMI_Q_LINE.match(line)))
    if not any("Product Name" in line or "CUDA Version" in line for line in lines[i:end]):
        return None
    return i, end


# -- the CUDA samples (bandwidthTest, vectorAdd, p2pBandwidthLatencyTest, ...) -------------------


def _sample(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _SAMPLE_START.match(lines[i]):
        return None
    end = _while(lines, i + 1, stops, lambda line: bool(_SAMPLE_LINE.match(line)))
    return (i, end) if _SAMPLE_ERROR.search("\n".join(lines[i:end])) else None


def parse_cuda_sample(source: Source) -> NodeReport:
    text = source.text
    error = _SAMPLE_ERROR.search(text)
    if error is None:
        raise FormatError(f"format not recognised as {CUDA_SAMPLE}: no CUDA error line")
    gpus = tuple(
        Gpu(index=int(m["index"]), name=m["name"].strip(), compute_capability=m["cc"])
        for m in _SAMPLE_DEVICE.finditer(text)
        if not m["name"].strip().startswith(("Ampere", "Hopper", "Ada", "Turing", "Volta"))
        or m["cc"]
    )
    code = error["code"]
    said = error["name"] or error["message"] or ""
    reason = f"a CUDA sample failed: {f'code={code} ' if code else ''}({said})"
    info = GpuInfo(
        gpus=gpus or None,
        gpus_reason=None if gpus else reason,
        cuda_errors=(code,) if code else (),
    )
    return _gpu(source, CUDA_SAMPLE, info, (reason,))


# -- python -c "...print(torch.__version__, ...)" under its command line -------------------------


def _python_print(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    command = _PRINT_COMMAND.search(_previous(lines, i))
    if command is None or not any(k in command["args"] for k in _PRINTED):
        return None
    return i - 1, i + 1


def parse_python_print(source: Source) -> NodeReport:
    lines = [line for line in source.text.splitlines() if line.strip()]
    command = _PRINT_COMMAND.search(lines[0]) if lines else None
    if command is None or len(lines) < 2:
        raise FormatError(f"format not recognised as {PYTHON_PRINT}: no command and output")
    args = [a.strip() for a in command["args"].split(",")]
    values = lines[1].split()
    if len(values) < len(args) or any(a not in _PRINTED for a in args[:-1]):
        raise FormatError(f"{PYTHON_PRINT}: the printed values do not line up with the command")
    said = dict(zip((_PRINTED.get(a, a) for a in args), values, strict=False))
    if args[-1] not in _PRINTED and "get_device_name" in args[-1]:
        said["gpu"] = " ".join(values[len(args) - 1 :])
    report = blank(source, PYTHON_PRINT)
    version = valid_version(said.get("torch"))
    if version is not None:
        cuda = said.get("torch_cuda")
        report = report.with_sections(
            torch=torch_section(
                None,
                PYTHON_PRINT,
                version=version,
                cuda=cuda if cuda and cuda != "None" else None,
                cuda_known="torch_cuda" in said,
            )
        )
    if "gpu" in said:
        info = GpuInfo(gpus=(Gpu(index=0, name=said["gpu"]),))
        report = report.with_sections(gpu=Section.ok(info, source=PYTHON_PRINT))
    if version is None and "gpu" not in said:
        raise FormatError(f"{PYTHON_PRINT}: no torch version or GPU printed")
    return report


def parse_device_properties(source: Source) -> NodeReport:
    found = list(_PROPERTIES.finditer(source.text))
    if not found:
        raise FormatError(f"format not recognised as {DEVICE_PROPERTIES}")
    gpus = tuple(
        Gpu(
            index=i,
            name=m["name"],
            compute_capability=f"{m['major']}.{m['minor']}",
            memory_total_mib=int(m["memory"]) if m["memory"] else None,
        )
        for i, m in enumerate(found)
    )
    return _gpu(source, DEVICE_PROPERTIES, GpuInfo(gpus=gpus), ("torch's device properties",))


def parse_settings(source: Source) -> NodeReport:
    found = next((m for m in map(_SETTINGS.match, source.text.splitlines()) if m), None)
    if found is None:
        raise FormatError(f"format not recognised as {SETTINGS}")
    info = GpuInfo(driver_version=valid_version(found["version"]), driver_source=SETTINGS)
    return _gpu(
        source, SETTINGS, info, ("nvidia-settings' version (the driver's user-space tools)",)
    )


def windows_driver(value: str) -> str | None:
    """NVIDIA's driver version from Windows' own number for it: its last five digits
    (31.0.15.3623 -> 536.23, the version NVIDIA's installer and nvidia-smi show)."""
    if not _WINDOWS_DRIVER.match(value):
        return None
    digits = "".join(value.strip().split(".")[-2:])[-5:]
    return f"{digits[:3]}.{digits[3:]}"


def _wmic(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _WMIC_HEAD.match(lines[i]):
        return None
    end = _while(lines, i + 1, stops, lambda line: bool(_WMIC_ROW.match(line) or "---" in line))
    return (i, end) if end > i + 1 else None


def parse_wmic(source: Source) -> NodeReport:
    rows = [m for m in map(_WMIC_ROW.match, source.text.splitlines()) if m]
    nvidia = [m for m in rows if "NVIDIA" in (m["n1"] or m["n2"] or "")]
    if not nvidia:
        raise FormatError(f"format not recognised as {WMIC}: no NVIDIA adapter")
    drivers = [windows_driver(m["v1"] or m["v2"]) for m in nvidia]
    gpus = tuple(Gpu(index=i, name=(m["n1"] or m["n2"]).strip()) for i, m in enumerate(nvidia))
    info = GpuInfo(
        driver_version=valid_version(drivers[0]),
        driver_source=WMIC if drivers[0] else None,
        gpus=gpus,
    )
    note = (
        f"Windows' driver number {nvidia[0]['v1'] or nvidia[0]['v2']} is NVIDIA driver {drivers[0]}"
    )
    return _gpu(source, WMIC, info, (note,))


# -- apt-cache policy nvidia-driver-<branch> -------------------------------------------------------


def _policy(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _POLICY_HEAD.match(lines[i]):
        return None
    end = _while(lines, i + 1, stops, lambda line: bool(_POLICY_LINE.match(line)))
    return (i, end) if _POLICY_INSTALLED.search("\n".join(lines[i:end])) else None


def parse_apt_policy(source: Source) -> NodeReport:
    head = next((m for m in map(_POLICY_HEAD.match, source.text.splitlines()) if m), None)
    installed = _POLICY_INSTALLED.search(source.text)
    if head is None or installed is None:
        raise FormatError(f"format not recognised as {APT_POLICY}: no installed driver package")
    info = GpuInfo(driver_version=valid_version(installed["version"]), driver_source=APT_POLICY)
    note = (
        f"the installed {head['name']} package's version (apt-cache policy); the loaded kernel "
        "module may differ until a reboot"
    )
    return _gpu(source, APT_POLICY, info, (note,))


# -- modinfo nvidia | grep version, modinfo -F version nvidia ---------------------------------------


def _modinfo_version(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not (_MODINFO_COMMAND.search(_previous(lines, i)) and _MODINFO_VERSION.match(lines[i])):
        return None
    return i - 1, i + 1


def parse_modinfo_version(source: Source) -> NodeReport:
    lines = source.text.splitlines()
    version = next((m["version"] for m in map(_MODINFO_VERSION.match, lines[1:]) if m), None)
    if version is None:
        raise FormatError(f"format not recognised as {MODINFO_VERSION}: no version")
    info = GpuInfo(driver_version=valid_version(version), driver_source=MODINFO_VERSION)
    return _gpu(
        source,
        MODINFO_VERSION,
        info,
        ("the version of the nvidia.ko file on disk (the loaded module differs until a reboot)",),
    )


# -- nvidia-smi --query-gpu=driver_version[,...] --format=csv (no name column) -------------------


def _driver_csv(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _DRIVER_CSV_HEAD.match(lines[i]):
        return None
    commas = lines[i].count(",")
    end = _while(
        lines,
        i + 1,
        stops,
        lambda line: line.count(",") == commas and bool(re.match(rf"^\s*{_DRIVER}\b", line)),
    )
    return (i, end) if end > i + 1 else None


def parse_driver_csv(source: Source) -> NodeReport:
    rows = [line for line in source.text.splitlines()[1:] if line.strip()]
    versions = {m["v"] for line in rows if (m := re.match(rf"^\s*(?P<v>{_DRIVER})\b", line))}
    if not versions:
        raise FormatError(f"format not recognised as {SMI_DRIVER_CSV}: no driver row")
    version = max(versions, key=_key)
    info = GpuInfo(driver_version=valid_version(version), driver_source=SMI_DRIVER_CSV)
    return _gpu(source, SMI_DRIVER_CSV, info, ("nvidia-smi --query-gpu=driver_version",))


# -- lsmod with nouveau -------------------------------------------------


def _absent(source: Source, label: str, reason: str) -> NodeReport:
    section: Section[GpuInfo] = Section(
        Status.UNAVAILABLE, reason=reason, source=label, notes=(STATED_ABSENT,)
    )
    return blank(source, label).with_sections(gpu=section)


LSMOD = "lsmod"
LSMOD_EMPTY = "lsmod | grep nvidia (no output)"
# the command whose empty output says no nvidia module is loaded; grep's options
# (-i, -w, -E ...) and quotes as people type them
_GREP_NVIDIA = re.compile(
    r"^(?:sudo\s+)?(?:/s?bin/)?lsmod\s*\|\s*grep\s+(?:-[A-Za-z]+\s+)*['\"]?\^?nvidia['\"]?\s*$",
    re.IGNORECASE,
)


def empty_output_kind(command: str) -> str | None:
    """The section a prompt's command makes when it printed nothing (the next line is another
    prompt, a fence or the end of the text): ``lsmod | grep nvidia`` states that no nvidia
    module is loaded."""
    return "lsmod-empty" if _GREP_NVIDIA.match(command.strip()) else None


def parse_lsmod_empty(source: Source) -> NodeReport:
    """``lsmod | grep nvidia`` that printed nothing: the NVIDIA kernel module is not loaded."""
    return _absent(
        source,
        LSMOD_EMPTY,
        "no usable NVIDIA driver: the NVIDIA kernel module is not loaded (`lsmod | grep "
        "nvidia` printed nothing)",
    )


def parse_lsmod(source: Source) -> NodeReport:
    """lsmod's rows of the NVIDIA modules: which are loaded. The nvidia module states the driver
    runs; without nvidia_uvm, CUDA cannot open /dev/nvidia-uvm (DRV229)."""
    modules = tuple(
        dict.fromkeys(
            m.group(0).split()[0] for m in map(_LSMOD.match, source.text.splitlines()) if m
        )
    )
    if "nvidia" not in modules:
        raise FormatError(f"format not recognised as {LSMOD}: no nvidia module row")
    said = "the NVIDIA kernel modules loaded (lsmod): " + ", ".join(modules)
    if "nvidia_uvm" not in modules:
        said += "; nvidia_uvm is not loaded (CUDA needs it: /dev/nvidia-uvm)"
    info = GpuInfo(kernel_modules=modules, gpus_reason="lsmod names no GPU model")
    return _gpu(source, LSMOD, info, (said,))


KERNEL_MODULE_LINES = "kernel log (NVIDIA modules loading)"
# the kernel's and the NVIDIA modules' own lines as each module loads (dmesg, journalctl),
# which module each names: the kernel's taint notice (kernel/module: '%s: module license '%s'
# taints kernel.', '%s: loading out-of-tree module taints kernel.'), the nvlink core, the
# modeset module's banner with the driver's version, the UVM module's, nvidia-drm's [drm]
# line, and the PCI core's lines for the nvidia driver's device
# (NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/nv.c, nvlink_linux.c, nvidia-modeset,
# nvidia-uvm/uvm.c 'Loaded the UVM driver, major device number %d.', nvidia-drm/nvidia-drm-drv.c)
_MODULE_LINES = (
    (
        re.compile(
            r"\bnvidia: (?:module license '[^']*' taints kernel|loading out-of-tree module)"
        ),
        "nvidia",
    ),
    (re.compile(r"\bnvidia-nvlink: Nvlink Core is being initialized"), "nvidia"),
    (re.compile(r"\bnvidia [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9]: "), "nvidia"),
    (re.compile(r"\bnvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver"), "nvidia_modeset"),
    (re.compile(r"\bnvidia-uvm: Loaded the UVM driver"), "nvidia_uvm"),
    (re.compile(r"\[drm\] Initialized nvidia-drm "), "nvidia_drm"),
)
_MODESET_VERSION = re.compile(
    rf"Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms\s+(?P<version>{_DRIVER})\b"
)


def module_line(line: str) -> str | None:
    """The NVIDIA module a kernel log line says is loading, or None."""
    if "nvidia" not in line:
        return None
    return next((module for regex, module in _MODULE_LINES if regex.search(line)), None)


def _module_lines(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if module_line(lines[i]) is None:
        return None
    return i, _while(lines, i + 1, stops, lambda line: module_line(line) is not None)


def parse_module_lines(source: Source) -> NodeReport:
    """The kernel log's lines of the NVIDIA modules loading: the driver's module loaded (a
    note), and the driver's version where the modeset module's banner states it. The modules
    are not taken as lsmod's list: an excerpt of the log that does not show nvidia_uvm
    loading does not say it is absent (it loads at the first CUDA use)."""
    modules = tuple(
        dict.fromkeys(m for m in map(module_line, source.text.splitlines()) if m is not None)
    )
    if not modules:
        raise FormatError(f"format not recognised as {KERNEL_MODULE_LINES}: no module named")
    version = _MODESET_VERSION.search(source.text)
    said = "the NVIDIA kernel modules the kernel log shows loading: " + ", ".join(modules)
    info = GpuInfo(
        driver_version=valid_version(version.group("version")) if version else None,
        driver_source=KERNEL_MODULE_LINES if version else None,
        gpus_reason="the kernel log names no GPU model",
    )
    return _gpu(source, KERNEL_MODULE_LINES, info, (said,))


def parse_lsmod_nouveau(source: Source) -> NodeReport:
    """lsmod's rows with nouveau loaded and no nvidia module: no NVIDIA driver drives the GPU
    (the NVIDIA installer and the kernel module refuse to load beside it)."""
    lines = source.text.splitlines()
    if any(_LSMOD.match(line) for line in lines):
        raise FormatError("format not recognised as lsmod (nouveau): an nvidia module is loaded")
    return _absent(
        source,
        "lsmod (nouveau)",
        "no usable NVIDIA driver: lsmod lists nouveau and no nvidia module (nouveau holds the "
        "GPU: blacklist nouveau, rebuild the initramfs and reboot)",
    )


# kind -> (label, parser); None: recognised, states no node fact envcheck reads
PARSERS: dict[str, tuple[str, Callable[[Source], NodeReport] | None]] = {
    "glxinfo": (GLXINFO, parse_glxinfo),
    "vulkaninfo": (VULKANINFO, parse_vulkaninfo),
    "gpu-information": (GPU_INFORMATION, parse_gpu_information),
    "driver-libraries": (LIBRARY_FILES, parse_library_files),
    "package-list": (PACKAGE_LIST, parse_package_list),
    "numba": (NUMBA, parse_numba),
    "cupy": (CUPY, parse_cupy),
    "gpustat": (GPUSTAT, parse_gpustat),
    "smi-noheader": (SMI_NOHEADER, parse_smi_noheader),
    "sys-module": (SYS_MODULE, parse_sys_module),
    "lshw": (LSHW, parse_lshw),
    "inxi": (INXI, parse_inxi),
    "cuda-sample": (CUDA_SAMPLE, parse_cuda_sample),
    "python-print": (PYTHON_PRINT, parse_python_print),
    "device-properties": (DEVICE_PROPERTIES, parse_device_properties),
    "nvidia-settings": (SETTINGS, parse_settings),
    "wmic": (WMIC, parse_wmic),
    "apt-policy": (APT_POLICY, parse_apt_policy),
    "modinfo-version": (MODINFO_VERSION, parse_modinfo_version),
    "smi-driver-csv": (SMI_DRIVER_CSV, parse_driver_csv),
    "nvidia-smi-q-part": ("nvidia-smi -q (without its banner)", nvidia_smi.parse_query),
    "lsmod": (LSMOD, parse_lsmod),
    "lsmod-nouveau": ("lsmod (nouveau)", parse_lsmod_nouveau),
    "lsmod-empty": (LSMOD_EMPTY, parse_lsmod_empty),
    "kernel-module-lines": (KERNEL_MODULE_LINES, parse_module_lines),
}

# tried before every other section: its line is modinfo's own 'version:' line, which the full
# modinfo reader (driver_text) would take and refuse without the 'filename:' line
EARLY_FINDERS: tuple[tuple[str, Finder], ...] = (("modinfo-version", _modinfo_version),)
FINDERS: tuple[tuple[str, Finder], ...] = (
    ("nvidia-smi-q-part", _smi_q_fragment),
    ("inxi", _any_line(_INXI_DEVICE.match)),
    ("cuda-sample", _sample),
    ("python-print", _python_print),
    ("device-properties", _any_line(_PROPERTIES.search)),
    ("nvidia-settings", _any_line(_SETTINGS.match)),
    ("wmic", _wmic),
    ("apt-policy", _policy),
    ("smi-driver-csv", _driver_csv),
    ("smi-noheader", _smi_noheader),
    ("sys-module", _sys_module),
    ("glxinfo", _started(_GLX_START, _GLX_LINE)),
    ("vulkaninfo", _started(_VK_START, _VK_LINE)),
    ("gpu-information", _info),
    ("numba", _started(_NUMBA_START, _NUMBA_LINE)),
    ("cupy", _started(_CUPY_START, _CUPY_LINE)),
    ("gpustat", _gpustat),
    ("lshw", _started(_LSHW_START, _LSHW_LINE)),
    ("package-list", _any_line(package_line)),
    ("driver-libraries", _any_line(LIBRARY_LINE.search)),
    ("lsmod", _any_line(_LSMOD.match)),
    ("lsmod-nouveau", _any_line(_LSMOD_NOUVEAU.match)),
    ("kernel-module-lines", _module_lines),
)
