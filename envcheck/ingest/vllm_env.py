"""vLLM's and SGLang's environment reports.

vLLM's ``collect_env.py`` is torch's with a vLLM block added (vLLM version, build flags, GPU
topology and, from 0.6.x on, some environment variables); it is parsed by the collect_env parser
with the vLLM fields and the label ``vLLM collect_env``. Its package patterns include
``nvidia``, so it lists the nvidia-* wheels torch's own copy leaves out.

SGLang's ``python3 -m sglang.check_env`` prints ``Name: value`` lines: Python, CUDA available,
``GPU 0,1,...: model`` (grouped), their compute capability, NVCC (the toolkit), CUDA Driver
Version (the driver's version, despite its name), PyTorch and a fixed list of packages by import
name (``Module Not Found`` when missing).
"""

from __future__ import annotations

import re

from envcheck.ingest import collect_env
from envcheck.ingest.common import (
    FormatError,
    Source,
    blank,
    dedupe,
    major_minor,
    markers,
    torch_section,
    valid_version,
)
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
from envcheck.model.section import Section

VLLM_LABEL = "vLLM collect_env"
SGLANG_LABEL = "sglang.check_env"
# import names SGLang prints, as distribution names
IMPORT_TO_DIST = {
    "PyTorch": "torch",
    "PIL": "pillow",
    "zmq": "pyzmq",
    "multipart": "python-multipart",
    "sgl_kernel": "sgl-kernel",
}
NOT_PACKAGES = {
    "Python",
    "CUDA available",
    "CUDA_HOME",
    "NVCC",
    "CUDA Driver Version",
    "NVIDIA Topology",
    "Hypervisor vendor",
    "ulimit soft",
    "ROCM available",
    "HIPCC",
    "ROCM Driver Version",
    "AMD Topology",
}
_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_ .,/-]*?):\s*(.*)$")
_GPU_GROUP = re.compile(r"^GPU ([\d,]+)(?: Compute Capability)?$")


def parse_vllm(source: Source) -> NodeReport:
    return collect_env.parse(source, label=VLLM_LABEL)


def looks_like_sglang(text: str) -> bool:
    head = text[:50_000]
    return bool(
        re.search(r"^sglang:\s*\S", head, re.MULTILINE)
        and re.search(r"^(PyTorch|CUDA available|Python):", head, re.MULTILINE)
    )


def parse_sglang(source: Source) -> NodeReport:
    values: dict[str, str] = {}
    names: dict[int, str] = {}
    ccs: dict[int, str] = {}
    for raw in source.text.splitlines():
        match = _LINE.match(raw.strip())
        if match is None:
            continue
        key, value = match.group(1).strip(), match.group(2).strip()
        group = _GPU_GROUP.match(key)
        if group:
            indices = [int(i) for i in group.group(1).split(",") if i]
            target = ccs if key.endswith("Compute Capability") else names
            for index in indices:
                target[index] = value
            continue
        if key == "NVIDIA Topology":
            break
        values.setdefault(key, value)
    if "sglang" not in values:
        raise FormatError(f"format not recognised as {SGLANG_LABEL}: no 'sglang:' line")
    report = blank(source, SGLANG_LABEL)
    dists: list[Distribution] = []
    for key, value in values.items():
        if key in NOT_PACKAGES or " " in key or value == "Module Not Found":
            continue
        version = valid_version(value.split()[0]) if value else None
        if version:
            dists.append(Distribution(name=IMPORT_TO_DIST.get(key, key), version=version))
    packages = PackagesInfo(
        distributions=dedupe(dists),
        partial="sglang.check_env lists only the packages SGLang itself checks",
    )
    py_text = values.get("Python", "")
    py = valid_version(py_text.split()[0]) if py_text else None
    python = report.python
    if py:
        python = Section.ok(PythonInfo(version=py, markers=markers(py, None)), source=SGLANG_LABEL)
    gpu = report.gpu
    driver = valid_version(
        values.get("CUDA Driver Version", "").split()[0]
        if values.get("CUDA Driver Version")
        else None
    )
    if names or driver:
        gpus = tuple(
            Gpu(index=i, name=names[i], compute_capability=valid_version(ccs.get(i)))
            for i in sorted(names)
        )
        gpu = Section.ok(
            GpuInfo(
                driver_version=driver,
                driver_source=SGLANG_LABEL,
                gpus=gpus if names else None,
                gpus_reason=None if names else "no GPU lines",
            ),
            source=SGLANG_LABEL,
        )
    system = report.system
    nvcc = re.search(r"release (\d+\.\d+)", values.get("NVCC", ""))
    if nvcc:
        system = Section.ok(
            SystemInfo(
                nvcc=Toolkit(
                    nvcc_path=values.get("CUDA_HOME", "nvcc") + "/bin/nvcc",
                    version=major_minor(nvcc.group(1)),
                )
            ),
            source=SGLANG_LABEL,
            notes=("NVCC is the CUDA toolkit on the node, not the CUDA runtime torch loads",),
        )
    return report.with_sections(
        gpu=gpu,
        python=python,
        packages=Section.ok(packages, source=SGLANG_LABEL, notes=source.notes),
        torch=torch_section(packages, SGLANG_LABEL),
        system=system,
    )
