"""TOR102 and TOR103: flash-attn against the GPU's architecture and the installed torch."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import major_minor
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, rule
from envcheck.rules.choose import sm
from envcheck.rules.fixes import fix, manual, pip_install, pip_uninstall

_FA_TAG = lazy(r"cu(\d+)torch(\d+\.\d+)cxx11abi(TRUE|FALSE)", re.IGNORECASE)


@rule("TOR102", "flash-attn-pre-ampere", Severity.ERROR)
def flash_attn_pre_ampere(facts: Facts) -> Iterable[Hit]:
    """FlashAttention-2 is installed on a GPU older than Ampere

    ## What it checks
    flash-attn 2.x is installed and a GPU has compute capability below 8.0 (Volta V100,
    Turing T4, ...).

    ## Why it matters
    FlashAttention-2 supports Ampere, Ada and Hopper GPUs; on older ones it raises
    `RuntimeError: FlashAttention only supports Ampere GPUs or newer.`, and models loaded with
    `attn_implementation="flash_attention_2"` fail.

    ## Example
    flash-attn 2.6.3 on Tesla V100-SXM2-32GB (sm_70).

    ## Fix
    Use PyTorch's SDPA attention (`attn_implementation="sdpa"`) on these GPUs, or run on
    Ampere or newer.

    ## References
    - https://github.com/Dao-AILab/flash-attention (README: FlashAttention-2 currently supports Ampere, Ada, or Hopper GPUs)
    """
    try:  # every GPU Ampere or newer rules the cause out, whatever is installed
        ccs = [facts.compute_capability(g) for g in facts.gpus()]
    except Skip:
        ccs = []
    if ccs and min(ccs) >= Version("8.0"):
        return []
    version = facts.version("flash-attn")
    if version is None or version.major != 2:
        return []
    old = [(g, cc) for g in facts.gpus() if (cc := facts.compute_capability(g)) < Version("8.0")]
    if not old:
        return []
    names = sorted({f"{g.name} ({sm(cc)})" for g, cc in old})
    return [
        Hit(
            f"flash-attn {version} needs Ampere or newer; {', '.join(names)} is older: "
            "'FlashAttention only supports Ampere GPUs or newer'",
            evidence={"flash_attn": str(version), "gpus": names},
            fix=fix(
                "Use SDPA attention on pre-Ampere GPUs",
                "manual",
                manual(
                    'load models with attn_implementation="sdpa" instead of "flash_attention_2"'
                ),
            ),
        )
    ]


def _flash_attn_fix(facts: Facts, torch: Version | None, *, old_abi: bool | None = None) -> Fix:
    """The flash-attn release to reinstall: a known-bad entry's own replacement where one pairs
    the installed flash-attn with this torch, else the newest release on the index with wheels
    for this torch (for an unstated torch that exports only old-ABI symbols: for the newest
    old-ABI torch) whose wheels load on its ABI. A torch that no release wheel was built
    against (a pre-release or vendor build: NGC's 2.2.0a0+6a974be) gets the build from source
    first: a reinstall would download the same release wheel (flash_attn_source.py)."""
    from envcheck.rules.node.flash_attn_pick import (
        LAST_OLD_ABI,
        known_bad_fix,
        newest_loading,
        torch_old_abi,
    )
    from envcheck.rules.node.flash_attn_source import (
        FORCE_BUILD_COMMAND,
        ngc_image,
        no_release_wheel,
        source_build_after,
        source_build_fix,
    )

    vendor = no_release_wheel(torch)
    if vendor is not None:
        return source_build_fix(f"torch {torch}", vendor)
    image = ngc_image(facts) if torch is None else None
    if image is not None:  # the log names NVIDIA's container, whose torch is its own build
        return source_build_fix(
            "the container's torch", f"{image} runs NVIDIA's own pre-release build of torch"
        )
    known = known_bad_fix(facts)
    if known is not None:
        return known
    if old_abi is None and torch is not None:
        old_abi = torch_old_abi(facts, torch)
    mm = f"{torch.major}.{torch.minor}" if torch is not None else None
    best = newest_loading(facts, mm or LAST_OLD_ABI, old_abi=old_abi) if mm or old_abi else None
    if best is None:
        what = f"torch {torch}" if torch is not None else "the installed torch"
        text, then = source_build_after(
            f"Reinstall flash-attn for {what}: pip uninstall -y flash-attn, then pip install "
            "flash-attn --no-build-isolation --no-cache-dir (its setup.py installs the release "
            "wheel for torch's major.minor, CUDA major and C++ ABI, and compiles where none exists)"
        )
        return fix(
            text,
            "safe",
            pip_uninstall("flash-attn"),
            pip_install("flash-attn", flags=("--no-build-isolation", "--no-cache-dir")),
            then,
        )
    if mm is not None:
        summary = (
            f"Reinstall flash-attn {best.version}, which has prebuilt wheels for torch {mm}: "
            f"pip install flash-attn=={best.version} --no-build-isolation --no-cache-dir"
        )
    else:
        summary = (
            f"torch exports only old-ABI symbols, so it is a pip build of torch {LAST_OLD_ABI} or "
            f"older: reinstall flash-attn {best.version}, the newest release whose old-ABI wheels "
            f"load (wheels for torch {', '.join(best.prebuilt_torch)})"
        )
    broken = sorted(
        r.version for r in facts.matrix.flash_attn_releases if not r.cxx11abi_false_loads
    )
    if old_abi and broken:
        summary += (
            f"; the old-ABI wheels of {broken[0]} to {broken[-1]} ask for C++11-ABI symbols "
            "(flash-attention#1783)"
        )
    # compiling here works for any torch, at the cost of a long build (threads' usual fix);
    # without FLASH_ATTENTION_FORCE_BUILD setup.py would download a release wheel instead
    summary += (
        f"; or build it here against the installed torch: {FORCE_BUILD_COMMAND} (MAX_JOBS=4 "
        "bounds the compile's memory)"
    )
    return fix(
        summary,
        "safe",
        pip_uninstall("flash-attn"),
        pip_install(
            f"flash-attn=={best.version}", flags=("--no-build-isolation", "--no-cache-dir")
        ),
    )


@rule("TOR103", "flash-attn-built-for-other-torch", Severity.ERROR)
def flash_attn_other_torch(facts: Facts) -> Iterable[Hit]:
    """flash-attn was built for another torch, CUDA major or C++ ABI

    ## What it checks
    The build tag in flash-attn's version (`2.6.3+cu123torch2.3cxx11abiFALSE`, present when a
    release wheel was installed from its URL) against the installed torch's major.minor, CUDA
    major and, when known, its C++ ABI. Versions without a tag (built or fetched by `pip install
    flash-attn`) record no torch: they are judged only when a log shows the extension failing to
    load on a torch symbol (`flash_attn_2_cuda...so: undefined symbol: _ZN3c10...`); a missing
    C++11-ABI symbol (`__cxx11`) means the wheel's ABI flag is not torch's. A log whose
    traceback fails in flash_attn/__init__.py, where the installed release (untagged) has no
    release wheel for the node's torch, says the same: a build made against this torch would
    load, so the one installed was made for the torch present when it was installed.

    ## Why it matters
    The extension links against one torch; after pip swaps torch (installing vLLM, upgrading
    transformers) it fails to import: `flash_attn_2_cuda...so: undefined symbol:
    _ZN3c104cuda9SetDeviceEi`, or `_ZN3c105ErrorC2ENS_14SourceLocation...` for an ABI mismatch.

    ## Example
    flash-attn 2.6.3+cu123torch2.3cxx11abiFALSE with torch 2.4.0.

    ## Fix
    Reinstall a flash-attn release with prebuilt wheels for the installed torch, without pip's
    cache and with `--no-build-isolation` so its setup sees this environment's torch. Its
    setup.py installs the release wheel for torch's major.minor whenever one exists, so on a
    torch no release wheel was built against (NGC's `2.2.0a0+6a974be`, a nightly, a source
    build) the fix compiles it instead: `FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=4 pip install
    flash-attn --no-build-isolation --no-cache-dir`; where torch is unknown, that build is the
    step after a reinstall that fails the same way. A release wheel whose tag names another
    torch (`cu123torch2.3cxx11abiFALSE` under torch 2.4) has the other way threads take beside
    it: the torch its tag names, from that CUDA variant's index, where a pip build of that
    torch has the tag's C++ ABI.

    ## References
    - https://github.com/Dao-AILab/flash-attention/issues/931
    - https://github.com/Dao-AILab/flash-attention/issues/853
    - https://github.com/Dao-AILab/flash-attention/issues/709 (NGC's torch: the build from source)
    - https://github.com/Dao-AILab/flash-attention/issues/1061 (torch pinned back)
    - Dao-AILab/flash-attention setup.py (get_wheel_url; CachedWheelsCommand.run: FORCE_BUILD)
    """
    from envcheck.rules.node.flash_attn_pick import abi_wheel_fix, torch_old_abi

    try:
        dist = facts.dist("flash-attn")
    except Skip:  # a partial list; a log that shows its extension failing says it is there
        if facts.unresolved_symbols("flash_attn"):
            return _flash_attn_unresolved(facts, "(version not stated)")
        raise
    if dist is None:
        # a package list (a spec's, a dump's) without flash-attn, while the log shows its
        # extension failing to load: it is installed, the list is not the whole environment
        if facts.unresolved_symbols("flash_attn"):
            return _flash_attn_unresolved(facts, "(version not stated)")
        return []
    match = _FA_TAG.search(dist.version)
    if match is None:
        return _flash_attn_unresolved(facts, dist.version)
    cuda_tag, torch_mm, abi = match.group(1), match.group(2), match.group(3).upper() == "TRUE"
    torch = facts.torch_version()
    problems = []
    if f"{torch.major}.{torch.minor}" != torch_mm:
        problems.append(f"it was built for torch {torch_mm}, torch {torch} is installed")
    cuda = facts.torch_cuda()
    if cuda is not None and not cuda_tag.startswith(str(cuda.major)):
        problems.append(
            f"it was built for CUDA {cuda_tag[:2]}.x, torch is a CUDA {major_minor(cuda)} build"
        )
    old_abi = torch_old_abi(facts, torch)
    abi_differs = old_abi is not None and old_abi == abi
    if abi_differs:
        problems.append(
            f"its C++ ABI flag is cxx11abi{str(abi).upper()}, torch {torch} uses the "
            f"{'old' if old_abi else 'C++11'} ABI"
        )
    release = facts.matrix.flash_attn_release(Version(Version(dist.version).public))
    # the tag matches, but this release's old-ABI wheels were built asking for C++11-ABI symbols
    # (the matrix's cxx11abi_false_loads = false, flash-attention#1783)
    if (
        not problems
        and old_abi
        and not abi
        and release is not None
        and not release.cxx11abi_false_loads
    ):
        problems.append(
            f"its cxx11abiFALSE wheels ask for C++11-ABI symbols that torch {torch} (old ABI) "
            "does not export"
        )
    if not problems:
        return []
    remedy = None
    if abi_differs and release is not None and f"{torch.major}.{torch.minor}" == torch_mm:
        remedy = abi_wheel_fix(facts, release, torch, cuda, bool(old_abi))
    remedy = remedy or _flash_attn_fix(facts, torch, old_abi=old_abi)
    if f"{torch.major}.{torch.minor}" != torch_mm:
        remedy = _or_torch_back(facts, remedy, dist.version, torch_mm, cuda_tag, abi)
    return [
        Hit(
            f"flash-attn {dist.version}: {'; '.join(problems)}: import fails with 'undefined symbol'",
            evidence={"flash_attn": dist.version, "torch": str(torch)},
            fix=remedy,
        )
    ]


def _or_torch_back(
    facts: Facts, remedy: Fix, version: str, torch_mm: str, cuda_tag: str, cxx11abi: bool
) -> Fix:
    """``remedy`` with the other way threads take: keep the flash-attn wheel and install the
    torch its tag names, from that CUDA variant's index (flash-attention#1061: torch pinned
    back); unchanged when the matrix has no torch build of the tag's release, CUDA and ABI."""
    from envcheck.rules.node.flash_attn_pick import torch_for_tag

    back = torch_for_tag(facts, torch_mm, cuda_tag, cxx11abi)
    if back is None:
        return remedy
    pin, url = back
    command = f"pip install {pin} --index-url {url}"
    return dataclasses.replace(
        remedy,
        summary=f"{remedy.summary}; or keep flash-attn {version} and install the torch its "
        f"wheel was built for: {command} (with the torchvision / torchaudio of that release)",
        actions=(*remedy.actions, manual(f"or keep flash-attn {version}: {command}")),
    )


_TORCH_SYMBOL = lazy(r"^_ZN?K?(?:3c10|2at|5torch)")


def _flash_attn_unresolved(facts: Facts, version: str) -> list[Hit]:
    """An untagged flash-attn (built or fetched by `pip install flash-attn`) records no torch;
    a log that shows its extension failing on a torch symbol (c10::, at::, torch::) says it was
    built for another torch or C++ ABI."""
    failed = [u for u in facts.unresolved_symbols("flash_attn") if _TORCH_SYMBOL.match(u.symbol)]
    if not failed:
        raise Skip(
            f"flash-attn {version} carries no build tag; the torch it was built for is unknown"
        )
    try:  # the failing load itself establishes the mismatch; the torch release may be unstated
        torch: Version | None = facts.torch_version()
    except Skip:
        torch = None
    first = failed[0]
    # the extension asks for the C++11-ABI form of a torch symbol that this torch exports only in
    # the old ABI (pip wheels before 2.7): the cxx11abiFALSE wheel is the one that loads
    cxx11 = "__cxx11" in first.symbol
    remedy = _flash_attn_fix(facts, torch, old_abi=True if cxx11 else None)
    have = f"torch {torch}" if torch is not None else "the installed torch"
    if cxx11:
        remedy = dataclasses.replace(
            remedy,
            summary=remedy.summary
            + f"; {first.symbol[:40]}... is the C++11-ABI form of a torch symbol and {have} "
            "exports the old-ABI one: take the release wheel tagged cxx11abiFALSE",
        )
    return [
        Hit(
            f"flash-attn {version}'s extension {first.library} does not load against {have}: "
            f"undefined symbol {first.symbol}: it was built for another torch or C++ ABI",
            evidence={
                "flash_attn": version,
                "torch": str(torch) if torch is not None else None,
                "library": first.library,
                "symbol": first.symbol,
            },
            fix=remedy,
        )
    ]
