"""Which node a command checks: a declared spec, a saved report, text other tools wrote, or
this node probed now."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from envcheck.commands.probe import ProbeOptions, probe
from envcheck.errors import ReportError, UsageError
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.ingest.common import Source
    from envcheck.probes.context import ProbeContext


@dataclass(frozen=True)
class SourceOptions:
    """Which node to check: a spec, a saved report, a paste, or this node probed."""

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


def read_as_log(source: Source) -> NodeReport | None:
    """A ``--from`` text in none of the formats envcheck reads, read as triage reads a log: the
    node facts its lines state (the signatures' extractors: a driver version, the CUDA the
    driver supports, a CUDA error, a GPU's name). When known failure lines state no fact, the
    report says which lines it read and nothing more; None when no signature knows any line
    (then the text is refused as before)."""
    import dataclasses
    import io

    from envcheck.ingest.common import blank
    from envcheck.matrix_validate import load
    from envcheck.model.report import Origin
    from envcheck.settings import find_settings
    from envcheck.triage.encoding import normalize
    from envcheck.triage.extract import to_report
    from envcheck.triage.run import log_facts
    from envcheck.triage.scan import Scanner

    matrix = load(list(find_settings().matrix))
    if not matrix.signatures:
        return None
    try:
        scanner = Scanner(matrix.signatures, "re")  # a pasted text is small: no RE2 start-up
    except (ValueError, RuntimeError):
        return None
    scan = scanner.scan(io.BytesIO(normalize(source.text.encode("utf-8"))))
    failures = [t for t in scan.ordered() if not t.signature.noise]
    if not scan.tallies:
        return None
    said = ", ".join(f"line {t.first.line} ({t.signature.id})" for t in scan.ordered()[:6])
    label = "log lines (no environment format)"
    report = to_report(log_facts("-", scan), source.name)
    if report is None:
        if not failures:
            return None  # only lines known as noise: nothing the text says about the node
        report = blank(source, label)
    detail = f"{source.name} ({label}: {said}; `envcheck triage` explains them)"
    return dataclasses.replace(
        report, node=source.stem, origin=Origin(kind="ingested", detail=detail)
    )


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
        report = load_sources(list(options.from_), list(options.from_format), spec, read_as_log)
    elif options.spec:
        from envcheck.ingest.spec import load_spec

        report = with_image_binaries(load_spec(options.spec), options.timeout)
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


def with_image_binaries(
    report: NodeReport, timeout: float = 5.0, ctx: ProbeContext | None = None
) -> NodeReport:
    """A declared stack checked where its files are (an image build gate with no GPU: the spec
    declares the hardware the image will run on): when every GPU-stack package the spec
    declares (torch, the nvidia-* and CUDA wheels) is installed in this interpreter at the
    declared version, the report gets this image's ELF files as its ``binaries`` section, so
    the GPU code, loading and symbol rules judge the image's real files against the declared
    GPUs. The driver's files are the spec's to declare, not this builder's: left out.
    Elsewhere (another node's spec, a different build installed here) nothing changes."""
    if report.binaries.is_ok or not report.packages.is_ok or report.packages.data is None:
        return report
    from dataclasses import replace as replaced

    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    from envcheck.binaries.scan import gpu_stack
    from envcheck.model.section import Section
    from envcheck.probes import installed_binaries
    from envcheck.probes.context import ProbeContext

    def same(a: str, b: str | None) -> bool:
        try:
            return b is not None and Version(a) == Version(b)
        except InvalidVersion:
            return a == b

    declared = {
        canonicalize_name(d.name): d.version
        for d in report.packages.data.distributions
        if gpu_stack(d.name, ())
    }
    if not declared:
        return report
    python, packages, binaries = installed_binaries(ctx or ProbeContext(timeout=timeout))
    if not packages.is_ok or packages.data is None or binaries.data is None:
        return report
    here = {canonicalize_name(d.name): d.version for d in packages.data.distributions}
    if not all(same(v, here.get(n)) for n, v in declared.items()):
        return report
    where = python.data.executable if python.is_ok and python.data is not None else None
    info = replaced(binaries.data, driver=None)
    source = f"this image's files ({where})" if where else "this image's files"
    return report.with_sections(binaries=Section.ok(info, source=source))
