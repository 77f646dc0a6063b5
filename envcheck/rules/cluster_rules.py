"""CLU: what differs between the nodes of one cluster, and nodes that could not be checked."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.model.cluster import DriftRow
from envcheck.model.finding import Fix, Severity
from envcheck.rules import cluster_values as values
from envcheck.rules.base import Skip
from envcheck.rules.cluster import (
    NOT_INSTALLED,
    ClusterFacts,
    ClusterHit,
    NodeView,
    cluster_rule,
    describe_split,
    name_nodes,
)
from envcheck.rules.fixes import fix, manual, pip_install, set_env
from envcheck.rules.network import nccl_selection


def _evidence(row: DriftRow) -> dict[str, object]:
    return {
        "fact": row.fact,
        "values": {v.value: list(v.nodes) for v in row.values},
        "odd_nodes": list(row.odd_nodes()),
        "unknown": list(row.unknown),
    }


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


def _need_two(facts: ClusterFacts) -> None:
    if len(facts.nodes) < 2:
        raise Skip(f"{len(facts.nodes)} node(s) answered; comparing needs two")


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
    `pip install ray==<the majority version>`, then restart Ray there.

    ## References
    - ray-project/ray python/ray/_private/node.py (check_version_info)
    - https://github.com/ray-project/ray/pull/42760
    - RLinf/RLinf docs/source-en/rst_source/guides/multi_node.rst
    """
    _need_two(facts)
    row = facts.group("package:ray", "ray", values.package("ray"))
    if len(row.values) < 2:
        return []
    majority = row.majority.value
    remedy = None
    if majority != NOT_INSTALLED:
        remedy = fix(
            f"On {name_nodes(row.odd_nodes())}: install ray=={majority} (the version on "
            f"{row.majority.count} node(s)) and restart Ray there",
            "manual",
            pip_install(f"ray=={majority}"),
        )
    return [
        ClusterHit(
            f"Ray versions differ: {describe_split(row)}. Ray refuses nodes and drivers whose "
            "Ray version differs from the cluster's ('Version mismatch')",
            evidence=_evidence(row),
            fix=remedy,
        )
    ]


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
    _need_two(facts)
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
    actions = [manual(f"use Python {row.majority.value} on {name_nodes(row.odd_nodes())}")]
    if patch_only and not relaxed:
        actions.append(set_env(RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL="minor"))
    return [
        ClusterHit(
            message,
            evidence=_evidence(row),
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
    Install the majority version on the odd nodes (or rebuild them from the same image or
    lockfile); the finding names the nodes and the version.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://github.com/volcengine/verl/issues/12
    - RLinf/RLinf docs/source-en/rst_source/guides/multi_node.rst
    """
    _need_two(facts)
    hits = []
    for fact, label, extract in _STACK:
        row = facts.group(fact, label, extract)
        if len(row.values) < 2:
            continue
        majority = row.majority.value
        remedy = None
        if fact.startswith("package:") and majority != NOT_INSTALLED:
            name = fact.split(":", 1)[1]
            remedy = fix(
                f"On {name_nodes(row.odd_nodes())}: install {name}=={majority} (as on "
                f"{row.majority.count} node(s))",
                "manual",
                pip_install(f"{name}=={majority}"),
            )
        else:
            remedy = fix(
                f"Give {name_nodes(row.odd_nodes())} the same {label} as the other nodes "
                "(same image or lockfile)",
                "manual",
                manual(f"install {label} {majority} on {name_nodes(row.odd_nodes())}"),
            )
        hits.append(
            ClusterHit(
                f"{label} differs: {describe_split(row)}",
                evidence=_evidence(row),
                fix=remedy,
            )
        )
    return hits


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
    Upgrade the odd nodes to the cluster's driver branch, or pin a torch CUDA variant the
    oldest branch supports (`envcheck explain DRV101`).

    ## References
    - https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    - https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
    """
    _need_two(facts)
    row = facts.group("driver_branch", "driver branch", values.driver_branch)
    if len(row.values) < 2:
        return []
    return [
        ClusterHit(
            f"NVIDIA driver branches differ: {describe_split(row)}; the newest CUDA each runs "
            "differs, so one torch build may not run everywhere",
            evidence=_evidence(row),
            fix=fix(
                f"Upgrade {name_nodes(row.odd_nodes())} to the {row.majority.value} driver branch",
                "manual",
                manual(f"install the {row.majority.value} driver on {name_nodes(row.odd_nodes())}"),
            ),
        )
    ]


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
    _need_two(facts)
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
                    **_evidence(arch),
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
                evidence=_evidence(row),
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


_IFNAME_VARS = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")


@cluster_rule("CLU106", "socket-ifname-on-some-nodes", Severity.WARNING)
def socket_ifname_partial(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """GLOO_SOCKET_IFNAME or NCCL_SOCKET_IFNAME is set on some nodes but not others

    ## What it checks
    Whether `GLOO_SOCKET_IFNAME` and `NCCL_SOCKET_IFNAME` are set on every node or on none
    (as Ray workers see them: the environment of `ray start`).

    ## Why it matters
    The nodes without it pick an interface on their own: the hostname's address for Gloo
    (often loopback or a docker bridge), the first non-excluded interface for NCCL. Ranks then
    advertise addresses their peers cannot reach and the first collective hangs
    (`Gloo connectFullMesh failed`). It usually means one node group was started from another
    script.

    ## Example
    GLOO_SOCKET_IFNAME=eth0 on 15 nodes; unset on node-16.

    ## Fix
    Export the variable on every node before `ray start` (per node group when their interface
    names differ).

    ## References
    - https://github.com/vllm-project/vllm/issues/5094
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    - RLinf/RLinf docs/source-en/rst_source/guides/hetero.rst
    """
    _need_two(facts)
    hits = []
    for var in _IFNAME_VARS:
        row = facts.group(f"env:{var}", var, values.env_var(var))
        unset = next((v for v in row.values if v.value == values.UNSET), None)
        if unset is None or len(row.values) < 2:
            continue
        set_values = [v for v in row.values if v.value != values.UNSET]
        listing = "; ".join(f"{var}={v.value} on {name_nodes(v.nodes)}" for v in set_values)
        hits.append(
            ClusterHit(
                f"{listing}; unset on {name_nodes(unset.nodes)}, which pick an interface "
                "on their own",
                evidence={**_evidence(row), "unset_on": list(unset.nodes)},
                fix=_ifname_everywhere(facts, var, set_values[0].value, unset.nodes),
            )
        )
    return hits


def _ifname_everywhere(facts: ClusterFacts, var: str, value: str, unset: tuple[str, ...]) -> Fix:
    """Copy the value when the unset nodes have that interface; else name the step."""
    nodes = [n for n in facts.nodes if n.label in unset]
    names = [_interfaces(n) for n in nodes]
    if names and all(n is not None and _selects(var, value, n) for n in names):
        return fix(
            f"Set {var}={value} on {name_nodes(unset)} too, before `ray start`",
            "manual",
            set_env(**{var: value}),
        )
    return fix(
        f"Set {var} on {name_nodes(unset)} too, to each node's routable interface",
        "manual",
        manual(f"export {var}=<the node's routable interface> before `ray start`"),
    )


def _interfaces(node: NodeView) -> list[str] | None:
    try:
        return [i.name for i in node.facts.network().interfaces]
    except Skip:
        return None


def _selects(var: str, value: str, names: list[str]) -> bool:
    from envcheck.model.report import Interface

    if var == "GLOO_SOCKET_IFNAME":
        return all(n in names for n in value.split(",") if n)
    return bool(nccl_selection(value, [Interface(name=n) for n in names]))


@cluster_rule("CLU107", "socket-ifname-missing-on-some-nodes", Severity.ERROR)
def socket_ifname_missing(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """A *_SOCKET_IFNAME names an interface that exists on some nodes only

    ## What it checks
    For `GLOO_SOCKET_IFNAME` and `NCCL_SOCKET_IFNAME` values set on several nodes: whether the
    interface (Gloo: exact names; NCCL: prefixes, `=` and `^`) exists on each of them.

    ## Why it matters
    The same value copied to every node only works when the interface names match. Where it
    does not exist, Gloo fails with `Unable to find address for: eth1` and NCCL with
    `Bootstrap : no socket interface found`; the other ranks wait for that rank until the
    timeout. Mixed hardware (different NIC names per node group) is the usual cause.

    ## Example
    GLOO_SOCKET_IFNAME=ens1f0 on 4 nodes; node-d has no ens1f0 (its NIC is eth0).

    ## Fix
    Set the variable per node group to each group's interface name, or rename interfaces
    consistently (udev rules / predictable names).

    ## References
    - https://github.com/AMD-AGI/Primus/pull/1063
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
    - RLinf/RLinf docs/source-en/rst_source/guides/hetero.rst
    """
    _need_two(facts)
    hits = []
    for var in _IFNAME_VARS:
        row = facts.group(f"env:{var}", var, values.env_var(var))
        for value in row.values:
            if value.value == values.UNSET or (
                var == "GLOO_SOCKET_IFNAME" and value.value[:1] in "^="
            ):
                continue
            have: list[str] = []
            lack: list[str] = []
            for node in facts.nodes:
                if node.label not in value.nodes:
                    continue
                names = _interfaces(node)
                if names is not None:
                    (have if _selects(var, value.value, names) else lack).append(node.label)
            if not lack or (not have and len(value.nodes) < 2):
                continue
            where = f"exists on {name_nodes(have)} only" if have else "exists on none of them"
            hits.append(
                ClusterHit(
                    f"{var}={value.value} is set on {len(value.nodes)} node(s) but the interface "
                    f"{where}; missing on {name_nodes(lack)}",
                    evidence={
                        "variable": var,
                        "value": value.value,
                        "missing_on": lack,
                        "present_on": have,
                    },
                    fix=fix(
                        f"Set {var} on {name_nodes(lack)} to an interface they have",
                        "manual",
                        manual(
                            f"export {var}=<that node's routable interface> on {name_nodes(lack)}"
                        ),
                    ),
                )
            )
    return hits


@cluster_rule("CLU108", "address-subnet-mismatch", Severity.WARNING)
def address_subnet_mismatch(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """Nodes' addresses are in different subnets, public next to private, or shared

    ## What it checks
    The address each node is reached at (Ray's node address under `envcheck cluster`; for saved
    reports the `GLOO_SOCKET_IFNAME` / `NCCL_SOCKET_IFNAME` interface's address, else the
    hostname's), its subnet (from the interface's prefix), and whether it is public or
    private. Several hosts sharing one address is an error.

    ## Why it matters
    Nodes of one training cluster normally share a subnet. One in another subnet or with a
    public address usually chose the wrong interface (a management NIC, a docker bridge, a
    public IP behind a firewall): traffic is routed through a gateway or blocked and
    collectives crawl or hang. Hosts sharing an address (172.17.0.1 of docker0 on every node)
    make peers connect to themselves.

    ## Example
    10.0.0.0/24 on 14 nodes; 192.168.1.0/24 on node-15; 3.120.4.17 (public) on node-16.

    ## Fix
    Start Ray with `--node-ip-address` on the cluster network and set `GLOO_SOCKET_IFNAME` /
    `NCCL_SOCKET_IFNAME` to that network's interface on every node.

    ## References
    - https://docs.ray.io/en/latest/cluster/vms/user-guides/community/slurm.html
    - https://github.com/vllm-project/vllm/issues/7074
    - https://github.com/pytorch/pytorch/issues/15592
    """
    _need_two(facts)
    found: dict[str, values.Address] = {}
    hosts: dict[str, str] = {}
    for node in facts.nodes:
        try:
            found[node.label] = values.chosen_address(node)
            hosts[node.label] = node.facts.network().hostname or node.label
        except Skip:
            continue
    if len(found) < 2:
        raise Skip("fewer than two nodes with a known address")
    hits = []
    by_ip: dict[str, list[str]] = {}
    for label, address in found.items():
        if not address.ip.is_loopback:
            by_ip.setdefault(str(address.ip), []).append(label)
    for ip, labels in by_ip.items():
        if len({hosts[label] for label in labels}) > 1:
            hits.append(
                ClusterHit(
                    f"{name_nodes(labels)} all use {ip}: different hosts sharing one address "
                    "(a docker bridge or NAT address), so peers connect to the wrong host",
                    evidence={"address": ip, "nodes": labels},
                    fix=_address_fix(),
                    severity=Severity.ERROR,
                )
            )
    routable = {k: v for k, v in found.items() if not v.ip.is_loopback}
    row = facts.group(
        "subnet", "address subnet", lambda n: values.subnet(n) if n.label in routable else None
    )
    if len(row.values) > 1:
        public = [v for v in row.values if v.value.endswith("(public)")]
        private = [v for v in row.values if v.value.endswith("(private)")]
        mixed = " (public next to private addresses)" if public and private else ""
        hits.append(
            ClusterHit(
                f"Node addresses are in different subnets{mixed}: {describe_split(row)}",
                evidence={
                    **_evidence(row),
                    "addresses": {k: f"{v.interface} via {v.how}" for k, v in routable.items()},
                },
                fix=_address_fix(),
            )
        )
    return hits


def _address_fix() -> Fix:
    return fix(
        "Use the cluster network on every node",
        "manual",
        manual("ray start --node-ip-address=<address on the cluster network> ..."),
        manual(
            "export GLOO_SOCKET_IFNAME=<cluster interface> NCCL_SOCKET_IFNAME=<cluster interface>"
        ),
    )


@cluster_rule("CLU109", "collective-failed", Severity.ERROR)
def collective_failed(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """The Gloo / NCCL connectivity test failed

    ## What it checks
    With `envcheck cluster --collective gloo|nccl`: one process per node joins a
    `torch.distributed` group (TCP store on the head node), runs an all-reduce and a ring of
    send/recv with a hard timeout. Each rank that failed is reported with the address it
    bound and the classified reason (interface missing, loopback, unreachable, timeout, no
    torch, no GPU).

    ## Why it matters
    This is what the training job does first. A rank bound to loopback or a docker bridge, a
    firewall between nodes, or an interface name that exists on some nodes only shows up here
    in seconds instead of as a hang after the job has loaded its model.

    ## Example
    node-c: GLOO_SOCKET_IFNAME=nosuch0 names no interface on that node ('Unable to find address
    for: nosuch0'); node-a, node-b: timed out waiting for node-c.

    ## Fix
    Follow the reason: set `GLOO_SOCKET_IFNAME` / `NCCL_SOCKET_IFNAME` to the routable
    interface on every node (`--ifname` tries one without restarting Ray), open the ports
    between nodes, install torch where it is missing.

    ## References
    - https://pytorch.org/docs/stable/distributed.html#common-environment-variables
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
    - https://github.com/pytorch/pytorch/issues/15592
    """
    report = facts.collective
    if report is None:
        raise Skip("no collective test was run (--collective gloo|nccl)")
    if report.not_run:
        return [
            ClusterHit(
                f"the {report.backend} test could not run: {report.not_run}",
                evidence={"backend": report.backend},
            )
        ]
    causes, waited = report.root_causes()
    hits = []
    for rank in causes:
        also = ""
        if waited:
            also = f"; {name_nodes([r.node for r in waited])} waited for it"
        hits.append(
            ClusterHit(
                f"{report.backend} rank {rank.rank} on {rank.node} failed at {rank.stage}: "
                f"{rank.reason}{also}",
                evidence={
                    "backend": report.backend,
                    "kind": rank.kind,
                    "bound": list(rank.bound),
                    "ifname": rank.ifname,
                    "error": rank.error,
                    "waited": [r.node for r in waited],
                },
                node=rank.node,
            )
        )
    if not causes and waited:
        hits.append(
            ClusterHit(
                f"{report.backend}: {name_nodes([r.node for r in waited])} timed out at "
                f"{waited[0].stage}: {waited[0].reason}",
                evidence={"backend": report.backend, "timed_out": [r.node for r in waited]},
            )
        )
    return hits
