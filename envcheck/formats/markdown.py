"""Markdown for pasting into an issue: the inventory, collapsible where it is long."""

from __future__ import annotations

from envcheck.formats.inventory import Group, headline, inventory
from envcheck.model.report import NodeReport

_LONG = {"Environment"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(group: Group) -> list[str]:
    lines = ["| | |", "|---|---|"]
    for row in group.rows:
        value = _cell(row.value)
        if row.tone in ("warn", "bad"):
            value = f"**{value}**"
        lines.append(f"| {_cell(row.label.strip())} | {value} |")
    return lines


def render_report(report: NodeReport) -> str:
    out = ["## envcheck report", "", f"`{headline(report)}`", ""]
    for group in inventory(report):
        if group.title in _LONG:
            out += [
                f"<details><summary>{group.title}</summary>",
                "",
                *_table(group),
                "",
                "</details>",
                "",
            ]
        else:
            out += [f"### {group.title}", "", *_table(group), ""]
    return "\n".join(out)
