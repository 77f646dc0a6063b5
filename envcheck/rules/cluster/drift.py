"""CLU: nodes that could not be checked, and what differs between nodes (versions, stack, GPUs).

The network half (interfaces, addresses, the collective test) is in cluster_network.py.
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.cluster import DriftRow
from envcheck.model.finding import Fix, Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.cluster import values
from envcheck.rules.cluster.model import (
    NOT_INSTALLED,
    ClusterFacts,
    ClusterHit,
    NodeView,
    cluster_rule,
    describe_split,
    evidence,
    name_nodes,
    need_two,
)
from envcheck.rules.fixes import fix, manual, pip_install, set_env


@cluster_rule("CLU100", "node-unreachable", Severity.ERROR)
def node_unreachable(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """A node did not answer, or its probe task died

    ## What it checks
    Every alive Ray node gets one probe task pinned to it. A node whose task does not return
    within `--timeout`, whose worker dies while probing, that Ray cannot schedule on, or whose
    report cannot be read is reported here with the reason. For `envcheck diff`, a report file
    that cannot be read is a usage error instead (exit 2).

    ## Why it matters
    The node was not checked, and a node that cannot run a tiny task (0 GPUs, no CPU
    reservation) is usually one that will stall the job: a wedged worker, a full `/tmp/ray`,
    a raylet that lost its GCS connection, or envcheck missing from the node's Python.

    ## Example
    node-c: no answer within 30 s (the task was cancelled); node-d: the worker process died
    while probing (killed or crashed).

    ## Fix
    Look at the node's Ray logs (`ray logs raylet.out --node-id ...`, `/tmp/ray/session_latest/logs`),
    make sure envcheck is installed in the Python Ray workers use there, and run again.

    ## References
    - https://docs.ray.io/en/latest/ray-observability/user-guides/cli-sdk.html
    - https://docs.ray.io/en/latest/ray-core/scheduling/index.html#nodeaffinityschedulingstrategy
    """
    return [
        ClusterHit(
            f"{failure.node} was not checked: {failure.reason}",
            evidence={
                "kind": failure.kind,
                "node_id": failure.node_id,
                "address": failure.address,
            },
            fix=fix(
                f"Check {failure.node}'s Ray logs and that envcheck is installed there, then re-run",
                "manual",
                manual(f"ray logs raylet.out --node-id {failure.node_id}")
                if failure.node_id
                else manual("look at the node's /tmp/ray/session_latest/logs"),
            ),
            node=failure.node,
        )
        for failure in facts.failures
    ]


@cluster_rule("CLU101", "ray-version-mismatch", Severity.ERROR)
def ray_version_mismatch(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """Nodes run different Ray versions

    ## What it checks
    The installed `ray` version on every node, compared exactly (a patch release or a
    different build counts).

    ## Why it matters
    Ray compares the Ray version of every node and driver that joins with the one the cluster
    was started with and refuses mismatches: `RuntimeError: Version mismatch: The cluster was
    started with: Ray: 2.54.0 ... This process on node ... was started with: Ray: ...`. A node
    whose image was rebuilt later fails to join, or workers started there die.

    ## Example
    ray 2.9.3 on 198 nodes, 2.9.2 on node-17 and node-42.

    ## Fix
    Install the same Ray everywhere (same image or lockfile): on the odd nodes,
    `pip install ray==<the majority version>` (with no majority, as in a 1-1 split, the newest
    of the versions), then restart Ray there.

    ## References
    - ray-project/ray python/ray/_private/node.py (check_version_info)
    - https://github.com/ray-project/ray/pull/42760
    - RLinf/RLinf docs/source-en/rst_source/guides/multi_node.rst
    """
    need_two(facts)
    row = facts.group("package:ray", "ray", values.package("ray"))
    if len(row.values) < 2:
        return []
    target, nodes, why = _goal(row)
    remedy = None
    if target != NOT_INSTALLED:
        remedy = fix(
            f"On {name_nodes(nodes)}: install ray=={target} ({why}) and restart Ray there",
            "manual",
            pip_install(f"ray=={target}"),
        )
    return [
        ClusterHit(
            f"Ray versions differ: {describe_split(row)}. Ray refuses nodes and drivers whose "
            "Ray version differs from the cluster's ('Version mismatch')",
            evidence=evidence(row),
            fix=remedy,
        )
    ]


def _newest(values: Iterable[str]) -> str | None:
    """The newest of version-like values (``R570`` > ``R535``; ``2.4.1`` > ``2.4.0``)."""
    from packaging.version import InvalidVersion, Version

    best: tuple[Version, str] | None = None
    for value in values:
        try:
            version = Version(value.lstrip("Rr"))
        except InvalidVersion:
            continue
        if best is None or version > best[0]:
            best = (version, value)
    return best[1] if best else None


def _goal(row: DriftRow) -> tuple[str, tuple[str, ...], str]:
    """(the value to align on, the nodes that change, why that value): the majority's when
    there is one, else the newest of the tied values (a 1-1 split has no majority)."""
    if row.has_majority:
        n = row.majority.count
        return row.majority.value, row.odd_nodes(), f"as on {n} node{'s' if n != 1 else ''}"
    tied = [v.value for v in row.values if v.count == row.majority.count]
    target = _newest(v for v in tied if v != NOT_INSTALLED) or row.majority.value
    nodes = tuple(n for v in row.values if v.value != target for n in v.nodes)
    return target, nodes, "the newest; no version is on most nodes"


def _requirements(value: str) -> list[str]:
    """``nvidia-nccl-cu12 2.21.5, nvidia-nccl-cu11 2.14.3`` -> pinned requirements."""
    out = []
    for item in value.split(", "):
        name, _, version = item.partition(" ")
        if version:
            out.append(f"{name}=={version}")
    return out


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


@cluster_rule("CLU102", "python-version-mismatch", Severity.ERROR)
def python_version_mismatch(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """Nodes run different Python versions (patch level)

    ## What it checks
    The Python version of every node, down to the patch level, as Ray compares it. When only
    the patch level differs and every node sets `RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor`,
    the finding is a warning.

    ## Why it matters
    Ray stores the Python version the cluster was started with and checks every joining node
    and driver against it; newer Ray compares the patch level by default (3.10.21 vs 3.10.19
    is refused with `Version mismatch`). Older Ray compares major.minor only, and pickled
    functions and objects may still break across minor versions.

    ## Example
    Python 3.10.12 on 7 nodes, 3.10.14 on node-8.

    ## Fix
    Use one image or one interpreter build on every node. For patch-only differences, newer
    Ray accepts `export RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor` on all nodes before
    `ray start` (the first Ray release with this variable is UNVERIFIED).

    ## References
    - ray-project/ray python/ray/_private/node.py (check_version_info)
    - https://github.com/ray-project/ray/pull/42760
    - https://github.com/ray-project/ray/issues/45339
    """
    need_two(facts)
    row = facts.group("python", "Python", values.python_version)
    if len(row.values) < 2:
        return []
    patch_only = len({_minor(v.value) for v in row.values}) == 1
    relaxed = patch_only and all(
        _env_or_empty(node, "RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL") == "minor"
        for node in facts.nodes
    )
    message = f"Python versions differ: {describe_split(row)}. "
    if relaxed:
        message += "Only the patch level differs and every node sets RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor, so Ray only warns"
    elif patch_only:
        message += (
            "Ray compares the patch level by default and refuses the odd nodes ('Version mismatch')"
        )
    else:
        message += "Ray refuses nodes whose Python differs from the cluster's ('Version mismatch')"
    target, nodes, _ = _goal(row)
    actions = [manual(f"use Python {target} on {name_nodes(nodes)}")]
    if patch_only and not relaxed:
        actions.append(set_env(RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL="minor"))
    return [
        ClusterHit(
            message,
            evidence=evidence(row),
            fix=fix(
                "Use the same Python build on every node"
                + (
                    " (or relax Ray's check to the minor version on every node before `ray start`)"
                    if len(actions) > 1
                    else ""
                ),
                "manual",
                *actions,
            ),
            severity=Severity.WARNING if relaxed else None,
        )
    ]


def _env_or_empty(node: NodeView, name: str) -> str:
    try:
        return node.facts.env().get(name, "")
    except Skip:
        return ""


_STACK = (
    ("package:torch", "torch", values.package("torch")),
    ("torch_variant", "torch CUDA variant", values.torch_variant),
    ("wheel:nvidia-nccl", "NCCL wheel", values.wheel_family("nvidia-nccl")),
    ("wheel:nvidia-cublas", "cuBLAS wheel", values.wheel_family("nvidia-cublas")),
    ("package:vllm", "vllm", values.package("vllm")),
    ("package:flash-attn", "flash-attn", values.package("flash-attn")),
    ("package:numpy", "numpy", values.package("numpy")),
)


@cluster_rule("CLU103", "stack-drift", Severity.WARNING)
def stack_drift(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """The torch build, CUDA variant, NCCL / cuBLAS wheels, vLLM, flash-attn or NumPy differ

    ## What it checks
    On every node: the torch version and build (`2.4.0+cu121` vs `2.4.0+cu124`), its CUDA
    variant, the installed `nvidia-nccl-*` and `nvidia-cublas-*` wheels, and the `vllm`,
    `flash-attn` and `numpy` versions. One finding per fact that differs, naming the odd nodes.

    ## Why it matters
    Ranks on different NCCL versions can hang or fail in the first collective; different
    torch or cuBLAS builds give different numerics (and the cuBLAS 12.1.3.1 crash happens on
    some nodes only); vLLM workers with another version break Ray's pickled calls; NumPy 1 vs 2
    breaks objects passed between nodes. Such nodes are usually ones whose image was rebuilt
    or patched by hand.

    ## Example
    torch 2.4.1+cu121 on node-17; 198 nodes have 2.4.0+cu121.

    ## Fix
    Install the majority version (with no majority, the newest) on the other nodes; a wheel
    only some nodes have is uninstalled there or installed everywhere (or rebuild the nodes
    from the same image or lockfile); the finding names the nodes and the version. A version
    written without its local label (`2.4.0` next to `2.4.0+cu121`) is not drift.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://github.com/volcengine/verl/issues/12
    - RLinf/RLinf docs/source-en/rst_source/guides/multi_node.rst
    """
    need_two(facts)
    hits = []
    for fact, label, extract in _STACK:
        row = facts.group(fact, label, extract)
        if len(row.values) < 2:
            continue
        remedy = _align(fact, label, row)
        hits.append(
            ClusterHit(
                f"{label} differs: {describe_split(row)}",
                evidence=evidence(row),
                fix=remedy,
            )
        )
    return hits


def _align(fact: str, label: str, row: DriftRow) -> Fix:
    """The fix that makes ``row`` one value: install the goal's version where it differs, or,
    when the goal is "not installed", remove it where it is (or install it everywhere)."""
    target, nodes, why = _goal(row)
    if target == NOT_INSTALLED:
        having = name_nodes(nodes)
        return fix(
            f"{label} is installed on {having} only: uninstall it there, or install the same "
            "version on every node (same image or lockfile)",
            "manual",
            manual(f"uninstall {label} on {having}, or install it on every other node"),
        )
    if fact.startswith("package:"):
        name = fact.split(":", 1)[1]
        return fix(
            f"On {name_nodes(nodes)}: install {name}=={target} ({why})",
            "manual",
            pip_install(f"{name}=={target}"),
        )
    pins = _requirements(target) if fact.startswith("wheel:") else []
    action = pip_install(*pins) if pins else manual(f"use {label} {target} on {name_nodes(nodes)}")
    return fix(
        f"Give {name_nodes(nodes)} the same {label} ({target}, {why}): same image or lockfile",
        "manual",
        action,
    )


@cluster_rule("CLU104", "driver-branch-mismatch", Severity.WARNING)
def driver_branch_mismatch(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """Nodes run different NVIDIA driver branches

    ## What it checks
    The driver branch (535, 550, 570, ...) of every node with an NVIDIA driver.

    ## Why it matters
    The branch sets the newest CUDA a node runs: a torch build that works on the R550 nodes
    fails or falls back to minor-version compatibility on the R535 ones (`CUDA driver version
    is insufficient`), NCCL features differ, and Vulkan/Isaac Sim validation is per branch.
    Such nodes usually missed a fleet upgrade.

    ## Example
    R550 on 30 nodes, R535 on node-31 and node-32.

    ## Fix
    Upgrade the nodes on older branches to the newest branch in the cluster (never a
    downgrade, whichever branch most nodes run), or pin a torch CUDA variant the oldest branch
    supports (`envcheck explain DRV101`).

    ## References
    - https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    - https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
    """
    need_two(facts)
    row = facts.group("driver_branch", "driver branch", values.driver_branch)
    if len(row.values) < 2:
        return []
    return [
        ClusterHit(
            f"NVIDIA driver branches differ: {describe_split(row)}; the newest CUDA each runs "
            "differs, so one torch build may not run everywhere",
            evidence=evidence(row),
            fix=_driver_fix(row),
        )
    ]


def _driver_fix(row: DriftRow) -> Fix:
    """Upgrade the nodes on older branches to the newest one in the cluster: never advise a
    downgrade, whichever branch most nodes run."""
    newest = _newest(v.value for v in row.values) or row.majority.value
    older = tuple(n for v in row.values if v.value != newest for n in v.nodes)
    oldest = min((v.value for v in row.values), key=lambda b: int(b.lstrip("R") or 0))
    return fix(
        f"Upgrade {name_nodes(older)} to the {newest} driver branch (the newest in the "
        f"cluster), or pin a torch CUDA variant that {oldest} supports",
        "manual",
        manual(f"install an {newest} driver on {name_nodes(older)}"),
    )


@cluster_rule("CLU105", "mixed-gpu-architectures", Severity.WARNING)
def mixed_gpu_architectures(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """The cluster mixes GPU architectures (e.g. RTX 4090 and A100)

    ## What it checks
    The compute capability and architecture of every GPU on every node with GPUs (nodes without
    GPUs are left out), and the GPU models and memory sizes when the architectures match.

    ## Why it matters
    Different architectures need different arch lists in every compiled wheel (torch,
    flash-attn, vLLM kernels), have different features (FP8 on sm_89/sm_90, not sm_80; no
    NVLink or PCIe P2P on GeForce cards), and different memory. FSDP shards evenly, so every
    rank gets the memory budget and the pace of the smallest, slowest GPU; vLLM tensor parallel
    across such nodes sizes the KV cache for the smallest GPU and may pick other kernels per
    rank. Place each role on one GPU type: training (FSDP) on the A100/H100 nodes, vLLM
    replicas or simulators on the RTX nodes, with Ray custom resources or node groups.

    ## Example
    NVIDIA A100-SXM4-80GB (sm_80, Ampere) on node-a; NVIDIA GeForce RTX 4090 (sm_89, Ada) on
    node-b.

    ## Fix
    Schedule by GPU type: give node groups a Ray custom resource (`ray start --resources
    '{"a100": 8}'`) and request it per role, or keep each job on one GPU type. Make sure the
    torch build's arch list covers every architecture (`envcheck explain TOR101`).

    ## References
    - RLinf/RLinf docs/source-en/rst_source/guides/hetero.rst
    - https://pytorch.org/docs/stable/fsdp.html
    - https://docs.vllm.ai/en/latest/serving/distributed_serving.html
    - https://github.com/NVIDIA/nccl/issues/1145
    """
    need_two(facts)
    with_gpus = [n for n in facts.nodes if _has_gpus(n)]
    if len(with_gpus) < 2:
        raise Skip(f"{len(with_gpus)} node(s) with known GPUs; comparing needs two")
    arch = facts.group("gpu_arch", "GPU architecture", values.gpu_architectures)
    models = facts.group("gpu_model_names", "GPU models", values.gpu_model_names)
    arch = _without(arch, values.NO_GPUS)
    models = _without(models, values.NO_GPUS)
    if len(arch.values) > 1:
        listing = "; ".join(
            f"{_models_of(models, v.nodes)}: {v.value} on {name_nodes(v.nodes)}"
            for v in arch.values
        )
        return [
            ClusterHit(
                f"GPU architectures differ: {listing}. Every wheel needs all these archs; "
                "FSDP runs every rank at the smallest/slowest GPU's memory and pace, and vLLM "
                "tensor parallel should stay on one GPU type: place roles per GPU type",
                evidence={
                    **evidence(arch),
                    "models": {v.value: list(v.nodes) for v in models.values},
                },
                fix=_placement_fix(),
            )
        ]
    memory = _without(facts.group("gpu_memory", "GPU memory", values.gpu_memory), values.NO_GPUS)
    if len(models.values) > 1 or len(memory.values) > 1:
        row = models if len(models.values) > 1 else memory
        return [
            ClusterHit(
                f"GPU models differ within one architecture: {describe_split(row)}; FSDP and "
                "vLLM size memory for the smallest GPU",
                evidence=evidence(row),
                fix=_placement_fix(),
                severity=Severity.INFO,
            )
        ]
    return []


def _has_gpus(node: NodeView) -> bool:
    try:
        return bool(node.facts.gpus())
    except Skip:
        return False


def _without(row: DriftRow, value: str) -> DriftRow:
    kept = tuple(v for v in row.values if v.value != value)
    return DriftRow(row.fact, row.label, kept, row.unknown)


def _models_of(models: DriftRow, nodes: tuple[str, ...]) -> str:
    wanted = set(nodes)
    found = [v.value for v in models.values if wanted & set(v.nodes)]
    return " + ".join(found) or "GPUs"


def _placement_fix() -> Fix:
    return fix(
        "Place each role on one GPU type (Ray custom resources per node group)",
        "manual",
        manual("ray start ... --resources '{\"<gpu-type>\": <count>}' on each node group"),
        manual("request that resource per role: training actors on one type, vLLM on another"),
    )


# --- Ray's own version-mismatch line states both sides -------------------------------------------


def _sides(line: LogLine, this: str, cluster: str, what: str) -> tuple[str, str]:
    mine, theirs = line.stated.get(this), line.stated.get(cluster)
    if not mine or not theirs:
        raise NotStated(f"the log does not state both {what} versions", f"log.{this}")
    return mine, theirs


@from_log("CLU101")
def ray_mismatch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """`Version mismatch: The cluster was started with: Ray: A ... This process on node ... was
    started with: Ray: B`: the line names both Ray versions; equal ones rule CLU101 out."""
    mine, theirs = _sides(line, "ray_version", "ray_cluster_version", "Ray")
    if mine == theirs:
        return None
    return Hit(
        f"this process runs Ray {mine}, the cluster was started with Ray {theirs} (line "
        f"{line.line}); Ray refuses the mismatch",
        evidence={"line": line.line, "ray": mine, "cluster_ray": theirs},
        fix=fix(
            f"Use the cluster's Ray here (ray=={theirs}), or start every node of the cluster "
            f"with this process's (ray=={mine}): client, head and workers must match",
            "manual",
            pip_install(f"ray=={theirs}"),
            manual(
                f"or: pip install ray=={mine} on every node (image / pip_packages) and restart Ray"
            ),
        ),
    )


@from_log("CLU102")
def python_mismatch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The same line's Python versions: Ray compared them (down to the patch level unless
    RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor); equal ones rule CLU102 out."""
    mine, theirs = _sides(line, "python_version", "python_cluster_version", "Python")
    if mine == theirs:
        return None
    patch_only = _minor(mine) == _minor(theirs)
    actions = [
        manual(
            f"run this process with Python {theirs} (the cluster's), or start the cluster with "
            f"Python {mine}"
        )
    ]
    if patch_only:
        actions.append(set_env(RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL="minor"))
    return Hit(
        f"this process runs Python {mine}, the cluster was started with Python {theirs} (line "
        f"{line.line})",
        evidence={"line": line.line, "python": mine, "cluster_python": theirs},
        fix=fix(
            f"Use the cluster's Python {theirs} here, or one Python build on every node"
            + (
                " (only the patch level differs: newer Ray accepts it with "
                "RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor on every node)"
                if patch_only
                else ""
            ),
            "manual",
            *actions,
        ),
    )
