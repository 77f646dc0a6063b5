"""TOR193: nvcc reports a CUDA intrinsic undefined (`identifier "__hfma2" is undefined`)
because the build compiles the kernel for an architecture older than the one the intrinsic
needs: CUDA's half-precision arithmetic (`__hfma2`, `__hadd2`, `__hmul`, ...) is declared in
cuda_fp16.hpp only for `__CUDA_ARCH__ >= 530`, so a TORCH_CUDA_ARCH_LIST, `-gencode` or CMake
architecture list that still holds Maxwell (5.0, 5.2) or Kepler fails there, whatever GPU the
node has. The intrinsic comes from the line, the GPU's own architecture from the node or log."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# nvcc's front end: 'error: identifier "__hfma2" is undefined' for cuda_fp16's half arithmetic
_UNDEFINED = lazy(
    r'identifier "(?P<name>__h(?:add|sub|mul|fma|div|neg)2?(?:_sat|_relu|_rn)?)" is undefined'
)
# the architecture below which cuda_fp16.hpp leaves half arithmetic out
_HALF_FLOOR = (5, 3)


@rule("TOR193", "intrinsic-below-build-target", Severity.ERROR)
def intrinsic_below_build_target(facts: Facts) -> Iterable[Hit]:
    """A kernel uses a CUDA intrinsic that the build's oldest target architecture lacks (half2 arithmetic needs sm_53)

    ## What it checks
    In `triage`, nvcc's front end reporting a half-precision intrinsic undefined while it
    compiles an extension's kernel: `marlin_qqq_kernel.cu(152): error: identifier "__hfma2"
    is undefined`, the same for `__hadd2`, `__hmul`, `__hfma`. Only a build log states it.

    ## Why it matters
    CUDA's cuda_fp16.hpp declares half arithmetic only for `__CUDA_ARCH__ >= 530`: a kernel
    that calls it does not compile for Maxwell (5.0, 5.2) or older. An architecture list that
    keeps those targets (a packaging script's `TORCH_CUDA_ARCH_LIST="5.0;6.0;..."`, or torch's
    choice of every architecture when no GPU is visible in a container build) stops the whole
    build, although the GPU it is for is newer.

    ## Example
    Building torchao 0.12 for CUDA 12.6 with `TORCH_CUDA_ARCH_LIST="5.0;6.0;7.0;7.5;8.0;8.6;8.9"`:
    `marlin_qqq_kernel.cu(152): error: identifier "__hfma2" is undefined`; exllamav2's JIT on a
    V100 with a compute_52 target: the same error in `h_gemm.cu`.

    ## Fix
    Build only for architectures 5.3 and newer: `export TORCH_CUDA_ARCH_LIST="<the GPUs' X.Y>"`
    (e.g. `7.0` for a V100, `8.0;9.0` for A100 and H100) before `pip install
    --no-build-isolation`, or CMake `-DCMAKE_CUDA_ARCHITECTURES` / nvcc `-gencode` lists without
    50 and 52.

    ## References
    - https://docs.nvidia.com/cuda/cuda-math-api/cuda_math_api/group__CUDA__MATH____HALF2__ARITHMETIC.html
    - https://github.com/pytorch/ao/issues/2611
    - https://github.com/pytorch/ao/pull/1557
    - https://github.com/pytorch/FBGEMM/pull/3434
    - https://github.com/turboderp-org/exllamav2/issues/380
    """
    raise Skip("only a build log states which intrinsic a kernel's target lacked", "log.ptx_target")


def _gpu_arch_list(facts: Facts) -> str | None:
    """The node's or log's GPUs as X.Y (those at or above the floor), if known."""
    with contextlib.suppress(Skip):
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
        kept = [f"{cc.major}.{cc.minor}" for cc in ccs if (cc.major, cc.minor) >= _HALF_FLOOR]
        if kept:
            return ";".join(kept)
    return None


@from_log("TOR193")
def intrinsic_below_build_target_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The intrinsic from the line; the fix sets the architecture list to the GPUs' own (from
    the node or log) or says to leave out everything below 5.3."""
    found = _UNDEFINED.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} names no half-precision intrinsic", "log.ptx_target")
    name = found.group("name")
    gpus = _gpu_arch_list(facts)
    value = gpus or "<the GPUs' X.Y, 5.3 or newer: 7.0 V100, 8.0 A100, 8.9 L4, 9.0 H100>"
    return Hit(
        f"nvcc has no {name} for a target the build compiles (line {line.line}): CUDA "
        "declares half-precision arithmetic only for sm_53 and newer, so the architecture list "
        "still holds Maxwell (5.0/5.2) or older",
        evidence={"line": line.line, "intrinsic": name},
        fix=fix(
            f'Build only for architectures 5.3 and newer: `export TORCH_CUDA_ARCH_LIST="{value}"` '
            "(the GPUs the build must run on), then build again with `pip install "
            "--no-build-isolation`; a CMake build: -DCMAKE_CUDA_ARCHITECTURES without 50 and 52",
            "manual",
            manual(f'export TORCH_CUDA_ARCH_LIST="{value}"'),
            manual("pip install --no-build-isolation --no-cache-dir <the package>"),
        ),
    )
