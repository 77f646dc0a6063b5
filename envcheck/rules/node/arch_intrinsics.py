"""TOR193: nvcc reports a CUDA intrinsic undefined (`identifier "__hfma2" is undefined`) or an
atomic without an overload for its operand type (`no instance of overloaded function
"atomicAdd" matches the argument list` / `argument types are: (double *, double)`) because the
build compiles the kernel for an architecture older than the one the function needs: CUDA's
half-precision arithmetic (`__hfma2`, `__hadd2`, `__hmul`, ...) is declared in cuda_fp16.hpp
only for `__CUDA_ARCH__ >= 530`; atomicAdd on `double` and `__half2` only from compute
capability 6.0, on `__half` from 7.0, on `__nv_bfloat16`/`__nv_bfloat162` from 8.0 (NVIDIA's
CUDA C++ Programming Guide, atomicAdd()). A TORCH_CUDA_ARCH_LIST, `-gencode` or CMake
architecture list that still holds an older target fails there, whatever GPU the node has.
The function comes from the line, its operand type from the `argument types are:` line below
it, the GPU's own architecture from the node or log."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, StatedOtherwise, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.device_functions import below_target
from envcheck.rules.node.stated_toolkits import stated_toolkit

# nvcc's front end: 'error: identifier "__hfma2" is undefined' for cuda_fp16's half arithmetic
_UNDEFINED = lazy(
    r'identifier "(?P<name>__h(?:add|sub|mul|fma|div|neg)2?(?:_sat|_relu|_rn)?)" is undefined'
)
# the architecture below which cuda_fp16.hpp leaves half arithmetic out
_HALF_FLOOR = (5, 3)
# cuda_fp16.hpp's own guards, read in NVIDIA's nvidia-cuda-runtime-cu12 wheels: up to CUDA
# 12.1 (12.1.105) every half arithmetic function (__hadd, __hsub, __hmul, __hfma, __hdiv,
# __hneg, their half2, _sat and _rn forms) sits under '#if !defined(__CUDA_ARCH__) ||
# (__CUDA_ARCH__ >= 530)', the fused multiply-add with relu (__hfma_relu, __hfma2_relu) under
# '>= 800'; from CUDA 12.2 (12.2.140, 12.8.90) only the fused multiply-add family (__hfma,
# __hfma2, _sat, _relu) keeps the '>= 530' guard, the rest is declared for every target
_HALF_ALL_TARGETS_FROM = Version("12.2")
_RELU_FLOOR = (8, 0)
# nvcc's front end: 'error: no instance of overloaded function "atomicAdd" matches the argument
# list', its operand types on the next line ('argument types are: (double *, double)')
_ATOMIC = lazy(
    r'no instance of overloaded function "(?P<name>atomicAdd)" matches the argument list'
)
# atomicAdd's operand type -> the compute capability from which CUDA declares that overload
# (CUDA C++ Programming Guide, "atomicAdd()": "The 64-bit floating-point version of atomicAdd()
# is only supported by devices of compute capability 6.x and higher", the __half2 version 6.x,
# the __half version 7.x, the __nv_bfloat162 and __nv_bfloat16 versions 8.x)
_ATOMIC_FLOORS: tuple[tuple[str, tuple[int, int]], ...] = (
    ("__nv_bfloat162", (8, 0)),
    ("__nv_bfloat16", (8, 0)),
    ("__half2", (6, 0)),
    ("__half", (7, 0)),
    ("double", (6, 0)),
)
_OPERAND = lazy(r"^\s*(?:const\s+|volatile\s+)*(?P<type>[A-Za-z_][A-Za-z_0-9:]*)\s*\*")


def atomic_floor(arguments: str) -> tuple[str, tuple[int, int]] | None:
    """The operand type of an atomicAdd call and the compute capability its overload needs,
    from nvcc's 'argument types are: (double *, const double)' text; None for a type CUDA has
    no atomicAdd for at any architecture (c10::Half, a user's struct)."""
    found = _OPERAND.match(arguments)
    if found is None:
        return None
    kind = found.group("type").removeprefix("::")
    for name, floor in _ATOMIC_FLOORS:
        if kind == name:
            return name, floor
    return None


@rule("TOR193", "intrinsic-below-build-target", Severity.ERROR)
def intrinsic_below_build_target(facts: Facts) -> Iterable[Hit]:
    """A kernel uses a CUDA intrinsic or atomic that the build's oldest target architecture lacks (half2 arithmetic needs sm_53, double atomicAdd sm_60)

    ## What it checks
    In `triage`, nvcc's front end reporting a half-precision intrinsic undefined while it
    compiles an extension's kernel: `marlin_qqq_kernel.cu(152): error: identifier "__hfma2"
    is undefined`, the same for `__hadd2`, `__hmul`, `__hfma`; and an atomicAdd with no
    overload for its operand type, `error: no instance of overloaded function "atomicAdd"
    matches the argument list` with `argument types are: (double *, double)` below it (double
    and `__half2` need compute capability 6.0, `__half` 7.0, `__nv_bfloat16` 8.0; another
    type, such as torch's `c10::Half`, has no atomicAdd at any architecture and is left
    open). Also a bare `error: identifier "atomicExch_block" is undefined` for the device
    functions of `matrices/cuda/device_functions.toml`, read from CUDA's headers: the scoped
    atomics (`atomicAdd_block`, `atomicExch_system`) need 6.0, `__ldg` and the cache-hinted
    loads 3.2, `__dp4a` 6.1, the warp shuffles 3.0 (the non-sync `__shfl_down` and its kin
    exist only below 7.0), any atomic 1.1 (nvcc before CUDA 6.5 compiled for compute_10 without
    an -arch). A function younger than the toolkit (`__hmul2_rn`, CUDA 11.6; the `_sync` warp
    functions, 9.0) under an older nvcc is the toolkit's (CUD110), and a target the log states
    (older nvcc's `....compute_70.cpp1.ii`, a compile command's first `-gencode`) that has the
    function rules this out. Only a build log states it.

    ## Why it matters
    CUDA's cuda_fp16.hpp declares half arithmetic only for `__CUDA_ARCH__ >= 530` (the
    `_relu` forms of the fused multiply-add `>= 800`) up to CUDA 12.1; from 12.2 only the fused
    multiply-add family (`__hfma`, `__hfma2`, `_sat`, `_relu`) keeps the sm_53 floor and the rest
    compiles for every target, so with an nvcc the log or node states as 12.2 or newer,
    `__hadd2` undefined is not the target's (ruled out). A kernel that calls a guarded function
    does not compile for Maxwell (5.0, 5.2) or older. An architecture list that
    keeps those targets (a packaging script's `TORCH_CUDA_ARCH_LIST="5.0;6.0;..."`, or torch's
    choice of every architecture when no GPU is visible in a container build) stops the whole
    build, although the GPU it is for is newer.

    CUDA declares atomicAdd on `double` only for `__CUDA_ARCH__ >= 600`: a project whose
    target list (SM_TARGETS, `-gencode=arch=compute_52`, nvcc's default target of older
    toolkits) holds Maxwell or older fails the same way.

    ## Example
    Building torchao 0.12 for CUDA 12.6 with `TORCH_CUDA_ARCH_LIST="5.0;6.0;7.0;7.5;8.0;8.6;8.9"`:
    `marlin_qqq_kernel.cu(152): error: identifier "__hfma2" is undefined`; exllamav2's JIT on a
    V100 with a compute_52 target: the same error in `h_gemm.cu`; gunrock built with
    `SM_TARGETS = $(GEN_SM50)`: `error: no instance of overloaded function "atomicAdd" matches
    the argument list` / `argument types are: (double *, double)`; gamer built with CUDA 10.2
    for a Kepler GPU: `CUFLU_Shared_FullStepUpdate.cu(185): error: identifier
    "atomicExch_block" is undefined`; `nvcc -ptx kernels.cu` under CUDA 5.5: `error:
    identifier "atomicAdd" is undefined`.

    ## Fix
    Build only for architectures at or above the function's floor (5.3 for half arithmetic,
    6.0 for double atomicAdd): `export TORCH_CUDA_ARCH_LIST="<the GPUs' X.Y>"` (e.g. `7.0` for
    a V100, `8.0;9.0` for A100 and H100) before `pip install --no-build-isolation`, or CMake
    `-DCMAKE_CUDA_ARCHITECTURES` / nvcc `-gencode` lists without the older targets. For a GPU
    below the floor itself, only the project's own fallback compiles (an atomicCAS loop, a call
    guarded by `#if __CUDA_ARCH__ >= 600`); the non-sync warp shuffles on Volta and newer need
    the `_sync` form (`__shfl_down_sync(0xffffffff, ...)`), and an atomic undefined at all, the
    GPU's own `-arch=sm_XY`.

    ## References
    - https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH____HALF2__ARITHMETIC.html
    - CUDA's include/cuda_fp16.hpp in NVIDIA's nvidia-cuda-runtime-cu12 wheels 12.1.105 (every half arithmetic function under `__CUDA_ARCH__ >= 530`, `__hfma_relu` under `>= 800`), 12.2.140 and 12.8.90 (only `__hfma*` under `>= 530`)
    - https://github.com/pytorch/ao/issues/2611
    - https://github.com/pytorch/ao/pull/1557
    - https://github.com/pytorch/FBGEMM/pull/3434
    - https://github.com/turboderp-org/exllamav2/issues/380
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#atomicadd
    - https://github.com/gunrock/gunrock/issues/460
    - https://github.com/gamer-project/gamer/issues/99
    - https://github.com/pluskid/Mocha.jl/issues/205
    - https://github.com/bytedance/lightseq/issues/402
    - CUDA's sm_30_intrinsics.h, sm_32_intrinsics.h, sm_60_atomic_functions.h, sm_61_intrinsics.h (NVIDIA's nvidia-cuda-runtime-cu12 wheels)
    """
    raise Skip("only a build log states which intrinsic a kernel's target lacked", "log.ptx_target")


def half_floor(name: str, nvcc: Version | None) -> tuple[int, int] | None:
    """The oldest architecture for which the nvcc release's cuda_fp16.hpp declares the half
    intrinsic ``name``: sm_53 (the relu forms sm_80) up to CUDA 12.1; from 12.2 sm_53 for the
    fused multiply-add family only, None for the rest (declared for every target). An nvcc the
    log and node do not state is read as the older header's (the floor the error implies)."""
    fma = name.startswith("__hfma")
    if nvcc is not None and nvcc >= _HALF_ALL_TARGETS_FROM:
        return _HALF_FLOOR if fma else None
    return _RELU_FLOOR if name.endswith("_relu") else _HALF_FLOOR


def _gpu_arch_list(facts: Facts, floor: tuple[int, int] = _HALF_FLOOR) -> str | None:
    """The node's or log's GPUs as X.Y (those at or above the floor), if known."""
    with contextlib.suppress(Skip):
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
        kept = [f"{cc.major}.{cc.minor}" for cc in ccs if (cc.major, cc.minor) >= floor]
        if kept:
            return ";".join(kept)
    return None


@from_log("TOR193")
def intrinsic_below_build_target_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The intrinsic from the line; the fix sets the architecture list to the GPUs' own (from
    the node or log) or says to leave out everything below 5.3; the other device functions
    (scoped atomics, __ldg, warp shuffles) from their table (rules/node/device_functions.py)."""
    if line.signature == "device-function-undefined":
        return below_target(facts, line)
    if _ATOMIC.search(line.text):
        return _atomic_below_target(facts, line)
    found = _UNDEFINED.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} names no half-precision intrinsic", "log.ptx_target")
    name = found.group("name")
    nvcc = stated_toolkit(facts, line)
    floor = half_floor(name, nvcc)
    if floor is None:
        raise StatedOtherwise(
            f"nvcc {nvcc}'s cuda_fp16.hpp declares {name} for every target (from CUDA 12.2 only "
            f"the fused multiply-add family, __hfma*, needs sm_53): no target explains line "
            f"{line.line}"
        )
    need, arch = f"{floor[0]}.{floor[1]}", f"sm_{floor[0]}{floor[1]}"
    gpus = _gpu_arch_list(facts, floor)
    value = gpus or f"<the GPUs' X.Y, {need} or newer: 7.0 V100, 8.0 A100, 8.9 L4, 9.0 H100>"
    which = (
        f"CUDA {nvcc} declares the fused multiply-add family (__hfma*) only for sm_53 and newer"
        if nvcc is not None and nvcc >= _HALF_ALL_TARGETS_FROM
        else f"CUDA declares {name} only for {arch} and newer"
        + ("" if nvcc is not None else " (up to CUDA 12.1; from 12.2 only __hfma* keeps sm_53)")
    )
    older = "Maxwell (5.0/5.2) or older" if floor == _HALF_FLOOR else f"a target below {arch}"
    return Hit(
        f"nvcc has no {name} for a target the build compiles (line {line.line}): {which}, so "
        f"the architecture list still holds {older}",
        evidence={"line": line.line, "intrinsic": name, "floor": need, "nvcc": str(nvcc)},
        fix=fix(
            f"Build only for architectures {need} and newer: "
            f'`export TORCH_CUDA_ARCH_LIST="{value}"` '
            "(the GPUs the build must run on), then build again with `pip install "
            "--no-build-isolation`; a CMake build: -DCMAKE_CUDA_ARCHITECTURES without "
            + ("50 and 52" if floor == _HALF_FLOOR else f"targets below {floor[0]}{floor[1]}"),
            "manual",
            manual(f'export TORCH_CUDA_ARCH_LIST="{value}"'),
            manual("pip install --no-build-isolation --no-cache-dir <the package>"),
        ),
    )


def _atomic_below_target(facts: Facts, line: LogLine) -> Hit:
    """atomicAdd without an overload: its operand type from nvcc's 'argument types are:' line
    (a fact), the floor from the programming guide's table, the fix as for the intrinsics."""
    arguments = line.stated.get("overload_args", "")
    known = atomic_floor(arguments)
    if known is None:
        raise NotStated(
            f"line {line.line}: nvcc's argument types ({arguments or 'not in the log'}) name no "
            "type whose atomicAdd depends on the architecture",
            "log.ptx_target",
        )
    kind, floor = known
    need = f"{floor[0]}.{floor[1]}"
    sm = f"sm_{floor[0]}{floor[1]}"
    value = _gpu_arch_list(facts, floor) or (
        f"<the GPUs' X.Y, {need} or newer: 7.0 V100, 8.0 A100, 8.9 L4, 9.0 H100>"
    )
    return Hit(
        f"nvcc has no atomicAdd for {kind} on a target the build compiles (line {line.line}): "
        f"CUDA declares it only for compute capability {need} ({sm}) and newer, so the "
        "architecture list still holds an older target",
        evidence={"line": line.line, "intrinsic": "atomicAdd", "operand": kind, "floor": need},
        fix=fix(
            f"Build only for architectures {need} and newer: `export "
            f'TORCH_CUDA_ARCH_LIST="{value}"` (the GPUs the build must run on), a CMake build '
            f"-DCMAKE_CUDA_ARCHITECTURES, nvcc -gencode arch=compute_XY without targets below "
            f"{sm}; a GPU older than {sm} needs the project's own atomicCAS fallback",
            "manual",
            manual(f'export TORCH_CUDA_ARCH_LIST="{value}"'),
            manual("cmake -DCMAKE_CUDA_ARCHITECTURES=<XY of the GPUs> .."),
        ),
    )
