"""``cluster`` and ``diff``: check every node of a running Ray cluster (or saved reports of
several nodes), compare them (drift table, CLU rules) and optionally test Gloo/NCCL between
them."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from envcheck.commands.check import RuleOptions, expected, select_rules
from envcheck.errors import ReportError, UsageError
from envcheck.model.finding import Severity

if TYPE_CHECKING:
    from envcheck.cluster.diff import ClusterOutcome
    from envcheck.cluster.fanout import ClusterInfo
    from envcheck.cluster.nodes import ReportReader
    from envcheck.matrix.model import Matrix
    from envcheck.rules.base import Rule


@dataclass(frozen=True)
class ClusterOptions:
    address: str | None = None  # the Ray cluster; None: $RAY_ADDRESS, else the local one
    timeout: float = 30.0  # seconds every node has to answer (and the collective test's limit)
    collective: Literal["gloo", "nccl"] | None = None
    ifname: str | None = None  # interface for the collective test
    num_cpus: float = 0.0  # CPUs each probe task reserves
    redact: bool = False
    # --deep on every node (see ProbeOptions); the smoke test must end within ``timeout``
    deep: tuple[str, ...] = ()
    deep_timeout: float = 120.0
    rules: RuleOptions = field(default_factory=RuleOptions)


class Progress(Protocol):
    """Told how many nodes there are, then once per answer."""

    def start(self, total: int) -> None: ...

    def advance(self, failed: bool) -> None: ...

    def stop(self) -> None: ...


class _Silent:
    def start(self, total: int) -> None:
        pass

    def advance(self, failed: bool) -> None:
        pass

    def stop(self) -> None:
        pass


def validate(options: ClusterOptions) -> None:
    if not (options.timeout > 0 and math.isfinite(options.timeout)):
        raise UsageError("--timeout must be positive")
    if not (options.num_cpus >= 0 and math.isfinite(options.num_cpus)):
        raise UsageError("--num-cpus must not be negative")
    if "torch" in options.deep and options.timeout <= options.deep_timeout:
        raise UsageError(
            f"--deep=torch needs --timeout above --deep-timeout ({options.deep_timeout:g} s): "
            "every node's answer, smoke test included, must arrive within --timeout"
        )
    if options.ifname and not options.collective:
        raise UsageError("--ifname applies to the collective test: add --collective gloo|nccl")


def run_cluster(options: ClusterOptions, progress: Progress | None = None) -> ClusterOutcome:
    """Probe every alive node of the Ray cluster at once, check each and compare them."""
    validate(options)
    matrix, rules, threshold = select_rules(options.rules, scope="all")
    from envcheck.cluster import fanout

    with fanout.session(options.address, timeout=max(options.timeout, 10.0)) as info:
        return _check(options, info, matrix, rules, threshold, fanout, progress or _Silent())


def diff_reports(paths: Sequence[str], rules: RuleOptions | None = None) -> ClusterOutcome:
    """The same comparison from saved reports (files or directories of them), with no Ray."""
    from envcheck.cluster.diff import ClusterOutcome, compare
    from envcheck.cluster.saved import load_saved

    matrix, chosen, threshold = select_rules(rules or RuleOptions(), scope="all")
    saved = load_saved(paths)
    reports = expected(saved.reports, rules or RuleOptions())
    comparison = compare(saved.members, reports, matrix, chosen, failures=saved.failures)
    return ClusterOutcome(
        "diff",
        comparison,
        threshold,
        context={"files": saved.files, "warnings": list(saved.warnings)},
        include_reports=False,
    )


def _labels(nodes: list[Any], hostnames: dict[str, str]) -> dict[str, str]:
    """node id -> label: the name given with `ray start --node-name`, else the hostname, made
    unique with the address and then the node id."""
    import ipaddress

    from envcheck.cluster.nodes import assign_labels

    names = []
    for node in nodes:
        given = node.name
        try:
            ipaddress.ip_address(given or "")
            given = None  # Ray's default name is the address
        except ValueError:
            pass
        names.append(given or hostnames.get(node.node_id) or node.address or node.node_id[:12])
    labels = assign_labels(names, [(f"@{n.address}", f"#{n.node_id[:6]}") for n in nodes])
    return {n.node_id: label for n, label in zip(nodes, labels, strict=True)}


def _decode(payload: Any, where: str, reader: ReportReader) -> Any:
    try:
        return reader.loads(zlib.decompress(payload).decode("utf-8"), where=where)
    except (zlib.error, TypeError, ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"the node sent no readable report ({exc})", where=where) from None


def _check(
    options: ClusterOptions,
    info: ClusterInfo,
    matrix: Matrix,
    rules: list[Rule],
    threshold: Severity,
    fanout: Any,
    progress: Progress,
) -> ClusterOutcome:
    from envcheck.cluster.diff import ClusterOutcome, compare
    from envcheck.cluster.nodes import NodeRules, ReportReader, relabel
    from envcheck.model.cluster import Member, NodeFailure
    from envcheck.model.report import NodeReport, Origin

    if not info.nodes:
        raise UsageError("the Ray cluster has no alive nodes")
    reader = ReportReader()
    reports: dict[str, NodeReport] = {}
    seconds: dict[str, float] = {}
    failed: dict[str, tuple[str, str]] = {}
    progress.start(len(info.nodes))
    try:
        for answer in fanout.probe_nodes(
            info.nodes,
            timeout=options.timeout,
            probe_timeout=min(5.0, max(1.0, options.timeout / 3)),
            redact=options.redact,
            num_cpus=options.num_cpus,
            deep=options.deep,
            torch_timeout=options.deep_timeout,
        ):
            node_id = answer.node.node_id
            seconds[node_id] = answer.seconds
            if answer.failure is not None:
                failed[node_id] = (answer.failure, answer.kind)
            else:
                where = f"node {answer.node.address} ({node_id[:12]})"
                try:
                    reports[node_id] = reader.read(
                        _decode(answer.payload, where, reader), where=where
                    )
                except ReportError as exc:
                    failed[node_id] = (f"its report could not be read: {exc}", "unreadable")
            progress.advance(answer.failure is not None or node_id in failed)
    finally:
        progress.stop()
    nodes = list(info.nodes)
    if options.redact:  # Ray's addresses and node names leave the nodes only as pseudonyms
        from dataclasses import replace

        from envcheck.redact import mask_addresses, pseudonym

        nodes = [
            replace(
                n, address=mask_addresses(n.address), name=pseudonym(n.name) if n.name else None
            )
            for n in nodes
        ]
    labels = _labels(nodes, {k: r.node for k, r in reports.items()})
    members: list[Member] = []
    labelled: list[NodeReport] = []
    failures: list[NodeFailure] = []
    answered_nodes = []
    for shown, node in zip(nodes, info.nodes, strict=True):
        label = labels[node.node_id]
        if node.node_id in reports:
            members.append(
                Member(
                    label,
                    node.node_id,
                    shown.address,
                    duration_ms=round(seconds[node.node_id] * 1000, 1),
                )
            )
            origin = Origin(
                kind="remote", detail=f"ray node {node.node_id[:12]} at {shown.address}"
            )
            labelled.append(relabel(reports[node.node_id], label, origin))
            answered_nodes.append(node)
        else:
            reason, kind = failed.get(node.node_id, ("no answer", "error"))
            failures.append(NodeFailure(label, reason, node.node_id, shown.address, kind))  # type: ignore[arg-type]
    labelled = expected(labelled, options.rules)  # --expect: what every node must have
    evaluator = NodeRules(matrix, rules)
    node_results = [evaluator.evaluate(r) for r in labelled]
    collective = None
    if options.collective:
        from envcheck.cluster.collective import run_collective

        collective = run_collective(
            answered_nodes,
            [m.label for m in members],
            backend=options.collective,
            timeout=options.timeout,
            ifname=options.ifname,
        )
    comparison = compare(
        members,
        labelled,
        matrix,
        rules,
        failures=failures,
        collective=collective,
        node_results=node_results,
    )
    address = info.address
    if options.redact and address:
        from envcheck.redact import mask_addresses

        address = mask_addresses(address)
    context = {
        "ray": {
            "address": address,
            "version": info.ray_version,
            "alive_nodes": len(info.nodes),
            "dead_nodes": info.dead,
        }
    }
    return ClusterOutcome("cluster", comparison, threshold, context=context)
