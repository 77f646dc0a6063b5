"""SIM125: Omniverse Kit's renderer (Isaac Sim, Isaac Lab, OmniGibson) ran out of GPU resource
descriptors, ``[Fatal] [gpu.foundation.plugin] Out of resource descriptors!``, and stops. Two
causes are on record for the same line. Kit's own table of descriptors is fixed in size, and a
scene that keeps creating render resources fills it: the warning after the fatal line states it,
``Exceeding capacity of resource descriptors 458753 / 458752``, and NVIDIA's answer is Kit 107
or newer (Isaac Sim 5.0 runs Kit 107.3; 4.5 ran Kit 106.5). Where the log states no capacity, the
process's open-files limit is the other: on Linux the Vulkan driver and CUDA interop hold GPU
objects as file descriptors, and a reporter whose Isaac Sim 4.5 used about 1,400 of them under
Ubuntu's 1,024 fixed it by raising ``ulimit -n``."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.worker_limits import open_files_limit

# the Kit release that fixes the descriptor table filling up, and the first Isaac Sim on it
# (NVIDIA-Omniverse/kit-xr-samples#1; Isaac Sim 5.0.0 release notes: 'Updated to Kit 107.3.1')
_KIT_FIXED = "107"
_ISAACSIM_ON_FIXED_KIT = "5.0"
_RAISE_LIMIT = (
    "ulimit -n 65536  (in the shell that starts Isaac Sim; persistent: a nofile line in "
    "/etc/security/limits.conf; in a container: docker run --ulimit nofile=65536:65536)"
)


@rule("SIM125", "kit-resource-descriptors-exhausted", Severity.ERROR)
def kit_resource_descriptors(facts: Facts) -> Iterable[Hit]:
    """Omniverse Kit (Isaac Sim) ran out of GPU resource descriptors and stopped

    ## What it checks
    Only a log states it: Kit's `[Fatal] [gpu.foundation.plugin] Out of resource descriptors!`,
    and the warning that may follow it with the table's size, `Exceeding capacity of resource
    descriptors 458753 / 458752`.

    ## Why it matters
    Kit stops the app (Isaac Sim, an Isaac Lab or OmniGibson run) when it cannot create another
    render resource, often minutes into a run. The same line has two causes on record: Kit's
    fixed table of descriptors filling up (stated by the capacity warning; fixed in Kit 107),
    and the process's open-files limit, since on Linux the Vulkan driver and CUDA interop hold
    GPU objects as file descriptors (Ubuntu's default `ulimit -n` is 1024).

    ## Example
    Isaac Sim 4.5 with a drone simulator crashes 30-60 s after the drone spawns:
    `[98,492ms] [Fatal] [gpu.foundation.plugin] Out of resource descriptors!`; it ran with the
    open-files limit raised.

    ## Fix
    With the capacity warning: Isaac Sim 5.0 or newer (Kit 107.3; 4.5 runs Kit 106.5), or fewer
    render products, cameras or UI widgets in the scene. Without it: raise the open-files limit
    of the shell that starts Isaac Sim (`ulimit -n 65536`; persistent: `nofile` in
    /etc/security/limits.conf; a container: `docker run --ulimit nofile=65536:65536`).

    ## References
    - https://github.com/NVIDIA-Omniverse/kit-xr-samples/issues/1
    - https://github.com/PegasusSimulator/PegasusSimulator/issues/86
    - https://docs.isaacsim.omniverse.nvidia.com/5.0.0/overview/release_notes.html
    """
    raise Skip("only a log line states Kit's descriptors ran out", "log.kit_descriptors")


@from_log("SIM125")
def kit_resource_descriptors_in_log(facts: Facts, line: LogLine) -> Hit:
    """The capacity warning decides which cause comes first; the other stays as the next step."""
    capacity = line.stated.get("kit_descriptors")
    limit = open_files_limit(facts)
    upgrade = (
        f"Isaac Sim {_ISAACSIM_ON_FIXED_KIT} or newer (Kit {_KIT_FIXED}.3; Isaac Sim 4.5 runs "
        "Kit 106.5), or fewer render products, cameras or UI widgets in the scene"
    )
    if capacity is not None:
        said = (
            f"Kit's table of GPU resource descriptors is full ({capacity}, line {line.line}): "
            f"a Kit issue NVIDIA fixed in Kit {_KIT_FIXED}"
        )
        summary = (
            f"Upgrade to {upgrade}; if the open-files limit is low, raise it too (ulimit -n 65536)"
        )
        steps = (manual(upgrade), manual(_RAISE_LIMIT))
    else:
        said = (
            f"Kit could not create another GPU resource (line {line.line}): most often the "
            "process's open-files limit, which Vulkan's and CUDA interop's GPU objects count "
            f"against; else Kit's own descriptor table (fixed in Kit {_KIT_FIXED}){limit}"
        )
        summary = (
            "Raise the open-files limit of the shell that starts Isaac Sim (ulimit -n 65536; "
            f"persistent: nofile in /etc/security/limits.conf); if it persists, {upgrade}"
        )
        steps = (manual(_RAISE_LIMIT), manual(upgrade))
    return Hit(
        f"Omniverse Kit ran out of GPU resource descriptors: {said}",
        evidence={"line": line.line, "capacity": capacity},
        fix=fix(summary, "manual", *steps),
    )
