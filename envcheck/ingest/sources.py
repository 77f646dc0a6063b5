"""``--from`` inputs (and a ``--spec``) to one NodeReport: read, detect, parse, merge."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from envcheck.errors import UsageError
from envcheck.ingest.common import STDIN, FormatError, NoFactsError, Source, read_source
from envcheck.ingest.detect import FORMATS, json_kind, parse
from envcheck.ingest.merge import merge
from envcheck.model.report import NodeReport


def pair_formats(paths: Sequence[str], formats: Sequence[str]) -> list[str | None]:
    """One forced format per path: none, one for all, or one each in order."""
    if not formats:
        return [None] * len(paths)
    if len(formats) == 1:
        return [formats[0]] * len(paths)
    if len(formats) != len(paths):
        raise UsageError(
            f"--from-format given {len(formats)} times for {len(paths)} --from inputs: "
            "give it once (for all) or once per --from, in the same order"
        )
    return list(formats)


# a text in no format envcheck reads, read as a log (the caller's: triage's signatures sit
# above this layer); None when its lines state nothing either
LogReader = Callable[[Source], "NodeReport | None"]


def load_sources(
    paths: Sequence[str],
    formats: Sequence[str] = (),
    spec: NodeReport | None = None,
    as_log: LogReader | None = None,
) -> NodeReport:
    """The node the texts describe. A declared spec comes first, so it wins conflicts. A text
    whose format is not recognised (and none was forced) is handed to ``as_log``: the failure
    lines pasted as an environment (a traceback, a docker or NVML error) state facts too."""
    if sum(1 for p in paths if p == STDIN) > 1:
        raise UsageError("--from - (standard input) can be given only once")
    for name in formats:
        if name not in FORMATS:
            raise UsageError(
                f"--from-format: unknown format {name!r} (one of: {', '.join(FORMATS)})"
            )
    reports = [spec] if spec is not None else []
    for path, forced in zip(paths, pair_formats(paths, formats), strict=True):
        source = read_source(path)
        try:
            reports.append(parse(source, forced))
        except FormatError as exc:
            # a format's reader refused it, or none knew it: its lines may still be a log's
            # (an envcheck report given to --from is refused as such, not read as lines)
            usable = isinstance(exc, NoFactsError) or json_kind(source.text) is None
            read = as_log(source) if as_log is not None and forced is None and usable else None
            if read is None:
                raise
            reports.append(read)
    return merge(reports)
