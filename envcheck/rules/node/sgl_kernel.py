"""TOR120: sgl-kernel (SGLang's compiled kernels) built for another torch."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import public
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual, pip_install

# a mangled torch / c10 / ATen symbol: what a kernel library built for another torch misses
_TORCH_SYMBOL = lazy(r"^_ZN?K?(?:3c10|2at|5torch)")


def _paired(facts: Facts, torch: Version) -> list[Version]:
    """sgl-kernel releases the matrix pairs with this torch release (newest first)."""
    return sorted(
        (
            c.version
            for c in facts.matrix.companions
            if canonicalize_name(c.package) == "sgl-kernel" and c.torch == public(torch)
        ),
        reverse=True,
    )


def _remedy(facts: Facts, torch: Version, built_for: Version | None) -> Fix:
    paired = _paired(facts, torch)
    if paired:
        return fix(
            f"Install sgl-kernel {paired[0]}, the release sglang pins beside torch {public(torch)}",
            "safe",
            pip_install(f"sgl-kernel=={paired[0]}", flags=("--force-reinstall", "--no-deps")),
        )
    if built_for is not None:
        return fix(
            f"Install torch {built_for} (the release this sgl-kernel goes with), or the "
            f"sgl-kernel release built for torch {public(torch)}",
            "manual",
            manual(
                f"pip install torch=={built_for}, or the sgl-kernel release that the sglang "
                f"release pinning torch=={public(torch)} requires"
            ),
        )
    return fix(
        f"Install the sgl-kernel release built for torch {public(torch)} (the sgl-kernel the "
        "sglang release that pins this torch requires), or the torch this sgl-kernel was built for",
        "manual",
        manual(f"find the sglang release that pins torch=={public(torch)} and its sgl-kernel pin"),
    )


@rule("TOR120", "sgl-kernel-built-for-other-torch", Severity.ERROR)
def sgl_kernel_other_torch(facts: Facts) -> Iterable[Hit]:
    """sgl-kernel was built for another torch

    ## What it checks
    The installed sgl-kernel release against the torch release sglang pins beside it (every
    sglang release pins both exactly; from the sglang wheels' metadata), and, when a log shows
    it, `sgl_kernel/common_ops...so: undefined symbol: <a torch symbol>`.

    ## Why it matters
    sgl-kernel's `common_ops` extension links one libtorch. Under another torch (an upgrade by
    another package, a nightly, a CUDA 12.8 build installed for a Blackwell GPU) SGLang fails at
    import: `ImportError: .../sgl_kernel/common_ops.abi3.so: undefined symbol:
    _ZN3c104cuda9SetDeviceEa`.

    ## Example
    sgl-kernel 0.1.2.post1 (sglang 0.4.6.post4 pins it with torch 2.6.0) under torch
    2.9.0.dev20250722+cu128.

    ## Fix
    Install the sgl-kernel release sglang pins beside the installed torch, or the torch the
    installed sgl-kernel goes with.

    ## References
    - https://github.com/sgl-project/sglang/issues/5100
    - https://github.com/sgl-project/sglang/issues/8373
    - PyPI wheel metadata of sglang (Requires-Dist sgl-kernel==X and torch==Y)
    """
    failed = [u for u in facts.unresolved_symbols("sgl_kernel") if _TORCH_SYMBOL.match(u.symbol)]
    if failed:  # the loader's line establishes it whatever else is known of the node
        stated = _from_symbol(facts, failed[0].library, failed[0].symbol)
        if stated is not None:
            return [stated]
    dist = facts.dist("sgl-kernel")
    if dist is None:
        return []
    torch = facts.torch_version()
    try:
        version: Version | None = Version(dist.version)
    except InvalidVersion:
        version = None
    pair = facts.matrix.companion("sgl-kernel", version) if version is not None else None
    if pair is not None and pair.torch == public(torch) and not failed:
        return []
    if pair is None and not failed:
        raise Skip(f"the torch sgl-kernel {dist.version} was built for is not in the matrix")
    problem = (
        f"sglang pins it beside torch {pair.torch}"
        if pair is not None and pair.torch != public(torch)
        else f"its {failed[0].library} misses {failed[0].symbol}"
    )
    return [
        Hit(
            f"sgl-kernel {dist.version} was built for another torch than torch {torch} ({problem}): "
            "importing sgl_kernel fails with 'common_ops...so: undefined symbol'",
            evidence={
                "sgl_kernel": dist.version,
                "torch": str(torch),
                **({"paired_torch": str(pair.torch)} if pair is not None else {}),
                **({"symbol": failed[0].symbol} if failed else {}),
            },
            fix=_remedy(facts, torch, pair.torch if pair is not None else None),
        )
    ]


def _from_symbol(facts: Facts, library: str, symbol: str) -> Hit | None:
    """sgl-kernel's `common_ops` missing a torch symbol where the node's sgl-kernel or torch is
    not known: the line alone establishes the cause; the fix is the pairing sglang pins, from
    the matrix when the torch is known, else read from the installed sglang's requirements.
    None when both are known (the pairing check words it)."""
    dist = torch = None
    with contextlib.suppress(Skip):
        dist = facts.dist("sgl-kernel")
    with contextlib.suppress(Skip):
        torch = facts.torch_version()
    if dist is not None and torch is not None:
        return None
    have = f"sgl-kernel {dist.version}" if dist is not None else "the installed sgl-kernel"
    against = f"torch {torch}" if torch is not None else "the installed torch"
    if torch is not None:
        remedy = _remedy(facts, torch, None)
    else:
        remedy = fix(
            "Install the sgl-kernel and torch the installed sglang pins (`pip show sglang`: "
            "Requires sgl-kernel==X, torch==Y): pip install --force-reinstall "
            '"sglang[all]==<installed sglang>" brings both back; or install the sgl-kernel '
            "release built for the installed torch",
            "manual",
            manual("pip show sglang  (Requires: sgl-kernel==X and torch==Y, the pair it pins)"),
            manual('pip install --force-reinstall "sglang[all]==<installed sglang>"'),
            manual("pip install --force-reinstall --no-deps sgl-kernel==<X>  (sglang's pin)"),
        )
    return Hit(
        f"{have} was built for another torch than {against}: its {library} misses {symbol}, a "
        "torch symbol (each sgl-kernel release links one libtorch)",
        evidence={"symbol": symbol, "library": library},
        fix=remedy,
    )
