"""TOR and PY: torch's build against the GPUs, the packages built against torch (flash-attn in
flash_attn.py), and Python."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import major_minor, public, variant_cuda
from envcheck.model.finding import Action, Fix, Severity
from envcheck.model.report import Distribution
from envcheck.rules.base import Hit, rule
from envcheck.rules.choose import (
    Arch,
    TorchChoice,
    arch_list,
    covers,
    parse_arch_list,
    sm,
    torch_choices,
    variant_spans,
)
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.pip_offered import linux_wheels_only


def _arch_text(archs: Sequence[Arch]) -> str:
    return " ".join(f"{sm(a.cc)}{'+PTX' if a.ptx else ''}" for a in archs)


def _torch_newer_than_gpus(facts: Facts, ccs: list[Version]) -> bool:
    """Whether the arch list torch states starts above every GPU: the installed torch dropped
    them (a GTX 1080 on a build from sm_75), so the closest build with their kernels is older."""
    stated = facts.torch_arch_stated()
    if stated is None or not ccs:
        return False
    try:
        archs = parse_arch_list(stated[0])
    except InvalidVersion:
        return False
    return bool(archs) and max(ccs) < min(a.cc for a in archs)


def _upgrade_fix(
    facts: Facts, ccs: list[Version], current: Version | None, *, gpu_older: bool = False
) -> Fix | None:
    """The closest torch build with kernels for every GPU: the oldest release from the installed
    one on (the GPU is newer than the build), else, where the installed torch (or the arch list
    it states, or torch's own 'too old' warning: ``gpu_older``) is newer than the GPUs, the newest
    older release that still has their kernels."""
    try:
        driver: Version | None = facts.driver()
        max_cuda: Version | None = facts.max_cuda()[0]
    except Skip:
        driver = max_cuda = None
    try:
        python: Version | None = facts.python_version()
    except Skip:
        python = None
    dropped = current is None and (gpu_older or _torch_newer_than_gpus(facts, ccs))
    newer: list[TorchChoice] = []
    older: list[TorchChoice] = []
    for minor_compat in (False, True):  # prefer builds the driver runs fully
        choices = torch_choices(
            facts.matrix,
            ccs=ccs,
            driver=driver,
            max_cuda=max_cuda,
            python=python,
            allow_minor_compat=minor_compat,
        )
        if dropped:
            older = choices
        elif current is None:
            newer = choices
        else:
            newer = [c for c in choices if c.release.version >= public(current)]
            older = [c for c in choices if c.release.version < public(current)]
        if newer or older:
            break
    if newer:
        oldest = min(c.release.version for c in newer)
        best = next(c for c in newer if c.release.version == oldest)
        why = ""
    elif older:
        best = older[0]  # newest release first, newest CUDA first within it
        why = " (newer builds dropped this GPU's architecture)"
    else:
        return None
    url = facts.matrix.torch_index_url(best.variant)
    remedy = fix(
        f"Install torch {best.release.version}+{best.variant}, the closest build with kernels for every "
        f"GPU here{why} (then reinstall packages built against torch: torchvision, vLLM, flash-attn)",
        "unsafe",
        pip_install(f"torch=={best.release.version}", index_url=url),
    )
    # the forms threads run: torch with its companions from the same index, and every other
    # variant with the GPUs' kernels, older and newer (a project pins its own release)
    extra = [
        a
        for a in (_other_variants(newer + older, best, ccs), _with_companions(facts, best, url))
        if a is not None
    ]
    known = {c.variant for c in newer + older}
    if newer or not older:
        extra += [a for a in (_first_variant(facts, ccs, known, current),) if a is not None]
    extra.append(_rebuild_extensions(ccs))
    nightly = facts.matrix.torch_index_url(f"nightly/{best.variant}")
    if newer and nightly is not None and _needs_newest_toolkit(facts, best.variant, ccs):
        # a GPU newer than the stable builds: threads of a new architecture run the nightly
        # build of the newest CUDA variant until a release has it (pytorch#149845: the
        # cu128 nightly for sm_120 before 2.7.0); pytorch.org's 'Preview (Nightly)' command
        extra.append(
            manual(
                "or the nightly build: pip install --pre torch torchvision torchaudio "
                f"--index-url {nightly}"
            )
        )
    if not extra:
        return remedy
    return dataclasses.replace(remedy, actions=(*remedy.actions, *extra))


def _first_variant(
    facts: Facts, ccs: list[Version], known: set[str], current: Version | None = None
) -> Action | None:
    """The oldest CUDA variant whose toolkit compiles every GPU's architecture (the ``[[sm]]``
    table), where it is older than every variant the matrix's torch table lists: a project that
    pins an older torch release keeps its release and takes that variant or a newer one
    (threads: `torch==1.9.0+cu111` for sm_86). The ``[[legacy_torch]]`` table (pytorch.org's
    previous versions) names the releases each such variant was published for, and the
    installed release's own variant where the node states a release in it."""
    firsts = [s.first_cuda for cc in ccs if (s := facts.matrix.sm(sm(cc))) is not None]
    if not firsts:
        return None
    first = max(firsts)
    tag = f"cu{first.major}{first.minor}"
    if tag in known:  # the variants listed above hold it: no older release to point at
        return None
    if facts.matrix.toolkit(first) is None:
        # a toolkit older than the matrix's first (sm_50: CUDA 6.0/7.0): no torch wheel is
        # known to carry its tag, so naming '+cu70' would name a wheel that does not exist
        return None
    archs = ", ".join(sm(cc) for cc in ccs)
    stable = "https://download.pytorch.org/whl/torch_stable.html"
    by_variant: dict[str, list[Version]] = {}
    for legacy in facts.matrix.legacy_torch:
        for variant in legacy.variants:
            cuda = variant_cuda(variant)
            if cuda is not None and cuda >= first and variant not in known:
                by_variant.setdefault(variant, []).append(legacy.version)
    if not by_variant:
        return manual(
            f"a project pinned to an older torch: its release built for CUDA {first} or newer "
            f"(+{tag} or a later variant; CUDA {first} is the first to compile {archs}), e.g. "
            f"pip install torch==<release>+{tag} -f {stable}"
        )
    order = sorted(by_variant, key=lambda v: variant_cuda(v) or Version("0"))
    spans = ", ".join(
        f"+{v} (torch {min(by_variant[v])}"
        + (f"-{max(by_variant[v])})" if len(by_variant[v]) > 1 else ")")
        for v in order
    )
    own = public(current) if current is not None else None
    mine = [v for v in order if own is not None and own in by_variant[v]]
    if mine:
        # with the torchvision built for that release, of the same variant (the page's command)
        paired = [
            c.version
            for c in facts.matrix.companions
            if canonicalize_name(c.package) == "torchvision" and c.torch == own
        ]
        vision = f" torchvision=={max(paired)}+{mine[0]}" if paired else ""
        example = f"pip install torch=={own}+{mine[0]}{vision} -f {stable}"
    else:
        example = f"pip install torch==<release>+<variant> -f {stable}"
    return manual(
        f"a project pinned to an older torch: its release built for CUDA {first} or newer "
        f"(CUDA {first} is the first to compile {archs}): {spans}; e.g. {example}"
    )


def _with_companions(facts: Facts, best: TorchChoice, url: str | None) -> Action | None:
    """torch reinstalled with the torchvision and torchaudio built for it, from the same
    index (pytorch.org's install command; a companion from another build fails to load)."""
    release = best.release.version
    pins = [f"torch=={release}"]
    for name in ("torchvision", "torchaudio"):
        paired = [
            c.version
            for c in facts.matrix.companions
            if canonicalize_name(c.package) == name and c.torch == release
        ]
        if paired:
            pins.append(f"{name}=={max(paired)}")
    if url is None:
        return None
    return manual(
        f"with its companions: pip install --force-reinstall {' '.join(pins)} --index-url {url}"
        f" (a requirements file pins torch=={release}+{best.variant}; pytorch.org's command "
        f"takes the newest {best.variant} build: pip install torch torchvision torchaudio "
        f"--index-url {url})"
    )


def _rebuild_extensions(ccs: list[Version]) -> Action:
    """Extensions compiled against the old torch (flash-attn, xformers, a project's ops built
    from source) are rebuilt against the new one, for the GPUs' architectures."""
    arch_list = ";".join(f"{cc.major}.{cc.minor}" for cc in sorted(set(ccs)))
    return manual(
        "then rebuild the extensions compiled against the old torch for these GPUs: "
        f'TORCH_CUDA_ARCH_LIST="{arch_list}" pip install --no-build-isolation --no-cache-dir '
        "--force-reinstall <the extension's package>"
    )


def _needs_newest_toolkit(facts: Facts, variant: str, ccs: list[Version]) -> bool:
    """Whether a GPU's architecture first compiles with the variant's CUDA (sm_120 and cu128):
    a GPU that new, whose first builds threads found in the nightly index."""
    cuda = variant_cuda(variant)
    firsts = [s.first_cuda for cc in ccs if (s := facts.matrix.sm(sm(cc))) is not None]
    return cuda is not None and any(major_minor(f) == major_minor(cuda) for f in firsts)


def _other_variants(
    choices: list[TorchChoice], best: TorchChoice, ccs: list[Version]
) -> Action | None:
    """The other CUDA variants with kernels for the GPUs (threads pin the one their project
    needs: `torch==1.9.0+cu111`, `1.12.0+cu116`)."""
    text = variant_spans(choices, best)
    if text is None:
        return None
    archs = ", ".join(sm(cc) for cc in ccs)
    return manual(
        f"other torch builds with {archs} kernels, by CUDA variant: {text}; install one as "
        "pip install torch==<release> --index-url <the variant's index> (the command above, "
        "with its release and variant)"
    )


def _toolkit_floor(facts: Facts, variant: str, cc: Version) -> str:
    """'CUDA 12.6 cannot compile sm_120 (first CUDA 12.8)' when the variant's toolkit predates
    the architecture: no list of that build can hold its kernels (only PTX of an older arch)."""
    cuda = variant_cuda(variant)
    support = facts.matrix.sm(sm(cc))
    if cuda is None or support is None or cuda >= support.first_cuda:
        return ""
    return f"CUDA {cuda} cannot compile {sm(cc)} (first CUDA {support.first_cuda})"


@rule("TOR101", "gpu-arch-not-in-torch-build", Severity.ERROR)
def gpu_arch_missing(facts: Facts) -> Iterable[Hit]:
    """A GPU's architecture is not compiled into the torch build

    ## What it checks
    Each GPU's compute capability against the architecture list of the installed torch release
    and CUDA variant (`TORCH_CUDA_ARCH_LIST` of the official wheels, from the matrix). A GPU is
    covered by SASS for its major at an equal or lower minor (sm_86 code runs on sm_89), or by
    PTX for an equal or older architecture (`12.0+PTX`). Where a log or dump quotes the list
    torch itself prints (its warning `The current PyTorch install supports CUDA capabilities
    sm_50 ... sm_90`, or `torch.cuda.get_arch_list()`), that list is used, with torch's own test
    (code for the GPU's major), even when the torch release is not stated.

    ## Why it matters
    torch imports fine and then every kernel launch fails with `CUDA error: no kernel image is
    available for execution on the device`; torch prints `sm_120 is not compatible with the
    current PyTorch installation`. Typical: RTX 50xx / RTX PRO Blackwell (sm_120) on cu124/cu126
    builds, V100 (sm_70) on cu13x builds.

    ## Example
    NVIDIA GeForce RTX 5090 (sm_120) with torch 2.6.0+cu124, whose list is
    sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.

    ## Fix
    Install the smallest newer torch release whose variant covers every GPU and that the driver
    runs (for sm_120: a cu128 or newer build), then reinstall what was built against torch.
    An arch list the matrix marks UNVERIFIED is trusted alike to fail and to pass (the finding
    stays an error and says so); where the variant's CUDA toolkit cannot compile the GPU's
    architecture at all (CUDA 12.6 and sm_120), the finding says that too, which holds whatever
    the list.

    ## References
    - https://github.com/pytorch/pytorch/issues/150733
    - https://github.com/pytorch/pytorch/blob/main/RELEASE.md
    - https://github.com/StanfordVL/BEHAVIOR-1K/issues/2270
    """
    stated = facts.torch_arch_stated()
    if stated is not None:
        return _stated_arch_missing(facts, *stated)
    if facts.torch_cuda() is None:
        return []
    torch = facts.torch_version()
    variant = facts.torch_variant()
    release = facts.matrix.torch_release(torch)
    if release is None:
        raise Skip(f"torch {torch} is not a release the matrix knows; its arch list is unknown")
    found = arch_list(release, variant)
    if found is None:
        raise Skip(f"the arch list of torch {release.version}+{variant} is not in the matrix")
    archs, verified = found
    gpus = facts.gpus()
    ccs = [facts.compute_capability(g) for g in gpus]
    hits = []
    seen = set()
    for gpu, cc in zip(gpus, ccs, strict=True):
        if covers(archs, cc) or (gpu.name, cc) in seen:
            continue
        seen.add((gpu.name, cc))
        count = sum(1 for g, c in zip(gpus, ccs, strict=True) if (g.name, c) == (gpu.name, cc))
        label = f"{gpu.name or 'GPU'}" + (f" x{count}" if count > 1 else "")
        floor = _toolkit_floor(facts, variant, cc)
        note = "" if verified else " (this arch list is UNVERIFIED in the matrix)"
        if floor:
            note += f"; {floor}"
        hits.append(
            Hit(
                f"{label} ({sm(cc)}) is not in torch {release.version}+{variant}'s arch list "
                f"({_arch_text(archs)}){note}: kernels fail with 'no kernel image is available for "
                "execution on the device'",
                evidence={
                    "gpu": gpu.name,
                    "compute_capability": str(cc),
                    "torch": str(torch),
                    "variant": variant,
                    "arch_list": release.arch_list[variant],
                    "arch_list_verified": verified,
                    **({"toolkit_floor": floor} if floor else {}),
                },
                fix=_upgrade_fix(facts, ccs, torch),
            )
        )
    return hits


def _covered_as_torch_checks(archs: Sequence[Arch], cc: Version) -> bool:
    """torch's own start-up check: code for the GPU's major at an equal or lower minor (SASS or
    PTX). PTX of an older major (1.x builds' compute_37) does not stop torch's warning, and the
    threads that quote such a list report 'no kernel image' on the newer GPU."""
    return any(a.cc.major == cc.major and a.cc.minor <= cc.minor for a in archs)


def _stated_arch_missing(facts: Facts, text: str, source: str) -> list[Hit]:
    """TOR101 on the arch list torch itself states (a log's warning or get_arch_list())."""
    archs = parse_arch_list(text)
    torch: Version | None
    try:
        torch = facts.torch_version()
    except Skip:
        torch = None
    label = f"torch {torch}" if torch is not None else "the installed torch"
    gpus = facts.gpus()
    ccs = [facts.compute_capability(g) for g in gpus]
    hits = []
    seen = set()
    for gpu, cc in zip(gpus, ccs, strict=True):
        if _covered_as_torch_checks(archs, cc) or (gpu.name, cc) in seen:
            continue
        seen.add((gpu.name, cc))
        floor = ""
        variant = None
        try:
            variant = facts.torch_variant() if torch is not None else None
        except Skip:
            variant = None
        if variant is not None:
            floor = _toolkit_floor(facts, variant, cc)
        hits.append(
            Hit(
                f"{gpu.name or 'GPU'} ({sm(cc)}) is not in {label}'s arch list "
                f"({_arch_text(archs)}, as torch states it in {source})"
                + (f"; {floor}" if floor else "")
                + ": kernels fail with 'no kernel image is available for execution on the device'",
                evidence={
                    "gpu": gpu.name,
                    "compute_capability": str(cc),
                    "torch": str(torch) if torch is not None else None,
                    "arch_list": text,
                    "arch_list_source": source,
                },
                fix=_upgrade_fix(facts, ccs, torch),
            )
        )
    return hits


_COMPANION_SYMPTOM = {
    "torchvision": "RuntimeError: operator torchvision::nms does not exist",
    "torchaudio": "undefined symbol errors when torchaudio loads",
    "xformers": "xFormers can't load C++/CUDA extensions. xFormers was built for: PyTorch ...",
}


def _stated_dist(facts: Facts, name: str) -> Distribution | None:
    """A companion a log shows without its version (xformers.info names only the torch build it
    was compiled for): judged by that build."""
    try:
        dist = facts.dist(name)
    except Skip:
        return None
    if dist is None or dist.version != "unknown" or not dist.requires:
        return None
    return dist


def _expected_torch(facts: Facts, name: str, version: Version | str) -> tuple[str, str] | None:
    """(torch specifier, where it came from) that the companion was built against."""
    dist = facts.dist(name)
    if dist is not None and dist.requires:
        try:
            markers = {**facts.markers(), "extra": ""}
        except Skip:
            markers = {}
        for line in dist.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) != "torch" or "==" not in str(req.specifier):
                continue
            if req.marker is not None and markers and not req.marker.evaluate(markers):
                continue
            spec = str(req.specifier)
            return spec, (
                f"the build {name} reports" if "+" in spec else f"{name}'s own requirement"
            )
    companion = facts.matrix.companion(name, version) if isinstance(version, Version) else None
    if companion is not None:
        return f"=={companion.torch}", "the matrix"
    return None


@rule("TOR104", "companion-built-for-other-torch", Severity.ERROR)
def companion_other_torch(facts: Facts) -> Iterable[Hit]:
    """torchvision, torchaudio or xformers was built for another torch

    ## What it checks
    The torch release each of torchvision, torchaudio and xformers was built against (its own
    `torch==` requirement, or the matrix's pairs from vLLM's metadata, the PyTorch
    previous-versions page and xformers' changelog) against the installed torch. A log where
    pip uninstalled torch while it installed a companion (`Found existing installation: torch
    2.4.1` below `pip install -U xformers`) establishes it for the torch pip removed.

    ## Why it matters
    These packages ship C++/CUDA extensions for exactly one torch. With another torch,
    torchvision fails with `operator torchvision::nms does not exist`, xformers disables its
    kernels (`xFormers can't load C++/CUDA extensions`) and attention falls back or fails.

    ## Example
    torchvision 0.19.0 (built for torch 2.4.0) with torch 2.5.1.

    ## Fix
    Install the companion release built for the installed torch, from the same wheel index as
    torch (after pip replaced torch for a companion, the release built for the torch it
    removed: `pip install xformers==0.0.28` for torch 2.4.1).

    ## References
    - https://github.com/facebookresearch/xformers/issues/982
    - https://github.com/facebookresearch/xformers/issues/1146 (pip replaced torch 2.4.1)
    - facebookresearch/xformers CHANGELOG.md ('Pre-built binary wheels require PyTorch X')
    - PyTorch wheel metadata (torchvision pins torch==X)
    """
    torch = facts.version("torch")
    if torch is None:
        return []
    hits = []
    unknown: list[Skip] = []
    for name in ("torchvision", "torchaudio", "xformers"):
        version: Version | str | None
        try:
            version = facts.version(name)
        except Skip as skip:  # a partial list: the others are still judged
            dist = _stated_dist(facts, name)
            if dist is None:
                unknown.append(skip)
                continue
            version = "(version not stated)"
        if version is None:
            continue
        expected = _expected_torch(facts, name, version)
        if expected is None:
            continue
        spec_text, origin = expected
        from packaging.specifiers import SpecifierSet

        # a build stated with its variant (xformers.info: "built for PyTorch 2.2.0+cu121")
        # must match the installed build's label too
        candidate = torch if "+" in spec_text else public(torch)
        if SpecifierSet(spec_text).contains(candidate, prereleases=True):
            continue
        built = Version(spec_text.removeprefix("=="))
        if "+" in spec_text and public(built) == public(torch) and built.local:
            url = facts.matrix.torch_index_url(built.local)
            hits.append(
                Hit(
                    f"{name} {version} was built for torch {built} ({origin}); torch {torch} is "
                    f"installed: {_COMPANION_SYMPTOM[name]}",
                    evidence={name: str(version), "torch": str(torch), "built_for": spec_text},
                    fix=fix(
                        f"Install torch {built}, the build {name} {version} was compiled for "
                        "(or reinstall {name} for the installed torch)".replace("{name}", name),
                        "unsafe",
                        pip_install(
                            f"torch=={public(built)}", index_url=url, flags=("--force-reinstall",)
                        ),
                    ),
                )
            )
            continue
        pair = next(
            (
                c
                for c in facts.matrix.companions
                if canonicalize_name(c.package) == name and c.torch == public(torch)
            ),
            None,
        )
        url = None
        build = facts.torch()
        if build is not None and build.local_label and name != "xformers":
            url = facts.matrix.torch_index_url(build.local_label)
        remedy = (
            fix(
                f"Install {name} {pair.version}, built for torch {public(torch)}",
                "safe",
                pip_install(f"{name}=={pair.version}", index_url=url),
            )
            if pair
            else fix(
                f"Install the {name} release built for torch {public(torch)}",
                "manual",
                manual(f"find the {name} release that requires torch=={public(torch)}"),
            )
        )
        hits.append(
            Hit(
                f"{name} {version} was built for torch {spec_text.removeprefix('==')} ({origin}); "
                f"torch {torch} is installed: {_COMPANION_SYMPTOM[name]}",
                evidence={name: str(version), "torch": str(torch), "built_for": spec_text},
                fix=remedy,
            )
        )
    if not hits and unknown:
        raise unknown[0]
    return hits


@rule("PY101", "torch-python-unsupported", Severity.ERROR)
def torch_python(facts: Facts) -> Iterable[Hit]:
    """The torch release has no wheels for this Python

    ## What it checks
    The Python minor version against the CPython tags of the torch release's Linux wheels (a
    node declared as macOS or Windows is not judged by them). From a log, pip's `(from versions:
    ...)` list confirms it: a pinned release missing from the list, or an empty list for a Python
    no torch release has wheels for (an empty list for a Python that releases do support points at
    the platform or the index, and stays open).

    ## Why it matters
    pip cannot install the release (`No matching distribution found for torch==X`), or a
    declared stack cannot be built: torch 2.4 has no Python 3.13 wheels, torch 2.15 dropped
    Python 3.10.

    ## Example
    torch 2.4.0 declared for Python 3.13.

    ## Fix
    Use a Python the release supports, or a torch release that supports this Python.

    ## References
    - PyPI simple index of torch (cpXY tags of the manylinux wheels)
    """
    torch = facts.version("torch")
    if torch is None:
        return []
    release = facts.matrix.torch_release(torch)
    if release is None:
        raise Skip(f"torch {torch} is not in the matrix")
    linux_wheels_only(facts)
    py = facts.python_version()
    if f"{py.major}.{py.minor}" in release.python:
        return []
    return [
        Hit(
            f"torch {release.version} has no wheels for Python {py.major}.{py.minor} "
            f"(it has {', '.join(release.python)})",
            evidence={"torch": str(torch), "python": str(py), "supported": list(release.python)},
            fix=fix(
                f"Use Python {release.python[-1]} (or another of {', '.join(release.python)}) for torch {release.version}",
                "manual",
                manual(f"create the environment with one of Python {', '.join(release.python)}"),
            ),
        )
    ]


@rule("PY102", "vllm-python-unsupported", Severity.ERROR)
def vllm_python(facts: Facts) -> Iterable[Hit]:
    """The vLLM release does not support this Python

    ## What it checks
    The Python version against the `Requires-Python` of the installed or declared vLLM release.

    ## Why it matters
    pip refuses the release, or resolves an older vLLM than planned, which pins an older torch:
    vLLM >= 0.11.1 needs Python >= 3.10, >= 0.32 needs >= 3.11, 0.8.4-0.10.1 exclude 3.13.

    ## Example
    vllm 0.6.3 with Python 3.13 (vLLM < 0.8.4 did not cap Python, but its torch 2.4 has no
    3.13 wheels; vLLM 0.8.4 onwards require < 3.13).

    ## Fix
    Use a Python inside the release's range.

    ## References
    - PyPI wheel metadata of vllm (Requires-Python)
    """
    version = facts.version("vllm")
    if version is None:
        return []
    release = facts.matrix.vllm_release(version)
    if release is None or release.requires_python is None:
        raise Skip(f"vllm {version}'s Python range is not in the matrix")
    py = facts.python_version()
    if release.requires_python.contains(py, prereleases=True):
        return []
    return [
        Hit(
            f"vllm {version} requires Python {release.requires_python}; this is Python {py}",
            evidence={
                "vllm": str(version),
                "python": str(py),
                "requires_python": str(release.requires_python),
            },
            fix=fix(
                f"Use Python {release.requires_python}",
                "manual",
                manual(f"create the environment with Python {release.requires_python}"),
            ),
        )
    ]
