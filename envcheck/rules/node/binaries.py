"""TOR16x / SYS17x: what the installed packages' own ELF files say (the report's ``binaries``
section, read by envcheck/binaries/): GPU kernels per GPU, libraries the loader will not find
or finds elsewhere, symbol versions the loaded libc/libstdc++ lack, torch symbols an extension
expects that the installed torch does not define. Any package, any build, no matrix entry."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.binaries import BinariesInfo, BinaryFile, Kernels
from envcheck.model.finding import Severity
from envcheck.model.report import Gpu
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual

MAX_NAMED = 3  # symbols or files named in one message


def binaries(facts: Facts) -> BinariesInfo:
    section = facts.report.binaries
    if section.is_ok and section.data is not None:
        return section.data
    raise Skip(f"the installed packages' ELF files unknown: {section.describe()}", "binaries")


def _cc(gpu: Gpu) -> int | None:
    """7.5 -> 75, 12.0 -> 120: the number a fatbin's arch field uses."""
    text = gpu.compute_capability or ""
    major, _, minor = text.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return int(major) * 10 + int(minor)


def verdict(kernels: Kernels, cc: int) -> str:
    """ "native", "ptx" or "none": see ``Kernels.runs_on``."""
    return kernels.runs_on(cc)


def _sm(arches: Iterable[int]) -> str:
    return ", ".join(f"sm_{a}" for a in arches) or "none"


def _label(file: BinaryFile) -> str:
    name = PurePosixPath(file.path).name
    return f"{name} ({file.distribution})" if file.distribution else name


def _gpus(facts: Facts) -> list[tuple[Gpu, int]]:
    """Each GPU model with its compute capability: reported, else the matrix's for its name
    (a declared GPU: `check --spec` with an image's files)."""
    seen: dict[str, tuple[Gpu, int]] = {}
    for gpu in facts.gpus():
        cc = _cc(gpu)
        if cc is None:
            try:
                version = facts.compute_capability(gpu)
            except Skip:
                continue
            major, minor = (*version.release, 0)[:2]
            cc = major * 10 + minor
        if cc is not None:
            seen.setdefault(f"{gpu.name}/{cc}", (gpu, cc))
    if not seen:
        raise Skip("no GPU with a known compute capability", "gpu.compute_capability")
    return list(seen.values())


@rule("TOR160", "no-kernel-image-for-gpu", Severity.ERROR)
def no_kernels(facts: Facts) -> Iterable[Hit]:
    """An installed library carries no GPU code this GPU can run

    ## What it checks
    The SM architectures of the cubins and the PTX in each installed GPU library's
    `.nv_fatbin` section (torch's `libtorch_cuda.so`, flash-attn, xformers, vLLM's `_C`,
    the nvidia-* wheels, ...), read from the fatbin headers, against each GPU's compute
    capability: a cubin of the same major and a minor at most the GPU's runs natively; PTX for
    an architecture at most the GPU's runs after the driver compiles it; otherwise nothing runs.
    A library built only for newer GPUs than this one (vLLM's Hopper-only FlashAttention 3, a
    `sm_90a` kernel library) is a part the package picks per GPU and is not flagged. Fatbins a
    library keeps in its large-data section count too (cuFFT 12 loads its kernels from
    `.ldata`). NVIDIA's own CUDA library wheels (`nvidia-*`) are judged as a whole: their
    wrappers carry a token image (cuFFTW's one sm_75 cubin; its transforms run in cuFFT), so
    one of their libraries without code for the GPU is flagged only when none of the wheel's
    libraries has any.

    ## Why it matters
    The first kernel launch fails with `CUDA error: no kernel image is available for execution
    on the device`: a wheel built before the GPU existed (torch cu124 on a Blackwell GPU), or
    a source build whose `TORCH_CUDA_ARCH_LIST` left this GPU out.

    ## Example
    `libtorch_cuda.so (torch)` has cubins for sm_50 ... sm_90 and no PTX; GPU 0 is an
    NVIDIA RTX PRO 6000 (compute capability 12.0).

    ## Fix
    Install a build of the package compiled for the GPU's architecture (for torch: a wheel
    whose arch list includes it, e.g. a cu128 build for sm_120), or rebuild it from source with
    `TORCH_CUDA_ARCH_LIST` naming the GPU's compute capability.

    ## References
    - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list
    - https://docs.nvidia.com/cuda/blackwell-compatibility-guide/index.html
    """
    info = binaries(facts)
    gpus = _gpus(facts)
    by_dist: dict[tuple[str, str], list[BinaryFile]] = {}
    for file in info.files:
        k = file.kernels
        if k is None or not (k.sass or k.ptx):
            continue
        for gpu, cc in gpus:
            if min((*k.sass, *k.ptx)) > cc:
                continue  # built only for newer GPUs: a per-GPU part of its package
            if verdict(k, cc) == "none" and not _wheel_runs(info, file, cc):
                key = (file.distribution or PurePosixPath(file.path).name, f"{gpu.name}|{cc}")
                by_dist.setdefault(key, []).append(file)
    hits = []
    for (dist, gpu_key), files in by_dist.items():
        name, cc_text = gpu_key.split("|")
        cc = int(cc_text)
        first = files[0].kernels
        assert first is not None
        more = f" and {len(files) - 1} more of its libraries" if len(files) > 1 else ""
        hits.append(
            Hit(
                f"{_label(files[0])}{more} {'have' if more else 'has'} no kernels for {name} "
                f"(sm_{cc}): cubins "
                f"{_sm(first.sass)}, PTX {_sm(first.ptx)}; its first kernel launch fails with "
                "'no kernel image is available'",
                evidence={
                    "distribution": dist,
                    "gpu": name,
                    "gpu_arch": f"sm_{cc}",
                    "files": [f.path for f in files],
                    "sass": list(first.sass),
                    "ptx": list(first.ptx),
                },
                fix=fix(
                    f"Install a build of {dist} compiled for sm_{cc}",
                    "manual",
                    manual(
                        f"install a {dist} build whose arch list includes {cc // 10}.{cc % 10}"
                        f" (or build it with TORCH_CUDA_ARCH_LIST={cc // 10}.{cc % 10})"
                    ),
                ),
            )
        )
    return hits


def _nvidia_wheel(distribution: str | None) -> bool:
    return (distribution or "").lower().replace("_", "-").startswith("nvidia-")


def _wheel_runs(info: BinariesInfo, file: BinaryFile, cc: int) -> bool:
    """Whether another library of the same NVIDIA CUDA library wheel has code for ``cc``."""
    if not _nvidia_wheel(file.distribution):
        return False
    return any(
        other.distribution == file.distribution
        and other.kernels is not None
        and verdict(other.kernels, cc) != "none"
        for other in info.files
    )


def _jit_ptx(k: Kernels, cc: int) -> tuple[int, str | None]:
    """The PTX the driver compiles for a GPU of ``cc``: the newest architecture at most the
    GPU's, with its ISA version."""
    arch = max(a for a in k.ptx if a <= cc)
    isa = k.ptx_isa[k.ptx.index(arch)] if len(k.ptx_isa) == len(k.ptx) else None
    return arch, isa


def _driver_cuda(facts: Facts) -> tuple[Version, str] | None:
    try:
        return facts.max_cuda()
    except Skip:
        return None


@rule("TOR161", "kernels-by-ptx-jit", Severity.INFO)
def ptx_only(facts: Facts) -> Iterable[Hit]:
    """A GPU library runs on this GPU only through PTX compiled by the driver

    ## What it checks
    Libraries whose fatbin has no cubin for the GPU's architecture but PTX for an older one
    (see TOR160 for how the headers are read). The driver compiles the newest such PTX; its ISA
    version names the CUDA release that introduced it (`matrices/cuda/ptx_isa.toml`), and a
    driver whose CUDA is older cannot compile it: then this is an error, else information.

    ## Why it matters
    The driver compiles every kernel at first use (minutes for a large library, cached in
    `~/.nv/ComputeCache`); a driver older than the PTX's toolkit fails with
    `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` ("the provided PTX was compiled with an unsupported
    toolchain").

    ## Example
    `libcusparseLt.so.0 (nvidia-cusparselt-cu12)` carries cubins up to sm_90 and PTX 8.5 for
    sm_90; the GPU is sm_120.

    ## Fix
    Install a build with cubins for the GPU where one exists; else keep the driver at least at
    the CUDA of the PTX and let the JIT cache persist (`CUDA_CACHE_MAXSIZE`).

    ## References
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#just-in-time-compilation
    """
    info = binaries(facts)
    gpus = _gpus(facts)
    driver = _driver_cuda(facts)
    hits = []
    for file in info.files:
        k = file.kernels
        if k is None or not (k.sass or k.ptx):
            continue
        for gpu, cc in gpus:
            if min((*k.sass, *k.ptx)) > cc or verdict(k, cc) != "ptx":
                continue
            arch, isa = _jit_ptx(k, cc)
            needs = facts.matrix.ptx_cuda(isa) if isa else None
            too_old = driver is not None and needs is not None and driver[0] < needs
            base = (
                f"{_label(file)} has no cubin for {gpu.name} (sm_{cc}); it runs by JIT from "
                f"its sm_{arch} PTX (PTX ISA {isa or 'unknown'}"
                + (f", CUDA {needs}" if needs else "")
                + ")"
            )
            if too_old and driver is not None:
                message = (
                    f"{base}, which the driver cannot compile: it supports CUDA <= {driver[0]} "
                    f"({driver[1]}): 'the provided PTX was compiled with an unsupported "
                    "toolchain'"
                )
            else:
                message = f"{base}, compiled by the driver at first use"
            hits.append(
                Hit(
                    message,
                    evidence={
                        "file": file.path,
                        "gpu_arch": f"sm_{cc}",
                        "ptx": list(k.ptx),
                        "ptx_isa": list(k.ptx_isa),
                        "ptx_cuda": str(needs) if needs else None,
                        "driver_cuda": str(driver[0]) if driver else None,
                    },
                    fix=fix(
                        f"Update the driver to one that runs CUDA {needs}",
                        "manual",
                        manual(f"install an NVIDIA driver supporting CUDA >= {needs}"),
                    )
                    if too_old
                    else None,
                    severity=Severity.ERROR if too_old else None,
                )
            )
    return hits
