"""TOR200: a kernel needs more shared memory per thread block than the GPU allows. Triton
compares each compiled kernel's shared memory with the device's opt-in maximum and raises
``OutOfResources: out of resource: shared memory, Required: N, Hardware limit: M`` (older
releases: ``shared memoryRequired: NHardware limit: M``). Both numbers are on the line; the
limit names the GPU's architecture through the per-compute-capability table
(matrices/hardware/shared_memory.toml, NVIDIA's "Technical Specifications per Compute
Capability"), and the GPUs whose limit holds N come from the GPU table. The limit is not
monotonic in the compute capability (sm_80: 163 KB, sm_86/89/120: 99 KB, sm_90/100: 227 KB),
so the GPUs named are those whose own limit is large enough, not those above a floor."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# Triton's OutOfResources text in every release's spelling: 'shared memory, Required: N,
# Hardware limit: M', 'shared memoryRequired: NHardware limit: M', 'Hardware limitation: M'
_NUMBERS = lazy(
    r"out of resource: shared memory\W*Required:?\s*(?P<required>[0-9]+)\W*"
    r"Hardware limit(?:ation)?:?\s*(?P<limit>[0-9]+)"
)
_PREFIX = "smem.per_block_optin."
_AMD = "smem.lds_per_workgroup.amd"
_EMBEDDED = lazy(r"\((?:Tegra|Thor)\)|Jetson|Orin|Xavier|Tegra")


def _kib(value: int) -> str:
    return f"{value // 1024} KB" if value % 1024 == 0 else f"{value / 1024:.1f} KB"


def _limits(matrix: Matrix) -> dict[Version, int]:
    """Compute capability -> the opt-in shared memory per block, from the table."""
    return {
        Version(name.removeprefix(_PREFIX)): int(const.value)
        for name, const in matrix.constants.items()
        if name.startswith(_PREFIX)
    }


def _architectures(matrix: Matrix, limits: dict[Version, int], limit: int) -> list[str]:
    """The architectures (with their compute capabilities) whose per-block limit is ``limit``."""
    ccs = sorted(cc for cc, value in limits.items() if value == limit)
    names: dict[str, list[str]] = {}
    for cc in ccs:
        models = [g for g in matrix.gpus if g.compute_capability == cc]
        arch = re.sub(r"\s*\(.*\)\s*$", "", models[0].architecture) if models else "GPUs"
        if models and all(_EMBEDDED.search(g.architecture + " " + g.name) for g in models):
            continue  # an embedded part: named only when nothing else has this limit
        names.setdefault(arch, []).append(f"sm_{cc.major}{cc.minor}")
    found = [f"{arch} {'/'.join(sms)}" for arch, sms in names.items()]
    if matrix.constant(_AMD) == limit:  # Triton on ROCm states the LDS per workgroup
        found.append("an AMD GPU's LDS under ROCm")
    return found


def gpus_with_room(matrix: Matrix, required: int, per_family: int = 3) -> str:
    """The data-centre and desktop GPUs whose per-block limit holds ``required`` bytes, by
    architecture, largest limit last: 'Volta (V100), Ampere (A100, A30, A800), Hopper (...)'."""
    limits = _limits(matrix)
    families: dict[str, list[str]] = {}
    order: dict[str, Version] = {}
    for gpu in matrix.gpus:
        limit = limits.get(gpu.compute_capability)
        if limit is None or limit < required or _EMBEDDED.search(gpu.architecture + gpu.name):
            continue
        family = re.sub(r"\s*\(.*\)\s*$", "", gpu.architecture).strip()
        families.setdefault(family, []).append(re.sub(r"^NVIDIA ", "", gpu.name))
        order[family] = min(order.get(family, gpu.compute_capability), gpu.compute_capability)
    return ", ".join(
        f"{family} ({', '.join(families[family][:per_family])})"
        for family in sorted(families, key=lambda f: order[f])
    )


@rule("TOR200", "kernel-shared-memory-over-gpu-limit", Severity.ERROR)
def shared_memory_over_limit(facts: Facts) -> Iterable[Hit]:
    """A kernel needs more shared memory per thread block than this GPU allows: its block sizes or pipeline stages were tuned for a larger GPU

    ## What it checks
    In `triage`, Triton's `OutOfResources: out of resource: shared memory, Required: 232448,
    Hardware limit: 101376. Reducing block sizes or num_stages may help.` (older releases:
    `shared memoryRequired: 110592Hardware limit: 101376`), raised by any library whose
    kernels Triton compiles (vLLM, SGLang, mamba-ssm, flash-linear-attention, Unsloth,
    torch.compile/Inductor). Both numbers are on the line: the limit names the GPU's
    architecture (matrices/hardware/shared_memory.toml: 48 KB before Volta, 96 KB Volta,
    64 KB Turing, 163 KB A100, 99 KB RTX 30/40/50 and L4/L20/L40, 227 KB Hopper and
    Blackwell data-centre GPUs), and the GPUs whose limit holds the kernel's need come from the
    GPU table. Only a log states which kernel a job compiles.

    ## Why it matters
    A kernel's tile sizes and `num_stages` (software pipelining: each stage keeps one more
    tile in shared memory) are often tuned on an A100 or H100; on a GPU with less shared memory
    per block the same configuration cannot launch, however much GPU memory is free. Nothing
    in the installation is broken: the kernel's configuration and this GPU do not fit.

    ## Example
    A mamba-2 or FlexPrefill kernel tuned for H100 on an RTX 4090: `out of resource: shared
    memory, Required: 163842, Hardware limit: 101376`.

    ## Fix
    Lower the kernel's `num_stages` or block sizes (its `triton.Config` entries in
    `@triton.autotune(configs=...)`, or the library's option for them), upgrade the library to
    a release whose configurations fit this GPU, or run on a GPU whose per-block limit holds the
    'Required' bytes (A100/A800: 163 KB; H100/H200/B200: 227 KB).

    ## References
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications-technical-specifications-per-compute-capability
    - https://github.com/triton-lang/triton/blob/main/python/triton/runtime/errors.py
    - https://github.com/triton-lang/triton/issues/130
    - https://github.com/alipay/PainlessInferenceAcceleration/issues/35
    """
    raise Skip("only a log states the shared memory a compiled kernel needs", "log.smem")


@from_log("TOR200")
def shared_memory_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Required and limit from the line: the architectures whose limit it is, and the GPUs whose
    limit holds the requirement (none: only the kernel's configuration can change)."""
    found = _NUMBERS.search(line.text)
    if found is None:
        raise NotStated(
            f"line {line.line} does not state the shared memory required and the limit",
            "log.smem",
        )
    required, limit = int(found.group("required")), int(found.group("limit"))
    if required <= limit:
        return None
    limits = _limits(facts.matrix)
    archs = _architectures(facts.matrix, limits, limit)
    gpu = f"; {' or '.join(archs)}" if archs else ""
    room = gpus_with_room(facts.matrix, required)
    evidence = {"line": line.line, "required": required, "limit": limit, "architectures": archs}
    stages = (
        "lower the kernel's num_stages or block sizes (its triton.Config entries in "
        "@triton.autotune(configs=...), or the library's option for them)"
    )
    if room:
        where = f"; or run on a GPU whose limit holds {_kib(required)}: {room}"
    else:
        top = max(limits.values()) if limits else 0
        where = (
            f"; no NVIDIA GPU allows {_kib(required)} per block (the largest limit is "
            f"{_kib(top)}), so only the configuration can change"
        )
    return Hit(
        f"a Triton kernel needs {required} bytes ({_kib(required)}) of shared memory per thread "
        f"block (line {line.line}); this GPU allows {limit} ({_kib(limit)}{gpu}): its block "
        "sizes or num_stages were tuned for a GPU with more shared memory",
        evidence=evidence,
        fix=fix(
            f"The kernel's configuration does not fit this GPU: {stages}, or upgrade the library "
            f"to a release whose configurations fit this GPU (one tuned for it){where}",
            "manual",
            manual("pip install -U <the library that launched the kernel>"),
            manual("triton.Config({...}, num_stages=1)"),
        ),
    )


# ptxas' refusal of a kernel whose static shared memory is over the per-kernel limit, in hex:
# 'uses too much shared data (0xc400 bytes, 0xc000 max)' (OpenCL's adds '+ 0x10 bytes system')
_STATIC = lazy(
    r"uses too much shared data \((?P<used>0x[0-9a-fA-F]+) bytes"
    r"(?: \+ (?P<system>0x[0-9a-fA-F]+) bytes system)?, (?P<limit>0x[0-9a-fA-F]+) max\)"
)
# the static limit: 48 KB per block on every architecture from Fermi (sm_20) on; beyond it a
# kernel must use dynamic shared memory and opt in (cudaFuncSetAttribute), compute capability 7.0+
_STATIC_LIMIT = 0xC000


@rule("TOR201", "kernel-static-shared-memory-over-limit", Severity.ERROR)
def static_shared_memory_over_limit(facts: Facts) -> Iterable[Hit]:
    """A kernel declares more static shared memory than ptxas allows one block (48 KB): its tile sizes for the targets the build compiles do not fit

    ## What it checks
    In `triage`, ptxas refusing a kernel while a source build compiles it: `ptxas error   :
    Entry function '_Z15flash_attn_tile...' uses too much shared data (0xc400 bytes, 0xc000
    max)`. Both numbers are on the line, in hex: the kernel's statically sized `__shared__`
    arrays and the limit (0xc000 = 48 KB on every architecture since Fermi; 0x4000 = 16 KB on
    compute capability 1.x, as old OpenCL compilers state it). Only a build log states it.

    ## Why it matters
    Statically sized shared memory is capped at 48 KB per block whatever the GPU: a kernel that
    needs more must allocate it dynamically and opt in with
    `cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)` (compute
    capability 7.0 and newer). A project whose tile sizes depend on the architecture or on a
    build option (CUB's tuning policies, a flash-attention tile, double instead of float)
    compiles for some targets and not others, so the build stops although nothing is missing
    from the node.

    ## Example
    llama.cpp b6498 built with `CUDA_ARCH="60;61;70;75"`: `flash_attn_tile` uses 0xc400 bytes,
    fixed in the next release; CUB's radix sort in supersurfel_fusion, whose CMake module chose
    the architectures: 0xc300 bytes.

    ## Fix
    Update the project to a release whose kernels fit (the maintainers' fix), build only for
    the GPU's own architecture (`-DCMAKE_CUDA_ARCHITECTURES=<XY>`, `TORCH_CUDA_ARCH_LIST`,
    nvcc `-arch=sm_XY` instead of a project's fixed list), or lower the build option that
    sized the kernel (tile or block size, double precision).

    ## References
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory-7-x
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications-technical-specifications-per-compute-capability
    - https://github.com/ggml-org/llama.cpp/issues/16081
    - https://github.com/BruceCanovas/supersurfel_fusion/issues/1
    """
    raise Skip("only a build log states the static shared memory of a kernel", "log.smem")


@from_log("TOR201")
def static_shared_memory_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Used and limit from ptxas' hex numbers; the fix names the release, the architecture list
    and the kernel's own sizing, in that order."""
    found = _STATIC.search(line.text)
    if found is None:
        raise NotStated(
            f"line {line.line} does not state the kernel's shared data and the limit", "log.smem"
        )
    used = int(found.group("used"), 16) + int(found.group("system") or "0", 16)
    limit = int(found.group("limit"), 16)
    if used <= limit:
        return None
    static = "the static limit of every architecture since Fermi" if limit == _STATIC_LIMIT else ""
    where = f", {static}" if static else ""
    return Hit(
        f"ptxas refused a kernel that declares {used} bytes ({_kib(used)}) of static shared "
        f"memory (line {line.line}); one block may hold {limit} ({_kib(limit)}{where}): its "
        "tile sizes for a target the build compiles do not fit",
        evidence={"line": line.line, "used": used, "limit": limit},
        fix=fix(
            "The kernel does not fit the static shared memory limit: update the project to a "
            "release whose kernels fit (its maintainers' fix), or build only for the GPU's own "
            "architecture (-DCMAKE_CUDA_ARCHITECTURES=<XY>, TORCH_CUDA_ARCH_LIST=<X.Y>, nvcc "
            "-arch=sm_XY) instead of the project's fixed list; else lower the build option "
            "that sized the kernel (tile or block size, double precision)",
            "manual",
            manual("git pull && cmake --build build"),
            manual("cmake -B build -DCMAKE_CUDA_ARCHITECTURES=<XY of the GPU>"),
        ),
    )
