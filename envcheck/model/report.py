"""NodeReport: everything envcheck knows about one node, as frozen typed records.

A report is produced by probing a node, by declaring one (``--spec``), by parsing text another
tool wrote, or by a remote node in a cluster. Rules read only this. ``None`` always means
"unknown"; a section that could not be read says why.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from envcheck.errors import CodecError, ReportError
from envcheck.model.codec import from_dict, to_dict
from envcheck.model.section import Section, Status
from envcheck.names import canonicalize_name

if TYPE_CHECKING:
    from envcheck.model.binaries import BinariesInfo
    from envcheck.model.deep import DeepInfo
    from envcheck.model.expect import Expectation


def _import_deferred() -> None:
    """The --deep records (a dozen dataclasses) are imported when a report is decoded or a
    --deep probe builds them, not by every probe: the codec calls this before it reads the
    annotations of a class defined here."""
    from envcheck.model.binaries import BinariesInfo
    from envcheck.model.deep import DeepInfo
    from envcheck.model.expect import Expectation

    globals()["DeepInfo"] = DeepInfo
    globals()["BinariesInfo"] = BinariesInfo
    globals()["Expectation"] = Expectation


SCHEMA_VERSION = 1
UNLIMITED = -1  # value of a ulimit that is "unlimited"
DEEP_NOT_RUN = "not run (pass --deep)"


@dataclass(frozen=True)
class Gpu:
    """One GPU as the driver reports it (its UUID only as a hash)."""

    index: int
    name: str | None = None
    uuid_hash: str | None = None
    compute_capability: str | None = None
    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    persistence_mode: bool | None = None
    process_count: int | None = None
    process_memory_mib: int | None = None


@dataclass(frozen=True)
class GpuInfo:
    """The driver, NVML and CUDA driver versions and the GPUs they report."""

    driver_version: str | None = None
    cuda_driver_version: str | None = None  # the newest CUDA the driver supports
    nvml_version: str | None = None
    driver_source: str | None = None
    gpus: tuple[Gpu, ...] | None = None  # None: the GPU list is unknown (see gpus_reason)
    gpus_reason: str | None = None
    cuda_errors: tuple[str, ...] = ()  # CUDA error numbers a log states ("802")
    # the /dev/nvidia* device files a pasted listing shows ("/dev/nvidiactl", "/dev/nvidia0",
    # "/dev/nvidia-uvm"); None: not stated, (): the listing found none
    device_nodes: tuple[str, ...] | None = None
    # where the loader's cache (ldconfig -p) has the driver's libcuda.so.1 and, with none, the
    # unversioned libcuda.so (a toolkit's stub); None: not stated, (): the listing has neither
    libcuda_cached: tuple[str, ...] | None = None
    # the NVIDIA kernel modules a pasted lsmod lists loaded ("nvidia", "nvidia_uvm"); None: not
    # stated
    kernel_modules: tuple[str, ...] | None = None


@dataclass(frozen=True)
class PythonInfo:
    """The interpreter checked: version, environment, marker values and sys.path."""

    version: str
    implementation: str = "CPython"
    executable: str | None = None
    prefix: str | None = None
    base_prefix: str | None = None
    env_kind: Literal["venv", "conda", "system", "unknown"] = "unknown"
    env_name: str | None = None
    markers: dict[str, str] = field(default_factory=dict)
    sys_path: tuple[str, ...] = ()
    headers: bool | None = None  # Python.h present for this interpreter (None: unknown)


@dataclass(frozen=True)
class Distribution:
    """An installed (or declared) Python distribution and its Requires-Dist lines."""

    name: str
    version: str
    location: str | None = None
    installer: str | None = None
    requires: tuple[str, ...] = ()
    # a setting that skips the distribution's own runtime check of ``requires``, where the line
    # stating them offers one (LLaMA-Factory's 'or set `DISABLE_VERSION_CHECK=1`')
    check_switch: str | None = None

    @property
    def key(self) -> str:
        return canonicalize_name(self.name)


@dataclass(frozen=True)
class BrokenDistribution:
    """A distribution's metadata that could not be read, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class PackagesInfo:
    """Distributions in sys.path order; a name found twice means a shadowed copy."""

    distributions: tuple[Distribution, ...] = ()
    broken: tuple[BrokenDistribution, ...] = ()
    search_path: tuple[str, ...] = ()
    # set when the list is known to be incomplete (text that lists only some packages, such as
    # collect_env's name-filtered list): a name not listed is then unknown, not "not installed"
    partial: str | None = None

    @functools.cached_property
    def _index(self) -> dict[str, Distribution]:
        index: dict[str, Distribution] = {}
        for dist in self.distributions:
            index.setdefault(dist.key, dist)
        return index

    def get(self, name: str) -> Distribution | None:
        """The copy of ``name`` that an import would find (first on sys.path)."""
        return self._index.get(canonicalize_name(name))

    def version(self, name: str) -> str | None:
        dist = self.get(name)
        return dist.version if dist else None

    def duplicates(self) -> dict[str, tuple[Distribution, ...]]:
        seen: dict[str, list[Distribution]] = {}
        for dist in self.distributions:
            seen.setdefault(dist.key, []).append(dist)
        return {k: tuple(v) for k, v in seen.items() if len(v) > 1}


@dataclass(frozen=True)
class TorchBuild:
    """What the installed torch was built for (CUDA or HIP, variant, arch list, ABI)."""

    version: str
    local_label: str | None = None  # "cu121", "cpu", "rocm6.2" (PyPI wheels have none)
    cuda: str | None = None  # torch.version.cuda, read from torch/version.py
    hip: str | None = None
    git_version: str | None = None
    variant: str | None = None  # "cu121", "cpu", "rocm6.2": from the label or from `cuda`
    location: str | None = None
    version_file: str | None = None
    requires_cuda: dict[str, str] = field(default_factory=dict)  # torch's own pins for this node
    installed_cuda: dict[str, str] = field(default_factory=dict)  # nvidia-* wheels installed
    cxx11_abi: bool | None = None
    # the architectures torch itself says it was built for ("5.0;6.0;...;9.0", "...;12.0+PTX"):
    # its get_arch_list() or its start-up warning, as a log or dump quotes them; None: not read
    arch_list: str | None = None


@dataclass(frozen=True)
class Limit:
    """A resource limit's soft and hard values."""

    soft: int  # UNLIMITED (-1) for "unlimited"
    hard: int


@dataclass(frozen=True)
class CgroupInfo:
    """The cgroup version and the memory and CPU limits it sets."""

    version: int | None = None
    memory_limit_bytes: int | None = None  # None: no limit set
    cpu_limit: float | None = None  # CPUs allowed by the quota; None: no quota


@dataclass(frozen=True)
class ContainerEngine:
    """The container engine on the host and its NVIDIA runtime set-up, as pasted dumps state
    it: ``docker info`` (the running daemon), ``/etc/docker/daemon.json`` (its configuration,
    read only at the daemon's start), ``nvidia-ctk --version`` / ``nvidia-container-cli
    --version`` and the toolkit's ``config.toml``. None of a field: not stated."""

    engine: str = "docker"
    server_version: str | None = None
    runtimes: tuple[str, ...] | None = None  # the running daemon's runtimes (docker info)
    default_runtime: str | None = None  # ditto
    cgroup_driver: str | None = None  # "systemd" or "cgroupfs" (docker info)
    cgroup_version: int | None = None  # the host's cgroup hierarchy as the daemon sees it
    configured_runtimes: tuple[str, ...] | None = None  # daemon.json's "runtimes" keys
    configured_default_runtime: str | None = None  # daemon.json's "default-runtime"
    toolkit_version: str | None = None  # NVIDIA Container Toolkit / libnvidia-container
    no_cgroups: bool | None = None  # config.toml's [nvidia-container-cli] no-cgroups
    rootless: bool | None = None  # docker info's Security Options list 'rootless'
    warnings: tuple[str, ...] = ()  # docker info's "WARNING: ..." lines


@dataclass(frozen=True)
class Toolkit:
    """A CUDA toolkit's nvcc found on the node, and whether it is the one in use."""

    nvcc_path: str
    version: str | None = None  # nvcc's release, e.g. "12.1": the toolkit, not torch's runtime
    # what a log shows compiling CUDA with it (an extension build, a JIT compiler): the toolkit
    # is known to be in use, whatever is installed
    in_use: str | None = None


@dataclass(frozen=True)
class SystemInfo:
    """The OS, kernel, CPU, memory, glibc, cgroup and container of the node."""

    os_id: str | None = None
    os_version: str | None = None
    os_pretty: str | None = None
    kernel: str | None = None
    arch: str | None = None
    glibc: str | None = None
    cpu_count: int | None = None
    cpu_affinity: int | None = None
    memory_total_bytes: int | None = None
    memory_available_bytes: int | None = None
    cgroup: CgroupInfo | None = None
    container: str | None = None  # "docker", "podman", "kubernetes", ...; "none" when not in one
    container_evidence: str | None = None
    # the container image a log names (nvcr.io/nvidia/pytorch:23.11-py3): whose torch runs
    container_image: str | None = None
    ulimits: dict[str, Limit] = field(default_factory=dict)
    nvcc: Toolkit | None = None
    glibc_lacks: str | None = None  # a GLIBC_x.y symbol version a log says this glibc lacks
    glibc_needed_by: str | None = None  # the binary that needs it ('(required by ...)'), ditto
    gxx: str | None = None  # the host C++ compiler's version, as a build log states it
    gxx_needed: str | None = None  # what the CUDA toolkit accepts (">=6.0.0, <12.0"), ditto
    # True when the source looked for nvcc (PATH, CUDA_HOME): then no ``nvcc`` means none found
    nvcc_searched: bool = False
    # Secure Boot as mokutil --sb-state states it: "enabled", "disabled", "unsupported"
    secure_boot: str | None = None
    # the host's container engine and NVIDIA runtime set-up, as pasted dumps state it
    container_engine: ContainerEngine | None = None


@dataclass(frozen=True)
class DiskUsage:
    """The space on the file system behind a path a job writes to."""

    role: str  # "tmp", "ray_tmp", "hf_cache", "torch_cache", "dev_shm"
    path: str
    measured_path: str | None = None  # nearest existing ancestor actually measured
    exists: bool = True
    total_bytes: int | None = None
    free_bytes: int | None = None
    fs_type: str | None = None

    @property
    def used_fraction(self) -> float | None:
        if not self.total_bytes or self.free_bytes is None:
            return None
        return max(0.0, min(1.0, 1.0 - self.free_bytes / self.total_bytes))


@dataclass(frozen=True)
class StorageInfo:
    """The disks of the paths a job writes to."""

    disks: tuple[DiskUsage, ...] = ()

    def by_role(self, role: str) -> DiskUsage | None:
        return next((d for d in self.disks if d.role == role), None)


@dataclass(frozen=True)
class SharedLibrary:
    """A shared library the loader finds, and how (its path and version)."""

    name: str  # "libcublas", "libcudart", ...
    path: str
    version: str | None = None
    via: str = "LD_LIBRARY_PATH"


@dataclass(frozen=True)
class UnresolvedSymbol:
    """A compiled extension that failed to load: ``library: undefined symbol: symbol`` (as a
    log shows it; envcheck does not load extensions itself)."""

    library: str  # the .so named before the colon ("flash_attn_2_cuda.cpython-311-...so")
    symbol: str  # the mangled name it needs ("_ZN3c104cuda9SetDeviceEi")


@dataclass(frozen=True)
class LibrariesInfo:
    """The loader's settings and the CUDA libraries it finds, misses or loads."""

    ld_library_path: tuple[str, ...] = ()
    ld_preload: tuple[str, ...] = ()
    cuda_libraries: tuple[SharedLibrary, ...] = ()
    unresolved: tuple[UnresolvedSymbol, ...] = ()
    missing: tuple[str, ...] = ()  # shared libraries a log says could not be opened
    # the NCCL release a job loaded and the CUDA it was built for, as NCCL's own banner or error
    # line states them ("NCCL version 2.28.9+cuda13.0"): the library in use, wheel or system
    nccl_loaded: str | None = None
    nccl_loaded_cuda: str | None = None


@dataclass(frozen=True)
class Interface:
    """A network interface: state, MTU and addresses."""

    name: str
    state: str | None = None  # "up", "down", "unknown"
    mtu: int | None = None
    ipv4: tuple[str, ...] = ()  # "10.0.0.5/24" or "10.0.0.5"
    ipv6: tuple[str, ...] = ()
    kind: str | None = None  # "loopback", "ether", "bridge", "veth", "infiniband", "virtual", ...


@dataclass(frozen=True)
class IbPort:
    """An InfiniBand port's state, rate and link layer."""

    port: int
    state: str | None = None
    rate: str | None = None
    link_layer: str | None = None


@dataclass(frozen=True)
class IbDevice:
    """An InfiniBand device and its ports."""

    name: str
    ports: tuple[IbPort, ...] = ()


@dataclass(frozen=True)
class NetworkInfo:
    """The hostname, what it resolves to, the interfaces and InfiniBand devices."""

    hostname: str | None = None
    hostname_addresses: tuple[str, ...] = ()  # what the hostname resolves to
    resolve_error: str | None = None
    interfaces: tuple[Interface, ...] = ()
    infiniband: tuple[IbDevice, ...] = ()

    def interface(self, name: str) -> Interface | None:
        return next((i for i in self.interfaces if i.name == name), None)


@dataclass(frozen=True)
class GraphicsInfo:
    """Userspace pieces headless rendering (Vulkan, EGL) needs from the NVIDIA driver."""

    vulkan_icds: tuple[str, ...] = ()  # ICD manifests found (json files)
    egl_vendors: tuple[str, ...] = ()  # glvnd EGL vendor manifests found
    egl_libraries: tuple[str, ...] = ()  # libEGL_nvidia.so.* found
    driver_capabilities: str | None = None  # $NVIDIA_DRIVER_CAPABILITIES in a container
    render_nodes: tuple[str, ...] = ()  # /dev/dri/renderD* present
    render_nodes_denied: tuple[str, ...] = ()  # ... that this user cannot open read-write
    rtx_min_driver: str | None = None  # the driver floor an Omniverse RTX app states in a log
    failures: tuple[str, ...] = ()  # rendering failures a log states ("egl: ...", "vulkan: ...")
    renderers: tuple[str, ...] = ()  # the libraries whose own lines state them ("nvdiffrast")

    @property
    def nvidia_vulkan(self) -> bool:
        return any("nvidia" in p.rsplit("/", 1)[-1].lower() for p in self.vulkan_icds)

    @property
    def nvidia_egl(self) -> bool:
        return bool(self.egl_libraries) and any(
            "nvidia" in p.rsplit("/", 1)[-1].lower() for p in self.egl_vendors
        )


@dataclass(frozen=True)
class WorkloadInfo:
    """What the job asks of the node, as a log or a declared spec states it (a probe cannot
    know it): the floating-point type it runs in, the model type it loads, the command it runs,
    and the simulators or frameworks it runs even before they are installed (an Isaac Sim issue
    template's "Isaac Sim Version: Unable to install")."""

    dtype: str | None = None  # "bfloat16", "float16", "float32" (normalised)
    model_type: str | None = None  # the checkpoint's model type ("qwen2": config.json's model_type)
    command: str | None = None  # the command line tool and subcommand it runs ("trl vllm-serve")
    runs: tuple[str, ...] = ()  # distribution names, canonicalised: "isaacsim", "omnigibson"


@dataclass(frozen=True)
class EnvInfo:
    """The environment variables read, and the names of those whose values were redacted."""

    variables: dict[str, str] = field(default_factory=dict)
    redacted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Origin:
    """Where a report came from: this node probed, a spec, a paste, a saved report."""

    kind: Literal["probe", "declared", "ingested", "remote", "saved"] = "probe"
    detail: str | None = None


def _missing(what: str) -> Any:
    return field(default_factory=lambda: Section(Status.UNAVAILABLE, reason=f"{what} not recorded"))


@dataclass(frozen=True)
class NodeReport:
    """Everything known about one node, each section with its status and source."""

    node: str
    envcheck_version: str
    created_at: str
    origin: Origin = field(default_factory=Origin)
    redacted: bool = False
    schema: int = SCHEMA_VERSION
    gpu: Section[GpuInfo] = _missing("GPU facts")
    python: Section[PythonInfo] = _missing("Python facts")
    packages: Section[PackagesInfo] = _missing("installed packages")
    torch: Section[TorchBuild] = _missing("torch build")
    system: Section[SystemInfo] = _missing("system facts")
    storage: Section[StorageInfo] = _missing("storage facts")
    libraries: Section[LibrariesInfo] = _missing("shared libraries")
    network: Section[NetworkInfo] = _missing("network facts")
    env: Section[EnvInfo] = _missing("environment variables")
    graphics: Section[GraphicsInfo] = _missing("graphics userspace")
    workload: Section[WorkloadInfo] = _missing("the job's settings (from a log or a spec)")
    deep: Section[DeepInfo] = field(
        default_factory=lambda: Section(Status.UNAVAILABLE, reason=DEEP_NOT_RUN)
    )
    binaries: Section[BinariesInfo] = _missing("the installed packages' ELF files")
    # what the node must have, as the user states it (--expect); not a fact of the node
    expect: Section[Expectation] = _missing("expectations (--expect)")

    SECTIONS = (
        "gpu",
        "python",
        "packages",
        "torch",
        "system",
        "storage",
        "libraries",
        "network",
        "env",
        "graphics",
        "workload",
        "deep",
        "binaries",
        "expect",
    )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = to_dict(self)
        return data

    @classmethod
    def from_dict(cls, data: Any, *, where: str | None = None) -> NodeReport:
        """Load a report (or the first report of a ``check --json`` envelope)."""
        from envcheck.inputs import check_schema
        from envcheck.model.scrub import scrub_report

        if isinstance(data, Mapping) and "data" in data and "command" in data:
            reports = (
                data.get("data", {}).get("reports") if isinstance(data["data"], Mapping) else None
            )
            if not isinstance(reports, list) or not reports:
                raise ReportError(
                    "JSON envelope holds no list of reports", where=where, key="data.reports"
                )
            data = reports[0]
        if not isinstance(data, Mapping):
            raise ReportError("expected a JSON object (a NodeReport)", where=where)
        check_schema(data.get("schema"), SCHEMA_VERSION, where, error=ReportError)
        try:
            report = from_dict(cls, data, strict=False)
        except CodecError as exc:
            raise ReportError(exc.message, where=where, key=exc.path) from None
        except RecursionError:
            raise ReportError("nested too deeply", where=where) from None
        # a saved report may come from an older envcheck or a hand: secrets are hidden again
        return scrub_report(report)

    def with_sections(self, **sections: Any) -> NodeReport:
        return replace(self, **sections)


# spellings of the floating-point types (PyTorch, vLLM's --dtype, HF's bf16/fp16 flags)
DTYPES = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}


def normal_dtype(text: str) -> str | None:
    """The dtype's normal name ("bfloat16" for "Bfloat16", "bf16", "torch.bfloat16"), or None."""
    return DTYPES.get(text.strip().lower().removeprefix("torch."))
