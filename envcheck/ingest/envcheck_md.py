"""``envcheck probe --markdown`` read back (``envcheck check --from report.md``, or
``envcheck probe --markdown | envcheck check --from -``): the Markdown carries the report itself
as one line of JSON in a collapsed block, so the paste reproduces the probe's verdicts; the
tables above it are for people. The JSON goes through the same checks as ``--report``
(schema, nesting, secrets redacted again by ``NodeReport.from_dict``)."""

from __future__ import annotations

from envcheck.ingest.common import FormatError, Source
from envcheck.model.report import NodeReport

HEADING = "## envcheck report"
# the <summary> of the block that carries the report (formats/markdown.py writes it)
EMBEDDED = "envcheck report as JSON (read back by `envcheck check --from`)"
LABEL = "envcheck probe --markdown"


def looks_like(text: str) -> bool:
    return HEADING in text and EMBEDDED in text


def parse(source: Source) -> NodeReport:
    from envcheck.inputs import loads_json

    lines = source.text.splitlines()
    start = next((i for i, line in enumerate(lines) if EMBEDDED in line), None)
    if start is None:
        raise FormatError(
            f"no '{EMBEDDED}' block: this Markdown was not written by `envcheck probe "
            "--markdown`, or the block was cut when pasting",
            where=source.name,
        )
    for number, line in enumerate(lines[start + 1 :], start + 2):
        text = line.strip()
        if not text or text.startswith(("```", "~~~")):
            continue
        if not text.startswith("{"):
            break
        where = f"{source.name}:{number}"
        data = loads_json(text, where, what="a JSON object (a report)", error=FormatError)
        return NodeReport.from_dict(data, where=where)
    raise FormatError(
        f"the '{EMBEDDED}' block holds no JSON line (cut when pasting?)",
        where=f"{source.name}:{start + 1}",
    )
