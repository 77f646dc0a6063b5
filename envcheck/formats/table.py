"""Terminal rendering. The only module that imports rich."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from typing import IO, Any

from rich import box
from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from envcheck.formats.inventory import (
    coverage_line,
    headline,
    inventory,
    strict_line,
    summary_parts,
)
from envcheck.formats.rows import Group, Tone
from envcheck.formats.stdout import GuardedStream
from envcheck.formats.wrapping import wrap_units
from envcheck.model.finding import CheckResult, Finding, Severity, Skipped
from envcheck.model.report import NodeReport
from envcheck.redact import redact_text
from envcheck.terminal import strip_controls

STYLES: dict[Tone, str] = {"normal": "", "muted": "dim", "warn": "yellow", "bad": "bold red"}


_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\n)")


class TrimmedLines:
    """A text stream that drops the spaces rich pads lines with (a pasted line carries no
    trailing blanks; ``diff`` of two outputs shows real changes only). The tail of a write with
    no newline yet is held until the line ends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        data = self._pending + text
        cut = data.rfind("\n") + 1
        self._pending = data[cut:]
        if cut:
            self._stream.write(_TRAILING.sub(r"\1", data[:cut]))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._pending.rstrip(" "))
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding: as the stream has
        return getattr(self._stream, name)


class SafeConsole(Console):
    """A rich console that takes terminal control sequences out of the text it renders (data:
    a package's METADATA, a log line) while keeping the escapes rich makes for its own styles
    and cursor movements; those reach a guarded stream through its ``trusted()`` writer."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        clean = (
            seg if seg.control or not seg.text else Segment(strip_controls(seg.text), seg.style)
            for seg in buffer
        )
        return super()._render_buffer(clean)


def console(file: IO[str] | None = None) -> Console:
    target: Any = file if file is not None else sys.stdout
    if isinstance(target, GuardedStream):
        target = target.trusted()
    stream = TrimmedLines(target)
    return SafeConsole(file=stream, highlight=False, soft_wrap=False)  # type: ignore[arg-type]


def _group_table(group: Group, label_width: int = 16) -> Table:
    table = Table(
        title=group.title,
        title_justify="left",
        title_style="bold",
        show_header=False,
        box=box.SIMPLE,
        padding=(0, 1),
        expand=True,
    )
    table.add_column("item", style="cyan", no_wrap=True, width=label_width)
    table.add_column("value", overflow="fold", ratio=1)  # extra width to the values
    for row in group.rows:
        # redacted before rich can fold a long value (a URL with credentials) across lines
        table.add_row(row.label, Text(redact_text(row.value), style=STYLES[row.tone]))
    return table


def print_report(report: NodeReport, out: Console) -> None:
    out.print(Text(headline(report), style="bold"))
    from envcheck.formats.inventory import binaries_rows

    groups = inventory(report)
    if report.origin.kind == "probe" or report.binaries.is_ok:  # a node's own files
        groups.append(Group("Binaries", tuple(binaries_rows(report))))
    # one label width for every section, so the value column does not move between them
    width = max([16, *(len(row.label) for g in groups for row in g.rows)])
    for group in groups:
        out.print(_group_table(group, width))


SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def finding_text(finding: Finding) -> Text:
    """A finding's title, message and fix summary (its commands are printed apart, unwrapped)."""
    text = Text()
    text.append(finding.title, style="bold")
    text.append("\n" + finding.message)
    if finding.fix is not None:
        text.append(f"\nfix ({finding.fix.applicability}): ", style="green")
        text.append(finding.fix.summary)
    return text


def _wrap_words(text: Text, width: int) -> list[Text]:
    """Lines of at most ``width`` cells, broken at spaces only (rich's own wrap folds or crops
    a word longer than the line)."""
    from rich._wrap import divide_line

    lines: list[Text] = []
    for paragraph in text.split("\n", allow_blank=True):
        for line in paragraph.divide(divide_line(paragraph.plain, width, fold=False)):
            line.rstrip()
            lines.append(line)
    return lines


def print_hanging(out: Console, head: Text | str, body: Text, indent: int) -> None:
    """``head`` then ``body`` wrapped to the width left, continuation lines indented. A word
    longer than the line (a URL, a path) stays whole on a line of its own: pasted, it works."""
    width = max(20, out.width - indent)
    lines = _wrap_words(body, width)
    first = Text(head) if isinstance(head, str) else head.copy()
    first.pad_right(indent - len(first.plain))
    for i, line in enumerate(lines):
        out.print(Text.assemble(first if i == 0 else " " * indent, line), soft_wrap=True)
    if not lines:
        out.print(first, soft_wrap=True)


def print_command(out: Console, command: str, indent: int) -> None:
    """A fix command on a line of its own, never wrapped or cropped: pasted, it is whole."""
    comment = command.startswith("#")
    line = Text(" " * indent + ("" if comment else "$ "), style="dim")
    line.append(command, style="dim" if comment else "")
    out.print(line, soft_wrap=True)


def print_findings(out: Console, rows: Sequence[tuple[Finding, str | None, Text | None]]) -> None:
    """Severity, code, then the finding with a hanging indent; ``rows`` are (finding, the
    node(s) it is on or None, an extra line or None). Commands follow, unwrapped."""
    code_width = max(len(f.code) for f, _, _ in rows)
    indent = 2 + 7 + 2 + code_width + 2
    for finding, where, extra in rows:
        head = Text("  ")
        head.append(f"{finding.severity.value.upper():<7}", style=SEVERITY_STYLE[finding.severity])
        head.append(f"  {finding.code:<{code_width}}  ", style="cyan")
        body = finding_text(finding)
        if where:
            body.append(f"\non {where}", style="dim")
        if extra is not None:
            body.append("\n")
            body.append_text(extra)
        print_hanging(out, head, body, indent)
        for command in finding.fix.commands if finding.fix is not None else ():
            print_command(out, command, indent + 2)


def print_check(
    reports: tuple[NodeReport, ...],
    result: CheckResult,
    threshold: Severity,
    out: Console,
    *,
    verbose: bool = False,
    gaps: Sequence[Skipped] = (),
) -> None:
    """``gaps``: with --strict, the skipped rules that matter (they fail the run)."""
    for report in reports:
        for line in wrap_units(headline(report).split(" · "), out.width, mark="·"):
            out.print(Text(line, style="bold"), overflow="ignore", crop=False)
        for line in wrap_units(summary_parts(report), out.width, mark="·", indent="  "):
            out.print(Text(line, style="dim"), overflow="ignore", crop=False)
    if not result.findings:
        out.print(Text(f"No problems found: {coverage_line(result, len(reports))}.", style="green"))
    else:
        several = len(reports) > 1
        out.print()
        print_findings(out, [(f, f.node if several else None, None) for f in result.findings])
        out.print()
    if verbose and result.skipped:
        out.print(Text("Skipped (facts unknown):", style="bold"))
        print_skipped(out, [(s.code, s.reason) for s in result.skipped])
    for error in result.errors:
        out.print(Text(f"internal error: {error}", style="bold red"))
    if gaps:
        print_hanging(out, "", Text(strict_line(gaps), style="bold red"), 0)
    if not verbose and result.skipped:
        out.print(
            Text(
                f"{len(result.skipped)} rule(s) skipped for unknown facts; --verbose lists them.",
                style="dim",
            )
        )


def print_skipped(out: Console, rows: Sequence[tuple[str, str]]) -> None:
    """``  CODE  reason``, a wrapped reason staying under its first line."""
    width = max((len(code) for code, _ in rows), default=6)
    for code, reason in rows:
        print_hanging(out, f"  {code:<{width}}  ", Text(reason, style="dim"), width + 6)
