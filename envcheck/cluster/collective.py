"""The Gloo / NCCL connectivity test: one rank per node, a TCP store on the head node, an
all-reduce and a ring of send/recv, all under a hard timeout.

The driver never imports torch: ranks are Ray actors (cluster/rank.py) and this module only
starts them (through fanout), waits with a deadline, and turns what they saw into a
``CollectiveReport`` with a classified reason per failed rank. ``classify`` and ``summarize``
are pure and tested on canned rank results.
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from envcheck.model.cluster import CollectiveReport, PairOutcome, RankOutcome, root_causes

_GRACE_S = 5.0  # on top of the timeout, for a rank to report its own timeout
_MISSING_IFACE = re.compile(r"Unable to find (?:address|interface) for:?\s*([^\s|,]+)")
_UNREACHABLE = re.compile(
    r"Connection refused|No route to host|Network is unreachable|Connection reset|"
    r"Broken pipe|connectFullMesh failed|Connection closed by peer|ECONNREFUSED",
    re.IGNORECASE,
)
_SOURCE_PATH = re.compile(
    r"\[(?:enforce fail at )?[^\]]*\.(?:cc|cpp|h|hpp):\d+\]\s*(?:[^.]*!= nullptr\.\s*)?"
)
_TIMEOUT = re.compile(r"timed? ?out|timeout|deadline", re.IGNORECASE)


def _is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def short_error(error: str, limit: int = 160) -> str:
    """The error without source paths (``[enforce fail at .../device.cc:84]``), first part."""
    text = _SOURCE_PATH.sub("", error.split("|", maxsplit=1)[0]).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def classify(
    raw: Mapping[str, Any], *, backend: str, multi_host: bool, failed_peers: Sequence[str] = ()
) -> tuple[str, str]:
    """(kind, reason) for a failed rank, from its error text and the addresses it bound."""
    error = str(raw.get("error") or "")
    var = "NCCL_SOCKET_IFNAME" if backend == "nccl" else "GLOO_SOCKET_IFNAME"
    ifname = raw.get("ifname")
    peers = ", ".join(failed_peers)
    if raw.get("stopped"):
        return (
            "waiting",
            f"was waiting for {peers or 'the other ranks'} to join (stopped when it failed)",
        )
    missing = _MISSING_IFACE.search(error)
    if missing:
        name = missing.group(1)
        return (
            "interface",
            f"{var}={ifname or name}: this node has no interface {name!r} "
            f"({'Gloo' if backend == 'gloo' else 'NCCL'}: 'Unable to find address for: {name}')",
        )
    if backend == "nccl" and "no socket interface found" in error.lower():
        return "interface", f"{var}={ifname}: NCCL found no usable interface ({short_error(error)})"
    bound = [str(b) for b in raw.get("bound") or ()]
    if multi_host and bound and all(_is_loopback(b) for b in bound):
        return (
            "loopback",
            f"bound loopback ({', '.join(bound)}), which peers on other hosts cannot reach; "
            f"set {var} to the routable interface",
        )
    if _UNREACHABLE.search(error):
        return "unreachable", f"could not connect to a peer: {short_error(error)}"
    if _TIMEOUT.search(error):
        blame = f" waiting for {peers}, which failed" if peers else ""
        return "timeout", f"timed out{blame}: {short_error(error)}"
    return "error", short_error(error) or "failed without an error message"


def _rank(
    node: str, rank: int, raw: Mapping[str, Any], kind: str | None, reason: str | None
) -> RankOutcome:
    return RankOutcome(
        node=node,
        rank=rank,
        ok=bool(raw.get("ok")),
        stage=str(raw.get("stage") or "start"),
        reason=reason,
        kind=kind,
        bound=tuple(str(b) for b in raw.get("bound") or ()),
        expected=raw.get("expected"),
        ifname=raw.get("ifname"),
        error=raw.get("error"),
        seconds=raw.get("seconds"),
        log=(raw.get("log") or None),
    )


def summarize(
    backend: str,
    labels: Sequence[str],
    results: Sequence[Mapping[str, Any]],
    *,
    multi_host: bool,
    store: str | None,
    timeout: float,
    seconds: float | None = None,
) -> CollectiveReport:
    """Ranks' raw results (``ok``/``error``/``stage``/``bound``..., in rank order) -> report."""
    direct = [
        labels[i]
        for i, raw in enumerate(results)
        if not raw.get("ok")
        and not raw.get("stopped")
        and not _TIMEOUT.search(str(raw.get("error") or ""))
    ]
    ranks = []
    for i, raw in enumerate(results):
        if raw.get("ok"):
            ranks.append(_rank(labels[i], i, raw, None, None))
            continue
        others = [d for d in direct if d != labels[i]]
        kind, reason = (
            (str(raw["kind"]), str(raw.get("reason") or raw.get("error")))
            if raw.get("kind")
            else classify(raw, backend=backend, multi_host=multi_host, failed_peers=others)
        )
        ranks.append(_rank(labels[i], i, raw, kind, reason))
    pairs = []
    n = len(ranks)
    if n > 1:
        for i in range(n):
            src, dst = ranks[i], ranks[(i + 1) % n]
            if src.ok and dst.ok:
                pairs.append(PairOutcome(src.node, dst.node, True))
            else:
                why = next(r for r in (src, dst) if not r.ok)
                pairs.append(
                    PairOutcome(
                        src.node, dst.node, False, f"not done: {why.node} failed at {why.stage}"
                    )
                )
    ok = all(r.ok for r in ranks) and bool(ranks)
    if ok:
        took = f" in {seconds:g} s" if seconds is not None else ""
        summary = f"all-reduce and send/recv ring across {n} node(s) worked{took}"
    else:
        summary = describe_failures(ranks)
    return CollectiveReport(
        backend=backend,
        ok=ok,
        summary=summary,
        store=store,
        timeout_s=timeout,
        ranks=tuple(ranks),
        pairs=tuple(pairs),
        seconds=seconds,
    )


def describe_failures(ranks: Sequence[RankOutcome]) -> str:
    causes, waited = root_causes(ranks)
    if not causes:
        first = waited[0]
        return f"{', '.join(r.node for r in waited)} timed out at {first.stage}: {first.reason}"
    text = "; ".join(f"{r.node} failed at {r.stage}: {r.reason}" for r in causes[:3])
    if waited:
        text += f"; {', '.join(r.node for r in waited)} waited for {'it' if len(causes) == 1 else 'them'}"
    return text


def not_run(backend: str, why: str, timeout: float) -> CollectiveReport:
    return CollectiveReport(
        backend=backend,
        ok=False,
        summary=f"{backend} test not run: {why}",
        not_run=why,
        timeout_s=timeout,
    )


def _fails_group(answer: Any) -> bool:
    """A rank that failed to join on its own: the others can only time out, stop waiting."""
    raw = answer.payload
    if answer.failure is not None or not isinstance(raw, Mapping) or raw.get("ok"):
        return False
    return raw.get("stage") == "init" and not _TIMEOUT.search(str(raw.get("error") or ""))


def run_collective(
    nodes: Sequence[Any],
    labels: Sequence[str],
    *,
    backend: str,
    timeout: float,
    ifname: str | None = None,
) -> CollectiveReport:
    """Run the test on ``nodes`` (fanout.RayNode, head first; ``labels`` name them)."""
    from envcheck.cluster import fanout
    from envcheck.cluster.rank import RankWorker

    start = time.monotonic()
    if not nodes:
        return not_run(backend, "no nodes answered", timeout)
    head = next((i for i, n in enumerate(nodes) if n.is_head), 0)
    order = [head, *[i for i in range(len(nodes)) if i != head]]
    nodes = [nodes[i] for i in order]
    labels = [labels[i] for i in order]
    if backend == "nccl":
        without = [label for node, label in zip(nodes, labels, strict=True) if node.gpus < 1]
        if without:
            return not_run(
                backend,
                f"NCCL needs a GPU on every node and {', '.join(without)} "
                f"{'has' if len(without) == 1 else 'have'} none in Ray's resources; "
                "use --collective gloo to test the network without GPUs",
                timeout,
            )
    actors = fanout.start_actors(RankWorker, nodes, num_gpus=1.0 if backend == "nccl" else 0.0)
    try:
        prepared = fanout.gather(
            fanout.call(actors, "prepare", [(backend, i == 0) for i in range(len(nodes))]),
            nodes,
            timeout,
        )
        ready = [a.payload for a in prepared]
        problems: dict[int, tuple[str, str]] = {}
        for i, answer in enumerate(prepared):
            if answer.failure is not None:
                problems[i] = (answer.kind, answer.failure)
            elif not answer.payload.get("ok"):
                problems[i] = (
                    str(answer.payload.get("kind") or "error"),
                    str(answer.payload.get("error")),
                )
        if problems:
            ranks = tuple(
                RankOutcome(label, i, False, "start", kind=problems[i][0], reason=problems[i][1])
                if i in problems
                else RankOutcome(label, i, True, "ready")
                for i, label in enumerate(labels)
            )
            reason = "; ".join(f"{labels[i]}: {why}" for i, (_kind, why) in problems.items())
            return replace(
                not_run(backend, f"ranks could not start ({reason})", timeout), ranks=ranks
            )
        store_port = int(ready[0]["store_port"])
        store_host = nodes[0].address
        world = len(nodes)
        refs = fanout.call(
            actors,
            "run",
            [(backend, store_host, store_port, i, world, timeout, ifname) for i in range(world)],
        )
        answers = fanout.gather(refs, nodes, timeout + _GRACE_S, stop=_fails_group)
        results: list[Mapping[str, Any]] = []
        for answer in answers:
            if answer.kind == "stopped":
                results.append({"ok": False, "stage": "init", "stopped": True})
            elif answer.failure is not None:
                results.append(
                    {
                        "ok": False,
                        "stage": "init",
                        "error": f"no answer within {timeout + _GRACE_S:g} s: {answer.failure}",
                    }
                    if answer.kind == "timeout"
                    else {
                        "ok": False,
                        "stage": "init",
                        "error": answer.failure,
                        "kind": answer.kind,
                    }
                )
            else:
                results.append(answer.payload)
        multi_host = len({n.address for n in nodes}) > 1
        return summarize(
            backend,
            labels,
            results,
            multi_host=multi_host,
            store=f"{store_host}:{store_port}",
            timeout=timeout,
            seconds=round(time.monotonic() - start, 2),
        )
    finally:
        fanout.kill(actors)
