"""A pod the Kubernetes scheduler cannot place for a resource no node has free (SYS189, read
from the scheduler's event, matrices/signatures/memory.toml). The line names the resource; the
fix differs by it: a GPU that no node advertises or every pod holds, or requests for memory or
CPU larger than any node has left. The job never started, so nothing ran out of memory."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# "0/3 nodes are available: 1 node(s) had untolerated taint ..., 3 Insufficient nvidia.com/gpu."
_INSUFFICIENT = lazy(r"(?P<count>[0-9]+) Insufficient (?P<resource>[A-Za-z0-9./_-]+?)[.,]?(?:\s|$)")
_NODES = lazy(r"(?P<free>[0-9]+)/(?P<total>[0-9]+) nodes are available")
# extended resources a device plugin advertises for a GPU
_GPU_WORDS = ("gpu", "mig-")
DESCRIBE = "kubectl describe nodes | grep -A 12 -e '^Allocatable' -e 'Allocated resources'"
CONTAINERD_DEFAULT = "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default"
DOCKER_DEFAULT = "sudo nvidia-ctk runtime configure --runtime=docker --set-as-default"


def insufficient(text: str) -> list[str]:
    """The resources the scheduler's event names as insufficient, in its order."""
    return [m.group("resource") for m in _INSUFFICIENT.finditer(text)]


@rule("SYS189", "pod-unschedulable-insufficient-resource", Severity.WARNING)
def pod_unschedulable(facts: Facts) -> Iterable[Hit]:
    """Kubernetes cannot schedule the pod: no node has the requested GPU, memory or CPU free

    ## What it checks
    Only a log states it: the scheduler's FailedScheduling event, `0/3 nodes are available: 3
    Insufficient nvidia.com/gpu.` or `0/4 nodes are available: 4 Insufficient memory.` (with
    the other reasons beside it: taints, node selectors, preemption).

    ## Why it matters
    The pod stays Pending, so the training or serving job never starts, and the word
    "Insufficient memory" reads like an out-of-memory. For `nvidia.com/gpu` either no node
    advertises GPUs at all (the NVIDIA device plugin is not running, or the node's container
    runtime does not hand it the GPUs: containerd's default runtime is still runc) or every
    GPU is held by other pods. For memory or CPU the pod's requests are larger than what any
    node has left: requests count, not what the job would use.

    ## Example
    A KubeRay worker group asking for `nvidia.com/gpu: 1` on a node with the driver installed
    but no device plugin: `0/2 nodes are available: 2 Insufficient nvidia.com/gpu`; the node's
    Allocatable lists no nvidia.com/gpu.

    ## Fix
    `kubectl describe nodes` (Allocatable, Allocated resources). A GPU the nodes do not list:
    deploy NVIDIA's device plugin (or the GPU Operator) and make the NVIDIA runtime the
    default (`sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default`, then
    restart containerd; `--runtime=docker` on Docker nodes); GPUs all allocated: free them or
    wait. Memory or CPU: lower the pod's
    `resources.requests` or add a larger node.

    ## References
    - https://github.com/kubernetes/kubernetes/blob/master/pkg/scheduler/framework/plugins/noderesources/fit.go
    - https://github.com/NVIDIA/k8s-device-plugin
    - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
    - https://github.com/NVIDIA/k8s-device-plugin/issues/100
    """
    raise Skip("only the scheduler's event states that no node had the resource", "log.k8s")


@from_log("SYS189")
def pod_unschedulable_in_log(facts: Facts, line: LogLine) -> Hit:
    """The GPU's checks where the line names a GPU resource, else the requests'."""
    names = insufficient(line.text) or ["a resource"]
    nodes = _NODES.search(line.text)
    where = f"none of the {nodes.group('total')} nodes" if nodes else "no node"
    gpu = next((n for n in names if any(w in n.lower() for w in _GPU_WORDS)), None)
    head = (
        f"the Kubernetes scheduler cannot place the pod (line {line.line}): {where} has "
        f"{', '.join(names)} free for it, so the job never started"
    )
    if gpu is not None:
        return Hit(
            f"{head}; {gpu} is a device plugin's resource: no node advertises it, or every "
            "one is allocated",
            evidence={"line": line.line, "resource": gpu},
            fix=fix(
                f"Check what the nodes offer ({DESCRIBE}): no {gpu} under Allocatable means no "
                "device plugin advertises GPUs: deploy NVIDIA's device plugin (or the GPU "
                "Operator) and make the NVIDIA runtime the default, then restart containerd; "
                "all allocated: free them or lower the pod's limit",
                "manual",
                manual(DESCRIBE),
                manual(CONTAINERD_DEFAULT),
                manual("sudo systemctl restart containerd  (then the device plugin's pod)"),
                manual(f"{DOCKER_DEFAULT}; sudo systemctl restart docker  (Docker nodes)"),
                manual("kubectl get pods -A | grep -i device-plugin  (running on the GPU node?)"),
            ),
        )
    listed = " / ".join(f"resources.requests.{n}" for n in names if n != "a resource")
    return Hit(
        f"{head}; the pod's requests are larger than any node has left",
        evidence={"line": line.line, "resource": names[0]},
        fix=fix(
            f"Lower the pod's {listed or 'resources.requests'} (a limit may stay higher), or add "
            f"a node with more; see what others hold: {DESCRIBE}",
            "manual",
            manual(DESCRIBE),
            manual(f"lower {listed or 'resources.requests'} in the pod / job spec"),
        ),
    )
