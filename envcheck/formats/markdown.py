"""Markdown for pasting into an issue: the inventory, collapsible where it is long."""

from __future__ import annotations

from collections.abc import Sequence

from envcheck.formats.inventory import (
    coverage_line,
    headline,
    inventory,
    strict_line,
    summary_line,
)
from envcheck.formats.rows import Group
from envcheck.ingest.envcheck_md import EMBEDDED
from envcheck.model.finding import CheckResult, Severity, Skipped
from envcheck.model.report import NodeReport
from envcheck.rules.base import FAMILIES, Rule

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


def _packages(report: NodeReport) -> list[str]:
    """Every installed distribution with its version, collapsed (what a maintainer asks for)."""
    data = report.packages.data if report.packages.is_ok else None
    if data is None or not data.distributions:
        return []
    lines = [
        f"<details><summary>Packages ({len(data.distributions)} installed)</summary>",
        "",
        "| package | version | installer |",
        "|---|---|---|",
    ]
    for dist in sorted(data.distributions, key=lambda d: d.name.lower()):
        lines.append(
            f"| {_cell(dist.name)} | {_cell(dist.version)} | {_cell(dist.installer or '')} |"
        )
    return [*lines, "", "</details>", ""]


def render_report(report: NodeReport) -> str:
    """The inventory for an issue, every installed package in a collapsed block, and the
    report itself as one line of JSON (collapsed) so that the paste reads back losslessly."""
    import json

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
    out += _packages(report)
    compact = json.dumps(report.to_dict(), separators=(",", ":"), ensure_ascii=False)
    out += [
        f"<details><summary>{EMBEDDED}</summary>",
        "",
        "```json",
        compact,
        "```",
        "",
        "</details>",
        "",
    ]
    return "\n".join(out)


def render_check(
    reports: tuple[NodeReport, ...],
    result: CheckResult,
    threshold: Severity,
    *,
    verbose: bool = False,
    gaps: Sequence[Skipped] = (),
) -> str:
    out = ["## envcheck check", ""]
    for report in reports:
        out += [f"`{headline(report)}`", "", summary_line(report), ""]
    if not result.findings:
        out += [f"No problems found: {coverage_line(result, len(reports))}.", ""]
    else:
        out += ["| severity | code | finding | fix |", "|---|---|---|---|"]
        for f in result.findings:
            fix = ""
            if f.fix is not None:
                commands = "<br>".join(f"`{_cell(c)}`" for c in f.fix.commands)
                fix = f"{_cell(f.fix.summary)} ({f.fix.applicability})" + (
                    f"<br>{commands}" if commands else ""
                )
            out.append(
                f"| {f.severity.value} | {f.code} | **{_cell(f.title)}**<br>{_cell(f.message)} | {fix} |"
            )
        out.append("")
    if gaps:
        out += [f"**{strict_line(gaps)}**", ""]
    if verbose and result.skipped:
        out += ["<details><summary>Skipped rules</summary>", ""]
        out += [f"- {s.code}: {_cell(s.reason)}" for s in result.skipped]
        out += ["", "</details>", ""]
    return "\n".join(out)


def render_rule(rule: Rule, *, heading: str = "##") -> str:
    """A rule's documentation: the text of `envcheck explain` and of docs/rules.md."""
    origin = "matrix data rule" if rule.origin == "matrix" else "code rule"
    if rule.scope == "cluster":
        origin = "cluster rule (envcheck cluster / diff)"
    elif rule.scope == "lock":
        origin = "lock gate (envcheck check --lock, lock --verify)"
    verified = "" if rule.verified else " · evidence partly UNVERIFIED"
    family = FAMILIES.get(rule.family, rule.family)
    out = [
        f"{heading} {rule.code}: {rule.title}",
        "",
        f"*{rule.name}* · default severity **{rule.severity.value}** · {family} · {origin}{verified}",
        "",
    ]
    for title, body in rule.doc.sections():
        out += [f"{heading}# {title}", "", body or "(none)", ""]
    return "\n".join(out)
