"""``envcheck triage`` as terminal text (rich) and Markdown."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from envcheck.formats.table import print_hanging
from envcheck.triage.run import Match, TriageResult
from envcheck.triage.verdict import CauseCheck

VERDICT_STYLE = {
    "confirmed": "bold red",
    "ruled_out": "green",
    "unknown": "yellow",
    "unchecked": "dim",
}
VERDICT_LABEL = {
    "confirmed": "CONFIRMED",
    "ruled_out": "ruled out",
    "unknown": "unknown",
    "unchecked": "unchecked",
}


def _where(match: Match) -> str:
    t = match.tally
    if t.count == 0:  # no line: what the inputs state (triage/environment.py)
        return "environment"
    if t.count == 1:
        return f"line {t.first.line}"
    return f"line {t.first.line} (x{t.count}, last at line {t.last.line})"


def headline(result: TriageResult) -> str:
    shown = [m for m in result.failures if m.tally.count == 0]  # the environment's match
    failures = len(result.failures) - len(shown)
    noise = len(result.matches) - len(result.failures)
    size = f"{result.scan.lines:,} lines"
    if not result.matches:
        return f"{result.log}: {size}: no known signature"
    parts = [f"{failures} known failure signature(s)"] if failures else ["no known failure"]
    if noise:
        parts.append(f"{noise} noise")
    if shown:
        parts.append(f"the environment shows {len(shown[0].causes)} problem(s)")
    return f"{result.log}: {size}: " + ", ".join(parts)


SHOWN = 160  # characters of a matched line in the terminal (JSON keeps more)


def _short(text: str, width: int = SHOWN) -> str:
    """A matched line cut to ``width`` (at most SHOWN) characters: the terminal's line, so a
    quoted log line never wraps at 80 columns (JSON keeps more)."""
    limit = max(40, min(SHOWN, width))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cause_lines(cause: CauseCheck, rank: int, shown: dict[str, int]) -> list[tuple[str, str]]:
    """(text, style) lines for one cause; a finding already printed is referred to."""
    label = VERDICT_LABEL[cause.verdict]
    lines = [(f"  {rank}. {cause.code} {label:<10} {cause.title}", VERDICT_STYLE[cause.verdict])]
    if cause.evidence:
        lines.append((f"       {cause.evidence}", "bold"))
    if cause.reason and cause.verdict == "unknown":
        lines.append((f"       {cause.reason}", "dim"))
    if cause.verdict == "ruled_out" and cause.reason:
        lines.append((f"       why: {cause.reason}", "dim"))
    elif cause.fix is not None and not cause.findings:
        lines.append((f"       fix: {cause.fix.summary}", "green"))
        lines += [(f"         $ {c}", "") for c in cause.fix.commands]
    if cause.findings and cause.code in shown:
        lines.append(
            (
                f"       (the finding and its fix are shown above, under line {shown[cause.code]})",
                "dim",
            )
        )
        return lines
    for finding in cause.findings:
        lines.append((f"       {finding.message}", ""))
        if finding.fix is not None:
            lines.append(
                (f"       fix ({finding.fix.applicability}): {finding.fix.summary}", "green")
            )
            lines += [
                (f"         {c if c.startswith('#') else '$ ' + c}", "")
                for c in finding.fix.commands
            ]
    return lines


_RANKED = re.compile(r"^ *\d+\. \S+ \S+ +")


def _print_line(out: Console, text: str, style: str) -> None:
    """One line of the view: commands whole (never wrapped), other text wrapped under its own
    indent (a ranked cause's continuation under its title)."""
    body = text.lstrip(" ")
    indent = len(text) - len(body)
    if body.startswith(("$ ", "#")):
        out.print(Text(text, style=style), soft_wrap=True)
        return
    ranked = _RANKED.match(text)
    if ranked:
        head, body = text[: ranked.end()], text[ranked.end() :]
        print_hanging(out, Text(head, style=style), Text(body, style=style), len(head))
    else:
        print_hanging(out, " " * indent, Text(body, style=style), indent)


def print_triage(result: TriageResult, out: Console) -> None:
    out.print(Text(headline(result), style="bold"))
    if not result.matches:
        out.print(
            Text(f"No line matches a known signature ({result.scan.engine} engine).", style="green")
        )
        return
    if result.failures:
        out.print(Text(f"Causes {result.node_note}.", style="dim"))
    if result.facts:
        out.print(Text("Facts the log states:", style="bold"))
        for fact in result.facts:
            out.print(Text(f"  line {fact.line}: {fact.name} = {fact.value}"), soft_wrap=True)
    shown: dict[str, int] = {}
    for match in result.matches:
        sig = match.tally.signature
        out.print()
        title = Text()
        title.append(_where(match), style="bold cyan")
        title.append(f"  {sig.id}")
        if sig.noise:
            title.append("  NOISE", style="dim")
        elif match.information_ruled_out:
            title.append("  INFO, RULED OUT HERE", style="dim")
        if not sig.verified:
            title.append("  (signature UNVERIFIED)", style="yellow")
        out.print(title)
        quoted = _short(match.tally.first.text, out.width - 2)
        out.print(Text(f"  {quoted}", style="dim"), soft_wrap=True)
        _print_line(out, f"  {sig.meaning}", "")
        if sig.noise:
            continue
        if match.causes:
            out.print(Text("  causes, most likely first:", style="bold"))
            for rank, cause in enumerate(match.causes, 1):
                for text, style in _cause_lines(cause, rank, shown):
                    _print_line(out, text, style)
                if cause.findings:
                    shown.setdefault(cause.code, match.tally.first.line)
        if sig.note:
            _print_line(out, f"  check: {sig.note}", "yellow")


def markdown(result: TriageResult) -> str:
    lines = [f"## {headline(result)}", ""]
    if result.failures:
        lines += [f"Causes {result.node_note}.", ""]
    if result.facts:
        lines += ["Facts the log states:", ""]
        lines += [f"- line {f.line}: `{f.name}` = `{f.value}`" for f in result.facts]
        lines.append("")
    for match in result.matches:
        sig = match.tally.signature
        tag = (
            " (noise)"
            if sig.noise
            else " (information, ruled out here)"
            if match.information_ruled_out
            else ""
        )
        lines += [
            f"### {_where(match)}: `{sig.id}`{tag}",
            "",
            "```",
            match.tally.first.text,
            "```",
            "",
        ]
        lines += [sig.meaning, ""]
        for rank, cause in enumerate(match.causes, 1):
            lines.append(f"{rank}. **{cause.code}** {VERDICT_LABEL[cause.verdict]}: {cause.title}")
            if cause.evidence:
                lines.append(f"   - {cause.evidence}")
            if cause.reason and cause.verdict == "unknown":
                lines.append(f"   - {cause.reason}")
            if cause.verdict == "ruled_out" and cause.reason:
                lines.append(f"   - why: {cause.reason}")
            elif cause.fix is not None and not cause.findings:
                lines.append(f"   - fix: {cause.fix.summary}")
            for finding in cause.findings:
                lines.append(f"   - {finding.message}")
                if finding.fix is not None:
                    lines.append(f"   - fix: {finding.fix.summary}")
                    lines += [f"     `{c}`" for c in finding.fix.commands]
        if sig.note:
            lines += ["", f"Check: {sig.note}"]
        lines.append("")
    return "\n".join(lines) + "\n"
