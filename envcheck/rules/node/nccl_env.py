"""NCCL settings that pin what NCCL would otherwise detect (NET120): a graph or topology file
injected through the environment or NCCL's configuration files (/etc/nccl.conf,
~/.nccl.conf), which VM images ship for one machine size and which then break NCCL on another."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# a graph file (the rings and trees NCCL would search for) is never meant for production; a
# topology file (NCCL_TOPO_FILE) is right where it describes the machine, and is not flagged
_STATED = lazy(r"NCCL_GRAPH_FILE set by environment to (?P<path>\S+)")
# graph/xml.cc: 'Could not open XML graph file %s : %s' (the file NCCL_GRAPH_FILE names)
_MISSING = lazy(r"Could not open XML graph file (?P<path>\S+) : (?P<error>.+)")


def _steps(var: str) -> tuple[str, ...]:
    return (
        f"unset {var}   # in the job's environment (and the launcher's: mpirun -x, srun --export)",
        f"grep -n {var} /etc/nccl.conf ~/.nccl.conf   # NCCL reads both: delete the line there",
    )


@rule("NET120", "nccl-graph-file-injected", Severity.WARNING)
def nccl_graph_file(facts: Facts) -> Iterable[Hit]:
    """NCCL_GRAPH_FILE (or a topology file for another machine) replaces NCCL's own detection

    ## What it checks
    `NCCL_GRAPH_FILE` in the environment; in `triage`, NCCL's INFO line
    `NCCL_GRAPH_FILE set by environment to <file>` (NCCL prints it for the variable and for the
    same key in /etc/nccl.conf or ~/.nccl.conf) and the graph import's own failure
    `XML Import Channel : dev N not found`.

    ## Why it matters
    A graph file fixes the rings and trees NCCL would search for; one written for another GPU
    count or machine makes communicator creation fail (`ncclSystemError`, `ncclInternalError`,
    `XML Import Channel : dev 1 not found`) or run several times slower. Cloud HPC images (Azure's
    NC A100 v4 images: /opt/microsoft/ncv4/graph.xml) set it in /etc/nccl.conf, so users who never
    set it see it. NCCL's maintainers: it should never be set in production.

    ## Example
    `NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml` before
    `ncclSystemError: System call (e.g. socket, malloc) or external library call failed` on a VM
    with fewer GPUs than the graph describes.

    ## Fix
    `unset NCCL_GRAPH_FILE` and delete the key from /etc/nccl.conf and ~/.nccl.conf. Keep
    NCCL_TOPO_FILE only where it describes this machine (inside a VM it can be right).

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
    - https://github.com/NVIDIA/nccl/issues/1240
    - https://github.com/NVIDIA/nccl/issues/1008
    - https://github.com/Azure/azurehpc/pull/730
    """
    path = facts.env().get("NCCL_GRAPH_FILE")
    if not path:
        return []
    return [
        Hit(
            f"NCCL_GRAPH_FILE={path} is set: NCCL uses that graph instead of searching its own, "
            "and one for another GPU count or machine breaks or slows every communicator",
            evidence={"NCCL_GRAPH_FILE": path},
            fix=fix(
                "unset NCCL_GRAPH_FILE (and delete it from /etc/nccl.conf, ~/.nccl.conf)",
                "manual",
                *(manual(step) for step in _steps("NCCL_GRAPH_FILE")),
            ),
        )
    ]


@from_log("NET120")
def nccl_graph_file_in_log(facts: Facts, line: LogLine) -> Hit:
    """NCCL's echo of an injected graph file, or the graph import's failure."""
    stated = _STATED.search(line.text)
    missing = _MISSING.search(line.text)
    path = stated.group("path") if stated else missing.group("path") if missing else None
    said = (
        f"NCCL_GRAPH_FILE names {path}, which NCCL could not open ({missing.group('error')})"
        if missing
        else f"NCCL_GRAPH_FILE is set to {path}"
        if path
        else "NCCL imported a graph file (NCCL_GRAPH_FILE) that names a GPU this job lacks"
    )
    return Hit(
        f"{said} (line {line.line}): NCCL uses that graph instead of searching its own, and one "
        "for another GPU count or machine fails or slows every communicator (it should never be "
        "set in production)",
        evidence={"line": line.line, "file": path},
        fix=fix(
            "unset NCCL_GRAPH_FILE (and delete it from /etc/nccl.conf, ~/.nccl.conf)",
            "manual",
            *(manual(step) for step in _steps("NCCL_GRAPH_FILE")),
        ),
        severity=Severity.WARNING,
    )
