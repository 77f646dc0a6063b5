"""CUD153's reading of a CMake build's own architecture list: a log that sets the CUDA
architectures of a CMake build (``set(CMAKE_CUDA_ARCHITECTURES 89)``, ``-DCMAKE_CUDA_ARCHITECTURES
="80;86"``, ``CUDAARCHS=75``) above a 'no kernel image' / 'invalid device function'. CMake
compiles the build's kernels for exactly that list (an entry without a suffix is the SASS and
the PTX of that architecture, ``-real`` the SASS alone, ``-virtual`` the PTX alone:
prop_tgt/CUDA_ARCHITECTURES), so the fix is the list, in CMake's spelling, not a torch build."""

from __future__ import annotations

import contextlib

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.choose import Arch, covers, sm
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.trace_frames import TORCH_OWN, frame_package


def cmake_archs(text: str) -> list[Arch] | None:
    """A CMake CUDA architecture list (``89``, ``80;86``, ``120-real;120-virtual``) as the
    architectures it compiles; None for a list this reading does not know (a keyword)."""
    archs = []
    for item in text.strip().strip("\"'").split(";"):
        digits, _, kind = item.strip().partition("-")
        if not digits.isdigit() or len(digits) < 2 or kind not in ("", "real", "virtual"):
            return None
        archs.append(Arch(Version(f"{int(digits[:-1])}.{digits[-1]}"), kind != "real"))
    return archs or None


def built_for_cmake_list(facts: Facts, line: LogLine) -> Hit | None:
    """The log sets a CMake build's CUDA architectures. With the GPUs known: a list one of them
    does not run (SASS of its major at an equal or lower minor, or PTX at or below it) built
    the failing kernels; None where every GPU runs it. With no GPU known: the failure itself
    says the GPU runs none of the list, where the failing program is that build's (no torch
    frame at the error and no torch build stated: torch's arch list decides otherwise)."""
    text = line.stated.get("cmake_cuda_archs")
    archs = cmake_archs(text) if text else None
    if text is None or archs is None:
        return None
    if frame_package(facts, line) in TORCH_OWN:
        return None  # torch's own call launched the kernel: its build's list decides
    ccs: list[Version] = []
    names: list[str] = []
    with contextlib.suppress(Skip):
        for known in facts.gpus():
            with contextlib.suppress(Skip):
                ccs.append(facts.compute_capability(known))
                names.append(known.name or "")
    built = ", ".join(f"{sm(a.cc)}" + (" and its PTX" if a.ptx else "") for a in archs)
    if ccs:
        lacking = sorted({cc for cc in ccs if not covers(archs, cc)})
        if not lacking:
            return None
        value = ";".join(f"{cc.major}{cc.minor}" for cc in sorted(set(ccs)))
        gpu = (", ".join(dict.fromkeys(n for n in names if n)) or "the GPU") + (
            f" ({', '.join(sm(cc) for cc in lacking)})"
        )
        why = f"{gpu} runs none of them"
    else:
        if line.stated.get("torch_version") or line.stated.get("torch_arch_list"):
            return None  # torch is in the picture: its arch list may be the one that lacks it
        value = "<XY>"
        gpu = "the GPU"
        why = "the kernel had no image for the GPU, so it runs none of them"
    query = "nvidia-smi --query-gpu=name,compute_cap --format=csv"
    return Hit(
        f"the log sets the CMake build's CUDA architectures to {text} ({built}): CMake "
        f"compiles its kernels for those alone, and {why} (line {line.line})",
        evidence={"line": line.line, "cmake_cuda_archs": text, "gpu_archs": [sm(c) for c in ccs]},
        fix=fix(
            f"Set the build's CUDA architectures to {gpu}'s compute capability, without the dot"
            + ("" if ccs else f" (`{query}` prints it: 7.5 is 75)")
            + f": -DCMAKE_CUDA_ARCHITECTURES={value} (or set(CMAKE_CUDA_ARCHITECTURES {value}) "
            "in CMakeLists.txt; `native` with CMake 3.24 or newer, configured on the GPU's "
            "machine), then rebuild from a clean build directory",
            "manual",
            *([] if ccs else [manual(query)]),
            manual(
                f"cmake -B build -DCMAKE_CUDA_ARCHITECTURES={value} <the project's options> && "
                "cmake --build build"
            ),
        ),
    )
