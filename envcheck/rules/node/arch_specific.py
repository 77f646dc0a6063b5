"""TOR191: ptxas refused an instruction on a plain architecture target ('Instruction 'mma with
block scale' not supported on .target 'sm_120''): the kernel uses an architecture-specific
feature, which PTX offers only on the arch-specific target (sm_90a, sm_100a, sm_120a) or, from
CUDA 12.9, the family target (sm_120f), never on plain sm_XY, which must run on every later
GPU. The target comes from the line; the fix names the 'a' target in each build system's
spelling (CMake, torch's extension builder, nvcc's -gencode), or, where the kernel's own file
names another architecture (sm90_*.cu built for sm_120), leaving that kernel out of the
build for this architecture."""

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
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.arch import sm_support
from envcheck.rules.node.ptx_instructions import list_for_other_gpu, node_lacks, other_arch

# ptxas' diagnostic: "<file>.ptx, line N; error   : Instruction 'X' not supported on .target 'sm_120'"
_REFUSED = lazy(
    r"(?:Instruction|Feature|Modifier) '(?P<what>[^']+)' not supported on "
    r"\.target '(?P<target>(?:sm|compute)_(?P<digits>[0-9]{2,3}))'"
)
# CUTLASS's stub in a kernel built without the 'a' target ('... without targeting sm90a ...')
_STUB = lazy(
    r"Arch conditional MMA instruction used without targeting "
    r"(?:sm(?P<digits>[0-9]{2,3})a|appropriate) compute capability"
)
# the kernel source's own architecture in the PTX file's name (..._sm90_q64n32.ptx)
_FILE_ARCH = lazy(r"[_/\\-]sm_?(?P<digits>[0-9]{2,3})[af]?[_.]")


@rule("TOR191", "arch-specific-instruction-on-plain-target", Severity.ERROR)
def arch_specific_on_plain_target(facts: Facts) -> Iterable[Hit]:
    """A kernel uses an architecture-specific instruction, but the build compiles it for the plain architecture target

    ## What it checks
    In `triage`, ptxas refusing an instruction or feature on a plain target: `Instruction
    'mma with block scale' not supported on .target 'sm_120'`, `Instruction 'wgmma.fence'
    not supported on .target 'sm_90'`, `Instruction 'cvt with .e2m1x2' not supported on
    .target 'sm_120'`. The target comes from the line; where the PTX file's name names
    another architecture (`sm90_q64n32.ptx` built for sm_120), the kernel was written for that
    one. At run time, CUTLASS's stub in a kernel built without the target: `Arch conditional
    MMA instruction used without targeting sm90a compute capability`. Only a log states which
    target a kernel was compiled for.

    ## Why it matters
    PTX keeps the features of one architecture (Hopper's wgmma and TMA, Blackwell's block-scaled
    FP4/FP8 MMA) out of the plain targets, which must also run on later GPUs: they exist only
    on the arch-specific `sm_XYa` targets (and, from CUDA 12.9, the family `sm_XYf` ones). A
    build whose architecture list says `120`, `native` or `12.0` fails in ptxas although the
    GPU has the instruction.

    ## Example
    llama.cpp or a CUDA project built with `-DCMAKE_CUDA_ARCHITECTURES=120` (or `native`) on an
    RTX 5090: `ptxas ... mmq-instance-mxfp4.compute_120.ptx, line 1025; error : Instruction
    'mma with block scale' not supported on .target 'sm_120'`.

    ## Fix
    Compile for the arch-specific target: CMake `-DCMAKE_CUDA_ARCHITECTURES=120a` (CUDA 12.9 and
    newer also `120f`), torch extensions `TORCH_CUDA_ARCH_LIST="12.0a"`, nvcc `-gencode
    arch=compute_120a,code=sm_120a`; a kernel written for another architecture (its file says
    sm90) belongs only in that architecture's `a` build.

    ## References
    - https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#ptx-module-directives-target
    - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list
    - https://github.com/antirez/ds4/issues/679
    - https://github.com/ggml-org/llama.cpp/pull/17906
    - https://github.com/NVIDIA/cutlass/blob/main/include/cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized.hpp
    """
    raise Skip("only a build log states the target ptxas compiled a kernel for", "log.ptx_target")


@from_log("TOR191")
def arch_specific_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The refused instruction and the plain target from the line: the fix names the target's
    arch-specific spelling in each build system, or, where the PTX file names another
    architecture, building that kernel only for that architecture's arch-specific target."""
    stub = _STUB.search(line.text)
    if stub is not None:
        return _stub_hit(facts, line, stub.group("digits"))
    found = _REFUSED.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} names no plain target ptxas refused", "log.ptx_target")
    what, digits = found.group("what"), found.group("digits")
    target = f"sm_{digits}"
    cc = f"{digits[:-1]}.{digits[-1]}"
    own = _FILE_ARCH.search(line.text.split(", line", 1)[0])
    evidence = {"line": line.line, "instruction": what, "target": target}
    if own is not None and own.group("digits") != digits:
        other = own.group("digits")
        written_for = Version(f"{int(other[:-1])}.{other[-1]}")
        if node_lacks(facts, written_for):  # no GPU here runs that kernel: build the GPUs' own
            why = f"the kernel's file is written for sm_{other} (sm_{other}a's instructions)"
            return _other_arch_hit(facts, line, what, written_for, why)
        return Hit(
            f"ptxas refused '{what}' on {target} (line {line.line}): the kernel's file is written "
            f"for sm_{other} (sm_{other}a's instructions), and the build compiles it for "
            f"{target} as well",
            evidence={**evidence, "kernel_arch": f"sm_{other}"},
            fix=fix(
                f"Build the sm_{other} kernels only for sm_{other}a: leave {target} out of the "
                "architecture list of the target that compiles them (the project's option for "
                f"its sm_{other} kernels, or an architecture list without {digits})",
                "manual",
                manual(f"-DCMAKE_CUDA_ARCHITECTURES={other}a  (the sm_{other} kernels' target)"),
                manual(f'TORCH_CUDA_ARCH_LIST="{other[:-1]}.{other[-1]}a"  (torch extensions)'),
            ),
        )
    other = other_arch(facts.matrix, line)
    if other is not None:
        if list_for_other_gpu(facts, line) is not None:
            return None  # the list names a GPU the node does not have: CUD157's cause
        return _other_arch_hit(facts, line, what, other[1])
    support = sm_support(facts.matrix, target)
    needs = (
        f"; a toolkit that compiles {target} (CUDA {support.first_cuda} or newer)"
        if support
        else ""
    )
    cmake = f"-DCMAKE_CUDA_ARCHITECTURES={digits}a"
    torch_list = f'TORCH_CUDA_ARCH_LIST="{cc}a"'
    gencode = f"-gencode arch=compute_{digits}a,code=sm_{digits}a"
    return Hit(
        f"ptxas refused '{what}' on the plain target {target} (line {line.line}): the kernel uses "
        f"an instruction PTX offers only on the arch-specific target sm_{digits}a, and the build "
        f"compiles for {target}",
        evidence=evidence,
        fix=fix(
            f"Compile for sm_{digits}a, not {target}: CMake `{cmake}` (CUDA 12.9 or newer also "
            f"`-DCMAKE_CUDA_ARCHITECTURES={digits}f`), torch extensions `{torch_list}`, nvcc "
            f"`{gencode}`{needs}",
            "manual",
            manual(f"cmake -B build {cmake} <the project's CUDA option> && cmake --build build"),
            manual(f"{torch_list} pip install --no-build-isolation --no-cache-dir <the package>"),
            manual(f"nvcc {gencode} ..."),
        ),
    )


def _stub_hit(facts: Facts, line: LogLine, digits: str | None) -> Hit:
    """CUTLASS's stub ran: the kernel was built without its arch-specific target (the line's
    sm_XYa, else the GPU's own where the log or node states it)."""
    if digits is None:
        with contextlib.suppress(Skip):
            ccs = sorted(facts.compute_capability(g) for g in facts.gpus())
            if ccs:
                digits = f"{ccs[-1].major}{ccs[-1].minor}"
        if digits is None and (sm_text := line.stated.get("gpu_sm") or line.stated.get("gpu_cc")):
            digits = sm_text.lower().removeprefix("sm_").replace(".", "") or None
    target = f"sm_{digits}a" if digits else "the GPU's sm_XYa"
    cmake = f"{digits}a" if digits else "<XY>a"
    torch_list = f"{digits[:-1]}.{digits[-1]}a" if digits else "<X.Y>a"
    return Hit(
        f"a CUTLASS kernel aborted (line {line.line}): the binary was built without {target}, "
        "the arch-specific target its MMA instructions need, and holds only the stub that "
        "prints this",
        evidence={"line": line.line, "target": target},
        fix=fix(
            f"Install a build of the library made with {target} (its release for this GPU and "
            f"CUDA), or rebuild it with the arch-specific target: `TORCH_CUDA_ARCH_LIST="
            f'"{torch_list}"` (torch extensions: vLLM, sgl-kernel, FlashInfer), CMake '
            f"`-DCMAKE_CUDA_ARCHITECTURES={cmake}`, CUTLASS's own `CUTLASS_NVCC_ARCHS={cmake}`",
            "manual",
            manual(
                f'TORCH_CUDA_ARCH_LIST="{torch_list}" pip install --no-build-isolation '
                "--no-cache-dir --force-reinstall <the package>"
            ),
        ),
    )


@rule("TOR192", "torch-cmake-unknown-arch-name", Severity.ERROR)
def torch_cmake_unknown_arch_name(facts: Facts) -> Iterable[Hit]:
    """torch's architecture selection (its CMake module, its extension builder) cannot parse a name in the autodetected CUDA architecture list

    ## What it checks
    In `triage`, the configure step of torch or of a CMake project built against libtorch
    stopping at `Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS` (torch's
    `select_compute_arch.cmake`), with the list it autodetected where the log prints it
    (`Autodetected CUDA architecture(s): 5.0;8.0;8.6;8.9;9.0;9.0a`); torch's extension
    builder, with TORCH_CUDA_ARCH_LIST unset, parsing the torch build's own list
    (`torch.cuda.get_arch_list()`) and stopping at an arch-specific name in it, `ValueError:
    invalid literal for int() with base 10: '90a'` (the ARM+CUDA wheels for Grace Hopper list
    sm_90a). Only a build log states it.

    ## Why it matters
    With no `TORCH_CUDA_ARCH_LIST` set the module builds its own list from the toolkit, and a
    name it cannot parse (an arch-specific `9.0a`, or an architecture newer than the module's
    release) stops the build before anything compiles, whatever the GPU.

    ## Example
    `pip install metatensor-torch --no-binary=metatensor-torch` with CUDA 12.1 and no GPU
    visible: `Autodetected CUDA architecture(s): 5.0;8.0;8.6;8.9;9.0;9.0a`, then `Unknown CUDA
    Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS`.

    ## Fix
    Name the architectures yourself, as plain X.Y numbers: `export TORCH_CUDA_ARCH_LIST="8.0
    8.6 8.9 9.0"` (the autodetected list without the name it refused; at least the GPUs the
    build must run on), then build again; an architecture the module does not know at all
    needs a torch release whose CMake knows it.

    ## References
    - https://github.com/pytorch/pytorch/issues/113948
    - https://github.com/pytorch/pytorch/blob/main/cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake
    - https://github.com/pytorch/pytorch/issues/144037
    - pytorch/pytorch torch/utils/cpp_extension.py (_get_cuda_arch_flags: int(arch.split('_')[1]))
    """
    raise Skip("only a build log states the architecture list CMake refused", "log.ptx_target")


# cpp_extension's int() of an arch-specific name from torch.cuda.get_arch_list() ('90a')
_SUFFIXED = lazy(r"invalid literal for int\(\) with base 10: '((?:9[0-9]|1[0-9]{2})[af])'")


@from_log("TOR192")
def torch_cmake_unknown_arch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The refused name from the line and the autodetected list where the log prints it: the
    fix sets TORCH_CUDA_ARCH_LIST to that list without the refused name, as plain X.Y."""
    suffixed = _SUFFIXED.search(line.text)
    if suffixed is not None:
        return _builder_suffix_hit(facts, line, suffixed.group(1))
    found = re.search(r"Unknown CUDA Architecture Name (\S+) in", line.text)
    if found is None:
        raise NotStated(f"line {line.line} names no architecture", "log.ptx_target")
    refused = found.group(1)
    plain = re.match(r"[0-9]+\.[0-9]+", refused)
    detected = [
        a.strip()
        for a in re.split(r"[;\s]+", line.stated.get("cuda_arch_detected") or "")
        if a.strip()
    ]
    keep = [a for a in dict.fromkeys(detected) if re.fullmatch(r"[0-9]+\.[0-9]+", a)]
    if not keep and plain is not None:
        keep = [plain.group(0)]
    value = " ".join(keep) if keep else "<the GPUs' X.Y, e.g. 8.0 8.6 9.0>"
    source = "the autodetected list without it" if detected else "the plain X.Y of the name"
    return Hit(
        f"torch's CMake cannot parse the CUDA architecture name {refused} (line {line.line}) in "
        "the list it built for itself (TORCH_CUDA_ARCH_LIST unset): the configure step stops",
        evidence={"line": line.line, "refused": refused, "detected": detected or None},
        fix=fix(
            f'Set the list yourself and build again: `export TORCH_CUDA_ARCH_LIST="{value}"` '
            f"({source}; keep the GPUs the build must run on); an architecture the module does "
            "not know at all needs a torch release whose CMake knows it",
            "manual",
            manual(f'export TORCH_CUDA_ARCH_LIST="{value}"'),
        ),
    )


def _other_arch_hit(
    facts: Facts, line: LogLine, what: str, arch: Version, why: str | None = None
) -> Hit:
    """ptxas refused an instruction only another architecture's arch-specific target has
    (Hopper's wgmma on sm_120, `cuda/ptx_instructions.toml`): the kernel is that
    architecture's, compiled for this target too; no spelling of the target takes it, so the
    build must leave that architecture's kernels out of this target's (the architecture list
    the GPUs' own, or the project's option for those kernels). Also where the kernel's file
    names another architecture (``sm90_q64n32.ptx`` built for sm_120) and no GPU here is it."""
    found = _REFUSED.search(line.text)
    digits = found.group("digits") if found else ""
    target = f"sm_{digits}"
    own = f"{arch.major}{arch.minor}"
    with contextlib.suppress(Skip):
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
        if ccs:
            digits = ";".join(f"{c.major}{c.minor}" for c in ccs)
    torch_list = ";".join(f"{d[:-1]}.{d[-1]}" for d in digits.split(";") if d)
    why = why or f"the instruction exists only on sm_{own}a; no spelling of {target} has it"
    return Hit(
        f"ptxas refused '{what}' on {target} (line {line.line}): {why}, so the kernel is an "
        f"sm_{own} one compiled for {target} as well",
        evidence={"line": line.line, "instruction": what, "target": target, "kernel_arch": own},
        fix=fix(
            f"Build for the GPUs' own architectures only, without {arch.major}.{arch.minor}: "
            f'TORCH_CUDA_ARCH_LIST="{torch_list}" (torch extensions), CMake '
            f"`-DCMAKE_CUDA_ARCHITECTURES={digits}`; the sm_{own} kernels belong only in an "
            f"sm_{own}a build (the project's option for them, on a GPU of that architecture)",
            "manual",
            manual(
                f'TORCH_CUDA_ARCH_LIST="{torch_list}" pip install --no-build-isolation '
                "--no-cache-dir --force-reinstall <the package>"
            ),
            manual(f'cmake -B build -DCMAKE_CUDA_ARCHITECTURES="{digits}"'),
        ),
    )


def _builder_suffix_hit(facts: Facts, line: LogLine, name: str) -> Hit:
    """torch's extension builder parsed torch's own architecture list (TORCH_CUDA_ARCH_LIST
    unset) and met an arch-specific name it cannot read as a number ('sm_90a' of the ARM+CUDA
    wheels): setting the list, the GPUs' own X.Y (else the name's), skips that parse
    (pytorch/pytorch#144037: 'exporting TORCH_CUDA_ARCH_LIST=9.0' fixes it)."""
    digits = name[:-1]
    value = f"{int(digits[:-1])}.{digits[-1]}"
    with contextlib.suppress(Skip):
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
        if ccs:
            value = ";".join(f"{c.major}.{c.minor}" for c in ccs)
    return Hit(
        f"torch's extension builder cannot parse 'sm_{name}' (line {line.line}): with "
        "TORCH_CUDA_ARCH_LIST unset it reads the torch build's own architecture list, "
        "torch.cuda.get_arch_list(), and this build lists an arch-specific name",
        evidence={"line": line.line, "refused": f"sm_{name}"},
        fix=fix(
            f'Set the list yourself and build again: `export TORCH_CUDA_ARCH_LIST="{value}"` '
            "(the GPUs' own architectures as plain X.Y; the builder then does not parse torch's "
            "list); torch releases whose builder reads the suffix need no setting",
            "manual",
            manual(f'export TORCH_CUDA_ARCH_LIST="{value}"'),
        ),
    )
