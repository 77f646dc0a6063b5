"""GitHub Actions workflow commands (``--output-format github``): one ``::error``,
``::warning`` or ``::notice`` line per finding, which the runner shows as an annotation on the
run (and on the file's line when a file was checked).

Escaping follows the runner's rules (actions/toolkit, ``command.ts``): in the message ``%``,
carriage return and newline become ``%25``, ``%0D`` and ``%0A``; a property's value also
escapes ``:`` and ``,`` (``%3A``, ``%2C``)."""

from __future__ import annotations

from envcheck.formats.ci import CiRun, fix_lines
from envcheck.model.finding import Severity

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _line(command: str, properties: dict[str, str], message: str) -> str:
    props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items())
    return f"::{command} {props}::{escape_data(message)}"


def render_github(run: CiRun) -> str:
    out = []
    for result in run.results:
        props: dict[str, str] = {}
        if result.file:
            props["file"] = result.file
            if result.line is not None:
                props["line"] = str(result.line)
        props["title"] = result.code
        body = "\n".join([f"{result.title}: {result.message}", *fix_lines(result.fix)])
        out.append(_line(COMMANDS[result.severity], props, body))
    if run.strict_gaps:
        gaps = "; ".join(f"{s.code} ({s.reason})" for s in run.strict_gaps)
        out.append(
            _line(
                "error",
                {"title": "strict"},
                f"--strict: {len(run.strict_gaps)} rule(s) that matter for the node were "
                f"skipped for unknown facts: {gaps}",
            )
        )
    for error in run.errors:
        out.append(_line("error", {"title": "internal error"}, error))
    return "".join(line + "\n" for line in out)
