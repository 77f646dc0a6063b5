"""SIM causes that a log line establishes by itself (``@from_log``): the fix is worded from what
the line states (the GPU it names) and what is known of the node."""

from __future__ import annotations

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.rules.base import Hit, LogLine, from_log
from envcheck.rules.choose import sm
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.torch_build import _upgrade_fix

_BLACKWELL = (Version("12.0"), Version("13.0"))  # SIM105's GPUs: compute capability 12.x


@from_log("SIM105")
def iray_blackwell_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """iray's 'GPU N (<name>) with CUDA compute capability 12.0 is unsupported by this version of
    iray photoreal' names a Blackwell GPU that the Isaac Sim release in use predates (4.5 and
    older; 5.0 added Blackwell). The fix: Isaac Sim >= 5.0; staying on 4.5 (Isaac Lab 2.0/2.1,
    whose installation installs torch 2.5.1+cu118 and `isaaclab --install` puts it back over a
    newer torch), a torch with sm_120 kernels, the closest build the matrix knows."""
    gpus = facts.gpus()  # Skip when the line names no GPU: the rule's documented fix applies
    ccs = sorted({facts.compute_capability(g) for g in gpus})
    blackwell = [cc for cc in ccs if _BLACKWELL[0] <= cc < _BLACKWELL[1]]
    if not blackwell:
        return None  # iray refuses another architecture: not this cause
    try:
        current: Version | None = facts.version("torch")
    except Skip:
        current = None
    torch = _upgrade_fix(facts, blackwell, current)
    names = ", ".join(dict.fromkeys(g.name for g in gpus if g.name)) or "the GPU"
    archs = ", ".join(sm(cc) for cc in blackwell)
    actions = [manual("create a Python 3.11 environment and install Isaac Sim 5.x")]
    summary = "Use Isaac Sim >= 5.0 (Python 3.11) on Blackwell GPUs"
    if torch is not None:
        build = torch.summary.split(",", 1)[0].removeprefix("Install ")
        summary += (
            f"; to stay on Isaac Sim 4.5 (Isaac Lab 2.0/2.1, whose installer puts back torch "
            f"2.5.1+cu118 without {archs} kernels), reinstall {build} after every "
            "`isaaclab.sh --install` / `isaaclab.bat --install`, and torchvision from the same index"
        )
        actions += list(torch.actions)
    return Hit(
        f"{names} ({archs}) is unsupported by the Isaac Sim release's iray renderer (line "
        f"{line.line}): Isaac Sim 4.5 and older predate Blackwell",
        evidence={"line": line.line, "gpu_archs": [sm(cc) for cc in blackwell]},
        fix=fix(summary, "manual", *actions),
    )
