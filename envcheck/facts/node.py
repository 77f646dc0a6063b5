"""Typed access to a report's facts for rules. Every accessor raises Skip when the fact is unknown,
with a reason a user can act on; "not installed" is an answer (None), not an unknown."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix, parse_version, public, variant_cuda
from envcheck.matrix.schema import GpuModel
from envcheck.model.report import (
    Distribution,
    Gpu,
    GpuInfo,
    LibrariesInfo,
    NetworkInfo,
    NodeReport,
    PackagesInfo,
    StorageInfo,
    SystemInfo,
    TorchBuild,
    UnresolvedSymbol,
    WorkloadInfo,
)
from envcheck.model.section import Section
from envcheck.model.versions import DriverVersion
from envcheck.names import canonicalize_name as canonical_name

if TYPE_CHECKING:  # the --deep records are imported when a --deep report is read or probed
    from envcheck.model.deep import CudaDriverCheck, DeepInfo, NvmlHealth, PcieTopology, TorchSmoke

_WORD = "(?<![A-Za-z0-9]){}(?![A-Za-z0-9])"


def name_matches(token: str, name: str | None) -> bool:
    return (
        bool(name)
        and re.search(_WORD.format(re.escape(token)), name or "", re.IGNORECASE) is not None
    )


class Facts:
    """A NodeReport seen through the matrix."""

    def __init__(self, report: NodeReport, matrix: Matrix) -> None:
        self.report = report
        self.matrix = matrix
        self._implied: dict[str, Distribution | None] = {}
        # where a fact the rules read came from, when it is not the report's own section
        self.provenance: dict[str, str] = {}

    @property
    def node(self) -> str:
        return self.report.node

    @property
    def declared(self) -> bool:
        return self.report.origin.kind in ("declared", "ingested")

    def _data(self, section: Section[Any], what: str, fact: str) -> Any:
        if section.is_ok and section.data is not None:
            return section.data
        raise Skip(f"{what} unknown: {section.describe()}", fact)

    # --- GPU and driver -------------------------------------------------------------------------

    def gpu_info(self) -> GpuInfo:
        info: GpuInfo = self._data(self.report.gpu, "GPU facts", "gpu")
        return info

    def gpus(self) -> tuple[Gpu, ...]:
        info = self.gpu_info()
        if info.gpus is None:
            raise Skip(f"GPU list unknown ({info.gpus_reason or 'not reported'})", "gpu.gpus")
        return info.gpus

    def driver(self) -> Version:
        info = self.gpu_info()
        try:
            return DriverVersion(info.driver_version or "")
        except InvalidVersion:
            raise Skip(
                f"driver version unknown ({info.driver_version or 'not reported'})",
                "gpu.driver_version",
            ) from None

    def max_cuda(self) -> tuple[Version, str]:
        """Newest CUDA the driver runs, and where that figure came from."""
        info = self.gpu_info()
        reported = parse_version(info.cuda_driver_version)
        if reported is not None:
            return reported, f"reported by {info.driver_source or 'the driver'}"
        driver = self.driver()
        branch = self.matrix.max_cuda_for_driver(driver)
        if branch is not None:
            return branch.max_cuda, f"its branch {branch.branch}, per the matrix"
        newest = self.matrix.newest_cuda_supported(driver)
        if newest is not None:
            return newest.cuda, "the newest toolkit whose driver it meets, per the matrix"
        raise Skip(
            f"the newest CUDA driver {driver} supports is unknown", "gpu.cuda_driver_version"
        )

    def gpu_model(self, gpu: Gpu) -> GpuModel | None:
        return self.matrix.gpu_model(gpu.name)

    def compute_capability(self, gpu: Gpu) -> Version:
        reported = parse_version(gpu.compute_capability)
        if reported is not None:
            return reported
        model = self.gpu_model(gpu)
        if model is not None:
            return model.compute_capability
        raise Skip(
            f"compute capability of {gpu.name or f'GPU {gpu.index}'} unknown "
            "(a GPU name the matrix does not know)",
            f"gpu.gpus[{gpu.index}].compute_capability",
        )

    def gpu_summary(self, gpus: tuple[Gpu, ...] | None = None) -> str:
        gpus = self.gpus() if gpus is None else gpus
        counts = Counter(g.name or "unknown GPU" for g in gpus)
        return ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items()) or "no GPUs"

    # --- --deep ---------------------------------------------------------------------------------

    def deep(self) -> DeepInfo:
        info: DeepInfo = self._data(self.report.deep, "--deep GPU checks", "deep")
        return info

    def cuda_check(self) -> CudaDriverCheck:
        check = self.deep().cuda
        if check is None:
            raise Skip("the CUDA driver check did not run", "deep.cuda")
        if check.outcome == "no_driver":
            raise Skip(check.reason or "no NVIDIA driver (libcuda not found)", "deep.cuda")
        return check

    def health(self) -> NvmlHealth:
        deep = self.deep()
        if deep.health is None:
            raise Skip(f"NVML health unknown ({deep.health_reason or 'not read'})", "deep.health")
        if not deep.health.gpus:
            raise Skip("NVML health lists no GPUs", "deep.health")
        return deep.health

    def pcie(self) -> PcieTopology:
        topology = self.deep().pcie
        if topology is None:
            raise Skip("PCIe topology not read", "deep.pcie")
        return topology

    def torch_smoke(self) -> TorchSmoke:
        smoke = self.deep().torch
        if smoke is None:
            raise Skip("the torch smoke test did not run (pass --deep=torch)", "deep.torch")
        if smoke.outcome == "no_torch":
            raise Skip(smoke.reason or "torch not installed", "deep.torch")
        return smoke

    # --- packages ------------------------------------------------------------------------------

    def packages(self) -> PackagesInfo:
        info: PackagesInfo = self._data(self.report.packages, "installed packages", "packages")
        return info

    def dist(self, name: str) -> Distribution | None:
        packages = self.packages()
        dist = packages.get(name)
        if dist is None and not packages.partial and self.report.origin.kind == "declared":
            # a declared stack names torch, not the nvidia-* wheels its pip build pins exactly
            # and cannot be installed without: those pins are implied, not absent
            return self.implied(name)
        if dist is None and packages.partial:
            implied = self.implied(name)
            if implied is not None:
                return implied
            raise Skip(
                f"{name} is not in the package list, which is partial ({packages.partial})",
                f"packages.{name}",
            )
        return dist

    def implied(self, name: str) -> Distribution | None:
        """A wheel the package list does not show but torch's build implies: PyPI's torch X
        (and the PyTorch index's build of its default CUDA variant) pins its nvidia-* wheels
        exactly, so unless the list says otherwise that pin is what is installed. None when
        nothing implies it. The distribution's installer is ``implied`` and ``provenance``
        says by what."""
        if name in self._implied:
            return self._implied[name]
        dist: Distribution | None = None
        section = self.report.torch
        build = section.data if section.is_ok else None
        version = parse_version(build.version) if build is not None else None
        if build is not None and version is not None and canonical_name(name) != "torch":
            release = self.matrix.torch_release(public(version))
            label = build.local_label or build.variant
            default, pins = self.pypi_wheel(public(version))
            spec = pins.get(canonical_name(name)) if release is not None else None
            pinned = [s.version for s in spec if s.operator == "=="] if spec is not None else []
            if (
                release is not None
                and default is not None
                and label in (None, default)
                and len(pinned) == 1
            ):
                dist = Distribution(name=name, version=pinned[0], installer="implied")
                self.provenance[f"packages.{canonical_name(name)}"] = (
                    f"implied by the matrix: torch {build.version} pins {name}=={pinned[0]}; "
                    f"the package list does not show it (confirm with `pip show {name}`)"
                )
        self._implied[name] = dist
        return dist

    def version(self, name: str) -> Version | None:
        """Installed version of ``name``; None when it is not installed."""
        dist = self.dist(name)
        if dist is None:
            return None
        try:
            return Version(dist.version)
        except InvalidVersion:
            raise Skip(
                f"{name} version {dist.version!r} is not a PEP 440 version", f"packages.{name}"
            ) from None

    def known_version(self, name: str) -> Version | None:
        """Installed version of ``name`` where it is known; None when it is not installed, the
        packages are not known, or the version is not PEP 440 (a log's rule words its finding
        from what is known and leaves the rest out)."""
        try:
            return self.version(name)
        except Skip:
            return None

    def torch(self) -> TorchBuild | None:
        if self.version("torch") is None:
            return None
        section = self.report.torch
        if section.status.value == "unavailable" and not section.is_ok:
            raise Skip(f"torch build unknown: {section.describe()}", "torch")
        build: TorchBuild = self._data(section, "torch build", "torch")
        return build

    def unresolved_symbols(self, library: str) -> list[UnresolvedSymbol]:
        """Extensions whose path (as the log names it) contains ``library`` that a log shows failing to load with
        an undefined symbol; [] when nothing says so."""
        section = self.report.libraries
        info = section.data if section.is_ok else None
        if not isinstance(info, LibrariesInfo):
            return []
        return [u for u in info.unresolved if library in u.library]

    def torch_arch_stated(self) -> tuple[str, str] | None:
        """(arch list, where it was read) when a log or dump quotes the architectures torch says
        it was built for (its get_arch_list() or start-up warning); None when nothing does."""
        section = self.report.torch
        build = section.data if section.is_ok else None
        if not isinstance(build, TorchBuild) or not build.arch_list:
            return None
        return build.arch_list, section.source or "the report"

    @functools.cached_property
    def _torch_cuda(self) -> tuple[Version | None, str | None, str]:
        build = self.torch()
        if build is None:
            return None, None, "torch is not installed"
        if build.cuda:
            cuda = parse_version(build.cuda)
            return cuda, build.variant, "torch/version.py"
        if build.variant:
            return variant_cuda(build.variant), build.variant, "its +label"
        version = parse_version(build.version)
        if self.declared and version is not None and not version.local:
            release = self.matrix.torch_release(version)
            default, _pins = self.pypi_wheel(version)
            if release is not None and default:
                return variant_cuda(default), default, "the PyPI wheel's default"
            if release is not None and self.host_arch() == "aarch64":
                return None, "cpu", "the PyPI aarch64 wheel (it pins no CUDA libraries)"
        raise Skip(f"CUDA build of torch {build.version} unknown", "torch.cuda")

    def host_arch(self) -> str:
        """The node's CPU architecture ("x86_64" when the report does not say)."""
        section = self.report.system
        data = section.data if section.is_ok else None
        arch = getattr(data, "arch", None)
        if arch in ("x86_64", "aarch64"):
            return str(arch)
        gpus = self.report.gpu.data.gpus if self.report.gpu.is_ok and self.report.gpu.data else ()
        for gpu in gpus or ():
            model = self.matrix.gpu_model(gpu.name)
            if model is not None and model.host_arch:
                return model.host_arch  # a superchip: its CPU is the node's
        return "x86_64"

    def pypi_wheel(self, version: Version) -> tuple[str | None, dict[str, SpecifierSet]]:
        """The CUDA variant and the pins of PyPI's torch ``version`` wheel for this node's CPU
        (PyPI's aarch64 wheels of torch up to 2.10 pin no CUDA library: CPU builds, per the
        generated [[torch_wheel]] table); (None, {}) when the matrix does not know it."""
        release = self.matrix.torch_release(version)
        if self.host_arch() == "aarch64":
            wheel = self.matrix.generated.torch(version, "aarch64")
            if wheel is not None and not wheel.unknown:
                return wheel.variant, dict(wheel.pins)
            return None, {}
        if release is None:
            return None, {}
        return release.pypi_default, dict(release.pins)

    def torch_cuda(self) -> Version | None:
        """CUDA the installed torch was built for; None for CPU and ROCm builds and no torch."""
        return self._torch_cuda[0]

    def torch_variant(self) -> str:
        variant = self._torch_cuda[1]
        if variant is None:
            raise Skip("torch variant unknown", "torch.variant")
        return variant

    def torch_cuda_source(self) -> str:
        return self._torch_cuda[2]

    def torch_is_cpu(self) -> bool | None:
        """Whether torch is a CPU-only build (``+cpu``, 'CUDA used to build PyTorch: None',
        conda's ``*_cpu_*``); False when not installed or a GPU build; None when not stated."""
        try:
            build = self.torch()
        except Skip:
            return None
        if build is None:
            return False
        if build.cuda or build.hip:
            return False
        labels = {(build.variant or "").lower(), (build.local_label or "").lower()}
        if "cpu" in labels:
            return True
        if build.variant or build.local_label:
            return False
        try:
            return self._torch_cuda[1] == "cpu"  # a declared PyPI wheel's build, by CPU
        except Skip:
            return None

    def torch_version(self) -> Version:
        version = self.version("torch")
        if version is None:
            raise Skip("torch is not installed")
        return version

    # --- Python, system, storage, network, environment ------------------------------------------

    def python_version(self) -> Version:
        data = self._data(self.report.python, "Python facts", "python")
        version = parse_version(data.version)
        if version is None:
            raise Skip(f"Python version unknown ({data.version!r})", "python.version")
        return version

    def markers(self) -> dict[str, str]:
        data = self._data(self.report.python, "Python facts", "python")
        markers: dict[str, str] = dict(data.markers)
        if not markers:
            raise Skip("PEP 508 marker environment unknown", "python.markers")
        return markers

    def system(self) -> SystemInfo:
        info: SystemInfo = self._data(self.report.system, "system facts", "system")
        return info

    def storage(self) -> StorageInfo:
        info: StorageInfo = self._data(self.report.storage, "storage facts", "storage")
        return info

    def network(self) -> NetworkInfo:
        info: NetworkInfo = self._data(self.report.network, "network facts", "network")
        return info

    def libraries(self) -> LibrariesInfo:
        info: LibrariesInfo = self._data(self.report.libraries, "shared libraries", "libraries")
        return info

    def workload(self) -> WorkloadInfo:
        info: WorkloadInfo = self._data(self.report.workload, "the job's settings", "workload")
        return info

    def env(self) -> Mapping[str, str]:
        data = self._data(self.report.env, "environment variables", "env")
        variables: Mapping[str, str] = data.variables
        return variables


def release_of(version: Version) -> str:
    return str(public(version))
