"""NCCL settings that pin what NCCL would otherwise detect (NET120): a graph or topology file
injected through the environment or NCCL's configuration files (/etc/nccl.conf,
~/.nccl.conf), which VM images ship for one machine size and which then break NCCL on another;
NET125, NCCL_ALGO / NCCL_PROTO that leave a collective no algorithm."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
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
    `XML Import Channel : dev N not found`; NCCL refusing a topology XML it was given
    (NCCL_TOPO_FILE, which the aws-ofi-nccl plugin sets itself for the instance types it ships a
    file for): `Attribute arch of node cpu not found`, `XML Topology has wrong version 1, 2
    needed`, with the file and the plugin where NCCL's and the plugin's INFO lines state them.

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
    NCCL_TOPO_FILE only where it describes this machine (inside a VM it can be right); one NCCL
    rejects: unset it, or dump this machine's with `NCCL_TOPO_DUMP_FILE`; aws-ofi-nccl's static
    file: update the plugin (newer releases generate the topology for the GPUs NCCL finds).

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
    - https://github.com/NVIDIA/nccl/issues/1240
    - https://github.com/NVIDIA/nccl/issues/1008
    - https://github.com/Azure/azurehpc/pull/730
    - https://github.com/NVIDIA/nccl/issues/379
    - https://github.com/aws/aws-ofi-nccl/issues/785
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


_TOPOLOGY_REJECTED = "nccl-topology-xml-rejected"
# xml.cc: 'XML Graph has wrong version %d, %d needed' is the graph file's, the rest the topology's
_GRAPH_VERSION = lazy(r"XML Graph has wrong version (?P<have>[0-9]+), (?P<need>[0-9]+) needed")


def _topology_rejected(line: LogLine) -> Hit:
    """NCCL's own XML lines refusing the topology file it was given (NCCL_TOPO_FILE, which the
    aws-ofi-nccl plugin sets itself on the instance types it ships a file for): the file is
    older than the NCCL reading it or describes other GPUs; the plugin's file is replaced by
    updating the plugin, a hand-made one by NCCL's own dump of this machine."""
    path = line.stated.get("nccl_topo_file")
    attribute = line.stated.get("xml_attribute")
    graph = _GRAPH_VERSION.search(line.text)
    loaded = line.stated.get("nccl_net_plugin") or ""
    plugin = bool(path and "ofi-nccl" in path) or any(
        name in loaded for name in ("AWS Libfabric", "aws-ofi-nccl")
    )
    what = (
        f"NCCL's graph file (NCCL_GRAPH_FILE) has format version {graph.group('have')}, this "
        f"NCCL reads {graph.group('need')}"
        if graph
        else f"the topology XML NCCL was given ({path or 'NCCL_TOPO_FILE'}) "
        + (f"has no {attribute}" if attribute else "is not one this NCCL reads")
    )
    if graph:
        summary = "unset NCCL_GRAPH_FILE (and delete it from /etc/nccl.conf, ~/.nccl.conf)"
        steps = _steps("NCCL_GRAPH_FILE")
    elif plugin:
        summary = (
            "Update the aws-ofi-nccl plugin"
            + (f" ({loaded})" if loaded else "")
            + f": {path or 'NCCL_TOPO_FILE'} is the static topology file it sets for the instance "
            "type (newer releases generate the topology for the GPUs NCCL finds), or set "
            "NCCL_TOPO_FILE to a file this NCCL reads"
        )
        steps = (
            "install a current aws-ofi-nccl (the EFA installer or the image's plugin); its "
            "maintainers point to v1.13.2-aws or later for this failure",
            "or, until then, export NCCL_TOPO_FILE=<a topology NCCL dumped on this machine: "
            "NCCL_TOPO_DUMP_FILE=/tmp/topo.xml>, which the plugin leaves as set",
        )
    else:
        summary = (
            "unset NCCL_TOPO_FILE (NCCL detects the topology itself), or regenerate the file on "
            "this machine with this NCCL (NCCL_TOPO_DUMP_FILE=/tmp/topo.xml writes it)"
        )
        steps = (
            *_steps("NCCL_TOPO_FILE"),
            "NCCL_TOPO_DUMP_FILE=/tmp/topo.xml <the job>   # the topology this NCCL detects here",
        )
    if not graph and _before_cpu_fix(line, attribute):
        # NCCL before 2.8 read a CPU's attributes only for a CPU with a GPU in use: a topology
        # file used by a job on a subset of the GPUs failed (NVIDIA/nccl#379, 'fixed in 2.8')
        summary += (
            "; a job on a subset of the GPUs needs NCCL 2.8 or newer (earlier releases do not "
            "read the cpu nodes of GPUs it does not use): upgrade NCCL"
        )
        steps = (
            *steps,
            "upgrade NCCL to 2.8 or newer (a torch release that bundles it, or the "
            "nvidia-nccl-cu11 / nvidia-nccl-cu12 wheel)",
        )
    return Hit(
        f"{what} (line {line.line}): NCCL rejects the file and fails communicator creation",
        evidence={"line": line.line, "file": path, "attribute": attribute},
        fix=fix(summary, "manual", *(manual(step) for step in steps)),
        severity=Severity.WARNING,
    )


def _before_cpu_fix(line: LogLine, attribute: str | None) -> bool:
    """Whether the log leaves open an NCCL older than 2.8 missing a cpu node's attribute: the
    release that fixed reading them for CPUs without a GPU in use (NVIDIA/nccl#379)."""
    if not attribute or not attribute.endswith("of node cpu"):
        return False
    stated = line.stated.get("nccl_version")
    if not stated:
        return True
    with contextlib.suppress(InvalidVersion):
        return Version(stated) < Version("2.8")
    return True


@from_log("NET120")
def nccl_graph_file_in_log(facts: Facts, line: LogLine) -> Hit:
    """NCCL's echo of an injected graph file, or the graph import's failure; NCCL's XML lines
    refusing a topology file (``_topology_rejected``)."""
    if line.signature == _TOPOLOGY_REJECTED:
        return _topology_rejected(line)
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


# enqueue.cc: 'No algorithm/protocol available for function %s with datatype %s. NCCL_ALGO was
# set to %s. NCCL_PROTO was set to %s.' (NCCL <= 2.18: 'Error : no algorithm/protocol available')
_NO_ALGO = lazy(r"NCCL_(ALGO|PROTO) was set to ([^.\s]+(?:\.[^.\s]+)*?)\.")
_FUNC = lazy(r"for function (\w+) with datatype (\w+)")


@rule("NET125", "nccl-algo-proto-restricted", Severity.ERROR)
def nccl_algo_proto(facts: Facts) -> Iterable[Hit]:
    """NCCL_ALGO / NCCL_PROTO leave NCCL no algorithm or protocol for a collective

    ## What it checks
    Only a log says a setting left nothing: NCCL's `No algorithm/protocol available for
    function AllReduce with datatype ncclBfloat16. NCCL_ALGO was set to NVLS.` (src/enqueue.cc;
    NCCL <= 2.18: `Error : no algorithm/protocol available`). NCCL_ALGO and NCCL_PROTO
    themselves are valid tuning on some machines and are not flagged.

    ## Why it matters
    NCCL_ALGO and NCCL_PROTO restrict the algorithms (Ring, Tree, CollNet, NVLS, PAT) and
    protocols (LL, LL128, Simple) NCCL may choose. Set for one machine (NVLS on an NVSwitch
    system, Tree for a benchmark) or for one NCCL release, they can exclude every choice a
    collective, datatype or node has elsewhere: NCCL then fails the collective (ncclInvalidUsage).

    ## Example
    `NCCL_ALGO=NVLS` copied from an H100 SXM node's job script to a PCIe node:
    `NCCL WARN No algorithm/protocol available for function AllReduce with datatype ncclFloat32.
    NCCL_ALGO was set to NVLS.`

    ## Fix
    `unset NCCL_ALGO NCCL_PROTO` (NCCL chooses by itself), or widen them (`NCCL_ALGO=Ring,Tree`,
    `NCCL_PROTO=LL,LL128,Simple`); check /etc/nccl.conf and ~/.nccl.conf, which NCCL also reads.

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/enqueue.cc
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-algo
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-proto
    """
    raise Skip("only a log line states that the setting left no algorithm", "log.nccl_algo")


@from_log("NET125")
def nccl_algo_proto_in_log(facts: Facts, line: LogLine) -> Hit:
    """The variables NCCL names on its line (2.19+), else the node's environment; a line that
    names neither (NCCL's internal error without NCCL_ALGO or NCCL_PROTO) is left open."""
    stated = {m.group(1): m.group(2) for m in _NO_ALGO.finditer(line.text)}
    if not stated:
        with contextlib.suppress(Skip):
            env = facts.env()
            stated = {k: env[f"NCCL_{k}"] for k in ("ALGO", "PROTO") if env.get(f"NCCL_{k}")}
    if not stated:
        raise NotStated(
            f"line {line.line} does not say NCCL_ALGO or NCCL_PROTO was set (without them NCCL "
            "reports an internal error)"
        )
    names = ", ".join(f"NCCL_{k}={v}" for k, v in stated.items())
    func = _FUNC.search(line.text)
    what = f"{func.group(1)} on {func.group(2)}" if func else "a collective"
    unset = " ".join(f"NCCL_{k}" for k in stated)
    return Hit(
        f"{names} leaves NCCL no algorithm or protocol for {what} (line {line.line}): the "
        "setting excludes every choice this collective has on these nodes",
        evidence={"line": line.line, "settings": dict(stated)},
        fix=fix(
            f"unset {unset} (NCCL chooses by itself), or widen them; delete them from "
            "/etc/nccl.conf and ~/.nccl.conf too",
            "manual",
            manual(f"unset {unset}"),
            *(manual(step) for step in _steps(f"NCCL_{next(iter(stated))}")[1:]),
        ),
    )
