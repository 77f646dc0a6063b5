"""``--from`` inputs (and a ``--spec``) to one NodeReport: read, detect, parse, merge."""

from __future__ import annotations

from collections.abc import Sequence

from envcheck.errors import UsageError
from envcheck.ingest.common import STDIN, read_source
from envcheck.ingest.detect import FORMATS, parse
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


def load_sources(
    paths: Sequence[str], formats: Sequence[str] = (), spec: NodeReport | None = None
) -> NodeReport:
    """The node the texts describe. A declared spec comes first, so it wins conflicts."""
    if sum(1 for p in paths if p == STDIN) > 1:
        raise UsageError("--from - (standard input) can be given only once")
    for name in formats:
        if name not in FORMATS:
            raise UsageError(
                f"--from-format: unknown format {name!r} (one of: {', '.join(FORMATS)})"
            )
    reports = [spec] if spec is not None else []
    for path, forced in zip(paths, pair_formats(paths, formats), strict=True):
        reports.append(parse(read_source(path), forced))
    return merge(reports)
