"""GPU architectures by name and by compute capability, read from the GPU table
(matrices/hardware/gpus.toml): the floor a library states as an architecture name ('Ampere GPUs
or newer', 'requires Hopper') and the GPUs that meet a floor, named in a fix."""

from __future__ import annotations

import re

from packaging.version import Version

from envcheck.matrix.model import Matrix
from envcheck.patterns import lazy

# an architecture's family as the table writes it: 'Blackwell (consumer/workstation)' and
# 'Blackwell Ultra' are Blackwell's, 'Ada Lovelace' is Ada's; the embedded parts (Tegra, Thor)
# are named apart so a fix's examples stay data-centre and desktop GPUs
_EMBEDDED = lazy(r"\((?:Tegra|Thor)\)")


def _family(architecture: str) -> str:
    return re.sub(r"\s*\(.*\)\s*$", "", architecture).strip()


def architecture_floor(matrix: Matrix, name: str) -> Version | None:
    """The lowest compute capability of the GPUs of the architecture ``name`` names (Ampere:
    8.0, Ada or Lovelace: 8.9, Blackwell: 10.0); None when the table has none of it."""
    wanted = name.strip().lower()
    found = [
        g.compute_capability
        for g in matrix.gpus
        if wanted and wanted in _family(g.architecture).lower().split()
    ]
    return min(found) if found else None


def gpus_at_or_above(matrix: Matrix, floor: Version, per_family: int = 3) -> str:
    """The GPU families at or above ``floor``, oldest first, each with a few of its models
    that meet it: 'Ampere (A100, A30, A800), Ada Lovelace (L4, L40, L40S), ...'."""
    families: dict[str, list[tuple[Version, str]]] = {}
    for gpu in matrix.gpus:
        if gpu.compute_capability < floor or _EMBEDDED.search(gpu.architecture):
            continue
        name = re.sub(r"^NVIDIA ", "", gpu.name)
        families.setdefault(_family(gpu.architecture), []).append((gpu.compute_capability, name))
    ordered = sorted(families.items(), key=lambda kv: min(cc for cc, _ in kv[1]))
    return ", ".join(
        f"{family} ({', '.join(n for _, n in models[:per_family])})" for family, models in ordered
    )
