"""The PTX instruction ptxas refused on a target, and the one architecture whose arch-specific
target has its family (matrices/cuda/ptx_instructions.toml): Hopper's `wgmma` exists on sm_90a
only, so `Instruction 'wgmma.fence' not supported on .target 'sm_120'` is an sm_90 kernel
compiled for sm_120, which no spelling of sm_120 takes. Read by TOR191 and CUD157."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.patterns import lazy
from envcheck.rules.base import LogLine

# ptxas' diagnostic: "<file>.ptx, line N; error   : Instruction 'X' not supported on .target 'sm_120'"
REFUSED = lazy(
    r"(?:Instruction|Feature|Modifier) '(?P<what>[^']+)' not supported on "
    r"\.target '(?P<target>(?:sm|compute)_(?P<digits>[0-9]{2,3}))'"
)


@dataclass(frozen=True)
class Refused:
    """An instruction ptxas refused and the plain target it refused it on."""

    what: str
    digits: str

    @property
    def target(self) -> str:
        return f"sm_{self.digits}"

    @property
    def cc(self) -> Version:
        return Version(f"{int(self.digits[:-1])}.{self.digits[-1]}")


def refused(line: LogLine) -> Refused | None:
    """The instruction and target of ptxas' refusal on ``line``; None where it states none."""
    found = REFUSED.search(line.text)
    return Refused(found.group("what"), found.group("digits")) if found else None


def instruction_arch(matrix: Matrix, what: str) -> Version | None:
    """The one architecture whose arch-specific target has the instruction family ``what``
    names (its first word: 'wgmma.mma_async with FP8 types' -> wgmma); None for a family the
    table does not list."""
    family = re.split(r"[.\s]", what.strip(), maxsplit=1)[0].lower()
    value = matrix.constant(f"ptx.instruction_arch.{family}")
    return Version(f"{value:.1f}") if value is not None else None


def other_arch(matrix: Matrix, line: LogLine) -> tuple[Refused, Version] | None:
    """The refusal and the architecture its instruction belongs to, where that is not the
    target's own (an sm_90a-only wgmma refused on sm_120); None otherwise."""
    found = refused(line)
    if found is None:
        return None
    arch = instruction_arch(matrix, found.what)
    if arch is None or arch == found.cc:
        return None
    return found, arch


def list_names(line: LogLine, cc: Version) -> bool:
    """Whether the TORCH_CUDA_ARCH_LIST the log states names ``cc`` (9.0, 9.0a, 9.0+PTX)."""
    text = line.stated.get("build_arch_list") or ""
    entries = [e for e in re.split(r"[;\s,]+", text.strip()) if e]
    return any(re.fullmatch(rf"{cc.major}\.{cc.minor}[af]?(\+PTX)?", e) for e in entries)


def node_lacks(facts: Facts, cc: Version) -> bool:
    """Whether the node's (or the log's) GPUs are known and none of them is ``cc``."""
    with contextlib.suppress(Skip):
        ccs = {facts.compute_capability(g) for g in facts.gpus()}
        return bool(ccs) and cc not in ccs
    return False


def list_for_other_gpu(facts: Facts, line: LogLine) -> tuple[Refused, Version] | None:
    """An instruction of another architecture refused on a target (wgmma on sm_120), where the
    log's TORCH_CUDA_ARCH_LIST names that architecture and no GPU here has it: the list asks
    for kernels of a GPU the node does not have, and the build compiles them under the
    target's settings (CUD157's cause, not a missing 'a' suffix)."""
    other = other_arch(facts.matrix, line)
    if other is None or not list_names(line, other[1]) or not node_lacks(facts, other[1]):
        return None
    return other
