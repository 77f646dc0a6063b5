"""TOR101 and TOR102 from a log line: torch's own warning that a GPU's architecture is not in
its build (`NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch
installation`) establishes TOR101, the finding naming the builds that have the kernels;
flash-attn's 'FlashAttention only supports Ampere GPUs or newer' establishes TOR102."""

from __future__ import annotations

import dataclasses
import re

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import public
from envcheck.model.finding import Fix
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.choose import arch_list, covers, sm
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.abi import (
    names_other_package,
    old_abi_first,
    owning_distribution,
    pre_cxx11_torch_symbol,
)
from envcheck.rules.node.abi_unnamed import unnamed_file
from envcheck.rules.node.arch import _cc
from envcheck.rules.node.arch_list_targets import list_reading
from envcheck.rules.node.rocm_targets import ROCM_SIGNATURES, rocm_arch_hit
from envcheck.rules.node.torch_build import _upgrade_fix, gpu_arch_missing
from envcheck.rules.node.torch_cpu import JETSON_TORCH_STEPS, _jetson_torch, jetson_gpu
from envcheck.rules.node.trace_frames import TORCH_OWN, check_site_package, frame_package


@from_log("TOR101")
def arch_missing_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """torch's own warning (below), or CUDA's 'no kernel image is available' (``_no_image``);
    HIP's invalid device function and missing code object on an AMD GPU (``rocm_targets``)."""
    if line.signature in ROCM_SIGNATURES:
        return rocm_arch_hit(line)
    if line.signature == "cpp-extension-unknown-arch":
        return _extension_builder(facts, line)
    if line.signature != "no-kernel-image":
        return _warned(facts, line)
    checked = check_site_package(facts, line)
    if checked is not None and facts.matrix.extension(checked) is not None:
        raise NotStated(
            f"the CUDA check that reported the kernel without an image is {checked}'s own "
            f"source ({line.stated.get('cuda_program')}): the kernel is {checked}'s; whether "
            "torch's own build also lacks the GPU's architecture this line does not show",
            "torch",
        )
    known = _no_image(facts, line)
    if known is not None:
        return known[0]
    frame = frame_package(facts, line)
    if frame in TORCH_OWN:
        return _warned(facts, line, f"'no kernel image' raised in {frame}'s own code")
    if frame is None:  # no frame, or a project's own: an installed package's may be compiled
        lacking = _default_builds_lack(facts, line)
        if lacking is not None:
            return _warned(facts, line, lacking)
        jetson = jetson_gpu(facts, line)
        if jetson is not None:
            return _warned(
                facts,
                line,
                f"no traceback frame or check site names an extension, and on a Jetson "
                f"({jetson}) only NVIDIA's Jetson torch builds have kernels for its GPU",
            )
    # the open cause's fix: the rule's own for the facts known (the GPU's build, where stated)
    raise NotStated(
        "whether the kernel without an image was torch's or an extension's is not stated (the "
        "node's torch is not known, and the traceback's last frame above the error is not "
        "torch's)",
        "torch",
    )


# the share of torch's PyPI-default builds without the GPU's architecture from which a bare
# 'no kernel image' on a GPU newer than most of them is read as torch's: an architecture torch's
# default wheels added late (Blackwell's sm_100/sm_120: none before 2.7, 2.7's cu126 default
# neither); sm_75-sm_89 are in every one, sm_90 missing only from the cu117 defaults of 1.13-2.0
_LACKING_SHARE = 1 / 3
# torch's own source directories: a check site there is torch's kernel
_TORCH_SOURCE = lazy(r"(?:^|[/\\])(?:aten|c10|THC|THCUNN|caffe2)[/\\]")


def _default_builds_lack(facts: Facts, line: LogLine) -> str | None:
    """Why a 'no kernel image' that no extension claims (no check site, no frame of a compiled-
    ops package) is torch's own, from the GPU alone: its architecture is newer than torch's
    default builds up to a recent release (missing from at least a third of the PyPI-default
    builds the matrix knows, the newest having it). An extension alone lacking the kernel needs
    a torch that has the GPU's, which a GPU that new most often does not run yet (Blackwell GPUs
    on a cu126 or pre-2.7 torch: FramePack#267, ComfyUI#7380). None where the GPU is not known,
    where every default build but a few old ones has its architecture (an A100's or H100's
    'no kernel image' is an extension's: CUD153 stays open for the node's facts to decide), and
    for a GPU whose architecture the newest builds dropped (a Pascal GPU's thread may well run
    the old torch that had it: the torch release decides, mish-cuda#10)."""
    source = line.stated.get("cuda_program")
    if source and not _TORCH_SOURCE.search(source):
        return None  # a native program's own check site (ggml-cuda.cu): CUD153 reads it
    try:
        ccs, _ = _stated_gpus(facts, line)
    except Skip:
        return None
    if not ccs:
        return None
    builds = []
    for release in sorted(facts.matrix.torch_releases, key=lambda r: r.version):
        archs = arch_list(release, release.pypi_default) if release.pypi_default else None
        if archs is not None and archs[1]:
            builds.append((release, archs[0]))
    lacking = [r for r, archs in builds if not all(covers(archs, cc) for cc in ccs)]
    if not lacking or lacking[-1] is builds[-1][0] or len(lacking) < _LACKING_SHARE * len(builds):
        return None
    gpus = ", ".join(sm(cc) for cc in ccs)
    return (
        f"no traceback frame or check site names an extension, and {gpus} is missing from the "
        f"default builds of {len(lacking)} of the {len(builds)} torch releases the matrix knows "
        f"(up to {lacking[-1].version}): the kernel without an image is most likely torch's"
    )


def _extension_builder(facts: Facts, line: LogLine) -> Hit | None:
    """torch's extension builder refusing an architecture: TOR101 only where the value is a
    GPU's own (of the node, or, the GPUs unknown, a real GPU's with no list of several
    architectures stated); a value that came from TORCH_CUDA_ARCH_LIST is CUD157's."""
    if list_reading(facts, line) == "list":
        return None
    entry = re.sub(r"[af]?(\+PTX)?$", "", (line.stated.get("build_arch") or "").strip())
    stated = dict(line.stated, gpu_cc=entry)
    return _warned(facts, dataclasses.replace(line, stated=stated), "torch's extension builder")


def _no_image(facts: Facts, line: LogLine) -> tuple[Hit | None] | None:
    """'no kernel image is available' where the node's torch build is known: torch's cause
    where it lacks a GPU's architecture (the node rule's finding), not where it covers every
    GPU (an extension's, CUD153); None where the node's torch is not known. Then the
    traceback decides: its last frame above the error in torch's own code means the kernel
    without an image was torch's (a launch fails at once, so an extension's kernel would
    have failed in the extension's frame: CUD153's reading of the same line)."""
    try:
        if facts.torch_arch_stated() is None and facts.torch_cuda() is None:
            return None
        hits = list(gpu_arch_missing(facts))
    except Skip:
        return None
    return (hits[0] if hits else None,)


def _warned(facts: Facts, line: LogLine, why: str = "torch's own warning") -> Hit | None:
    """The GPU the warning names (its compute capability, read from the node or the line) has
    no kernels in the installed torch: the fix is the closest torch build the matrix knows with
    kernels for it, on the index of its CUDA variant (the driver's CUDA bound, where known); a
    GPU older than the build (torch's 'too old' warning, or below the minimum it states) gets
    the newest older build, and one no release has, a source build for its architecture. Where
    torch states its range and the GPU is above it within the newest major (a GB10, 12.1, on
    a build up to 12.0), the major's kernels run: no cause."""
    suggested = line.stated.get("cuda_suggested")
    try:
        ccs, names = _stated_gpus(facts, line)
    except Skip:
        if suggested is None:
            raise
        return _suggested_hit(facts, line, suggested)
    low, high = _cc(line.stated.get("min_cc")), _cc(line.stated.get("max_cc"))
    if high is not None and ccs and all(cc.major == high.major and cc >= high for cc in ccs):
        return None  # sm_121 runs sm_120's SASS: torch only warns
    older = "too old" in line.text.lower() or (low is not None and bool(ccs) and max(ccs) < low)
    try:  # the installed torch, where the node's facts know it
        current: Version | None = facts.version("torch")
    except Skip:
        current = None
    archs = ", ".join(sm(cc) for cc in ccs)
    jetson = jetson_gpu(facts, line)
    step = (
        fix(_jetson_torch(jetson), "manual", *(manual(s) for s in JETSON_TORCH_STEPS))
        if jetson is not None
        else _upgrade_fix(facts, list(ccs), current, gpu_older=older)
    )
    if step is None and older:
        step = _source_build_fix(facts, ccs)
    if step is None:
        raise Skip("no torch build the matrix knows has kernels for the GPU", "packages")
    step = dataclasses.replace(
        step,
        summary=step.summary.replace(
            "the closest build with kernels for every GPU here",
            f"the closest build with {archs} kernels",
        ),
    )
    have = f"torch {current}" if current is not None else "the installed torch"
    return Hit(
        f"{names} ({archs}) has no kernels in {have} (line {line.line}: {why}): "
        "every CUDA kernel fails with 'no kernel image is available'",
        evidence={"line": line.line, "gpu_archs": [sm(cc) for cc in ccs], "torch": str(current)},
        fix=step,
    )


def _suggested_hit(facts: Facts, line: LogLine, cuda: str) -> Hit:
    """torch's own warning names the CUDA configuration whose builds have the GPU's kernels
    (torch 2.8+: 'Please install PyTorch with a following CUDA configurations: 12.6')."""
    variant = "cu" + cuda.replace(".", "")
    url = facts.matrix.torch_index_url(variant)
    command = "pip install --force-reinstall torch" + (f" --index-url {url}" if url else "")
    return Hit(
        f"the GPU has no kernels in the installed torch (line {line.line}: torch's own warning "
        f"names the CUDA {cuda} builds as having them)",
        evidence={"line": line.line, "cuda_suggested": cuda},
        fix=fix(
            f"Install the torch build for CUDA {cuda} (torch's own suggestion): `{command}` "
            "(then reinstall packages built against torch: torchvision, vLLM, flash-attn)",
            "manual",
            manual(command),
        ),
    )


def _stated_gpus(facts: Facts, line: LogLine) -> tuple[list[Version], str]:
    """The GPUs' compute capabilities and names: the node's, else the one the line states
    (a model the GPU table does not know, 'NVIDIA GTX TITAN Black ... cuda capability 3.5')."""
    stated = _cc(line.stated.get("gpu_cc") or line.stated.get("gpu_sm"))
    try:
        gpus = facts.gpus()
        ccs = sorted({facts.compute_capability(g) for g in gpus})
        names = ", ".join(dict.fromkeys(g.name for g in gpus if g.name)) or "the GPU"
    except Skip:
        if stated is None:
            raise
        return [stated], line.stated.get("gpu_name") or "the GPU"
    return ccs, names


def _source_build_fix(facts: Facts, ccs: list[Version]) -> Fix | None:
    """No torch release the matrix knows has kernels for a GPU this old: a source build for
    its architecture, with a CUDA toolkit that still compiles it (the ``[[sm]]`` table)."""
    if not ccs:
        return None
    arch_list = ";".join(f"{cc.major}.{cc.minor}" for cc in ccs)
    toolkits = [s.last_cuda for cc in ccs if (s := facts.matrix.sm(sm(cc))) and s.last_cuda]
    cuda = f" with CUDA {min(toolkits)} or older (the last that compiles it)" if toolkits else ""
    archs = ", ".join(sm(cc) for cc in ccs)
    return fix(
        f"No prebuilt torch the matrix knows has {archs} kernels: build torch from source for "
        f'it{cuda}: `TORCH_CUDA_ARCH_LIST="{arch_list}" python setup.py develop` in a '
        "pytorch checkout (README 'From Source'), or run on the CPU",
        "manual",
        manual(f'TORCH_CUDA_ARCH_LIST="{arch_list}" python setup.py develop'),
    )


@from_log("TOR102")
def pre_ampere_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """flash-attn 2 raises 'FlashAttention only supports Ampere GPUs or newer' only after its own
    check of the GPU's compute capability fails (csrc/flash_attn/flash_api.cpp): the line
    establishes the cause; the node's GPUs, where known, are named."""
    try:
        gpus_known = facts.gpus()
    except Skip:
        gpus_known = ()
    names = set()
    for g in gpus_known:
        try:
            cc = facts.compute_capability(g)
        except Skip:  # a model the matrix does not know: named without its architecture
            names.add(g.name or f"GPU {g.index}")
            continue
        if cc < Version("8.0"):
            names.add(f"{g.name} ({sm(cc)})")
    old = sorted(names)
    if not old and _all_ampere_or_newer(facts, line):
        return None  # a GPU newer than the release's check: CUD151's entry names that cause
    gpus = f" ({', '.join(old)})" if old else ""
    in_vllm = (
        line.stated.get("ext_frame") == "vllm"
        or "vllm_flash_attn" in line.text
        or _VLLM_LOGGED.search(line.text) is not None
    )
    return Hit(
        f"flash-attn 2 refused the GPU{gpus} (line {line.line}: 'FlashAttention only supports "
        "Ampere GPUs or newer'): its kernels exist only for Ampere (sm_80) and newer"
        + (
            ", and vLLM's attention backend called it (its own copy, vllm_flash_attn)"
            if in_vllm
            else ""
        ),
        evidence={"line": line.line, "gpus": old, "layer": "vllm" if in_vllm else None},
        fix=_vllm_backend_fix()
        if in_vllm
        else fix(
            "Use SDPA (or eager) attention on pre-Ampere GPUs",
            "manual",
            manual(
                'load models with attn_implementation="sdpa" (or "eager") instead of '
                '"flash_attention_2"'
            ),
        ),
    )


# vLLM's logger prefix on the line itself (vllm/logger.py: '%(levelname)s %(asctime)s
# [%(filename)s:%(lineno)d] %(message)s' with the date '%m-%d %H:%M:%S'; before 0.8 without the
# '['), after a worker's or engine core's own '(VllmWorker rank=0 pid=N)' tag: the engine
# logged the error, so its attention backend called flash-attn
_VLLM_LOGGED = lazy(
    r"^(?:\((?:VllmWorker|EngineCore|RayWorkerWrapper)[^)]*\) )?(?:ERROR|WARNING|INFO) "
    r"\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[?[\w.]+\.py:\d+\]"
)


def _vllm_backend_fix() -> Fix:
    """vLLM chose the attention backend that called flash-attn: its own knob picks another,
    VLLM_ATTENTION_BACKEND (vllm/envs.py); XFORMERS runs below Ampere (the arch_floor entry's
    fallback for flash-attn, matrices/packages/arch_floors.toml). transformers'
    attn_implementation does not reach vLLM's engine."""
    return fix(
        "Pick a vLLM attention backend that runs below Ampere: VLLM_ATTENTION_BACKEND=XFORMERS "
        "(transformers' attn_implementation does not reach vLLM's engine)",
        "manual",
        manual("export VLLM_ATTENTION_BACKEND=XFORMERS"),
    )


def _all_ampere_or_newer(facts: Facts, line: LogLine) -> bool:
    """Every GPU the node or the log states is sm_80 or newer (the log's when the node names
    none)."""
    ccs: list[Version] = []
    try:
        for g in facts.gpus():
            ccs.append(facts.compute_capability(g))
    except Skip:
        ccs = []
    if not ccs:
        stated = _cc(line.stated.get("gpu_cc") or line.stated.get("gpu_sm"))
        ccs = [stated] if stated is not None else []
    return bool(ccs) and min(ccs) >= Version("8.0")


@from_log("TOR104")
def companion_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """A companion's compiled part that did not load into the installed torch: torchvision's
    'operator torchvision::nms does not exist', or the companion's own extension with an
    `undefined symbol` (torchvision, torchaudio, xformers: the extension's path names it). Where the
    node's torch is known, the paired release (the matrix's companions) is named; otherwise the
    pairing rule: the companion of the same channel and release as torch, from torch's index.
    pip's uninstall of torch while it installed a companion (`Found existing installation:
    torch 2.4.1` below `pip install -U xformers`) is the companion of the torch it removed."""
    if (replaced := line.stated.get("torch_replaced")) is not None:
        return _replaced_torch_hit(facts, line, replaced)
    companions = {str(canonicalize_name(c.package)) for c in facts.matrix.companions}
    modules = {c.replace("-", "_") for c in companions}
    if names_other_package(facts, line, modules) is not None:
        return None  # a generic loader line naming another package's extension
    if unnamed_file(line) and not any(m in line.text for m in modules):
        # `Error loading extension: undefined symbol: ...` names no companion: TOR150 reads it
        # (abi_unnamed.py); the companions' pairing stays for the node to judge
        raise NotStated(
            f"line {line.line} names no extension file: TOR104 compares the companions' "
            "releases with the node's torch",
            "packages.torchvision",
        )
    extension = line.stated.get("ext_library")  # torchaudio/lib/libtorchaudio.so
    owned = owning_distribution(facts, line)  # torchaudio 0.x's top-level _torch_sox...so
    name = str(
        canonicalize_name(
            extension.split("/", 1)[0]
            if extension
            else owned
            if owned in companions
            else "torchvision"
        )
    )
    symbol = line.stated.get("undefined_symbol")
    try:
        torch = facts.version("torch")
    except Skip:
        torch = None
    pair = None
    if torch is not None:
        release = public(torch)
        pair = next(
            (
                c
                for c in facts.matrix.companions
                if canonicalize_name(c.package) == name and c.torch == release
            ),
            None,
        )
    have = f"torch {torch}" if torch is not None else "the installed torch"
    # torch's CUDA variant (+cu121) names the index its companions come from: PyPI's default
    # build of the companion is another CUDA's
    variant = torch.local if torch is not None and torch.local else None
    url = facts.matrix.torch_index_url(variant) if variant and variant[:2] in ("cu", "cp") else None
    index = f" --index-url {url}" if url else ""
    said = f"undefined symbol {symbol}" if symbol else f"'{line.text.strip()[:160]}'"
    message = (
        f"{name}'s compiled ops did not load into {have} (line {line.line}: {said}): the "
        f"{name} installed was built for another torch"
    )
    if pair is not None and pre_cxx11_torch_symbol(symbol):
        # where the paired release is already installed, pinning it cannot help: every prebuilt
        # wheel of it has the same pre-C++11 ABI (NixOS/nixpkgs#162286: torchvision 0.13.0
        # under a distribution's torch 1.12.0 built with the C++11 ABI)
        target = f"{name}=={pair.version}"
        first, actions = old_abi_first(facts, line, name, target)
        message += " or with the other C++ ABI (its symbol passes the pre-C++11 std::string, `Ss`)"
        remedy = fix(
            f"Install {name} {pair.version}, built for torch {pair.torch} (pip install "
            f"{target}{index}); where that release is already installed: {first}",
            "manual",
            pip_install(target, index_url=url),
            *actions,
        )
    elif pair is not None:
        remedy = fix(
            f"Install {name} {pair.version}, built for torch {pair.torch}"
            + (f", from torch's index (pip install {name}=={pair.version}{index})" if url else ""),
            "safe",
            pip_install(f"{name}=={pair.version}", index_url=url),
        )
    else:
        remedy = fix(
            f"Reinstall {name} from the channel and index torch came from, the release paired "
            f"with the installed torch: pip install --force-reinstall "
            f"--no-cache-dir {name}==<the release paired with your torch> from the index torch "
            f"came from (a nightly torch needs the nightly {name} of the same date), or "
            f"reinstall torch and {name} together so pip pairs them",
            "manual",
            manual(f"pip uninstall -y {name}"),
            manual(
                f"pip install --force-reinstall --no-cache-dir torch=={torch.public} {name}{index}"
                if url and torch is not None
                # the index's form (torch's install selector): the cuXYZ of torch.version.cuda
                else f"pip install --force-reinstall --no-cache-dir torch {name} --index-url "
                f"{facts.matrix.torch_index_url('cuXYZ') or '<the index torch came from>'}  "
                "(cuXYZ: torch.version.cuda without the dot, cu121 for 12.1; cpu for a CPU "
                "build; with --pre and the nightly index for a nightly)"
            ),
        )
    return Hit(
        message,
        evidence={"line": line.line, "torch": str(torch), "companion": name, "symbol": symbol},
        fix=remedy,
    )


def _replaced_torch_hit(facts: Facts, line: LogLine, replaced: str) -> Hit | None:
    """TOR104 from pip's uninstall of torch while it installed a companion: the companion's
    release was built for another torch; the release the matrix pairs with the torch pip
    removed keeps that torch (from its CUDA variant's index where the version names one).
    None where the install asked for torch itself."""
    replacer = line.stated.get("torch_replacer")
    if line.stated.get("torch_requested") is not None:
        return None  # the install asked for torch itself: its change was the request
    if replacer is None:
        raise NotStated(
            f"line {line.line}: pip removed torch {replaced}, but the lines above do not name "
            "the package whose install required another torch",
            "packages.torch",
        )
    name = str(canonicalize_name(replacer))
    try:
        removed = Version(replaced)
    except InvalidVersion:
        raise NotStated(f"torch {replaced!r} is not a version", "packages.torch") from None
    pair = next(
        (
            c
            for c in facts.matrix.companions
            if canonicalize_name(c.package) == name and c.torch == public(removed)
        ),
        None,
    )
    variant = removed.local
    url = facts.matrix.torch_index_url(variant) if variant and variant[:2] in ("cu", "cp") else None
    message = (
        f"pip removed torch {replaced} to install {name} (line {line.line}): the {name} "
        f"release it chose was built for another torch"
    )
    if pair is not None:
        remedy = fix(
            f"Install {name} {pair.version}, the release built for torch {pair.torch}, so pip "
            f"keeps torch {replaced}",
            "safe",
            pip_install(f"{name}=={pair.version}", index_url=url),
        )
    else:
        remedy = fix(
            f"Install the {name} release built for torch {public(removed)} (its release notes "
            f"or its own torch== requirement name it), or reinstall torch {replaced} and "
            f"{name} together so pip pairs them",
            "manual",
            manual(f"pip install 'torch=={replaced}' {name}"),
        )
    return Hit(
        message,
        evidence={"line": line.line, "torch": replaced, "companion": name},
        fix=remedy,
    )
