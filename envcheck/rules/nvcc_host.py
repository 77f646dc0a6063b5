"""nvcc's host compiler check as data: the newest gcc major each CUDA toolkit accepts (the
matrix's ``nvcc.gcc_max.<cuda>`` constants, matrices/cuda/host_compilers.toml), the CUDA release
a build's own path or banner names, and the first listed toolkit that accepts a given gcc. The
words SYS131 prints when nvcc refuses the host gcc."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix
from envcheck.patterns import lazy

_PREFIX = "nvcc.gcc_max."
# the toolkit's release in the paths a build prints: /usr/local/cuda-12.1/include/...,
# /opt/cuda/10.0/bin/nvcc, a conda or Nix package's cuda_nvcc-12.4.99, CUDA\v11.8\bin
_PATH_CUDA = lazy(
    r"(?:cuda[-_/]|cuda_nvcc-|CUDA[/\\]v)(?P<release>[0-9]{1,2}\.[0-9]{1,2})(?:[./\\-]|$)"
)


def _release(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def gcc_ceilings(matrix: Matrix) -> list[tuple[Version, int]]:
    """(CUDA release, newest gcc major its nvcc accepts), oldest release first."""
    rows = []
    for name, const in matrix.constants.items():
        if name.startswith(_PREFIX) and (cuda := _release(name[len(_PREFIX) :])) is not None:
            rows.append((cuda, int(const.value)))
    return sorted(rows)


def gcc_max(matrix: Matrix, cuda: str) -> int | None:
    """The newest gcc major CUDA ``cuda`` (``12.1``, ``12.1.105``) accepts; None if not listed."""
    release = _release(cuda)
    if release is None:
        return None
    key = f"{release.major}.{release.minor}" if len(release.release) > 1 else f"{release.major}.0"
    value = matrix.constant(_PREFIX + key)
    return int(value) if value is not None else None


def first_cuda_for_gcc(matrix: Matrix, gcc: int) -> tuple[Version, int] | None:
    """The oldest listed CUDA release whose nvcc accepts gcc ``gcc``, with its ceiling; None
    when no listed release does (then only "a newer toolkit" is known)."""
    return next(((cuda, top) for cuda, top in gcc_ceilings(matrix) if top >= gcc), None)


def cuda_in_text(text: str) -> str | None:
    """The CUDA release a line's toolkit path names (``/usr/local/cuda-9.0/...`` -> ``9.0``)."""
    found = _PATH_CUDA.search(text)
    return found.group("release") if found else None


def range_top(accepted: str | None) -> int | None:
    """The newest gcc major a range as torch's cpp_extension prints it accepts (``>=6.0.0,
    <13.0`` -> 12: one below an exclusive bound of a whole major, the bound itself when
    inclusive); None without a readable upper bound."""
    if not accepted:
        return None
    for piece in accepted.split(","):
        part = piece.strip()
        inclusive = part.startswith("<=")
        if not part.startswith("<"):
            continue
        try:
            bound = Version(part.lstrip("<=").strip())
        except InvalidVersion:
            return None
        whole = bound.minor == 0 and bound.micro == 0
        return bound.major if inclusive or not whole else bound.major - 1
    return None
