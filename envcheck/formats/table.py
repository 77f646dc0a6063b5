"""Terminal rendering. The only module that imports rich."""

from __future__ import annotations

from typing import IO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from envcheck.formats.inventory import Group, Tone, headline, inventory
from envcheck.model.report import NodeReport

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
        expand=False,
    )
    table.add_column("item", style="cyan", no_wrap=True)
    table.add_column("value", overflow="fold")
    for row in group.rows:
        table.add_row(row.label, Text(row.value, style=STYLES[row.tone]))
    return table


def print_report(report: NodeReport, out: Console) -> None:
    out.print(Text(headline(report), style="bold"))
    for group in inventory(report):
        out.print(_group_table(group))
