"""Which node a command checks: a declared spec, a saved report, text other tools wrote, or
this node probed now."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from envcheck.commands.probe import ProbeOptions, probe
from envcheck.errors import ReportError, UsageError
from envcheck.model.report import NodeReport


@dataclass(frozen=True)
class SourceOptions:
    spec: str | None = None
    report: str | None = None
    from_: tuple[str, ...] = ()
    from_format: tuple[str, ...] = ()
    python: str | None = None
    timeout: float = 5.0
    redact: bool = False


def refuse_contradictions(options: SourceOptions) -> None:
    """Options that name different nodes are refused rather than one silently winning."""
    if options.from_format and not options.from_:
        raise UsageError("--from-format needs --from")
    if options.from_ and options.report:
        raise UsageError("--from and --report are alternatives; give one")
    if options.from_ and options.python:
        raise UsageError("--from describes another node; --python does not apply")
    if options.spec and options.report:
        raise UsageError("--spec and --report are alternatives; give one")
    for given, name in ((options.spec, "--spec"), (options.report, "--report")):
        if given and options.python:
            raise UsageError(
                f"{name} describes another node; --python inspects an interpreter on this one "
                "(give one)"
            )


def load_report(path: str) -> NodeReport:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError("no such file", where=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read: {exc}", where=path) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReportError(
            f"not JSON: {exc.args[0]} (line {getattr(exc, 'lineno', '?')})", where=path
        ) from None
    return NodeReport.from_dict(data, where=path)


def obtain(options: SourceOptions) -> NodeReport:
    """The node to check, redacted when asked."""
    refuse_contradictions(options)
    if options.from_:
        from envcheck.ingest.sources import load_sources

        spec = None
        if options.spec:
            from envcheck.ingest.spec import load_spec

            spec = load_spec(options.spec)
        report = load_sources(list(options.from_), list(options.from_format), spec)
    elif options.spec:
        from envcheck.ingest.spec import load_spec

        report = load_spec(options.spec)
    elif options.report:
        report = load_report(options.report)
    else:
        return probe(ProbeOptions(options.python, options.timeout, options.redact))
    if options.redact and not report.redacted:
        from envcheck.redact import anonymize

        report = anonymize(report)
    return report
