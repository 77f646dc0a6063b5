"""``envcheck cluster``: probe every node of the running Ray cluster at once, check each node,
compare them (drift table, CLU rules) and optionally test Gloo/NCCL between them.

Exit codes: 0 nothing at or above --severity; 1 findings at or above it (a node that did not
answer is a CLU100 error, so it counts); 2 usage, input, Ray missing or unreachable; 3 internal.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from envcheck.cli import check, common
from envcheck.numeric import seconds_arg

if TYPE_CHECKING:
    from envcheck.cluster.diff import ClusterOutcome
    from envcheck.commands.cluster import ClusterOptions


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


def render(outcome: ClusterOutcome, args: argparse.Namespace) -> None:
    """Print the outcome (table, --json, --markdown or a CI format), write -o, and a summary
    on stderr."""
    from envcheck.formats.ci import from_findings
    from envcheck.formats.ci_output import CI_FORMATS
    from envcheck.formats.ci_output import render as render_ci

    text = None
    if args.output_format in CI_FORMATS:
        c = outcome.comparison
        run = from_findings(
            outcome.command,
            c.rules,
            c.findings,
            c.cluster_result.skipped + c.node_result.skipped,
            threshold=outcome.threshold,
            exit_code=outcome.exit_code,
            errors=c.errors,
        )
        text = render_ci(args.output_format, run)
        common.emit(text)
    elif args.json:
        common.emit(common.json_text(outcome.envelope()))
    elif args.markdown:
        from envcheck.formats.cluster import render_markdown

        common.emit(render_markdown(outcome))
    else:
        from envcheck.formats.cluster import print_cluster
        from envcheck.formats.table import console

        print_cluster(outcome, console(), verbose=args.verbose)
    if args.output:
        if text is None and args.markdown:
            from envcheck.formats.cluster import render_markdown

            text = render_markdown(outcome)
        elif text is None:
            text = common.json_text(outcome.envelope())
        common.write_output(args.output, text, overwrite=args.force)
    for warning in outcome.context.get("warnings") or ():
        sys.stderr.write(f"envcheck: warning: {warning}\n")
    counts = outcome.counts()
    common.summary(
        [
            f"{counts['answered']}/{counts['nodes']} node(s) checked,",
            f"{counts['drift']} fact(s) differ;",
            f"{counts['error']} error(s),",
            f"{counts['warning']} warning(s),",
            f"{counts['info']} info;",
            f"exit {outcome.exit_code}",
        ]
    )


def run(args: argparse.Namespace) -> int:
    from envcheck.commands.cluster import run_cluster
    from envcheck.formats.progress import NodeProgress

    outcome = run_cluster(cluster_options(args), NodeProgress())
    render(outcome, args)
    return outcome.exit_code


def cluster_options(args: argparse.Namespace) -> ClusterOptions:
    from envcheck.commands.cluster import ClusterOptions

    return ClusterOptions(
        address=args.address,
        timeout=args.timeout,
        collective=args.collective,
        ifname=args.ifname,
        num_cpus=args.num_cpus,
        redact=args.redact,
        deep=tuple(args.deep or ()),
        deep_timeout=args.deep_timeout,
        rules=check.rule_options(args),
    )
