"""Declared stack files (``--spec stack.toml``): the node you plan to build, as a NodeReport.

Every table and key is optional; unknown keys are errors that name the key and line. What a
file does not declare stays unknown, so rules that need it are skipped with that reason. A
``[packages]`` table is the complete list of the node's relevant packages: a package it does
not name is not installed. A torch version without a ``+cuXYZ`` label means the PyPI wheel.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import InvalidName, canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import CodecError, SpecError
from envcheck.ingest.common import markers
from envcheck.ingest.driver_dumps import windows_driver
from envcheck.matrix.locate import line_of
from envcheck.model.codec import from_dict
from envcheck.model.report import (
    CgroupInfo,
    DiskUsage,
    Distribution,
    EnvInfo,
    Gpu,
    GpuInfo,
    Interface,
    LibrariesInfo,
    NetworkInfo,
    NodeReport,
    Origin,
    PackagesInfo,
    PythonInfo,
    StorageInfo,
    SystemInfo,
    Toolkit,
    TorchBuild,
    WorkloadInfo,
    normal_dtype,
)
from envcheck.model.section import Section
from envcheck.numeric import NumberError, Range, check
from envcheck.probes.storage import ray_temp_dir
from envcheck.probes.torch_build import is_cuda_dist, variant_of
from envcheck.redact import redact_env
from envcheck.version import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GIB = 1024**3
MAX_GIB = float(1024**3)  # an exbibyte: far above any node, far below float overflow
NOT_DECLARED = "not declared in the spec"


@dataclass(frozen=True)
class SpecGpu:
    driver: str | None = None
    cuda: str | None = None  # the newest CUDA the driver supports (nvidia-smi's banner)
    models: tuple[str, ...] = ()
    compute_capability: str | None = None


@dataclass(frozen=True)
class SpecPython:
    version: str
    implementation: str = "CPython"


@dataclass(frozen=True)
class SpecDisk:
    path: str
    size_gib: float
    free_gib: float | None = None


@dataclass(frozen=True)
class SpecSystem:
    os: str | None = None
    kernel: str | None = None
    arch: str | None = None
    glibc: str | None = None
    # the CUDA toolkit on PATH / CUDA_HOME (nvcc --version), e.g. "11.8"; "none": no toolkit
    nvcc: str | None = None
    cpus: int | None = None
    memory_gib: float | None = None
    memory_available_gib: float | None = None
    memory_limit_gib: float | None = None
    shm_gib: float | None = None
    in_container: bool | None = None
    disks: tuple[SpecDisk, ...] = ()


@dataclass(frozen=True)
class SpecInterface:
    name: str
    ipv4: str | tuple[str, ...] = ()
    ipv6: str | tuple[str, ...] = ()
    up: bool = True
    mtu: int | None = None


@dataclass(frozen=True)
class SpecNetwork:
    hostname: str | None = None
    hostname_resolves_to: str | tuple[str, ...] = ()
    interfaces: tuple[SpecInterface, ...] = ()


@dataclass(frozen=True)
class SpecWorkload:
    dtype: str | None = None  # what the job runs in: bfloat16 (bf16), float16 (half, fp16), float32
    model_type: str | None = None  # the model type it loads (config.json's model_type: "qwen2")
    command: str | None = None  # the command it runs ("trl vllm-serve")
    runs: tuple[str, ...] = ()  # what the job runs, installed or not: "isaacsim", "omnigibson"


@dataclass(frozen=True)
class StackSpec:
    node: str | None = None
    gpu: SpecGpu | None = None
    python: SpecPython | None = None
    packages: dict[str, str] | None = None
    system: SpecSystem | None = None
    env: dict[str, str] | None = None
    network: SpecNetwork | None = None
    workload: SpecWorkload | None = None


def _tuple(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def _fail(text: str, where: str, key: str, message: str) -> SpecError:
    line = line_of(text, key)
    return SpecError(message, where=f"{where}:{line}" if line else where, key=key)


def parse_spec(text: str, where: str) -> StackSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise SpecError(
            f"invalid TOML: {exc}", where=f"{where}:{line}" if line else where
        ) from None
    try:
        spec = from_dict(StackSpec, data, strict=True)
    except CodecError as exc:
        raise _fail(text, where, exc.path, exc.message) from None
    _validate(spec, text, where)
    return spec


def _check_version(text: str, where: str, key: str, value: str | None) -> None:
    if value is None:
        return
    try:
        Version(value)
    except InvalidVersion:
        raise _fail(text, where, key, f"invalid version {value!r}") from None


_GIB = Range(minimum=0, maximum=MAX_GIB)
_SYSTEM_BOUNDS = {
    "cpus": Range(minimum=1, maximum=1_000_000, integer=True),
    "memory_gib": _GIB,
    "memory_available_gib": _GIB,
    "memory_limit_gib": _GIB,
    "shm_gib": _GIB,
}
_MTU = Range(minimum=68, maximum=65536 * 4, integer=True)  # IPv4's minimum; jumbo/IB maximum


def _check_number(text: str, where: str, key: str, value: object, bounds: Range) -> None:
    if value is None:
        return
    try:
        check(value, bounds)
    except NumberError as exc:
        raise _fail(text, where, key, exc.message) from None


def _validate(spec: StackSpec, text: str, where: str) -> None:
    for name, version in (spec.packages or {}).items():
        try:
            canonicalize_name(name, validate=True)
        except InvalidName:
            raise _fail(
                text, where, f"packages.{name}", f"invalid distribution name {name!r}"
            ) from None
        _check_version(text, where, f"packages.{name}", version)
    if spec.gpu:
        _check_version(text, where, "gpu.driver", spec.gpu.driver)
        _check_version(text, where, "gpu.cuda", spec.gpu.cuda)
        _check_version(text, where, "gpu.compute_capability", spec.gpu.compute_capability)
    if spec.python:
        _check_version(text, where, "python.version", spec.python.version)
    if spec.system:
        _check_version(text, where, "system.glibc", spec.system.glibc)
        if spec.system.nvcc != "none":
            _check_version(text, where, "system.nvcc", spec.system.nvcc)
        for key, bounds in _SYSTEM_BOUNDS.items():
            _check_number(text, where, f"system.{key}", getattr(spec.system, key), bounds)
        if spec.system.os is not None and not spec.system.os.strip():
            raise _fail(text, where, "system.os", "is blank (leave it out when unknown)")
        for i, disk in enumerate(spec.system.disks):
            _check_number(text, where, f"system.disks[{i}].size_gib", disk.size_gib, _GIB)
            _check_number(text, where, f"system.disks[{i}].free_gib", disk.free_gib, _GIB)
            if disk.size_gib <= 0 or (
                disk.free_gib is not None and not 0 <= disk.free_gib <= disk.size_gib
            ):
                raise _fail(
                    text,
                    where,
                    f"system.disks[{i}]",
                    "needs 0 <= free_gib <= size_gib and size_gib > 0",
                )
    if spec.workload and spec.workload.dtype is not None and not normal_dtype(spec.workload.dtype):
        raise _fail(
            text,
            where,
            "workload.dtype",
            f"unknown dtype {spec.workload.dtype!r} (bfloat16, float16 or float32)",
        )
    for i, name in enumerate(spec.workload.runs if spec.workload else ()):
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise _fail(text, where, f"workload.runs[{i}]", f"not a distribution name: {name!r}")
    if spec.network:
        import ipaddress

        addresses = [
            ("network.hostname_resolves_to", a) for a in _tuple(spec.network.hostname_resolves_to)
        ]
        for i, iface in enumerate(spec.network.interfaces):
            addresses += [
                (f"network.interfaces[{i}]", a) for a in _tuple(iface.ipv4) + _tuple(iface.ipv6)
            ]
            _check_number(text, where, f"network.interfaces[{i}].mtu", iface.mtu, _MTU)
        for key, address in addresses:
            try:
                ipaddress.ip_interface(address)
            except ValueError:
                raise _fail(text, where, key, f"invalid IP address {address!r}") from None


def _gpu(spec: StackSpec) -> Section[GpuInfo]:
    if spec.gpu is None:
        return Section.unavailable(NOT_DECLARED, source="spec")
    g = spec.gpu
    gpus = tuple(
        Gpu(index=i, name=m, compute_capability=g.compute_capability)
        for i, m in enumerate(g.models)
    )
    windows = windows_driver(g.driver) if g.driver else None
    info = GpuInfo(
        driver_version=windows or g.driver,
        cuda_driver_version=g.cuda,
        driver_source="declared",
        gpus=gpus if g.models else None,
        gpus_reason=None if g.models else "gpu.models not declared",
    )
    notes = (
        (f"gpu.driver {g.driver} is Windows' number for NVIDIA driver {windows}",)
        if windows
        else ()
    )
    return Section.ok(info, source="spec", notes=notes)


def _python(spec: StackSpec) -> Section[PythonInfo]:
    if spec.python is None:
        return Section.unavailable(NOT_DECLARED, source="spec")
    arch = spec.system.arch if spec.system else None
    info = PythonInfo(
        version=spec.python.version,
        implementation=spec.python.implementation,
        markers=markers(spec.python.version, arch, spec.python.implementation),
    )
    return Section.ok(info, source="spec")


def _packages(spec: StackSpec) -> tuple[Section[PackagesInfo], Section[TorchBuild]]:
    if spec.packages is None:
        unknown: Section[Any] = Section.unavailable(NOT_DECLARED, source="spec")
        return unknown, unknown
    dists = tuple(
        Distribution(name=n, version=v, installer="declared") for n, v in spec.packages.items()
    )
    info = PackagesInfo(distributions=dists)
    torch = info.get("torch")
    if torch is None:
        return Section.ok(info, source="spec"), Section.unavailable(
            "torch is not installed", source="spec"
        )
    label = torch.version.split("+", 1)[1] if "+" in torch.version else None
    match = re.fullmatch(r"cu(\d+)(\d)", label or "")
    cuda = f"{match.group(1)}.{match.group(2)}" if match else None
    local, variant = variant_of(torch.version, cuda, None, known=label is not None)
    build = TorchBuild(
        version=torch.version,
        local_label=local,
        cuda=cuda,
        variant=variant,
        installed_cuda={d.key: d.version for d in dists if is_cuda_dist(d.name)},
    )
    return Section.ok(info, source="spec"), Section.ok(build, source="spec")


def _os(text: str | None) -> tuple[str | None, str | None]:
    parts = (text or "").split()
    if not parts:
        return None, None
    return parts[0].lower(), (parts[1] if len(parts) > 1 else None)


def _system(spec: StackSpec) -> Section[SystemInfo]:
    s = spec.system
    if s is None:
        return Section.unavailable(NOT_DECLARED, source="spec")
    os_id, os_version = _os(s.os)
    container = (
        None if s.in_container is None else ("declared container" if s.in_container else "none")
    )
    info = SystemInfo(
        os_id=os_id,
        os_version=os_version,
        os_pretty=s.os,
        kernel=s.kernel,
        arch=s.arch,
        glibc=s.glibc,
        nvcc=Toolkit(nvcc_path="nvcc (declared)", version=s.nvcc)
        if s.nvcc and s.nvcc != "none"
        else None,
        nvcc_searched=s.nvcc is not None,  # "none" declares that there is no toolkit
        cpu_count=s.cpus,
        cpu_affinity=s.cpus,
        memory_total_bytes=int(s.memory_gib * GIB) if s.memory_gib is not None else None,
        memory_available_bytes=int(s.memory_available_gib * GIB)
        if s.memory_available_gib is not None
        else None,
        cgroup=CgroupInfo(memory_limit_bytes=int(s.memory_limit_gib * GIB))
        if s.memory_limit_gib is not None
        else None,
        container=container,
        container_evidence="declared" if container else None,
    )
    return Section.ok(info, source="spec")


def _storage(spec: StackSpec) -> Section[StorageInfo]:
    s = spec.system
    if s is None or (s.shm_gib is None and not s.disks):
        return Section.unavailable(NOT_DECLARED, source="spec")
    env = spec.env or {}
    ray_tmp = ray_temp_dir(env)
    tmp = env.get("TMPDIR") or "/tmp"
    disks = []
    if s.shm_gib is not None:
        size = int(s.shm_gib * GIB)
        disks.append(DiskUsage(role="dev_shm", path="/dev/shm", total_bytes=size, fs_type="tmpfs"))
    for disk in s.disks:
        path = disk.path.rstrip("/") or "/"
        role = {"/dev/shm": "dev_shm", ray_tmp: "ray_tmp", tmp: "tmp"}.get(path, "disk")
        free = int(disk.free_gib * GIB) if disk.free_gib is not None else None
        disks.append(
            DiskUsage(role=role, path=path, total_bytes=int(disk.size_gib * GIB), free_bytes=free)
        )
    return Section.ok(StorageInfo(disks=tuple(disks)), source="spec")


def _network(spec: StackSpec) -> Section[NetworkInfo]:
    n = spec.network
    if n is None:
        return Section.unavailable(NOT_DECLARED, source="spec")
    interfaces = tuple(
        Interface(
            name=i.name,
            state="up" if i.up else "down",
            mtu=i.mtu,
            ipv4=_tuple(i.ipv4),
            ipv6=_tuple(i.ipv6),
            kind="loopback" if i.name == "lo" else None,
        )
        for i in n.interfaces
    )
    info = NetworkInfo(
        hostname=n.hostname,
        hostname_addresses=_tuple(n.hostname_resolves_to),
        interfaces=interfaces,
    )
    return Section.ok(info, source="spec")


def spec_to_report(spec: StackSpec, where: str) -> NodeReport:
    env_section: Section[EnvInfo]
    libraries: Section[LibrariesInfo]
    if spec.env is None:
        env_section = Section.unavailable(NOT_DECLARED, source="spec")
        libraries = Section.unavailable(NOT_DECLARED, source="spec")
    else:
        variables, hidden = redact_env(spec.env)
        env_section = Section.ok(EnvInfo(variables=variables, redacted=hidden), source="spec")
        ld = tuple(p for p in spec.env.get("LD_LIBRARY_PATH", "").split(":") if p)
        preload = tuple(p for p in re.split(r"[:\s]+", spec.env.get("LD_PRELOAD", "")) if p)
        libraries = Section.ok(LibrariesInfo(ld_library_path=ld, ld_preload=preload), source="spec")
    packages, torch = _packages(spec)
    return NodeReport(
        node=spec.node
        or (spec.network.hostname if spec.network and spec.network.hostname else Path(where).stem),
        envcheck_version=__version__,
        created_at=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        origin=Origin(kind="declared", detail=where),
        gpu=_gpu(spec),
        python=_python(spec),
        packages=packages,
        torch=torch,
        system=_system(spec),
        storage=_storage(spec),
        libraries=libraries,
        network=_network(spec),
        env=env_section,
        graphics=Section.unavailable(NOT_DECLARED, source="spec"),
        workload=_workload(spec),
    )


def _workload(spec: StackSpec) -> Section[WorkloadInfo]:
    if spec.workload is None:
        return Section.unavailable(NOT_DECLARED, source="spec")
    from packaging.utils import canonicalize_name

    dtype = normal_dtype(spec.workload.dtype) if spec.workload.dtype else None
    runs = tuple(dict.fromkeys(str(canonicalize_name(n)) for n in spec.workload.runs))
    work = spec.workload
    return Section.ok(
        WorkloadInfo(dtype=dtype, model_type=work.model_type, command=work.command, runs=runs),
        source="spec",
    )


def load_spec(path: str) -> NodeReport:
    from envcheck.inputs import display_name, read_text

    text = read_text(path, error=SpecError, too_big="for a stack spec")
    name = display_name(path)
    return spec_to_report(parse_spec(text, name), name)


__all__ = ["StackSpec", "load_spec", "parse_spec", "spec_to_report"]
