"""flash-attn compiled against the installed torch (TOR103's fix where no release wheel loads).

flash-attn's setup.py never compiles when it can download a release wheel: its
CachedWheelsCommand builds the wheel's name from torch's major.minor, torch's CUDA major and
torch's C++ ABI flag (get_wheel_url) and installs that wheel; only a failed download or
`FLASH_ATTENTION_FORCE_BUILD=TRUE` makes it compile (Dao-AILab/flash-attention setup.py, from
v2.3.6 to today's). So `pip install flash-attn --no-build-isolation` on a torch that no release
wheel was built against (NGC's `2.2.0a0+6a974be`, a nightly, a source build) downloads the
same wheel again, and the import fails again with the same undefined symbol; the thread's fix
is the build from source (flash-attention#709)."""

from __future__ import annotations

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.model.finding import Action, Fix
from envcheck.model.report import SystemInfo
from envcheck.patterns import lazy
from envcheck.rules.fixes import fix, manual, pip_uninstall

# the local labels of PyTorch's own wheels (+cu121, +cpu, +rocm6.1): release wheels of flash-attn
# are built against these torch releases
_TORCH_VARIANT = lazy(r"cu\d+|cpu|rocm[\d.]+")
# NVIDIA's PyTorch container (signatures/device_torch_stated.toml, ngc-pytorch-image-named)
_NGC_PYTORCH = lazy(r"nvcr\.io/nvidia/pytorch:")
FORCE_BUILD = "FLASH_ATTENTION_FORCE_BUILD"
# the compile needs the installed torch (no isolated build env) and bounded jobs: flash-attn's
# README ('MAX_JOBS=4 pip install flash-attn --no-build-isolation')
FORCE_BUILD_COMMAND = (
    f"{FORCE_BUILD}=TRUE MAX_JOBS=4 pip install flash-attn --no-build-isolation --no-cache-dir"
)


def no_release_wheel(torch: Version | None) -> str | None:
    """Why no flash-attn release wheel was built against ``torch`` (a pre-release, nightly or
    vendor build: `2.2.0a0+6a974be`, `2.4.0.dev20240501`, `2.6.0a0+ecf3bae40a.nv25.01`); None for
    a release (with or without PyTorch's own +cuXXX / +cpu label) or an unknown torch."""
    if torch is None:
        return None
    if torch.is_prerelease or torch.is_devrelease:
        return f"torch {torch} is a pre-release or vendor build"
    if torch.local and not _TORCH_VARIANT.fullmatch(torch.local):
        return f"torch {torch} is a source or vendor build (+{torch.local})"
    return None


def ngc_image(facts: Facts) -> str | None:
    """NVIDIA's PyTorch container image a log names (nvcr.io/nvidia/pytorch:23.11-py3), whose
    torch is NVIDIA's own pre-release build; None when no log names one."""
    section = facts.report.system
    info = section.data if section.is_ok else None
    image = info.container_image if isinstance(info, SystemInfo) else None
    return image if image and _NGC_PYTORCH.match(image) else None


def source_build_fix(what: str, why: str) -> Fix:
    """Compile flash-attn here against ``what`` (the installed torch), ``why`` being the reason
    no release wheel loads on it."""
    return fix(
        f"Build flash-attn here against {what}: {why}, and no flash-attn release wheel was "
        f"built against it (setup.py downloads the wheel for torch's major.minor unless "
        f"{FORCE_BUILD}=TRUE): pip uninstall -y flash-attn, then {FORCE_BUILD_COMMAND}",
        "safe",
        pip_uninstall("flash-attn"),
        manual(FORCE_BUILD_COMMAND),
    )


def source_build_after(summary: str) -> tuple[str, Action]:
    """``summary`` with the build from source as the next step when the reinstall fetches a
    release wheel that fails the same way, and that step as a (manual) action."""
    text = (
        f"{summary}; if the same undefined symbol comes back (a torch no release wheel was "
        f"built against: an NGC container's, a nightly, a source build), compile it here: "
        f"{FORCE_BUILD_COMMAND} (setup.py otherwise downloads the release wheel again)"
    )
    return text, manual(f"if it fails the same way: {FORCE_BUILD_COMMAND}")
