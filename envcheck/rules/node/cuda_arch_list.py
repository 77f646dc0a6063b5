"""CUD156: CMake's CUDA architecture list cannot be used (the signatures `cmake-cuda-arch-*` in
matrices/signatures/build_toolchains.toml), in the three ways CMake's own code fails:

- a keyword this CMake does not know reaches nvcc verbatim (`Unsupported gpu architecture
  'compute_native'`): `all` and `all-major` are CMake 3.23's, `native` 3.24's
  (Help/prop_tgt/CUDA_ARCHITECTURES.rst); an older CMake passes them through;
- `native` with no GPU where CMake configures (cmGeneratorTarget.cxx): a docker build, a build
  node, a container or CUDA_VISIBLE_DEVICES without GPUs;
- an empty list (Modules/Internal/CMakeCUDAArchitecturesValidate.cmake): `-D...=` with an empty
  value, a project's detection that found nothing, a stale CMakeCache.txt.

Each fix names the architecture as a number, which every CMake from 3.18 takes: the GPUs' own
(from the node or the log) where known, else how to read it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

# the first CMake that knows each keyword (Help/prop_tgt/CUDA_ARCHITECTURES.rst)
_KEYWORD_CMAKE = {"all": "3.23", "all-major": "3.23", "native": "3.24"}
_READ_CC = (
    "NN: each GPU's compute capability without the dot, 80 A100, 86, 89 L4, 90 H100; "
    "nvidia-smi --query-gpu=compute_cap --format=csv,noheader prints 8.6 for 86"
)
_CLEAN = "rm -rf build/  (or its CMakeCache.txt: CMake keeps the old value there)"


@rule("CUD156", "cmake-cuda-architectures-unusable", Severity.ERROR)
def cmake_cuda_architectures(facts: Facts) -> Iterable[Hit]:
    """CMake's CUDA architecture list is empty or a keyword it cannot resolve

    ## What it checks
    Only a build log says it: nvcc given a CMake keyword as an architecture (`Unsupported gpu
    architecture 'compute_native'`), CMake's `CUDA_ARCHITECTURES is set to "native", but no
    GPU was detected.` and `CMAKE_CUDA_ARCHITECTURES must be non-empty if set.`; with the GPUs
    the node or the log names, the number to pass instead.

    ## Why it matters
    CMake 3.18+ builds CUDA code only for the architectures in CMAKE_CUDA_ARCHITECTURES. The
    keywords need a recent CMake (all, all-major: 3.23; native: 3.24), `native` needs a GPU
    where CMake runs (not in a docker build or on a login node), and an empty value stops the
    configure step; the build never reaches the compiler.

    ## Example
    `cmake .. -DCMAKE_CUDA_ARCHITECTURES=native` with Ubuntu 22.04's CMake 3.22.1, then `nvcc
    fatal : Unsupported gpu architecture 'compute_native'`.

    ## Fix
    Pass the GPUs' architectures as numbers, `-DCMAKE_CUDA_ARCHITECTURES=86` (or `"80;90"`;
    `nvidia-smi --query-gpu=compute_cap` without the dot), in a clean build directory; for
    the keywords, a CMake that knows them: `pip install "cmake>=3.24"`.

    ## References
    - https://cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html
    - https://cmake.org/cmake/help/latest/policy/CMP0104.html
    - https://github.com/colmap/colmap/issues/2232
    """
    raise Skip("only a build log states CMake's CUDA architecture list", "log.build")


def _gpu_numbers(facts: Facts) -> str | None:
    """The node's or log's GPUs as CMake architecture numbers (86;90), if known."""
    with contextlib.suppress(Skip):
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
        if ccs:
            return ";".join(f"{cc.major}{cc.minor}" for cc in ccs)
    return None


@from_log("CUD156")
def cmake_cuda_architectures_in_log(facts: Facts, line: LogLine) -> Hit:
    numbers = _gpu_numbers(facts)
    value = numbers or "<NN>"
    explicit = f'-DCMAKE_CUDA_ARCHITECTURES="{value}"'
    how = "" if numbers else f" ({_READ_CC})"
    keyword = line.stated.get("cuda_arch_keyword") or "native"
    evidence: dict[str, object] = {"line": line.line, "value": keyword, "gpu_archs": numbers}
    if "must be non-empty" in line.text or keyword == "CMAKE_CUDA_ARCHITECTURES":
        return Hit(
            f"CMake's CMAKE_CUDA_ARCHITECTURES is set but empty (line {line.line}): given "
            "empty on the command line, set by the project from a detection or a "
            "TORCH_CUDA_ARCH_LIST that found nothing, or kept in CMakeCache.txt",
            evidence=evidence,
            fix=fix(
                f"Configure again in a clean build directory with the architectures given: "
                f"cmake .. {explicit}{how} (through pip: CMAKE_ARGS='{explicit}'; torch "
                "extensions: TORCH_CUDA_ARCH_LIST with the dot, 8.6)",
                "manual",
                manual(_CLEAN),
                manual(f"cmake .. {explicit}"),
            ),
        )
    if "but no" in line.text:
        return Hit(
            f"CMake found no GPU for CMAKE_CUDA_ARCHITECTURES=native (line {line.line}): the "
            "machine that configures the build shows it none (a docker build, a build or "
            "login node, a container without GPUs, CUDA_VISIBLE_DEVICES empty, a driver that "
            "does not answer)",
            evidence=evidence,
            fix=fix(
                f"Name the architectures instead of native: cmake .. {explicit}{how} (or "
                "export CUDAARCHS, CMake 3.20+), in a clean build directory; where this is the "
                "GPU node itself, nvidia-smi must list the GPU first",
                "manual",
                manual(_CLEAN),
                manual(f"cmake .. {explicit}"),
                manual("nvidia-smi  (the GPU must be visible where CMake runs)"),
            ),
        )
    floor = _KEYWORD_CMAKE.get(keyword, "3.24")
    said = (
        f"nvcc was given CMake's keyword '{keyword}' as an architecture (line {line.line}): "
        f"the CMake that configured the build is older than {floor}, the first that resolves "
        "it, and passed CMAKE_CUDA_ARCHITECTURES through verbatim"
    )
    if "compute_," in line.text:  # CMake's compiler check kept only the entry's digits
        said = (
            f"CMake's compiler check passed an architecture with no number, "
            f"arch=compute_,code=sm_ (line {line.line}): a CMake older than 3.24 keeps only "
            "the digits of each CMAKE_CUDA_ARCHITECTURES entry, and a keyword (native, all, "
            "all-major) has none"
        )
    return Hit(
        said,
        evidence=evidence,
        fix=fix(
            f'Use a CMake that knows the keyword: pip install "cmake>={floor}" (then hash -r; '
            f"cmake --version must print it, ahead of /usr/bin/cmake), or give numbers, which "
            f"every CMake takes: {explicit}{how}; configure again in a clean build directory",
            "manual",
            pip_install(f"cmake>={floor}"),
            manual(_CLEAN),
            manual(f"cmake .. {explicit}"),
        ),
    )
