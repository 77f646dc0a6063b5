"""torch's ``python -m torch.utils.collect_env`` (and the copies vLLM and others ship).

Handles the formats across releases: torch 1.x and 2.x ``Key: value`` lines, newer fields (Is
XNNPACK available, Is XPU available, Caching allocator config, a ``CPU:`` block), vLLM's
sectioned ``Key     : value`` layout with ``=====`` banners, its extra vLLM fields and the glued
``[conda] ...ROCM Version:`` line of old vLLM copies, "Could not collect" / "No CUDA" / "N/A".

What collect_env says that is known to be misleading is recorded as such:

- "CUDA runtime version" is ``nvcc --version`` on PATH (the CUDA toolkit), not the runtime torch
  loads: it becomes ``system.nvcc``, never torch's CUDA ("CUDA used to build PyTorch" is that).
- "cuDNN version" lists the libcudnn files ``ldconfig`` finds on the system, not the cuDNN torch
  loads (pip builds load the nvidia-cudnn wheel): a note, not a fact.
- The package list is filtered by name patterns (torch, numpy, nvidia, ...): it is partial, so a
  package it does not name is unknown, not absent.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass, field
from typing import TypeVar

from envcheck.ingest.common import (
    FormatError,
    Source,
    blank,
    dedupe,
    major_minor,
    markers,
    parse_os,
    torch_section,
    valid_version,
)
from envcheck.ingest.conda import CONDA_TO_PIP, torch_cuda
from envcheck.model.report import (
    Distribution,
    Gpu,
    GpuInfo,
    NodeReport,
    PackagesInfo,
    PythonInfo,
    SystemInfo,
    Toolkit,
)
from envcheck.model.section import QUERY_FAILED, STATED_ABSENT, Section, Status

LABEL = "collect_env"
T = TypeVar("T")
KEYS = {
    "pytorch version": "torch",
    "is debug build": "debug",
    "cuda used to build pytorch": "torch_cuda",
    "rocm used to build pytorch": "torch_rocm",
    "os": "os",
    "gcc version": "gcc",
    "clang version": "clang",
    "cmake version": "cmake",
    "libc version": "libc",
    "python version": "python",
    "python platform": "platform",
    "is cuda available": "cuda_available",
    "cuda runtime version": "nvcc",
    "cuda_module_loading set to": "module_loading",
    "gpu models and configuration": "gpus",
    "nvidia driver version": "driver",
    "cudnn version": "cudnn",
    "is xpu available": "xpu",
    "hip runtime version": "hip",
    "miopen runtime version": "miopen",
    "is xnnpack available": "xnnpack",
    "caching allocator config": "allocator",
    "cpu": "cpu",
    "versions of relevant libraries": "libraries",
    # vLLM's copy
    "rocm version": "rocm",
    "neuron sdk version": "neuron",
    "vllm version": "vllm",
    "vllm build flags": "vllm_flags",
    "gpu topology": "topology",
    "nccl version": "nccl",
}
TITLES = {
    "cpu info": "cpu",
    "versions of relevant libraries": "libraries",
    "environment variables": "env",
}
MISSING = {"could not collect", "n/a", "none", "no cuda", "", "not set"}
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9 _/().-]*?)\s*:\s*(.*)$")
_GLUED = re.compile(r"(?<=\S)(ROCM Version:|Neuron SDK Version:|vLLM Version:)")
_PKG = re.compile(r"^\[(pip3?|conda)\]\s+(.*)$")
_PIP_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)$")
_PIP_OLD = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s+\((\S+)\)$")
_GPU = re.compile(r"^GPU (\d+):\s*(.+?)\s*$")
_PLATFORM = re.compile(r"^Linux-(.+?)-(x86_64|aarch64|ppc64le|s390x|arm64)(?:-with|$)")


@dataclass
class Parsed:
    values: dict[str, str] = field(default_factory=dict)
    blocks: dict[str, list[str]] = field(default_factory=dict)
    pip: list[str] = field(default_factory=list)
    conda: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # key -> the line it was read from

    def at(self, source: Source, *keys: str) -> tuple[str, ...]:
        """Provenance for a section: which line of the input each of its facts came from."""
        found = [f"{k} line {self.lines[k]}" for k in keys if k in self.lines and self.get(k)]
        return (f"read from {source.name}: {', '.join(found)}",) if found else ()

    def get(self, key: str) -> str | None:
        value = self.values.get(key)
        if value is None or value.strip().lower() in MISSING:
            return None
        return value.strip()

    def said(self, key: str) -> str | None:
        """The raw value, sentinels included ("No CUDA", "None")."""
        value = self.values.get(key)
        return value.strip() if value is not None else None


def _lines(text: str) -> list[str]:
    """Lines with a pasted quote prefix ('> ') or a common indent removed, and old vLLM's
    '[conda] ...ROCM Version: ...' split in two."""
    text = text.replace("：", ":")
    if all(line.startswith(">") or not line.strip() for line in text.splitlines()[:50]):
        text = "\n".join(line[1:].removeprefix(" ") for line in text.splitlines())
    out: list[str] = []
    for line in textwrap.dedent(text).splitlines():
        if len(_FOLDED_KEY.findall(line)) >= _FOLDED_MIN:  # a paste that lost its line breaks
            unfolded = _FOLDED_KEY.sub(lambda m: "\n" + (m.group(1) or m.group(2)), line)
            out.extend(part for part in unfolded.splitlines() if part)
        elif line.startswith("[") and _GLUED.search(line):
            out.extend(_GLUED.sub(r"\n\1", line).splitlines())
        else:
            out.append(line)
    return out


_RETYPED = sorted((k for k in KEYS if k != "cpu"), key=len, reverse=True)
# collect_env's labels inside one line, where an unfenced paste in an issue lost the breaks
# ('PyTorch version: 1.4.0 Is debug build: No CUDA used to build PyTorch: 10.1 ...'), with
# the package rows and the GPU list's entries; three or more labels on a line mark it
_FOLDED_KEY = re.compile(
    r"(?<=\S)\s+("
    + "|".join(re.escape(k) for k in _RETYPED)
    + r")(?=\s*:)|(?<=\S)\s+(\[(?:pip3?|conda)\]\s|GPU [0-9]+:\s)",
    re.IGNORECASE,
)
_FOLDED_MIN = 3


def _retyped(line: str) -> tuple[str | None, str]:
    lower = line.lower()
    for label in _RETYPED:
        if lower.startswith(label + " ") and line[len(label) :].strip():
            return KEYS[label], line[len(label) :].strip()
    return None, ""


def scan(text: str) -> Parsed:
    parsed = Parsed()
    current: str | None = None
    after_banner = False
    for number, raw in enumerate(_lines(text), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if stripped and set(stripped) == {"="}:
            after_banner = True
            continue
        if after_banner and stripped.lower() in TITLES:
            current = TITLES[stripped.lower()]
            parsed.blocks.setdefault(current, [])
            after_banner = False
            continue
        after_banner = False
        package = _PKG.match(stripped)
        if package:
            (parsed.conda if package.group(1) == "conda" else parsed.pip).append(package.group(2))
            current = "libraries"
            continue
        match = _KEY.match(stripped)
        key = KEYS.get(match.group(1).strip().lower()) if match else None
        value = (match.group(2) or "") if match else ""
        if key is None:  # a label retyped without its colon ("PyTorch version 2.1.0")
            key, value = _retyped(stripped)
        if key and (key not in parsed.values or key == "cpu"):
            parsed.values[key] = value.strip()
            parsed.lines.setdefault(key, number)
            parsed.blocks.setdefault(key, [])
            current = key
            continue
        if current is not None and stripped:
            parsed.blocks.setdefault(current, []).append(stripped)
    return parsed


def looks_like(text: str) -> bool:
    parsed = scan(text[:200_000])
    return "torch" in parsed.values and ("debug" in parsed.values or "torch_cuda" in parsed.values)


def _gpus(parsed: Parsed, notes: list[str]) -> Section[GpuInfo]:
    said = parsed.said("gpus")
    driver = parsed.get("driver")
    lines = ([said] if said else []) + parsed.blocks.get("gpus", [])
    gpus = []
    for line in lines:
        found = _GPU.match(line)
        if found:
            name = re.sub(r"\s*\(UUID: [^)]*\)", "", found.group(2))
            gpus.append(Gpu(index=int(found.group(1)), name=name))
    if gpus or driver:
        info = GpuInfo(
            driver_version=valid_version(driver),
            driver_source="collect_env (nvidia-smi)",
            gpus=tuple(gpus) if gpus else None,
            gpus_reason=None if gpus else f"collect_env: {said or 'no GPU lines'}",
        )
        if parsed.get("cuda_available") in ("No", "False") and gpus:
            notes.append("collect_env says torch could not use CUDA ('Is CUDA available: No')")
        return Section.ok(info, source=LABEL, notes=tuple(notes))
    if said and said.lower() == "no cuda":
        # torch's collect_env writes 'No CUDA' only when torch saw no CUDA and nvidia-smi gave
        # neither GPUs nor a driver version: the dump states there is no usable driver
        return Section(
            Status.UNAVAILABLE,
            reason="collect_env found no NVIDIA driver (nvidia-smi did not run) and torch saw no CUDA",
            source=LABEL,
            notes=(STATED_ABSENT,),
        )
    if said and said.lower() == "could not collect":
        return Section(
            Status.UNAVAILABLE,
            reason="collect_env could not collect the GPU list (nvidia-smi failed or is missing)",
            source=LABEL,
            notes=(QUERY_FAILED,),
        )
    return Section.unavailable(f"collect_env: GPUs {said or 'not reported'}", source=LABEL)


def _packages(parsed: Parsed, vllm: str | None) -> tuple[PackagesInfo | None, str | None]:
    dists: list[Distribution] = []
    pypi_rows: list[Distribution] = []
    torch_build: str | None = None
    for line in parsed.conda:
        parts = line.split()
        if len(parts) < 2 or not re.match(r"^\d", parts[1]):
            continue  # "Could not collect", "No relevant packages"
        channel = parts[3] if len(parts) > 3 else None
        if channel == "pypi":
            pypi_rows.append(Distribution(name=parts[0], version=parts[1], installer="pip"))
            continue
        name = CONDA_TO_PIP.get(parts[0], parts[0])
        if name == "torch":
            torch_build = parts[2] if len(parts) > 2 else None
        # conda's rows come first: pip's list names conda-installed packages too
        dists.append(Distribution(name=name, version=parts[1], installer="conda"))
    for line in parsed.pip:
        found = _PIP_PIN.match(line) or _PIP_OLD.match(line)
        if found:
            dists.append(Distribution(name=found.group(1), version=found.group(2)))
    dists += pypi_rows
    if vllm:
        dists.append(Distribution(name="vllm", version=vllm))
    collected = [
        line
        for line in parsed.pip + parsed.conda
        if line.strip().lower() not in ("could not collect",)
    ]
    if not dists and not collected:
        return None, torch_build
    partial = (
        "collect_env lists only packages whose names match its patterns "
        "(torch, numpy, triton, nvidia, ...)"
    )
    return PackagesInfo(distributions=dedupe(dists), partial=partial), torch_build


def _vllm_version(parsed: Parsed) -> str | None:
    said = parsed.get("vllm")
    if not said:
        return None
    return valid_version(re.split(r"[\s@]", said, maxsplit=1)[0])


def parse(source: Source, label: str = LABEL) -> NodeReport:
    parsed = scan(source.text)
    if "torch" not in parsed.values:
        raise FormatError(f"format not recognised as {label}: no 'PyTorch version:' line")
    report = blank(source, label)
    notes_pkg: list[str] = list(source.notes)
    vllm = _vllm_version(parsed)
    packages, conda_torch_build = _packages(parsed, vllm)
    torch_version = parsed.get("torch")
    if packages is None and (torch_version or vllm):
        # the list was cut off (or not collected): the versions the dump states are still facts
        stated = [Distribution(name="torch", version=torch_version)] if torch_version else []
        stated += [Distribution(name="vllm", version=vllm)] if vllm else []
        missing = "cut off" if "libraries" not in parsed.blocks else "empty"
        packages = PackagesInfo(
            distributions=tuple(stated),
            partial=f"the dump's package list is {missing}; only the versions its header lines "
            "state are known",
        )
        notes_pkg.append(f"package list {missing}: only torch/vLLM versions are known")
    elif torch_version and packages is not None and packages.get("torch") is None:
        packages = PackagesInfo(
            distributions=(
                Distribution(name="torch", version=torch_version),
                *packages.distributions,
            ),
            partial=packages.partial,
        )
    # --- torch ---------------------------------------------------------------------------------
    said_cuda = parsed.said("torch_cuda")
    cuda = major_minor(parsed.get("torch_cuda"))
    cuda_known = (
        said_cuda is not None and said_cuda.lower() in ("none", "n/a")
    ) or cuda is not None
    if (
        not cuda_known
        and torch_version
        and said_cuda is not None
        and said_cuda.lower() == "could not collect"
        and parsed.get("torch_rocm") is None
    ):
        # collect_env prints torch.version.cuda, and replaces every None with "Could not
        # collect" (it writes "None" only on a node without GPUs): with torch imported and no
        # ROCm build, that is a CPU-only torch (pytorch/pytorch#106565's dump)
        cuda_known = True
    if not cuda and conda_torch_build:
        cuda, cuda_known = torch_cuda(conda_torch_build)
    torch_notes: list[str] = []
    cudnn = parsed.get("cudnn")
    if cudnn:
        found = sorted(
            set(
                re.findall(
                    r"libcudnn\.so\.([\d.]+)", " ".join([cudnn, *parsed.blocks.get("cudnn", [])])
                )
            )
        )
        listed = ", ".join(found) if found else cudnn
        torch_notes.append(
            f"collect_env's 'cuDNN version' ({listed}) is what ldconfig finds on the system, "
            "not the cuDNN torch loads (pip builds load the nvidia-cudnn wheel)"
        )
    hip = parsed.get("torch_rocm")
    torch = torch_section(
        packages,
        label,
        version=torch_version,
        cuda=cuda,
        cuda_known=cuda_known or hip is not None,
        hip=hip,
        notes=tuple(torch_notes),
    )
    # --- Python --------------------------------------------------------------------------------
    arch: str | None = None
    os_said = parsed.get("os")
    os_pretty = None
    if os_said:
        arch_match = re.search(r"\((x86_64|aarch64|ppc64le|s390x|arm64|AMD64)\)\s*$", os_said)
        arch = arch_match.group(1) if arch_match else None
        os_pretty = re.sub(r"\s*\([^)]*\)\s*$", "", os_said)
    platform = parsed.get("platform") or ""
    plat = _PLATFORM.match(platform)
    kernel = plat.group(1) if plat else None
    arch = arch or (plat.group(2) if plat else None)
    py_said = parsed.get("python")
    py_version = valid_version(py_said.split()[0]) if py_said else None
    python: Section[PythonInfo] = report.python
    if py_version:
        python = Section.ok(
            PythonInfo(version=py_version, markers=markers(py_version, arch)), source=label
        )
    # --- system ---------------------------------------------------------------------------------
    sys_notes: list[str] = []
    nvcc_said = parsed.get("nvcc")
    nvcc = None
    if nvcc_said and valid_version(nvcc_said):
        nvcc = Toolkit(nvcc_path="nvcc (on PATH, per collect_env)", version=major_minor(nvcc_said))
        built = ""
        if cuda:
            built = f"; torch was built with CUDA {cuda} and loads its own"
        elif cuda_known or (torch_version or "").endswith("+cpu"):
            built = "; this torch is a CPU build"
        sys_notes.append(
            f"collect_env's 'CUDA runtime version' ({nvcc_said}) is nvcc on PATH, i.e. the CUDA "
            f"toolkit (recorded as system.nvcc), not the CUDA runtime torch loads{built}"
        )
    # collect_env runs `nvcc --version` for 'CUDA runtime version': 'Could not collect' is no
    # nvcc on PATH (or one that does not answer)
    nvcc_searched = nvcc is not None or (parsed.said("nvcc") or "").lower() == "could not collect"
    if nvcc is None and nvcc_searched:
        sys_notes.append(
            "collect_env's 'CUDA runtime version: Could not collect' means `nvcc --version` "
            "failed: no CUDA toolkit (nvcc) on PATH"
        )
    libc = parsed.get("libc")
    glibc = libc.split("-", 1)[1] if libc and libc.startswith("glibc-") else None
    os_id, os_version = parse_os(os_pretty)
    cpus = next(
        (
            int(m.group(1))
            for line in parsed.blocks.get("cpu", [])
            if (m := re.match(r"^CPU\(s\):\s+(\d+)$", line))
        ),
        None,
    )
    system: Section[SystemInfo] = report.system
    if any((os_pretty, kernel, glibc, nvcc, cpus, nvcc_searched)):
        system = Section.ok(
            SystemInfo(
                os_id=os_id,
                os_version=os_version,
                os_pretty=os_pretty,
                kernel=kernel,
                arch=arch,
                glibc=glibc,
                cpu_count=cpus,
                nvcc=nvcc,
                nvcc_searched=nvcc_searched,
            ),
            source=label,
            notes=tuple(sys_notes),
        )
    # --- packages ------------------------------------------------------------------------------
    if packages is not None:
        pkg_section: Section[PackagesInfo] = Section.ok(
            packages, source=label, notes=tuple(notes_pkg)
        )
    else:
        pkg_section = Section.unavailable(
            "collect_env could not collect the package list", source=label
        )
    env = report.env
    if "env" in parsed.blocks:
        env = Section.unavailable(
            "vLLM's report lists only some variables (CUDA*, NCCL*, TORCH*, vLLM's own, ...); "
            "the rest of the environment is unknown",
            source=label,
        )
    return report.with_sections(
        gpu=_noted(_gpus(parsed, []), parsed.at(source, "driver", "gpus")),
        python=_noted(python, parsed.at(source, "python")),
        packages=pkg_section,
        torch=_noted(torch, parsed.at(source, "torch", "torch_cuda", "torch_rocm")),
        system=_noted(system, parsed.at(source, "os", "libc", "nvcc", "platform")),
        env=env,
    )


def _noted(section: Section[T], notes: tuple[str, ...]) -> Section[T]:
    if not section.is_ok or not notes:
        return section
    return dataclasses.replace(section, notes=(*section.notes, *notes))
