"""Terminal rendering. The only module that imports rich."""

from __future__ import annotations

from typing import IO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from envcheck.formats.inventory import Group, Tone, headline, inventory, summary_line
from envcheck.model.finding import CheckResult, Finding, Severity
from envcheck.model.report import NodeReport
from envcheck.redact import redact_text

STYLES: dict[Tone, str] = {"normal": "", "muted": "dim", "warn": "yellow", "bad": "bold red"}


def console(file: IO[str] | None = None) -> Console:
    return Console(file=file, highlight=False, soft_wrap=False)


def _group_table(group: Group) -> Table:
    table = Table(
        title=group.title,
        title_justify="left",
        title_style="bold",
        show_header=False,
        box=box.SIMPLE,
        padding=(0, 1),
        expand=True,
    )
    table.add_column("item", style="cyan", no_wrap=True, min_width=16)
    table.add_column("value", overflow="fold")
    for row in group.rows:
        # redacted before rich can fold a long value (a URL with credentials) across lines
        table.add_row(row.label, Text(redact_text(row.value), style=STYLES[row.tone]))
    return table


def print_report(report: NodeReport, out: Console) -> None:
    out.print(Text(headline(report), style="bold"))
    for group in inventory(report):
        out.print(_group_table(group))


SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def findings_table() -> Table:
    """The severity / code / finding table that check and cluster print."""
    table = Table(box=box.SIMPLE, show_header=False, padding=(0, 1), expand=False)
    table.add_column("severity", no_wrap=True)
    table.add_column("code", no_wrap=True, style="cyan")
    table.add_column("finding", overflow="fold")
    return table


def finding_text(finding: Finding) -> Text:
    """A finding's title, message and fix with its commands, as the tables print it."""
    text = Text()
    text.append(finding.title, style="bold")
    text.append("\n" + finding.message)
    if finding.fix is not None:
        text.append(f"\nfix ({finding.fix.applicability}): ", style="green")
        text.append(finding.fix.summary)
        for command in finding.fix.commands:
            text.append("\n  $ " if not command.startswith("#") else "\n  ", style="dim")
            text.append(command, style="dim" if command.startswith("#") else "")
    return text


def print_check(
    reports: tuple[NodeReport, ...],
    result: CheckResult,
    threshold: Severity,
    out: Console,
    *,
    verbose: bool = False,
) -> None:
    for report in reports:
        out.print(Text(headline(report), style="bold"))
        out.print(Text("  " + summary_line(report), style="dim"))
    if not result.findings:
        out.print(Text("No problems found.", style="green"))
    else:
        table = findings_table()
        several = len(reports) > 1
        for finding in result.findings:
            label = Text(finding.severity.value.upper(), style=SEVERITY_STYLE[finding.severity])
            code = finding.code + (f"\n{finding.node}" if several else "")
            table.add_row(label, code, finding_text(finding))
        out.print(table)
    if verbose and result.skipped:
        out.print(Text("Skipped (facts unknown):", style="bold"))
        for skipped in result.skipped:
            out.print(Text(f"  {skipped.code}  {skipped.reason}", style="dim"))
    for error in result.errors:
        out.print(Text(f"internal error: {error}", style="bold red"))
    if not verbose and result.skipped:
        out.print(
            Text(
                f"{len(result.skipped)} rule(s) skipped for unknown facts; --verbose lists them.",
                style="dim",
            )
        )
