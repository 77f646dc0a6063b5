"""TOR141: a FlashAttention 1.x extension (flash_attn_cuda) built against another torch. flash-attn
1.0.5 is the one release whose pyproject.toml lists an unpinned `torch` among its build
requirements, so pip compiles it in an isolated environment against the newest torch on the
index instead of the installed one (v1.0.4 had no pyproject.toml; v1.0.6 dropped torch from it)."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, pip_install, pip_uninstall

_ISOLATED = Version("1.0.5")  # Dao-AILab/flash-attention v1.0.5:pyproject.toml
_BEFORE = "1.0.4"  # the release before it: flash-attention#235 ("1.0.4 made the test pass")
_EXTENSION = "flash_attn_cuda"  # FlashAttention 1.x; 2.x builds flash_attn_2_cuda
_TORCH_SYMBOL = lazy(r"^_ZN?K?(?:3c10|2at|5torch)")


def _installed(facts: Facts) -> Version | None:
    try:
        return facts.version("flash-attn")
    except Skip:
        return None


def _rebuild(facts: Facts, installed: Version | None) -> Fix:
    """Rebuild against the installed torch: the installed 1.x release, or the one before 1.0.5."""
    pin = str(installed) if installed is not None and installed != _ISOLATED else _BEFORE
    return fix(
        f"Rebuild flash-attn {pin} against the installed torch with --no-build-isolation "
        f"(flash-attn {_ISOLATED} declares an unpinned torch as a build requirement, so pip "
        f"compiles it against the newest torch on the index; flash-attn=={_BEFORE} is the "
        "release before that change)",
        "safe",
        pip_uninstall("flash-attn"),
        pip_install(f"flash-attn=={pin}", flags=("--no-build-isolation", "--no-cache-dir")),
    )


def _torch(facts: Facts) -> str:
    try:
        return f"torch {facts.torch_version()}"
    except Skip:
        return "the installed torch"


@rule("TOR141", "flash-attn-1-built-for-other-torch", Severity.ERROR)
def flash_attn1_other_torch(facts: Facts) -> Iterable[Hit]:
    """FlashAttention 1.x was compiled against another torch

    ## What it checks
    A log that shows FlashAttention 1.x's extension failing to load on a torch symbol
    (`flash_attn_cuda...so: undefined symbol: _ZN3c10...`), and flash-attn 1.0.5 installed from
    source: that release's pyproject.toml requires an unpinned `torch` to build, so pip builds
    it in an isolated environment against the newest torch on the index.

    ## Why it matters
    The extension links the torch it was compiled with; under the installed torch it fails to
    import: `ImportError: .../flash_attn_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol:
    _ZN3c104impl8GPUTrace13gpuTraceStateE` (built with torch 2.0, loaded in torch 1.12).

    ## Example
    flash-attn 1.0.5 installed by `pip install flash-attn` on torch 1.12.1+cu116 (a T4 node).

    ## Fix
    Rebuild it with `--no-build-isolation` so it compiles against the installed torch (1.0.4,
    the release before the change, builds that way by default).

    ## References
    - https://github.com/Dao-AILab/flash-attention/issues/235
    - Dao-AILab/flash-attention v1.0.5:pyproject.toml (requires "torch"); v1.0.6:pyproject.toml (does not)
    """
    failed = [u for u in facts.unresolved_symbols(_EXTENSION) if _TORCH_SYMBOL.match(u.symbol)]
    installed = _installed(facts)
    if failed:
        first = failed[0]
        return [
            Hit(
                f"FlashAttention 1.x's extension {first.library} does not load against "
                f"{_torch(facts)}: undefined symbol {first.symbol}: it was compiled against "
                "another torch",
                evidence={"library": first.library, "symbol": first.symbol},
                fix=_rebuild(facts, installed),
            )
        ]
    if installed is None:
        if facts.dist("flash-attn") is None:
            return []
        raise Skip("the flash-attn version is not a PEP 440 version")
    if installed != _ISOLATED:
        return []
    return [
        Hit(
            f"flash-attn {installed} installed from source is compiled against the newest torch "
            f"on the index, not {_torch(facts)}, unless pip ran with --no-build-isolation: "
            "importing it fails with 'flash_attn_cuda...so: undefined symbol'",
            evidence={"flash_attn": str(installed)},
            fix=_rebuild(facts, installed),
            severity=Severity.WARNING,
        )
    ]


@from_log("TOR141")
def flash_attn1_in_log(facts: Facts, line: LogLine) -> Hit:
    """The failing load of flash_attn_cuda on a torch symbol establishes the cause."""
    failed = [u for u in facts.unresolved_symbols(_EXTENSION) if _TORCH_SYMBOL.match(u.symbol)]
    if not failed:
        raise NotStated("the line names no torch symbol that flash_attn_cuda misses")
    first = failed[0]
    return Hit(
        f"FlashAttention 1.x's extension {first.library} does not load against {_torch(facts)} "
        f"(line {line.line}): undefined symbol {first.symbol}: it was compiled against another "
        "torch",
        evidence={"line": line.line, "library": first.library, "symbol": first.symbol},
        fix=_rebuild(facts, _installed(facts)),
    )
