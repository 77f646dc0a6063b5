"""Where each kind of matrix entry lives: the domain folders of ``matrices/`` (matrices/README.md).

``envcheck matrix validate`` names the folder for an entry filed anywhere else, so a new entry
lands where the next reader will look for it. A site overlay may stay flat: only files inside
one of these folders, or at the top of the built-in tree, are held to them.
"""

from __future__ import annotations

from pathlib import Path

FOLDERS: dict[str, str] = {
    "hardware": "GPU models, OS releases (glibc, libstdc++), libstdc++ symbol versions -> GCC, host and driver known-bad setups, driver Xid events",
    "cuda": "drivers and CUDA toolkits, CUDA libraries (cuBLAS, NCCL, cuDNN) and their known-bad setups, shared-library names and the packages that ship them",
    "torch": "torch releases and wheel indexes, companions built for a torch, torch known-bad pairings",
    "packages": "vLLM, Ray, flash-attn and other package families: releases, bounds, features",
    "simulators": "Isaac Sim and OmniGibson releases and their known-bad setups",
    "signatures": "log signatures for triage, one file per failure family",
}

PLACES: dict[str, tuple[str, ...]] = {
    "toolkit": ("cuda",),
    "driver_branch": ("cuda",),
    "sm": ("cuda",),
    "gpu": ("hardware",),
    "os_release": ("hardware",),
    "soname": ("cuda",),
    "libstdcxx": ("hardware",),
    "torch": ("torch",),
    "torch_index": ("torch",),
    "companion": ("torch",),
    "legacy_torch": ("torch",),
    "override": ("torch", "cuda"),
    "vllm": ("packages",),
    "ray": ("packages",),
    "flash_attn": ("packages",),
    "bound": ("packages",),
    "wheel_platform": ("packages", "torch"),
    "first_release": ("packages",),
    "ptx_isa": ("cuda",),
    "import_name": ("packages",),
    "removed_symbol": ("packages",),
    "keyword_change": ("packages",),
    "isaacsim": ("simulators",),
    "omnigibson": ("simulators",),
    "constant": ("packages", "hardware", "simulators", "cuda"),
    "known_bad": ("hardware", "cuda", "torch", "packages", "simulators"),
    "signature": ("signatures",),
    "cuda_error": ("cuda",),
    "arch_floor": ("packages", "cuda"),
    "extension": ("packages",),
    "gpu_build": ("packages",),
    "xid": ("hardware",),
}


def misplaced(path: str, table: str, builtin: Path) -> str | None:
    """Why an entry of ``table`` read from ``path`` is in the wrong place, or None."""
    folders = PLACES.get(table)
    if folders is None:  # the tables `matrix refresh` writes (generated/)
        return None
    file = Path(path)
    parent = file.parent.name
    at_top = file.parent.resolve() == builtin.resolve()
    if parent not in FOLDERS and not at_top:
        return None
    if parent in folders:
        return None
    where = " or ".join(f"{f}/" for f in folders)
    return f"a [[{table}]] entry belongs in {where} (matrices/README.md)"
