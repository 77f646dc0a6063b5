"""CUD153: 'no kernel image is available for execution on the device' (or 'invalid device
function') on a node whose torch build has kernels for every GPU: the kernel that failed is an
extension's (mmcv, detectron2, a project's own CUDA ops, a JIT-built module), compiled without
the GPU's architecture. The GPUs and the torch build come from the node (or the log's own
lines); the fix rebuilds the extension with TORCH_CUDA_ARCH_LIST naming the GPUs' compute
capabilities."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.choose import covers, parse_arch_list, sm
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.arch_cmake_list import built_for_cmake_list
from envcheck.rules.node.nccl_kernels import nccl_kernels_hit
from envcheck.rules.node.torch_build import gpu_arch_missing
from envcheck.rules.node.trace_frames import TORCH_OWN, check_site_package, frame_package


@rule("CUD153", "extension-arch-missing", Severity.ERROR)
def extension_arch_missing(facts: Facts) -> Iterable[Hit]:
    """A CUDA extension has no kernels for the GPU's architecture (torch itself has them)

    ## What it checks
    A log's `no kernel image is available for execution on the device` (or `invalid device
    function`, the older runtimes' word for it) on a node whose torch build covers every GPU
    (the TOR101 check finds nothing): the kernel that failed is not torch's but an
    extension's, built (by `setup.py`, `pip install` from source, a JIT build, a prebuilt
    wheel) for other architectures. Only a log states the failed launch. Where the node's
    torch is not known, the log decides: the traceback's innermost frame at the error in a
    compiled-ops package's code (installed, or a source checkout such as
    `/root/mmcv/mmcv/ops/focal_loss.py`; a debugger's frames printed innermost first below
    the message), or the architecture list the log sets for the build (TORCH_CUDA_ARCH_LIST,
    or a CMake build's `set(CMAKE_CUDA_ARCHITECTURES 89)`, whose fix is in CMake's spelling).
    Whatever torch covers: a CUDA check site in a compiled-ops package's own source (xformers'
    `flash_fwd_launch_template.h:175`) names that package's kernel, and the driver API's
    `CUDA_ERROR_NO_BINARY_FOR_GPU` a module the program loaded itself (a cubin through CuPy's
    RawModule), compiled again for the GPU with nvcc, not a torch or extension build. NCCL's
    own kernels alike: `enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'` while
    NCCL sets them up is a libnccl compiled with an `NVCC_GENCODE` that has no image for the
    GPU (a site build for an older GPU generation), its fix the `-gencode` to add.

    ## Why it matters
    torch's cpp_extension compiles for `TORCH_CUDA_ARCH_LIST`, or, unset, for the GPUs visible
    at build time: an extension built on another machine, in a Docker build without GPUs, or
    with a list that omits the GPU, imports fine and fails at its first kernel.

    ## Example
    A detectron2 / mmcv op built with `TORCH_CUDA_ARCH_LIST="7.0"` on an A100 (sm_80) with
    torch 1.7.1+cu110: torch's own kernels run, the op fails with 'no kernel image'.

    ## Fix
    Rebuild the extension for the GPU's compute capability:
    `TORCH_CUDA_ARCH_LIST="8.0" pip install --no-build-isolation --no-cache-dir
    --force-reinstall <package>` (or the project's build script under the same variable);
    for a prebuilt wheel, install a release built for the architecture.

    ## References
    - https://github.com/csuhan/ReDet/issues/49
    - https://github.com/open-mmlab/mmcv/issues/2201
    - https://github.com/laugh12321/TensorRT-YOLO/issues/74
    - https://cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html
    - https://github.com/facebookresearch/xformers/issues/1251
    - include/cuda.h (CUDA_ERROR_NO_BINARY_FOR_GPU = 209, a module load's answer)
    - https://github.com/thomasbrandon/mish-cuda/issues/10
    - https://github.com/facebookresearch/detectron2/issues/235
    - https://github.com/NVIDIA/nccl/issues/1372
    - NVIDIA/nccl src/enqueue.cc (ncclInitKernelsForDevice: cudaFuncGetAttributes per kernel)
    - pytorch/pytorch torch/utils/cpp_extension.py (_get_cuda_arch_flags: TORCH_CUDA_ARCH_LIST)
    """
    raise Skip("only a log line states a kernel launch without an image", "log.arch")


@from_log("CUD153")
def extension_arch_missing_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Confirmed when the node's torch has kernels for every GPU (the kernel that failed is an
    extension's); ruled out when torch itself lacks one (TOR101's cause); open otherwise. A
    package's own check that names the GPU's compute capability (tiny-cuda-nn's 'Could not
    find compatible tinycudann extension for compute capability 86') establishes it alone."""
    for reading in (  # what the log states decides first, in this order
        nccl_kernels_hit,
        _stated_by_package,
        _checked_by_extension,
        _driver_module,
        _native_program,
        _built_without_gpu,
        built_for_cmake_list,
    ):
        hit = reading(facts, line)
        if hit is not None:
            return hit
    try:
        if facts.torch_arch_stated() is None and facts.torch_cuda() is None:
            raise NotStated("the node's torch is not a CUDA build the facts show", "torch")
        gpus = facts.gpus()
        ccs = sorted({facts.compute_capability(g) for g in gpus})
        if not ccs:
            raise NotStated("the node states no GPU", "gpu")
        missing = list(gpu_arch_missing(facts))
    except (Skip, NotStated) as exc:
        framed = _framed_extension(facts, line)
        if framed is not None:
            return framed
        if frame_package(facts, line) in TORCH_OWN:
            return None  # torch's own frame launched the kernel: TOR101's cause
        if isinstance(exc, NotStated):
            raise
        raise NotStated(
            f"whether torch itself has kernels for the GPU is not known: {exc}", "torch"
        ) from None
    if missing:
        return None  # torch lacks the architecture: TOR101's cause, not an extension's
    names = ", ".join(dict.fromkeys(g.name for g in gpus if g.name)) or "the GPU"
    archs = ", ".join(sm(cc) for cc in ccs)
    arch_list = ";".join(f"{cc.major}.{cc.minor}" for cc in ccs)
    return Hit(
        f"a kernel had no image for {names} ({archs}) (line {line.line}) though the installed "
        "torch has kernels for it: a CUDA extension was built without the GPU's architecture",
        evidence={"line": line.line, "gpu_archs": [sm(cc) for cc in ccs]},
        fix=fix(
            f'Rebuild the extension for {archs}: TORCH_CUDA_ARCH_LIST="{arch_list}" (pip, or '
            "its build script under the same variable); or install a prebuilt release built "
            f"for {archs} (its wheel index for this torch and CUDA)",
            "manual",
            manual(
                f'TORCH_CUDA_ARCH_LIST="{arch_list}" pip install --no-build-isolation '
                "--no-cache-dir --force-reinstall <the extension's package>"
            ),
        ),
    )


# TORCH_CUDA_ARCH_LIST in torch's form: X.Y entries, '+PTX' after any, ';' or spaces between
_ARCH_LIST = lazy(r"[0-9]+\.[0-9](?:\+PTX)?(?:[; ]+[0-9]+\.[0-9](?:\+PTX)?)*")


def _built_without_gpu(facts: Facts, line: LogLine) -> Hit | None:
    """The log sets the architecture list an extension build compiles for
    (``TORCH_CUDA_ARCH_LIST="7.5"``: torch's cpp_extension compiles for exactly that list) and
    the facts name the GPU: a list with no entry the GPU runs (SASS of its major at an equal or
    lower minor, PTX at or below it) built the extension without the GPU's architecture,
    whatever torch's own build has. None when the list covers every GPU, names
    architectures by name ('Ampere') or no GPU is known."""
    text = (line.stated.get("build_arch_list") or "").strip()
    if not text or _ARCH_LIST.fullmatch(text) is None:
        return None
    archs = parse_arch_list(text.replace(",", ";"))
    try:
        gpus = facts.gpus()
        ccs = sorted({facts.compute_capability(g) for g in gpus})
    except Skip:
        return None
    lacking = [cc for cc in ccs if not covers(archs, cc)]
    if not archs or not lacking:
        return None
    names = ", ".join(dict.fromkeys(g.name for g in gpus if g.name)) or "the GPU"
    wanted = ";".join(f"{cc.major}.{cc.minor}" for cc in ccs)
    missing = ", ".join(sm(cc) for cc in lacking)
    return Hit(
        f'the log builds with TORCH_CUDA_ARCH_LIST="{text}", which holds no architecture '
        f"{names} ({missing}) runs: the extension built under it has no kernels for the GPU "
        f"(line {line.line})",
        evidence={"line": line.line, "build_arch_list": text, "gpu_archs": missing},
        fix=fix(
            f'Rebuild the extension for {missing}: TORCH_CUDA_ARCH_LIST="{wanted}" (a CUDA '
            "toolkit that compiles it: CUD150 names the first), then reinstall it",
            "manual",
            manual(
                f'TORCH_CUDA_ARCH_LIST="{wanted}" pip install --no-build-isolation '
                "--no-cache-dir --force-reinstall <the extension's package>"
            ),
        ),
    )


def _framed_extension(facts: Facts, line: LogLine) -> Hit | None:
    """The traceback's innermost frame at the error is a compiled-ops package's own code (the
    ``[[extension]]`` table: mmcv's ops, detectron2, torch-scatter, apex): its call launched the
    kernel that has no image, and a launch fails at once, so the kernel is that package's;
    where torch lacked the architecture, torch's own kernels before it would have failed
    first. Read only where the torch build's coverage is not known."""
    frame = frame_package(facts, line)
    return _extension_kernel(facts, line, frame, f"the traceback's innermost frame is in {frame}")


def _checked_by_extension(facts: Facts, line: LogLine) -> Hit | None:
    """The CUDA check that reported the error is in a compiled-ops package's own source (its
    file and line on the error line): the kernel without an image is that package's, whatever
    torch's own build covers (torch's kernels are not the ones that failed here)."""
    package = check_site_package(facts, line)
    if package is None and _FA3_SOURCE.search(line.stated.get("cuda_program") or ""):
        package = "xformers"  # its submodule's path (.gitmodules), in a checkout of any name
    source = (line.stated.get("cuda_program") or "").rsplit("/", 1)[-1]
    return _extension_kernel(facts, line, package, f"the CUDA check that reported it is {source}")


def _extension_kernel(facts: Facts, line: LogLine, frame: str | None, seen: str) -> Hit | None:
    """CUD153's finding for the kernel of the compiled-ops package ``frame`` names: rebuild it
    for the GPU's compute capability under the variable its build reads."""
    entry = facts.matrix.extension(frame) if frame else None
    if entry is None or frame in TORCH_OWN:
        return None
    cc = _stated_cc(line)
    if cc is None:
        with contextlib.suppress(Skip):
            known = [facts.compute_capability(g) for g in facts.gpus()]
            cc = min(known) if known else None
    value = f"{cc.major}.{cc.minor}" if cc is not None else "<the GPU's compute capability>"
    env = entry.arch_env or "TORCH_CUDA_ARCH_LIST"
    if entry.arch_env:
        value = value.replace(".", "") if cc is not None else value
    build = (entry.build or "").replace("{requirement}", entry.package) or (
        f"pip install --no-build-isolation --no-cache-dir --force-reinstall {entry.package}"
    )
    command = f'{env}="{value}" {build}'
    where = f" ({sm(cc)})" if cc is not None else ""
    fa3 = _FA3_SOURCE.search(line.stated.get("cuda_program") or "")
    if entry.package == "xformers" and fa3 and (cc is None or cc.major not in (8, 9)):
        return _xformers_fa3(line, command, where, frame)  # sm_80's SASS runs on sm_8x
    return Hit(
        f"the kernel with no image for the GPU{where} was launched by {entry.package} (line "
        f"{line.line}: {seen}): {entry.package} was built "
        "without the GPU's architecture (on another machine, or with an architecture list "
        "that omits it)",
        evidence={"line": line.line, "package": entry.package, "frame": frame},
        fix=fix(
            f"Rebuild {entry.package} for the GPU's compute capability: `{command}`"
            + (
                ""
                if cc is not None
                else " (the capability: `nvidia-smi --query-gpu=name,compute_cap --format=csv`)"
            )
            + "; or install a prebuilt release made for this GPU, torch and CUDA",
            "manual",
            manual(command),
        ),
    )


# xformers' bundled FlashAttention-3, its third_party/flash-attention/hopper sources
_FA3_SOURCE = lazy(r"third_party[/\\]flash-attention[/\\]hopper[/\\]")


def _xformers_fa3(line: LogLine, command: str, where: str, frame: str | None) -> Hit:
    """The check site is xformers' bundled FlashAttention-3 (third_party/flash-attention/hopper):
    xformers' setup.py builds it only for sm_80 and sm_90 ('only support Sm80/Sm90', whatever
    TORCH_CUDA_ARCH_LIST names; XFORMERS_DISABLE_FLASH_ATTN skips it), and releases before
    0.0.33 dispatch it to any GPU from sm_90 on (0.0.33 gave its ops a maximum capability of
    9.0). On another GPU the kernel cannot be built for it: xformers is rebuilt without it,
    or 0.0.33 or newer runs another op there (facebookresearch/xformers#1329: 'building
    without flash attention fixes the issue'; xformers#1251)."""
    disabled = f"XFORMERS_DISABLE_FLASH_ATTN=1 {command}"
    return Hit(
        f"the kernel with no image for the GPU{where} is xformers' bundled FlashAttention-3 (line "
        f"{line.line}: the CUDA check in third_party/flash-attention/hopper): xformers builds it "
        "only for sm_80 and sm_90, and releases before 0.0.33 still dispatch it on newer GPUs",
        evidence={"line": line.line, "package": "xformers", "frame": frame, "kernel": "fa3"},
        fix=fix(
            "Rebuild xformers without its FlashAttention-3 (it has no kernels for this GPU at "
            f"any build setting): `{disabled}`; or install xformers 0.0.33 or newer, whose "
            "FlashAttention-3 ops stop at sm_90 (a wheel for the installed torch, from torch's "
            "index)",
            "manual",
            manual(disabled),
        ),
    )


# the driver API's name of 'no kernel image' (cuModuleLoad*, cuLibraryLoad* return it for a
# module with no SASS for the GPU and no PTX it can JIT); torch and other runtime-API users
# report cudaErrorNoKernelImageForDevice instead (matrices/cuda/errors.toml, number 209)
_DRIVER_NO_BINARY = lazy(r"CUDA_ERROR_NO_BINARY_FOR_GPU")


def _driver_module(facts: Facts, line: LogLine) -> Hit | None:
    """The driver API's CUDA_ERROR_NO_BINARY_FOR_GPU: a module the program loaded itself
    through the driver (a cubin or fatbin file CuPy's RawModule(path=...), PyCUDA or numba
    loads, or an image a library embeds) has no code for the GPU: it was compiled for other
    architectures and without PTX. Neither torch's build nor a TORCH_CUDA_ARCH_LIST extension
    build is the fix: the module is compiled again for the GPU, or with PTX the driver can
    JIT, or loaded from source so NVRTC compiles it for the GPU at run time."""
    if _DRIVER_NO_BINARY.search(line.text) is None:
        return None
    ccs: list[Version] = []
    with contextlib.suppress(Skip):
        for known in facts.gpus():
            with contextlib.suppress(Skip):
                ccs.append(facts.compute_capability(known))
    stated = _stated_cc(line)
    low = min(ccs) if ccs else stated
    arch = sm(low) if low is not None else "sm_<XY>"
    digits = arch.removeprefix("sm_")
    cubin = f"nvcc -cubin -arch={arch} -o kernel.cubin kernel.cu"
    fatbin = (
        f"nvcc -fatbin -gencode arch=compute_{digits},code=[{arch},compute_{digits}] "
        "-o kernel.fatbin kernel.cu"
    )
    return Hit(
        "a CUDA module the program loaded through the driver has no code for the GPU"
        + (f" ({arch})" if low is not None else "")
        + f" (line {line.line}: CUDA_ERROR_NO_BINARY_FOR_GPU, the driver API's answer to a "
        "module load): the cubin or fatbin was compiled for other architectures and carries "
        "no PTX the driver could compile for this one",
        evidence={"line": line.line, "gpu_arch": arch},
        fix=fix(
            f"Compile the module again for the GPU (`{cubin}`), or as a fatbin that also holds "
            f"PTX, which the driver compiles for newer GPUs (`{fatbin}`); or load its source "
            "instead of a prebuilt binary (CuPy's RawModule(code=...) / RawKernel, compiled by "
            "NVRTC for the GPU it runs on)"
            + (
                ""
                if low is not None
                else "; the GPU's architecture: `nvidia-smi "
                "--query-gpu=name,compute_cap --format=csv`"
            ),
            "manual",
            manual(cubin),
            manual(fatbin),
        ),
    )


def _stated_by_package(facts: Facts, line: LogLine) -> Hit | None:
    """The package's own check names it and the GPU's compute capability: rebuild that package
    for it, under the variable its build reads (the ``[[extension]]`` table's ``arch_env``)."""
    module, digits = line.stated.get("ext_module"), line.stated.get("gpu_sm")
    if module is None or digits is None or not digits.isdigit() or len(digits) < 2:
        return None
    entry = facts.matrix.extension(module)
    cc = f"{digits[:-1]}.{digits[-1]}"
    if entry is None:
        return _stated_by_build(line, module, digits, cc)
    env = entry.arch_env or "TORCH_CUDA_ARCH_LIST"
    value = digits if entry.arch_env else cc
    build = (
        entry.build
        or f"pip install --no-build-isolation --no-cache-dir --force-reinstall {entry.package}"
    )
    command = f"{env}={value} {build}" if entry.arch_env else f'{env}="{value}" {build}'
    also = (
        f' (TORCH_CUDA_ARCH_LIST="{cc}" for the torch extension builds it runs)'
        if entry.arch_env
        else ""
    )
    return Hit(
        f"{entry.package} has no build for the GPU's compute capability {cc} (sm_{digits}) "
        f"(line {line.line}): it was built for other GPUs (on another machine, or with an "
        "architecture list that omits this one)",
        evidence={"line": line.line, "package": entry.package, "compute_capability": cc},
        fix=fix(
            f"Rebuild {entry.package} for compute capability {cc}: `{command}`{also}",
            "manual",
            manual(command),
        ),
    )


def _stated_by_build(line: LogLine, module: str, digits: str, cc: str) -> Hit:
    """A build the ``[[extension]]`` table does not know names the architecture it lacks
    (ggml's 'has no device code compatible with CUDA arch 750. ggml-cuda.cu was compiled for:
    520,610', vLLM's 'No compiled cutlass_scaled_mm for ... capability: 121'): rebuild it
    naming that architecture, under the variable its kind of build reads."""
    cmake = f"CUDAARCHS={digits} cmake -B build <the project's CUDA option> && cmake --build build"
    torch_ext = (
        f'TORCH_CUDA_ARCH_LIST="{cc}" pip install --no-build-isolation --no-cache-dir '
        f"--force-reinstall <the package that ships {module}>"
    )
    built = line.stated.get("built_archs")
    has = f" (it was compiled for {built})" if built else ""
    return Hit(
        f"{module} has no kernels for the GPU's compute capability {cc} (sm_{digits}) (line "
        f"{line.line}){has}: it was built for other GPUs",
        evidence={"line": line.line, "module": module, "compute_capability": cc},
        fix=fix(
            f"Install a build of it made for sm_{digits} (a release whose wheels list it), or "
            f"rebuild it for compute capability {cc}: a CMake build (llama.cpp, whisper.cpp, "
            f"ggml) with `-DCMAKE_CUDA_ARCHITECTURES={digits}` (or `{cmake}`), a torch "
            f"extension build (vLLM, a project's setup.py) with `{torch_ext}`",
            "manual",
            manual(cmake),
            manual(torch_ext),
        ),
    )


# torch's own sources: a check site there is torch's kernel (TOR101's cause), not a program's
_TORCH_SOURCE = lazy(r"(?:^|[/\\])(?:aten|THC|THCUNN|c10|caffe2)[/\\]")


# a Python package's sources (a torch extension's csrc), or a Python exception's line
_PYTHON_PACKAGE = lazy(r"site-packages|dist-packages|[/\\]csrc[/\\]|[/\\]torch[/\\]")
_RAISED = lazy(r"(?:^|[\s:\]|])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): ")


# a native program's own report of the error, with no Python around it: a C++ exception's what()
# (thrust's system_error: 'parallel_for failed: cudaErrorNoKernelImageForDevice: ...'), C++'s
# terminate handler, or the error's number printed beside its text the way C programs print it
# (CUDA samples' checkCudaErrors 'code=209(cudaErrorNoKernelImageForDevice)', 'Error: ... 209',
# a driver-API wrapper's 'CUDA_ERROR_NO_BINARY_FOR_GPU (209)')
_NATIVE_REPORT = lazy(
    r"what\(\):|terminate called after throwing|code=209\b|device 209\s*$|\(209\)\s*$"
)
# anything that puts Python or torch around the error: then the torch build may be the one
_PYTHON_AROUND = lazy(
    r"Traceback \(most recent call last\)|File \"[^\"]+\", line [0-9]+|torch|THC|aten[/\\]|c10::"
    r"|\.py\b"
)


def _native_source(line: LogLine) -> str | None:
    """The native program whose own check reported the missing kernel: the CUDA source file the
    line names (ggml-cuda.cu, 'kernel.cu(413)'), else 'the program' where the report is a C or
    C++ program's own (a what(), the terminate handler, the error's number) with no Python and
    no torch anywhere in the lines around it (a CMake program, thrust's algorithms)."""
    source = line.stated.get("cuda_program")
    if source:
        if _TORCH_SOURCE.search(source) or _PYTHON_PACKAGE.search(source):
            return None  # torch's own kernel, or a Python package's: the torch build decides
        return source
    around = (
        (line.stated.get("cxx_exception") or "") + " " + (line.stated.get("ext_frame_path") or "")
    )
    if (
        _NATIVE_REPORT.search(line.text)
        and not _PYTHON_AROUND.search(line.text)
        and not _PYTHON_AROUND.search(around)
    ):
        return "the program"
    return None


def _native_program(facts: Facts, line: LogLine) -> Hit | None:
    """The CUDA error check that reported the failed kernel is a native build's own source
    (ggml-cuda.cu's check, a project's 'kernel.cu(413): CUDA error') or a native program's own
    report (a C++ exception's what(), the error's number beside its text) with no Python and no
    torch around it, and the log states no torch build: that build lacks the GPU's
    architecture. The fix names it for the GPU's compute capability (the log's, else the
    node's) in each build system's spelling."""
    source = _native_source(line)
    if source is None:
        return None
    if _RAISED.search(line.text):
        return None  # a Python exception: the kernel may be torch's or an extension's
    if line.stated.get("torch_version") or line.stated.get("torch_arch_list"):
        return None  # torch is in the picture: its arch list decides (TOR101 or an extension)
    name = line.stated.get("gpu_name")
    ccs = [cc] if (cc := _stated_cc(line)) is not None else []
    if not ccs:
        with contextlib.suppress(Skip):
            for known in facts.gpus():
                with contextlib.suppress(Skip):
                    ccs.append(facts.compute_capability(known))
                    name = name or known.name
    file = re.split(r"[/\\]", source)[-1]
    if ccs:
        low = min(ccs)
        digits, cc_text = f"{low.major}{low.minor}", f"{low.major}.{low.minor}"
        gpu = f"{name or 'the GPU'} ({sm(low)})"
    else:
        digits, cc_text = "<XY>", "<X.Y>"
        gpu = "the GPU"
    cmake = f"-DCMAKE_CUDA_ARCHITECTURES={digits}"
    gencode = f"-gencode arch=compute_{digits},code=sm_{digits}"
    torch_ext = f'TORCH_CUDA_ARCH_LIST="{cc_text}"'
    forms = [
        f"a CMake build `{cmake}` (CMake 3.24 or newer: `-DCMAKE_CUDA_ARCHITECTURES=native` on "
        "the GPU's machine)",
        f"nvcc flags (a Makefile, CUDA_NVCC_FLAGS) `{gencode}`",
        f"a torch extension `{torch_ext} pip install --no-build-isolation --no-cache-dir "
        "--force-reinstall <the package>`",
    ]
    return Hit(
        f"a kernel had no image for {gpu} (line {line.line}), and the CUDA check that reported "
        f"it is {file}'s own: that build was compiled without the GPU's architecture",
        evidence={"line": line.line, "source": file, "gpu_archs": [sm(c) for c in ccs]},
        fix=fix(
            f"Rebuild it for compute capability {cc_text}"
            + ("" if ccs else " (`nvidia-smi --query-gpu=compute_cap --format=csv` prints it)")
            + ": "
            + "; ".join(forms)
            + " (a prebuilt release: one whose build lists this architecture)",
            "manual",
            manual(f"cmake -B build {cmake} <the project's CUDA option> && cmake --build build"),
            manual(f"nvcc {gencode} ..."),
        ),
    )


def _stated_cc(line: LogLine) -> Version | None:
    text = line.stated.get("gpu_cc")
    if text and re.fullmatch(r"[0-9]+\.[0-9]+", text.strip()):
        return Version(text.strip())
    digits = (line.stated.get("gpu_sm") or "").lower().removeprefix("sm_")
    if digits.isdigit() and len(digits) >= 2:
        return Version(f"{digits[:-1]}.{digits[-1]}")
    return None
