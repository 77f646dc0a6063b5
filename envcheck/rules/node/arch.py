"""The arch family: what a GPU's compute capability rules out, for any library.

CUD150: a compiler (nvcc, ptxas: the CUDA toolkit's, Triton's bundled one) that does not know
the architecture it is asked to compile for, read against the ``[[sm]]`` table
(matrices/cuda/drivers.toml: the first and last CUDA that compile each sm_XY). CUD151: a
library's kernel, op or dtype refused below its compute-capability floor, read against the
``[[arch_floor]]`` table (matrices/packages/arch_floors.toml: each library's own check, found
by the text it prints), with the GPU's compute capability where the line or the node states
it (at or above the floor rules the cause out, or names what the same text means there)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix, major_minor
from envcheck.matrix.schema import ArchFloor, SmSupport
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.choose import sm
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.arch_list_targets import no_gpu_has, node_gpu_archs, older_than_table


def _cc(text: str | None) -> Version | None:
    """A compute capability as a line writes it: 8.9, '8, 9' (xformers' tuple), sm_89, sm_120a,
    compute_90."""
    if not text:
        return None
    value = text.strip().strip("()").lower()
    hexa = re.fullmatch(r"0x([0-9a-f]{3,4})", value)  # TensorRT's 'Unsupported SM: 0x601' (6.1)
    if hexa:
        packed = int(hexa.group(1), 16)
        return Version(f"{packed >> 8}.{packed & 0xFF}")
    pair = re.fullmatch(r"([0-9]+)\s*[.,]\s*([0-9]+)", value)
    if pair:
        return Version(f"{pair.group(1)}.{pair.group(2)}")
    digits = re.fullmatch(r"(?:(?:sm|compute)_?)?([0-9]+)[af]?", value)
    if digits and len(digits.group(1)) >= 2:
        number = digits.group(1)
        return Version(f"{int(number[:-1])}.{number[-1]}")
    return None


def sm_support(matrix: Matrix, target: str) -> SmSupport | None:
    """The ``[[sm]]`` entry of a compiler target: sm_90a as written, else its base sm_90;
    compute_80 as sm_80."""
    name = target.strip().lower().replace("compute_", "sm_")
    found = matrix.sm(name)
    if found is None:
        found = matrix.sm(re.sub(r"[af]$", "", name))
    return found


def _nvcc(facts: Facts, line: LogLine | None) -> Version | None:
    stated = line.stated.get("nvcc_version") if line is not None else None
    if stated is None:
        with contextlib.suppress(Skip):
            toolkit = facts.system().nvcc
            stated = toolkit.version if toolkit is not None else None
    try:
        return major_minor(Version(stated)) if stated else None
    except InvalidVersion:
        return None


def _toolkit_problem(support: SmSupport, cuda: Version | None) -> str | None:
    """Why a toolkit of release ``cuda`` cannot compile for ``support`` (None: it can; unknown
    release: both bounds are named)."""
    if cuda is not None and cuda < support.first_cuda:
        return f"CUDA {cuda} predates {support.arch} (first compiled by CUDA {support.first_cuda})"
    if cuda is not None and support.last_cuda is not None and cuda > support.last_cuda:
        return f"CUDA {cuda} dropped {support.arch} (the last CUDA that compiles it is {support.last_cuda})"
    if cuda is not None:
        return None
    last = f", last by CUDA {support.last_cuda}" if support.last_cuda else ""
    return f"{support.arch} is compiled first by CUDA {support.first_cuda}{last}"


def _toolkit_fix(support: SmSupport, cuda: Version | None) -> str:
    # TORCH_CUDA_ARCH_LIST's spelling: sm_120 -> 12.0, sm_90a -> 9.0a
    found = re.fullmatch(r"sm_([0-9]+)([0-9])([af]?)", support.arch)
    cc = f"{found.group(1)}.{found.group(2)}{found.group(3)}" if found else support.arch
    if support.last_cuda is not None and (cuda is None or cuda > support.last_cuda):
        release = str(support.last_cuda)
        use = f"the CUDA {release} toolkit (the last that compiles {support.arch})"
        triton = ""
    else:
        release = str(support.first_cuda)
        use = f"the CUDA {release} toolkit or newer (the first that compiles {support.arch})"
        newer = (
            f"triton {support.first_triton} or newer (`pip install -U 'triton>="
            f"{support.first_triton}'`, or the torch release that pins it), whose bundled ptxas "
            f"compiles {support.arch}"
            if support.first_triton is not None
            else "a newer triton (pip install -U triton, or the torch build that pins it)"
        )
        triton = (
            f"; for Triton's bundled ptxas (torch.compile, vLLM, Unsloth kernels): {newer}, or "
            f"export TRITON_PTXAS_PATH=/usr/local/cuda-{release}/bin/ptxas (a toolkit's ptxas "
            "that knows it)"
        )
    home = f"/usr/local/cuda-{release}"
    return (
        f"Compile with {use}: install it and export CUDA_HOME={home} PATH={home}/bin:$PATH "
        f"(conda: conda install -c nvidia cuda-toolkit={release}){triton}; or leave "
        f"{support.arch} out of the targets (TORCH_CUDA_ARCH_LIST without {cc}, "
        f"CMAKE_CUDA_ARCHITECTURES without {support.arch[3:]}, the build's -gencode / "
        "--gpu-architecture list)"
    )


@rule("CUD150", "toolkit-does-not-know-arch", Severity.ERROR)
def toolkit_does_not_know_arch(facts: Facts) -> Iterable[Hit]:
    """The CUDA toolkit (nvcc, ptxas) is older than a GPU architecture it has to compile for, or has dropped it

    ## What it checks
    The toolkit's release (nvcc) against each GPU's architecture, and in `triage` the target a
    compiler refused (`nvcc fatal : Unsupported gpu architecture 'compute_120'`, `ptxas fatal :
    Value 'sm_120a' is not defined for option 'gpu-name'`, from any build or JIT: torch
    extensions, Triton, DeepSpeed, FlashInfer), both against the `[[sm]]` table of
    matrices/cuda/drivers.toml: the first CUDA that compiles each sm_XY and, for dropped
    architectures, the last.

    ## Why it matters
    A compiler that predates the architecture cannot emit code for it, whatever torch or the
    driver support: extension builds and JIT compilers (Triton's ptxas, FlashInfer, DeepSpeed
    ops) fail on the GPU, often only at the first kernel launch. A toolkit newer than an
    architecture's last release (Kepler after CUDA 11.8, Maxwell to Volta after 12.x) fails the
    same way for old GPUs.

    ## Example
    An RTX 5090 (sm_120) with nvcc 12.4: `nvcc fatal : Unsupported gpu architecture
    'compute_120'` (sm_120 needs CUDA 12.8).

    ## Fix
    Compile with a toolkit that knows the architecture (CUDA_HOME / PATH; for Triton a release
    whose bundled ptxas is new enough, or TRITON_PTXAS_PATH), or leave the architecture out of
    TORCH_CUDA_ARCH_LIST / the -gencode list.

    ## References
    - https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html
    - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list
    """
    cuda = _nvcc(facts, None)
    if cuda is None:
        raise Skip("the CUDA toolkit's (nvcc's) release is unknown", "system.nvcc")
    hits = []
    seen: set[str] = set()
    for gpu in facts.gpus():
        cc = facts.compute_capability(gpu)
        support = facts.matrix.sm(sm(cc))
        if support is None or support.arch in seen:
            continue
        problem = _toolkit_problem(support, cuda)
        if problem is None:
            continue
        seen.add(support.arch)
        step = _toolkit_fix(support, cuda)
        hits.append(
            Hit(
                f"nvcc is CUDA {cuda}; {gpu.name or 'the GPU'} is {support.arch}: {problem}; "
                "extension builds and JIT compilers for this GPU fail with this toolkit",
                evidence={"nvcc": str(cuda), "arch": support.arch, "gpu": gpu.name},
                fix=fix(step, "manual", manual(step)),
                # only a build or JIT compiler uses the toolkit: on a node it is a warning
                severity=Severity.WARNING,
            )
        )
    return hits


@from_log("CUD150")
def toolkit_refused_arch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The target nvcc or ptxas refused, from the `[[sm]]` table: the CUDA that first compiles
    it (and the last, for dropped architectures), against the toolkit's release where the log
    or the node states it (a release that compiles it rules the cause out)."""
    target = line.stated.get("ptx_target")
    if not target:  # NVRTC's 'invalid value for --gpu-architecture' names none: the GPU's own
        _, cc = _line_gpu(facts, line)
        if cc is None:
            raise NotStated(
                f"line {line.line} does not name the target architecture, and the GPU is unknown",
                "log.ptx_target",
            )
        target = sm(cc)
    support = sm_support(facts.matrix, target)
    if support is None:
        cc = _cc(target)
        if cc is None or no_gpu_has(facts.matrix, cc):
            # no NVIDIA GPU has it (or it is not spelled as one): no toolkit is too old for
            # it, the build's flags are wrong (CUD157)
            return None
        gpus = node_gpu_archs(facts).ccs
        if older_than_table(facts.matrix, cc) and gpus and cc not in gpus:
            # an old GPU's architecture no GPU here has: the flags are wrong (CUD157), no
            # toolkit is to be installed for it
            return None
        raise NotStated(
            f"the matrix's [[sm]] table does not know {target} (line {line.line})", "log.ptx_target"
        )
    lowered = line.text.lower()
    compiler = (
        "ptxas"
        if "ptxas" in lowered
        else "NVRTC"
        if "nvrtc" in lowered
        else "Triton's LLVM"
        if "recognized processor" in lowered
        else "nvcc"
    )
    cuda = _nvcc(facts, line)
    if compiler == "NVRTC":  # torch's runtime compiler comes with torch's CUDA
        cuda = None
        with contextlib.suppress(Skip):
            cuda = facts.torch_cuda()
    problem = _toolkit_problem(support, cuda)
    if problem is None:
        return None
    step = _toolkit_fix(support, cuda)
    if (
        compiler in ("ptxas", "Triton's LLVM")
        and support.first_triton is not None
        and (support.last_cuda is None or (cuda is not None and cuda < support.first_cuda))
    ):
        # ptxas refusing a GPU's own target is, in most logs, the one a Triton release bundles
        # (Triton passes --gpu-name=sm_XY[a]): the Triton release that knows it comes first
        pinned = _torch_pinning_triton(facts, support)
        step = (
            f"Install triton {support.first_triton} or newer, whose bundled ptxas compiles "
            f"{support.arch}: `pip install -U 'triton>={support.first_triton}'` (or the torch "
            f"release that pins it{pinned}); else " + step[:1].lower() + step[1:]
        )
    if compiler == "NVRTC":
        step = (
            f"Install a torch build for CUDA >= {support.first_cuda} (NVRTC, the "
            f"nvidia-cuda-nvrtc wheel, comes with torch's CUDA and compiles {support.arch} from "
            "that release on)"
        )
    return Hit(
        f"{compiler} refused {target} (line {line.line}): {problem}"
        + ("" if cuda is not None else "; the toolkit in use is older"),
        evidence={
            "line": line.line,
            "target": target,
            "first_cuda": str(support.first_cuda),
            "last_cuda": str(support.last_cuda) if support.last_cuda else None,
            "toolkit": str(cuda) if cuda else None,
        },
        fix=fix(step, "manual", manual(step)),
    )


def _torch_pinning_triton(facts: Facts, support: SmSupport) -> str:
    """', torch X: `pip install torch==X --index-url ...`': the oldest torch release whose
    wheels pin a Triton at or above the first that compiles the architecture (the torch table's
    pins), from the index of a CUDA variant that has the architecture's kernels."""
    from envcheck.rules.choose import torch_choices

    first = support.first_triton
    if first is None:
        return ""
    for release in sorted(facts.matrix.torch_releases, key=lambda r: r.version):
        pin = release.pins.get("triton")
        exact = [Version(s.version) for s in pin or () if s.operator == "=="]
        if not exact or exact[0] < first:
            continue
        cc = _cc(support.arch)
        variants = [
            c.variant
            for c in torch_choices(facts.matrix, ccs=[cc] if cc else [], releases=[release])
        ]
        variant = variants[-1] if variants else release.pypi_default
        url = facts.matrix.torch_index_url(variant) if variant else None
        where = f" --index-url {url}" if url else ""
        return (
            f", torch {release.version} (pins triton {exact[0]}): `pip install "
            f"torch=={release.version}{where}`"
        )
    return ""


@rule("CUD151", "below-library-arch-floor", Severity.ERROR)
def below_arch_floor(facts: Facts) -> Iterable[Hit]:
    """A library refused a kernel, op or dtype on this GPU: its compute capability is below the library's floor

    ## What it checks
    In `triage`, a library's own architecture check (Triton's `type fp8e4nv not supported in
    this architecture`, `num_ctas > 1 requires NVIDIA SM90+`, flash-attn's `bfloat16 is only
    supported on Ampere GPUs or newer`, FlashInfer's `requires GPUs with sm75 or higher`,
    xformers' `requires device with capability > (8, 0)`), found in the `[[arch_floor]]` table
    of matrices/packages/arch_floors.toml by the text it prints, against the GPU's compute
    capability from the line or the node. On a node: an installed package none of whose kernels
    run below its floor (FlashInfer below sm_75) on GPUs that are all older; which kernels and
    dtypes a job uses otherwise only its log states.

    ## Why it matters
    These checks fire at the first kernel launch, after minutes of model loading, and the fix is
    not a reinstall: the GPU lacks the hardware (fp8 tensor cores arrive with Ada, sm_89;
    bf16 with Ampere, sm_80; thread-block clusters with Hopper), so the job needs another dtype,
    another kernel path, or another GPU.

    ## Example
    `type fp8e4nv not supported in this architecture. The supported fp8 dtypes are
    ('fp8e4b15', 'fp8e5')` on an A100 (sm_80) running an FP8 checkpoint.

    ## Fix
    Run the feature on a GPU at or above the floor, or use what this GPU has: bf16/fp16 instead
    of fp8 below sm_89, fp16 instead of bf16 below sm_80, SDPA instead of flash-attn below
    Ampere, num_ctas=1 below Hopper.

    ## References
    - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities
    - https://github.com/triton-lang/triton/blob/main/third_party/nvidia/backend/compiler.py
    """
    gpus = [(facts.compute_capability(g), g.name or f"GPU {g.index}") for g in facts.gpus()]
    hits = []
    for entry in facts.matrix.arch_floors:
        floor = entry.min_compute_capability
        if not entry.whole_package or floor is None or facts.version(entry.package) is None:
            continue
        below = [f"{name} ({sm(cc)})" for cc, name in gpus if cc < floor]
        if not below or len(below) < len(gpus):
            continue
        hits.append(
            Hit(
                f"{entry.package} {facts.version(entry.package)} is installed, but "
                f"{entry.feature} need compute capability {floor}; every GPU here is older: "
                + ", ".join(dict.fromkeys(below)),
                evidence={"package": entry.package, "floor": str(floor), "gpus": below},
                fix=_fix(entry.fix),
                severity=Severity.WARNING,
            )
        )
    return hits


def _line_gpu(facts: Facts, line: LogLine) -> tuple[str | None, Version | None]:
    """The GPU's name and compute capability: the line's, else the node's lowest."""
    name = line.stated.get("gpu_name")
    cc = _cc(line.stated.get("gpu_cc") or line.stated.get("gpu_sm"))
    if cc is None:
        match = re.search(r"your GPU has capability \(([0-9]+), ?([0-9]+)\)", line.text)
        cc = _cc(f"{match.group(1)}.{match.group(2)}") if match else None
    if cc is None and name:  # a GPU the line names by model: the GPU table's capability
        model = facts.matrix.gpu_model(name)
        cc = model.compute_capability if model is not None else None
    if cc is not None:
        return name, cc
    with contextlib.suppress(Skip):
        known = []
        for gpu in facts.gpus():
            with contextlib.suppress(Skip):
                known.append((facts.compute_capability(gpu), gpu.name))
        if known:
            low, low_name = min(known, key=lambda k: k[0])
            return name or low_name, low
    return name, None


# a line that states a floor as a note, not a refusal: a warning, a fallback the program took,
# a --help text or a comment (healthy nodes print these)
_NOTE = lazy(
    r"(?i)\b(?:warn(?:ing)?|info|note|notice|hint|tip|skip(?:ping|ped)?|fall(?:ing|s)?[ -]?back"
    r"|will use|instead|disabl(?:e|ed|ing)|usage|optional|recommended)\b|^\s*(?:-{1,2}[A-Za-z]|#)"
)


# refusals that name no GPU and mean opposite things on either side of the entry's floor
# (TensorRT 7.x's bare 'Unsupported SM.': a release that dropped the GPU, or one that predates
# it): confirmed only where the node states the GPU (signatures/arch_floors.toml)
_GPU_DECIDES_DIRECTION = frozenset({"tensorrt-unsupported-sm-bare"})


def _only_decides(facts: Facts, line: LogLine) -> bool:
    """Whether the line's signature leaves CUD151 to the line's facts (``decides``) instead of
    establishing it (``confirms``): a statement of a floor with no error marker."""
    sig = next((s for s in facts.matrix.signatures if s.id == line.signature), None)
    return sig is not None and "CUD151" in sig.decides and "CUD151" not in sig.confirms


def _stated_floor(facts: Facts, line: LogLine) -> Version | None:
    """The floor the line states: a compute capability in any writing (8.0, sm_75, '(8, 0)',
    75), else an architecture name the GPU table knows ('Ampere GPUs or newer')."""
    from envcheck.rules.node.arch_names import architecture_floor

    stated = _cc(line.stated.get("min_cc"))
    if stated is not None:
        return stated
    named = line.stated.get("min_arch")
    return architecture_floor(facts.matrix, named) if named else None


@from_log("CUD151")
def arch_floor_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The library check the line's text belongs to, its floor (from the table, or stated on
    the line), and the GPU's compute capability where known: below the floor confirms it; at
    or above it rules it out, unless the table says what the same text means there. A wording
    the table does not know is read by the feature it names (the entry's ``keywords``: its
    fallback on this GPU) and the floor it states, in any writing."""
    from envcheck.rules.node.arch_names import gpus_at_or_above

    if _only_decides(facts, line) and _NOTE.search(line.text):
        raise NotStated(
            f"line {line.line} states the floor as a note (a warning, a fallback taken, a help "
            "text), not as the library's refusal",
            "log.refusal",
        )
    entry = facts.matrix.arch_floor(line.text)
    stated = _stated_floor(facts, line)
    if entry is None:
        return _stated_floor_hit(facts, line, facts.matrix.arch_feature(line.text), stated)
    floor = entry.min_compute_capability or stated
    if floor is None:
        raise NotStated(f"line {line.line} does not state {entry.package}'s floor", "log.min_cc")
    built = _build_target(line, entry.package, floor)
    if built is not None:
        return built
    name, cc = _line_gpu(facts, line)
    if cc is None and line.signature in _GPU_DECIDES_DIRECTION:
        raise NotStated(
            f"line {line.line} names no GPU, and {entry.package}'s refusal means a release that "
            "dropped the GPU below its floor and one that predates it above: the GPU decides",
            "gpu",
        )
    gpu = f"{name or 'the GPU'}" + (f" ({sm(cc)}, compute capability {cc})" if cc else "")
    evidence = {
        "line": line.line,
        "package": entry.package,
        "floor": str(floor),
        "gpu": name,
        "compute_capability": str(cc) if cc else None,
    }
    if cc is not None and cc >= floor:
        if entry.at_or_above is None:
            return None
        return Hit(
            f"{entry.package} refused {entry.feature} on {gpu} (line {line.line}), which meets "
            f"its floor {floor}: {entry.at_or_above}",
            evidence=evidence,
            fix=_fix(entry.at_or_above_fix or entry.fix),
        )
    below = "is below" if cc is not None else "is, by the library's own check, below"
    meets = gpus_at_or_above(facts.matrix, floor)
    return Hit(
        f"{entry.package}: {entry.feature} needs compute capability {floor} or newer "
        f"(sm_{str(floor).replace('.', '')}); {gpu} {below} it (line {line.line})",
        evidence=evidence,
        fix=_fix(f"{entry.fix}; GPUs at or above {floor}: {meets}" if meets else entry.fix),
    )


def _stated_floor_hit(
    facts: Facts, line: LogLine, feature: tuple[ArchFloor, str] | None, stated: Version | None
) -> Hit | None:
    """A library's refusal in a wording the table does not know: the floor the line states (or
    the feature entry's own), the GPU the line or the node names, and the fix: this GPU's
    fallback for the feature the line names, and the GPUs that meet the floor."""
    from envcheck.rules.node.arch_names import gpus_at_or_above

    entry, word = feature if feature is not None else (None, None)
    floor = stated or (entry.min_compute_capability if entry is not None else None)
    if floor is None:
        raise NotStated(
            f"line {line.line} states no compute capability the check requires", "log.min_cc"
        )
    name, cc = _line_gpu(facts, line)
    if cc is not None and cc >= floor:
        # the GPU meets the floor the line states: not this cause (what an entry's own message
        # means above its floor, at_or_above, is that wording's, not any line's naming it)
        return None
    what = f"the library's check for {word}" if word else "the library's check"
    gpu = f"{name or 'the GPU'}" + (f" ({sm(cc)}, compute capability {cc})" if cc else "")
    below = "is below it" if cc is not None else "is below it, by the library's own check"
    fallback = (entry.fallback or entry.fix) if entry is not None else None
    meets = gpus_at_or_above(facts.matrix, floor)
    low = f"{floor.major}.{floor.minor}"
    text = (
        f"On a GPU below compute capability {low} ({sm(floor)}): {fallback}; or run it on "
        f"a GPU at or above {low}: {meets}"
        if fallback
        else f"Run it on a GPU at or above compute capability {low} ({sm(floor)}): {meets}; "
        "on this GPU, turn the feature off or use the path the library offers below its floor "
        "(another dtype, attention kernel or quantization)"
    )
    return Hit(
        f"{what} needs compute capability {low} or newer ({sm(floor)}, as line {line.line} "
        f"states); {gpu} {below}",
        evidence={
            "line": line.line,
            "package": entry.package if entry is not None else None,
            "floor": low,
            "gpu": name,
            "compute_capability": str(cc) if cc else None,
        },
        fix=_fix(text),
    )


# the PTX file ptxas assembles names the target it compiles for ('..._kernel.compute_60.ptx')
_PTX_FILE_TARGET = lazy(r"\.(?:compute|sm)_(?P<digits>[0-9]{2,3})[af]?\.ptx\b")


def _build_target(line: LogLine, package: str, floor: Version) -> Hit | None:
    """A build's ptxas refusing an instruction in a PTX file named for a target below the
    floor, with no GPU the log names: the target is the build's architecture list (a list that
    reaches below the kernel's floor, a wheel built for every architecture), not the GPU; the
    fix leaves the architectures below the floor out of the build."""
    found = _PTX_FILE_TARGET.search(line.text)
    if found is None or any(line.stated.get(k) for k in ("gpu_name", "gpu_cc", "gpu_sm")):
        return None
    target = _cc(found.group("digits"))
    if target is None or target >= floor:
        return None
    low = f"{floor.major}.{floor.minor}"
    return Hit(
        f"{package}: the kernel needs compute capability {floor} or newer, and the build compiles "
        f"it for {sm(target)} as well (line {line.line}, the PTX file for {sm(target)}): the "
        "build's architecture list reaches below the kernel's floor",
        evidence={"line": line.line, "package": package, "floor": str(floor), "target": sm(target)},
        fix=fix(
            f"Build only for architectures at or above {low} (the GPUs it will run on): "
            f'`TORCH_CUDA_ARCH_LIST="{low}"` (torch extensions; add the others you need, each '
            f"{low} or newer), CMake `-DCMAKE_CUDA_ARCHITECTURES={floor.major}{floor.minor}`; or "
            f"guard the kernel so it is compiled only for {sm(floor)} and newer",
            "manual",
            manual(
                f'TORCH_CUDA_ARCH_LIST="{low}" pip install --no-build-isolation --no-cache-dir '
                "<the package>"
            ),
        ),
    )


# a command a fix's prose quotes in backticks (`pip install -U ...`, `export X=1`) and an
# environment setting it names bare (VLLM_USE_FLASHINFER_SAMPLER=0)
_COMMAND = lazy(
    r"`((?:pip|pip3|uv|conda|mamba|export|unset|sudo|apt|apt-get|python[0-9.]*|cmake|git)\s[^`]+"
    r"|[A-Z][A-Z0-9_]{2,}=[^`\s]+(?:\s[^`]+)?)`"
)
_SETTING = lazy(r"(?<![\w`/.=-])([A-Z][A-Z0-9_]{2,}=[A-Za-z0-9_.:+-]+)")


def _fix(text: str) -> Fix:
    """A fix whose summary is the whole prose and whose commands are only the commands it
    quotes (or, where it quotes none, the environment settings it names, as exports): a
    command line never repeats the prose (it prints as one line of its own)."""
    commands = [m.group(1) for m in _COMMAND.finditer(text)]
    if not commands:
        commands = [f"export {m.group(1)}" for m in _SETTING.finditer(text)]
    return fix(text, "manual", *(manual(c) for c in dict.fromkeys(commands)))
