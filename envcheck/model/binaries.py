"""The report's ``binaries`` section: what the node's ELF files say (envcheck/binaries/ reads
them), and the driver as its files show it. Rules read only this, never the disk."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kernels:
    """GPU code in a library's ``.nv_fatbin``: SM architectures as numbers (80 = sm_80)."""

    sass: tuple[int, ...] = ()
    ptx: tuple[int, ...] = ()
    ptx_isa: tuple[str, ...] = ()  # the PTX ISA version of each of ``ptx`` ("8.4"), in order

    def runs_on(self, cc: int) -> str:
        """ "native" (a cubin of the GPU's major with a minor at most its own), "ptx" (PTX for
        an architecture at most the GPU's, compiled by the driver at load), "none"."""
        if any(a // 10 == cc // 10 and a <= cc for a in self.sass):
            return "native"
        if any(a <= cc for a in self.ptx):
            return "ptx"
        return "none"


@dataclass(frozen=True)
class Need:
    """A needed library that will not load as the package meant: missing, a copy other than
    the wheel's, or a copy lacking symbol versions the object needs."""

    name: str  # "libcublas.so.12"
    path: str | None = None  # the copy the loader finds; None: not found
    via: str | None = None  # how it finds it: "RPATH", "LD_LIBRARY_PATH", "RUNPATH", ...
    meant: str | None = None  # the nvidia-* wheel's copy that another copy shadows
    lacking: tuple[str, ...] = ()  # versions needed (GLIBCXX_3.4.30) the found copy lacks
    has_max: str | None = None  # the newest version of that family the found copy defines


@dataclass(frozen=True)
class BinaryFile:
    """A compiled file of the Python environment: its kernels and what it needs."""

    path: str  # as installed (absolute)
    distribution: str | None = None  # the installed distribution that owns it (RECORD)
    extension: bool = False  # a Python extension module (imported), not a plain library
    kernels: Kernels | None = None  # None: no .nv_fatbin
    needs: tuple[Need, ...] = ()  # problems only
    # symbols of torch's C++ namespaces it needs that the installed torch does not define
    torch_missing: tuple[str, ...] = ()
    torch_checked: int = 0  # how many torch symbols were checked
    error: str | None = None  # why the file could not be read


@dataclass(frozen=True)
class DriverFiles:
    """The NVIDIA driver as its files show it, whatever NVML says."""

    kernel_module: str | None = None  # /proc/driver/nvidia/version ("550.54.15")
    libcuda: str | None = None  # the libcuda.so.<version> the loader finds ("550.54.15")
    libcuda_path: str | None = None
    nvml_library: str | None = None  # libnvidia-ml.so.<version>'s version
    device_nodes: tuple[str, ...] = ()  # /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm, ...
    container: bool | None = None
    # NVIDIA_VISIBLE_DEVICES as the container runtime sets it ("all", "none", "void", ids)
    visible_devices: str | None = None


@dataclass(frozen=True)
class BinariesInfo:
    """The compiled files of the environment's GPU packages that were scanned."""

    site_dirs: tuple[str, ...] = ()  # where installed files were read
    files: tuple[BinaryFile, ...] = ()  # files with GPU kernels, a loading problem or an error
    scanned: int = 0  # ELF files looked at
    from_cache: int = 0  # of those, read from the per-file cache
    torch_lib: str | None = None  # torch's lib directory whose exports were checked
    driver: DriverFiles | None = None
