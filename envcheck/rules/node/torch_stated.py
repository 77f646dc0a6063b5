"""TOR101 from a log line: torch's own warning that a GPU's architecture is not in its build
(`NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch
installation`) establishes the cause; the finding names the builds that have the kernels."""

from __future__ import annotations

from packaging.version import Version

from envcheck.rules.base import Hit, LogLine, Skip, from_log
from envcheck.rules.choose import sm
from envcheck.rules.facts import Facts
from envcheck.rules.node.torch_build import _upgrade_fix


@from_log("TOR101")
def arch_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    """The GPU the warning names (its compute capability, read from the line or the node) has
    no kernels in the installed torch: the fix is the closest torch build the matrix knows with
    kernels for it, on the index of its CUDA variant (the driver's CUDA bound, where known)."""
    gpus = facts.gpus()  # Skip when the log states no GPU: the rule's documented fix applies
    ccs = sorted({facts.compute_capability(g) for g in gpus})
    try:  # the installed torch, where the node's facts know it
        current: Version | None = facts.version("torch")
    except Skip:
        current = None
    step = _upgrade_fix(facts, list(ccs), current)
    if step is None:
        raise Skip("no torch build the matrix knows has kernels for the GPU", "packages")
    names = ", ".join(dict.fromkeys(g.name for g in gpus if g.name)) or "the GPU"
    archs = ", ".join(sm(cc) for cc in ccs)
    have = f"torch {current}" if current is not None else "the installed torch"
    return Hit(
        f"{names} ({archs}) has no kernels in {have} (line {line.line}: torch's own warning): "
        "every CUDA kernel fails with 'no kernel image is available'",
        evidence={"line": line.line, "gpu_archs": [sm(cc) for cc in ccs], "torch": str(current)},
        fix=step,
    )
