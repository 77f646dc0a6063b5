"""TOR101 from a ROCm line: HIP's `invalid device function` and `hipErrorNoBinaryForGpu`
say the ROCm build (torch's, or a ROCm library's) has no code object for the AMD GPU's gfx
target. The fix threads establish is ROCm's HSA_OVERRIDE_GFX_VERSION, which makes the runtime
load a supported target's code objects on a GPU of the same family (10.3.0 for RDNA2's
gfx103x, 11.0.0 for RDNA3's gfx110x and gfx115x), else a build that lists the target."""

from __future__ import annotations

from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual

ROCM_SIGNATURES = frozenset({"hip-invalid-device-function", "rocm-no-code-object-for-gpu"})

_GFX = lazy(r"gfx(?P<num>[0-9]{3,4})[a-z]?")
# gfx family -> the supported target of the same family that HSA_OVERRIDE_GFX_VERSION names
# (ROCm/tensorflow-upstream#1800 and ROCm/rocALUTION#197: 10.3.0 for gfx1031; pytorch#164346:
# 11.0.0 for gfx1151)
_OVERRIDES = (
    (lazy(r"^103[0-9]$"), "10.3.0", "RDNA2"),
    (lazy(r"^11[05][0-9]$"), "11.0.0", "RDNA3"),
)


def _override(gfx: str | None) -> tuple[str, str] | None:
    if gfx is None:
        return None
    found = _GFX.fullmatch(gfx)
    if found is None:
        return None
    for family, value, name in _OVERRIDES:
        if family.match(found.group("num")):
            return value, name
    return None


def rocm_arch_hit(line: LogLine) -> Hit:
    """The ROCm build lacks the GPU's gfx target: the override for its family, else a build
    for it."""
    gfx = line.stated.get("amd_gfx")
    known = _override(gfx)
    target = f" ({gfx})" if gfx else ""
    if known is not None:
        value, family = known
        summary = (
            f"Run with HSA_OVERRIDE_GFX_VERSION={value} (the {family} target the ROCm build "
            f"has) set before the program starts; otherwise a ROCm build that lists {gfx}"
        )
        steps = [manual(f"export HSA_OVERRIDE_GFX_VERSION={value}")]
    else:
        summary = (
            "Set HSA_OVERRIDE_GFX_VERSION to the supported target of the GPU's family before the "
            "program starts (10.3.0 for RDNA2 gfx103x, 11.0.0 for RDNA3 gfx110x/gfx115x; "
            "rocminfo | grep gfx names the GPU's), or install a ROCm build that lists its gfx "
            "target"
        )
        steps = [
            manual("rocminfo | grep -m1 -o 'gfx[0-9a-f]*'  (the GPU's target)"),
            manual("export HSA_OVERRIDE_GFX_VERSION=10.3.0  (RDNA2; 11.0.0 for RDNA3)"),
        ]
    steps.append(
        manual(
            "or a build for the target: a newer ROCm torch wheel, or a source build with "
            "PYTORCH_ROCM_ARCH=<gfx target>"
        )
    )
    return Hit(
        f"the ROCm build has no code object for the AMD GPU's target{target} (line "
        f"{line.line}): HIP finds no kernel for it",
        evidence={"line": line.line, "gfx": gfx},
        fix=fix(summary, "manual", *steps),
    )
