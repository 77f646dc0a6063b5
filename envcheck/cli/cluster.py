"""``envcheck cluster``: probe every node of the running Ray cluster at once, check each node,
compare them (drift table, CLU rules) and optionally test Gloo/NCCL between them.

Exit codes: 0 nothing at or above --severity; 1 findings at or above it (a node that did not
answer is a CLU100 error, so it counts); 2 usage, input, Ray missing or unreachable; 3 internal.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from typing import TYPE_CHECKING, Any

from envcheck.cli import check, common
from envcheck.errors import ReportError, UsageError
from envcheck.model.finding import Severity
from envcheck.numeric import seconds_arg

if TYPE_CHECKING:
    from envcheck.cluster.diff import ClusterOutcome
    from envcheck.cluster.fanout import ClusterInfo
    from envcheck.cluster.nodes import ReportReader
    from envcheck.matrix.model import Matrix
    from envcheck.rules.base import Rule


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "cluster",
        help="check every node of the running Ray cluster, and what differs between them",
        description="Probe every alive Ray node at once (one pinned task each, no GPU, no CPU "
        "reservation), run the node rules on each, show what differs between nodes and run the "
        "cluster rules. Exit codes: 0 nothing at or above --severity, 1 findings (a node that did "
        "not answer counts as an error finding), 2 usage or input error, Ray missing or the "
        "cluster unreachable, 3 internal error. See docs/cluster.md.",
    )
    ray = p.add_argument_group("cluster")
    ray.add_argument(
        "--address",
        metavar="HOST:PORT",
        help="the Ray cluster (default: $RAY_ADDRESS, else the one `ray start` runs on this machine)",
    )
    ray.add_argument(
        "--timeout",
        type=seconds_arg,
        default=30.0,
        metavar="S",
        help="seconds every node has to answer, and the collective test's limit (default 30)",
    )
    ray.add_argument(
        "--collective",
        choices=("gloo", "nccl"),
        help="also run an all-reduce and a send/recv ring with one process per node",
    )
    ray.add_argument(
        "--ifname",
        metavar="IFACE",
        help="interface the collective test uses on every node (GLOO_SOCKET_IFNAME / "
        "NCCL_SOCKET_IFNAME; default: what each node's environment sets)",
    )
    ray.add_argument(
        "--num-cpus",
        type=float,
        default=0.0,
        metavar="N",
        help="CPUs each probe task reserves (default 0: never waits behind a job holding the CPUs)",
    )
    ray.add_argument(
        "--redact", action="store_true", help="replace hostnames and IP addresses in the reports"
    )
    common.add_deep_option(ray)
    check.add_check_options(p)
    common.add_output_options(p)
    p.set_defaults(run=run)


def select_rules(args: argparse.Namespace) -> tuple[Matrix, list[Rule], Severity]:
    from envcheck.matrix.load import load
    from envcheck.rules import all_rules, select
    from envcheck.settings import find_settings

    settings = find_settings()
    matrix = load([*settings.matrix, *args.matrix])
    chosen = select(
        all_rules(matrix), args.select or settings.select, args.ignore or settings.ignore
    )
    threshold = args.severity or Severity(settings.severity or "error")
    return matrix, chosen, threshold


def render(outcome: ClusterOutcome, args: argparse.Namespace) -> None:
    """Print the outcome (table, --json or --markdown), write -o, and a summary on stderr."""
    if args.json:
        common.emit(common.json_text(outcome.envelope()))
    elif args.markdown:
        from envcheck.formats.cluster import render_markdown

        common.emit(render_markdown(outcome))
    else:
        from envcheck.formats.cluster import print_cluster
        from envcheck.formats.table import console

        print_cluster(outcome, console(), verbose=args.verbose)
    if args.output:
        if args.markdown:
            from envcheck.formats.cluster import render_markdown

            text = render_markdown(outcome)
        else:
            text = common.json_text(outcome.envelope())
        common.write_output(args.output, text)
    counts = outcome.counts()
    sys.stderr.write(
        f"envcheck: {counts['answered']}/{counts['nodes']} node(s) checked, "
        f"{counts['drift']} fact(s) differ; {counts['error']} error(s), "
        f"{counts['warning']} warning(s), {counts['info']} info; exit {outcome.exit_code}\n"
    )


class _Progress:
    """A live line on stderr while nodes answer (only when stderr is a terminal)."""

    def __init__(self, total: int) -> None:
        self.bar: Any = None
        self.task: Any = None
        self.failed = 0
        if total and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            from envcheck.formats.table import console

            self.bar = Progress(
                TextColumn("probing {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]}"),
                TimeElapsedColumn(),
                console=console(sys.stderr),
                transient=True,
            )
            self.task = self.bar.add_task(f"{total} node(s)", total=total, failed="")
            self.bar.start()

    def advance(self, failed: bool) -> None:
        self.failed += failed
        if self.bar is not None:
            note = f"{self.failed} unreachable" if self.failed else ""
            self.bar.update(self.task, advance=1, failed=note)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


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


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.num_cpus < 0:
        raise UsageError("--num-cpus must not be negative")
    if args.deep and "torch" in args.deep and args.timeout <= args.deep_timeout:
        raise UsageError(
            f"--deep=torch needs --timeout above --deep-timeout ({args.deep_timeout:g} s): every "
            "node's answer, smoke test included, must arrive within --timeout"
        )
    if args.ifname and not args.collective:
        raise UsageError("--ifname applies to the collective test: add --collective gloo|nccl")
    matrix, rules, threshold = select_rules(args)
    from envcheck.cluster import fanout

    with fanout.session(args.address, timeout=max(args.timeout, 10.0)) as info:
        outcome = _check(args, info, matrix, rules, threshold, fanout)
    render(outcome, args)
    return outcome.exit_code


def _check(
    args: argparse.Namespace,
    info: ClusterInfo,
    matrix: Matrix,
    rules: list[Rule],
    threshold: Severity,
    fanout: Any,
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
    progress = _Progress(len(info.nodes))
    try:
        for answer in fanout.probe_nodes(
            info.nodes,
            timeout=args.timeout,
            probe_timeout=min(5.0, max(1.0, args.timeout / 3)),
            redact=args.redact,
            num_cpus=args.num_cpus,
            deep=args.deep or (),
            torch_timeout=args.deep_timeout,
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
    if args.redact:  # Ray's addresses and node names leave the nodes only as pseudonyms
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
    evaluator = NodeRules(matrix, rules)
    node_results = [evaluator.evaluate(r) for r in labelled]
    collective = None
    if args.collective:
        from envcheck.cluster.collective import run_collective

        collective = run_collective(
            answered_nodes,
            [m.label for m in members],
            backend=args.collective,
            timeout=args.timeout,
            ifname=args.ifname,
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
    if args.redact and address:
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
