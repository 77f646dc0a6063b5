"""Ray: connect, list the nodes, run one pinned probe task per node, and host the collective
test's actors. The only module of envcheck that imports ray (always inside functions).

Every task and actor is pinned to its node (NodeAffinitySchedulingStrategy, soft=False),
requests no GPU and by default no CPU, so it is never queued behind a job that holds the node's
CPUs; ``max_retries=0`` so a task that dies is reported, not rerun.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from envcheck.errors import EnvcheckError

INSTALL_HINT = "pip install 'envcheck-gpu[cluster]'"
HEAD_RESOURCE = "node:__internal_head__"


class ClusterError(EnvcheckError):
    """Ray is missing or the cluster cannot be reached (exit 2, one line)."""


@dataclass(frozen=True)
class RayNode:
    node_id: str
    address: str  # NodeManagerAddress: the address Ray advertises for the node
    name: str | None  # NodeName (the address unless `ray start --node-name` set one)
    is_head: bool = False
    resources: dict[str, float] = field(default_factory=dict)

    @property
    def gpus(self) -> float:
        return self.resources.get("GPU", 0.0)


@dataclass(frozen=True)
class ClusterInfo:
    address: str | None
    ray_version: str
    nodes: tuple[RayNode, ...]
    dead: int = 0


@dataclass(frozen=True)
class Answer:
    """One node's answer: what its task or actor returned, or why there is nothing."""

    node: RayNode
    payload: Any = None
    failure: str | None = None
    kind: str = "error"  # timeout, died, unschedulable, error, stopped
    seconds: float = 0.0


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(
            f"`envcheck cluster` needs Ray, which cannot be imported here ({exc}): "
            f"{INSTALL_HINT} (or compare saved reports with `envcheck diff`)"
        ) from None
    return ray


def connect(address: str | None, *, timeout: float = 30.0) -> ClusterInfo:
    """Join the running cluster as a driver (never start one). ``address`` None: RAY_ADDRESS,
    else the cluster `ray start` left on this machine."""
    ray = import_ray()
    target = address or os.environ.get("RAY_ADDRESS") or "auto"
    _reachable(target, min(timeout, 5.0))
    box: dict[str, BaseException] = {}
    advertised, where_read = advertised_address(os.environ)
    extra: dict[str, str] = {}
    node_ip = _rewritten_host(target, advertised)
    if node_ip is not None:
        # `ray start --node-ip-address=127.0.0.1` registered this machine's raylet under its
        # own address; a driver that takes itself for 127.0.0.1 waits for a raylet that never
        # answers. Ray's own advice ("ray.init(_node_ip_address=...)") joins it.
        extra["_node_ip_address"] = node_ip

    def init() -> None:
        try:
            ray.init(
                address=target,
                logging_level=logging.ERROR,
                log_to_driver=False,
                namespace="envcheck",
                **extra,
            )
        except BaseException as exc:  # reported below, as one line
            box["error"] = exc

    thread = threading.Thread(target=init, name="envcheck-ray-init", daemon=True)
    thread.start()
    thread.join(timeout)
    where = "the local cluster (auto)" if target == "auto" else target
    if thread.is_alive():
        hint = ""
        if advertised and advertised != target:
            hint = (
                f": Ray advertises this machine's cluster at {advertised} ({where_read}; "
                "`ray start` replaces --node-ip-address=127.0.0.1 with the machine's address "
                "unless RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 is set); try --address "
                f"{advertised}"
            )
        raise ClusterError(
            f"could not connect to the Ray cluster at {where} within {timeout:g} s{hint}"
        )
    if "error" in box:
        exc = box["error"]
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, ConnectionError) and target == "auto":
            raise ClusterError(
                "no running Ray cluster found on this machine: start one with `ray start "
                "--head`, or give --address HOST:PORT (or RAY_ADDRESS)"
            )
        raise ClusterError(f"cannot connect to Ray at {where}: {text}")
    return ClusterInfo(
        address=None if target == "auto" else target,
        ray_version=str(ray.__version__),
        nodes=tuple(n for n in list_nodes() if n is not None),
        dead=sum(1 for n in ray.nodes() if not n.get("Alive")),
    )


def advertised_address(env: Any) -> tuple[str | None, str]:
    """The GCS address `ray start` recorded for this machine's cluster
    (``<ray temp dir>/ray_current_cluster``), and that file's path; None when there is none."""
    from pathlib import Path

    path = (
        Path(env.get("RAY_TMPDIR") or env.get("TMPDIR") or "/tmp") / "ray" / "ray_current_cluster"
    )
    try:
        from envcheck.inputs import read_regular

        text = read_regular(str(path), limit=4096).decode("utf-8", "replace").strip()
    except (OSError, EnvcheckError, ValueError):
        return None, str(path)
    first = text.splitlines()[0].strip() if text else ""
    host, sep, port = first.rpartition(":")
    return (first if sep and host and port.isdigit() else None), str(path)


def _rewritten_host(target: str, advertised: str | None) -> str | None:
    """The host Ray advertises when ``target`` names this machine's cluster by a loopback
    address on the same port and Ray advertises another address; else None."""
    import ipaddress

    if advertised is None or "://" in target:
        return None
    host, _, port = target.rpartition(":")
    adv_host, _, adv_port = advertised.rpartition(":")
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
        adv_loopback = ipaddress.ip_address(adv_host.strip("[]")).is_loopback
    except ValueError:
        return None
    if loopback and not adv_loopback and port == adv_port:
        return adv_host.strip("[]")
    return None


@contextlib.contextmanager
def session(address: str | None, *, timeout: float = 30.0) -> Iterator[ClusterInfo]:
    """Connected to the cluster for the duration of the block. Ray's driver prints raylet
    error messages ("A worker died ...") to stdout; inside the block they go to stderr, so
    stdout carries only envcheck's output (e.g. the JSON envelope)."""
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield connect(address, timeout=timeout)
    finally:
        try:
            disconnect()
        finally:
            sys.stdout = saved


def _reachable(target: str, timeout: float) -> None:
    """Fail fast (one line) when a HOST:PORT address refuses connections; Ray itself retries
    for a long time, printing warnings."""
    import socket

    host, sep, port = target.rpartition(":")
    if not sep or "://" in target or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ClusterError(
            f"cannot reach the Ray cluster at {target}: {exc.strerror or exc} "
            "(is `ray start --head` running there? is the port open?)"
        ) from None


def list_nodes() -> list[RayNode]:
    """Alive nodes, head first."""
    ray = import_ray()
    nodes = []
    for raw in ray.nodes():
        if not raw.get("Alive"):
            continue
        resources = {str(k): float(v) for k, v in (raw.get("Resources") or {}).items()}
        nodes.append(
            RayNode(
                node_id=str(raw["NodeID"]),
                address=str(raw.get("NodeManagerAddress") or ""),
                name=raw.get("NodeName") or None,
                is_head=HEAD_RESOURCE in resources,
                resources=resources,
            )
        )
    nodes.sort(key=lambda n: (not n.is_head, n.address, n.name or "", n.node_id))
    return nodes


def disconnect() -> None:
    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()


def _pinned(node: RayNode) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False)


def _by_value(module: ModuleType) -> None:
    """Ship ``module``'s functions and classes by value, not as an import of this version."""
    import_ray().cloudpickle.register_pickle_by_value(module)


def describe_failure(exc: BaseException) -> tuple[str, str]:
    """(reason, kind) for an exception ray.get raised for one node's task."""
    import ray.exceptions as rex

    def first(text: str) -> str:
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        return lines[0] if lines else type(exc).__name__

    if isinstance(exc, rex.RayTaskError):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, ModuleNotFoundError) and (cause.name or "").startswith("envcheck"):
            return (
                "envcheck is not installed in the Python Ray workers use on that node "
                "(pip install envcheck-gpu there)",
                "error",
            )
        if cause is not None:
            return f"the probe raised {type(cause).__name__}: {first(str(cause))}", "error"
        return f"the probe failed: {first(str(exc))}", "error"
    if isinstance(exc, rex.WorkerCrashedError | rex.LocalRayletDiedError):
        return (
            "its worker process died while probing (killed or crashed; see the node's "
            "python-core-worker logs)",
            "died",
        )
    if isinstance(exc, rex.NodeDiedError):
        return f"the node died: {first(str(exc))}", "died"
    if isinstance(exc, rex.TaskUnschedulableError | rex.ActorUnschedulableError):
        return f"Ray cannot schedule a task there: {first(str(exc))}", "unschedulable"
    if isinstance(exc, rex.RuntimeEnvSetupError):
        return f"Ray could not set up the worker's runtime env: {first(str(exc))}", "error"
    return f"{type(exc).__name__}: {first(str(exc))}", "error"


def probe_nodes(
    nodes: Sequence[RayNode],
    *,
    timeout: float,
    probe_timeout: float,
    redact: bool = False,
    num_cpus: float = 0.0,
    deep: tuple[str, ...] = (),
    torch_timeout: float = 120.0,
) -> Iterator[Answer]:
    """Launch one probe task per node together; yield each answer as it arrives (so the caller
    can fold reports in and drop them), then a timeout answer for every node still silent
    ``timeout`` seconds after the launch, whose task is cancelled."""
    ray = import_ray()
    from envcheck.cluster import task

    _by_value(task)
    remote = ray.remote(num_cpus=num_cpus, num_gpus=0, max_retries=0)(task.probe_node)
    start = time.monotonic()
    refs = {
        remote.options(scheduling_strategy=_pinned(node), name="envcheck-probe").remote(
            probe_timeout, redact, *((tuple(deep), torch_timeout) if deep else ())
        ): node
        for node in nodes
    }
    for _ref, answer in _collect(ray, refs, start, timeout, cancel=True):
        yield answer


def _collect(
    ray: ModuleType, refs: dict[Any, RayNode], start: float, timeout: float, *, cancel: bool
) -> Generator[tuple[Any, Answer], None, None]:
    pending = list(refs)
    deadline = start + timeout
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, pending = ray.wait(
            pending, num_returns=len(pending), timeout=min(0.25, remaining), fetch_local=True
        )
        for ref in ready:
            node = refs[ref]
            elapsed = time.monotonic() - start
            try:
                value = ray.get(ref, timeout=max(1.0, remaining))
            except Exception as exc:
                reason, kind = describe_failure(exc)
                yield ref, Answer(node, failure=reason, kind=kind, seconds=elapsed)
                continue
            yield ref, Answer(node, payload=value, seconds=elapsed)
    for ref in pending:
        if cancel:
            with contextlib.suppress(Exception):  # cancelling is best effort
                ray.cancel(ref, force=True)
        yield (
            ref,
            Answer(
                refs[ref],
                failure=f"no answer within {timeout:g} s"
                + (" (the task was cancelled)" if cancel else ""),
                kind="timeout",
                seconds=timeout,
            ),
        )


def round_trip(nodes: Sequence[RayNode], *, timeout: float = 60.0) -> float:
    """Seconds for one trivial pinned task per node, launched together (the baseline)."""
    ray = import_ray()
    from envcheck.cluster import task

    _by_value(task)
    remote = ray.remote(num_cpus=0, num_gpus=0, max_retries=0)(task.echo)
    start = time.monotonic()
    refs = [remote.options(scheduling_strategy=_pinned(n)).remote(i) for i, n in enumerate(nodes)]
    ray.get(refs, timeout=timeout)
    return time.monotonic() - start


# --- actors (the collective test) ------------------------------------------------------------


def start_actors(cls: type, nodes: Sequence[RayNode], *, num_gpus: float = 0.0) -> list[Any]:
    """One actor of ``cls`` (shipped by value) pinned to each node."""
    ray = import_ray()
    _by_value(sys.modules[cls.__module__])
    actor = ray.remote(num_cpus=0, num_gpus=num_gpus, max_restarts=0, max_task_retries=0)(cls)
    return [actor.options(scheduling_strategy=_pinned(n)).remote() for n in nodes]


def call(handles: Sequence[Any], method: str, args: Sequence[tuple[Any, ...]]) -> list[Any]:
    """Call ``method`` on each actor with its own arguments; returns the refs."""
    return [getattr(h, method).remote(*a) for h, a in zip(handles, args, strict=True)]


def gather(
    refs: Sequence[Any],
    nodes: Sequence[RayNode],
    timeout: float,
    *,
    stop: Callable[[Answer], bool] | None = None,
) -> list[Answer]:
    """Wait for every ref until ``timeout``; one answer per ref, in order. When ``stop`` says
    an answer settles the outcome, the refs still running get a ``stopped`` answer."""
    ray = import_ray()
    found: dict[Any, Answer] = {}
    waiting = _collect(
        ray, dict(zip(refs, nodes, strict=True)), time.monotonic(), timeout, cancel=False
    )
    for ref, answer in waiting:
        found[ref] = answer
        if stop is not None and len(found) < len(refs) and stop(answer):
            waiting.close()
            break
    return [
        found.get(ref) or Answer(node, failure="stopped waiting", kind="stopped")
        for ref, node in zip(refs, nodes, strict=True)
    ]


def kill(handles: Sequence[Any]) -> None:
    ray = import_ray()
    for handle in handles:
        with contextlib.suppress(Exception):  # already gone
            ray.kill(handle, no_restart=True)
