"""Which node a command checks: a declared spec, a saved report, text other tools wrote, or
this node probed now."""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    deep: tuple[str, ...] = ()  # see ProbeOptions: only for this node probed now
    deep_timeout: float = 120.0


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
    if options.deep and (options.spec or options.report):
        raise UsageError("--deep probes this node: it cannot be combined with --spec or --report")
    for given, name in ((options.spec, "--spec"), (options.report, "--report")):
        if given and options.python:
            raise UsageError(
                f"{name} describes another node; --python inspects an interpreter on this one "
                "(give one)"
            )


def load_report(path: str) -> NodeReport:
    """A saved report (``probe -o``, ``check --json``): read, capped and checked by
    ``envcheck.inputs``; its secrets are redacted again by ``NodeReport.from_dict``."""
    from envcheck.inputs import display_name, load_json_file

    data = load_json_file(path, what="a JSON object (a report)", error=ReportError)
    return NodeReport.from_dict(data, where=display_name(path))


def obtain(options: SourceOptions, *, anonymized: bool = True) -> NodeReport:
    """The node to check, redacted when asked. With ``anonymized=False`` a ``redact`` is left
    to the output (``check``: the rules see the real hostname and addresses; only what is
    printed and written is redacted)."""
    if not anonymized and options.redact:
        return obtain(replace(options, redact=False))
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
        probing = ProbeOptions(
            options.python, options.timeout, options.redact, options.deep, options.deep_timeout
        )
        return probe(probing)  # --python: an executable file, then a Python interpreter
    if options.redact and not report.redacted:
        from envcheck.model.scrub import anonymize

        report = anonymize(report)
    return report
