"""A cluster comparison as text: the node list, the drift table, findings grouped across nodes,
and the collective test. ``rows`` builds plain rows; the table (rich) and Markdown render them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from envcheck.cluster.diff import ClusterOutcome
from envcheck.formats.table import print_findings, print_skipped
from envcheck.model.cluster import CollectiveReport, DriftRow
from envcheck.model.finding import Finding, Skipped
from envcheck.model.report import NodeReport

NODE_TABLE_LIMIT = 32  # above this, the node list is shown only with --verbose
NAMES_SHOWN = 6


def names(nodes: Sequence[str], limit: int = NAMES_SHOWN) -> str:
    if len(nodes) <= limit:
        return ", ".join(nodes)
    return f"{', '.join(nodes[:limit])} … and {len(nodes) - limit} more"


@dataclass(frozen=True)
class FindingGroup:
    """One finding as several nodes reported it (same code, severity and message)."""

    first: Finding
    nodes: tuple[str, ...]


def group_findings(findings: Sequence[Finding]) -> list[FindingGroup]:
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in findings:
        groups.setdefault((finding.code, finding.severity.value, finding.message), []).append(
            finding
        )
    return [FindingGroup(items[0], tuple(f.node for f in items)) for items in groups.values()]


def _package(report: NodeReport, name: str) -> str:
    data = report.packages.data if report.packages.is_ok else None
    if data is None:
        return "?"
    return data.version(name) or "-"


def _gpu_name(name: str | None) -> str:
    return (name or "GPU").removeprefix("NVIDIA ").removeprefix("GeForce ")


NODE_COLUMNS = ("node", "address", "GPUs", "Python", "torch", "ray", "answered")


def node_rows(outcome: ClusterOutcome) -> list[tuple[str, ...]]:
    """One row per node (NODE_COLUMNS); unreachable nodes say so in the last column."""
    c = outcome.comparison
    rows: list[tuple[str, ...]] = []
    for member, report in zip(c.members, c.reports, strict=True):
        gpu = "?"
        if report.gpu.is_ok and report.gpu.data is not None and report.gpu.data.gpus is not None:
            counts: dict[str, int] = {}
            for g in report.gpu.data.gpus:
                counts[_gpu_name(g.name)] = counts.get(_gpu_name(g.name), 0) + 1
            gpu = ", ".join(f"{c}x {n}" for n, c in counts.items()) or "none"
        elif not report.gpu.is_ok:
            gpu = "none" if report.gpu.status.value == "unavailable" else "?"
        python = report.python.data.version if report.python.data else "?"
        if member.duration_ms is not None:
            answered = f"{member.duration_ms / 1000:.2f} s"
        else:
            answered = Path(member.source).name if member.source else ""
        rows.append(
            (
                member.label,
                member.address or "",
                gpu,
                python,
                _package(report, "torch"),
                _package(report, "ray"),
                answered,
            )
        )
    for failure in c.failures:
        rows.append((failure.node, failure.address or "", "", "", "", "", UNREACHABLE))
    return rows


UNREACHABLE = "UNREACHABLE"


def headline(outcome: ClusterOutcome) -> str:
    counts = outcome.counts()
    ctx = outcome.context.get("ray") or {}
    where = ""
    if ctx:
        where = f" · Ray {ctx.get('version')} at {ctx.get('address') or 'the local cluster'}"
    unreachable = f", {counts['unreachable']} unreachable" if counts["unreachable"] else ""
    return (
        f"envcheck {outcome.command}{where} · {counts['nodes']} node(s): "
        f"{counts['answered']} answered{unreachable}"
    )


def drift_lines(row: DriftRow) -> list[tuple[str, str, str]]:
    lines = []
    for i, value in enumerate(row.values):
        if i == 0 and value.count > NAMES_SHOWN:
            where = f"{value.count} nodes"  # the majority: its size is what matters
        else:
            where = f"{value.count}: {names(value.nodes)}"
        lines.append((row.label if i == 0 else "", value.value, where))
    if row.unknown:
        lines.append(("", "(not reported)", f"{len(row.unknown)}: {names(row.unknown)}"))
    return lines


def collective_rows(report: CollectiveReport) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for rank in report.ranks:
        if rank.ok:
            result = "ok"
        elif rank.kind == "waiting":
            result = rank.reason or "waiting"
        else:
            result = f"failed at {rank.stage} ({rank.kind}): {rank.reason}"
        bound = ", ".join(rank.bound) or (f"(expected {rank.expected})" if rank.expected else "")
        rows.append((str(rank.rank), rank.node, rank.ifname or "(unset)", bound, result))
    return rows


# --- rich -----------------------------------------------------------------------------------


def print_table(out: Console, table: Table) -> None:
    """A table whole: piped or written to a file, at its natural width (no value is cropped
    to 'addres' or 'Pyth' because a pipe has no width); on a terminal, at the terminal's."""
    if out.is_terminal:
        out.print(table)
        return
    natural = out.measure(table, options=out.options.update_width(1000)).maximum
    saved = out.width
    out.width = max(saved, min(natural, 1000))
    try:
        out.print(table)
    finally:
        out.width = saved


def print_cluster(outcome: ClusterOutcome, out: Console, *, verbose: bool = False) -> None:
    c = outcome.comparison
    out.print(Text(headline(outcome), style="bold"))
    rows = node_rows(outcome)
    if len(rows) <= NODE_TABLE_LIMIT or verbose:
        table = Table(box=box.SIMPLE, padding=(0, 1), expand=False)
        for column in NODE_COLUMNS:
            table.add_column(column, no_wrap=column != "GPUs", overflow="fold", min_width=4)
        for row in rows:
            style = "bold red" if row[-1] == UNREACHABLE else ""
            table.add_row(*row[:-1], Text(row[-1], style=style))
        print_table(out, table)
    else:
        out.print(Text(f"  {len(rows)} nodes (--verbose lists them)", style="dim"))
    if c.drift:
        out.print(
            Text(
                f"Drift: {len(c.drift)} fact(s) differ across nodes (most common value first)",
                style="bold",
            )
        )
        drift = Table(box=box.SIMPLE, padding=(0, 1), expand=False)
        drift.add_column("fact", style="cyan", no_wrap=True)
        drift.add_column("value", overflow="fold")
        drift.add_column("nodes", overflow="fold")
        for drift_row in c.drift:
            for i, (fact, value, nodes) in enumerate(drift_lines(drift_row)):
                drift.add_row(fact, Text(value, style="" if i == 0 else "yellow"), nodes)
        print_table(out, drift)
    elif len(c.members) > 1:
        which = "the nodes that answered" if c.failures else "all nodes"
        out.print(Text(f"No drift: every compared fact is the same on {which}.", style="green"))
    if c.collective is not None:
        _print_collective(c.collective, out)
    _print_findings(outcome, out, verbose=verbose)


def _print_collective(report: CollectiveReport, out: Console) -> None:
    style = "green" if report.ok else "bold red"
    out.print(Text(f"Collective test ({report.backend}): {report.summary}", style=style))
    if report.store:
        out.print(Text(f"  TCP store {report.store} · timeout {report.timeout_s:g} s", style="dim"))
    if report.ranks:
        table = Table(box=box.SIMPLE, padding=(0, 1), expand=False)
        for column in ("rank", "node", "ifname", "bound", "result"):
            table.add_column(column, overflow="fold", no_wrap=column == "rank")
        for row in collective_rows(report):
            table.add_row(*row[:-1], Text(row[-1], style="" if row[-1] == "ok" else "red"))
        print_table(out, table)
    if report.pairs and any(r.stage in ("ring", "done") for r in report.ranks):
        pairs = "; ".join(f"{p.src} → {p.dst} {'ok' if p.ok else 'not done'}" for p in report.pairs)
        out.print(Text(f"  send/recv ring: {pairs}", style="dim"))
    for rank in report.ranks:
        if rank.log:
            out.print(Text(f"  NCCL_DEBUG=WARN on {rank.node}:", style="bold"))
            out.print(Text("    " + rank.log.strip().replace("\n", "\n    "), style="dim"))


def _print_findings(outcome: ClusterOutcome, out: Console, *, verbose: bool) -> None:
    c = outcome.comparison
    findings = c.findings
    if not findings:
        out.print(Text("No problems found.", style="green"))
    else:
        out.print()
        print_findings(
            out,
            [
                (group.first, names(group.nodes) if group.nodes else None, None)
                for group in group_findings(findings)
            ],
        )
        out.print()
    skipped = c.node_result.skipped + c.cluster_result.skipped
    if verbose and skipped:
        out.print(Text("Skipped (facts unknown):", style="bold"))
        print_skipped(
            out,
            [
                (code, f"{reason} ({names(nodes)})")
                for (code, reason), nodes in _group_skipped(skipped).items()
            ],
        )
    elif skipped:
        out.print(
            Text(
                f"{len(skipped)} rule run(s) skipped for unknown facts; --verbose lists them.",
                style="dim",
            )
        )
    for error in c.errors:
        out.print(Text(f"internal error: {error}", style="bold red"))


def _group_skipped(skipped: Sequence[Skipped]) -> dict[tuple[str, str], list[str]]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for s in skipped:
        grouped.setdefault((s.code, s.reason), []).append(s.node or "")
    return grouped


# --- Markdown -------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(outcome: ClusterOutcome) -> str:
    c = outcome.comparison
    out = [f"## {headline(outcome)}", ""]
    out += ["| " + " | ".join(NODE_COLUMNS) + " |", "|---" * len(NODE_COLUMNS) + "|"]
    out += ["| " + " | ".join(_cell(x) for x in row) + " |" for row in node_rows(outcome)]
    out.append("")
    for failure in c.failures:
        out.append(f"- **{failure.node}** unreachable: {_cell(failure.reason)}")
    if c.failures:
        out.append("")
    if c.drift:
        out += [
            f"### Drift ({len(c.drift)} facts differ)",
            "",
            "| fact | value | nodes |",
            "|---|---|---|",
        ]
        for row in c.drift:
            out += [f"| {_cell(a)} | {_cell(b)} | {_cell(n)} |" for a, b, n in drift_lines(row)]
        out.append("")
    if c.collective is not None:
        out += [
            f"### Collective test ({c.collective.backend})",
            "",
            _cell(c.collective.summary),
            "",
        ]
        if c.collective.ranks:
            out += ["| rank | node | ifname | bound | result |", "|---|---|---|---|---|"]
            out += [
                "| " + " | ".join(_cell(x) for x in row) + " |"
                for row in collective_rows(c.collective)
            ]
            out.append("")
    if not c.findings:
        out += ["No problems found.", ""]
    else:
        out += ["### Findings", "", "| severity | code | nodes | finding |", "|---|---|---|---|"]
        for group in group_findings(c.findings):
            f = group.first
            out.append(
                f"| {f.severity.value} | {f.code} | {_cell(names(group.nodes))} | "
                f"**{_cell(f.title)}**<br>{_cell(f.message)} |"
            )
        out.append("")
    return "\n".join(out)
