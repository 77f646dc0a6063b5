"""``envcheck matrix refresh`` and ``envcheck matrix diff`` (registered by matrix_cmd)."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from envcheck.cli import common
from envcheck.errors import UsageError
from envcheck.numeric import seconds_arg

SHOWN_UNKNOWN = 5


def add_parsers(msub: Any) -> None:
    from envcheck.matrix.generated import DEFAULT_PACKAGES, KNOWN_PACKAGES

    r = msub.add_parser(
        "refresh",
        help="derive pins and Python support from the package index's own metadata",
        description=(
            "Read the configured package index (PEP 691 pages, PEP 658 metadata) and write the "
            "generated matrix files. Hand-curated files are never touched. See docs/refresh.md."
        ),
    )
    r.add_argument(
        "--packages",
        action="append",
        metavar="LIST",
        help=f"comma-separated, repeatable; default {','.join(DEFAULT_PACKAGES)} "
        f"(known: {', '.join(KNOWN_PACKAGES)})",
    )
    r.add_argument("--since", metavar="VERSION", help="only releases at or after VERSION")
    r.add_argument("--pre", action="store_true", help="include pre-releases and dev releases")
    r.add_argument(
        "--index-url",
        type=common.url_arg,
        metavar="URL",
        help="simple index to read (default: the one pip is configured with)",
    )
    r.add_argument(
        "--output",
        metavar="DIR",
        help="directory for the generated files (default: the matrix's generated/ in a "
        "source checkout); for a site overlay, then use --matrix",
    )
    r.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    r.add_argument("--offline", action="store_true", help="answer from the cache only")
    r.add_argument("--cache-dir", metavar="DIR", help="default $XDG_CACHE_HOME/envcheck/index")
    r.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    r.add_argument("--workers", type=int, default=4, metavar="N", help="concurrent requests (4)")
    r.add_argument(
        "--timeout",
        type=seconds_arg,
        default=30.0,
        metavar="S",
        help="per read (30); a whole answer gets 4 times as long",
    )
    r.add_argument("--retries", type=int, default=3, metavar="N", help="on 429/5xx/timeouts (3)")
    r.add_argument(
        "--deadline",
        type=seconds_arg,
        default=1800.0,
        metavar="S",
        help="for every request together, retries and Retry-After waits included (1800)",
    )
    r.add_argument("--json", action="store_true")
    r.set_defaults(run=run_refresh, output_is_file=False)

    d = msub.add_parser(
        "diff",
        help="what changed between two matrix trees",
        description="Entries added, removed and changed (field by field) between two matrix "
        "directories (with their generated/) or files. Exit 1 when they differ.",
    )
    d.add_argument("old", metavar="OLD")
    d.add_argument("new", metavar="NEW")
    d.add_argument("--json", action="store_true")
    d.set_defaults(run=run_diff)


def _packages(values: list[str] | None) -> tuple[str, ...]:
    from envcheck.matrix.generated import DEFAULT_PACKAGES

    if not values:
        return DEFAULT_PACKAGES
    names = [n.strip().lower() for v in values for n in v.split(",") if n.strip()]
    if not names:
        raise UsageError("--packages names no package (give a comma-separated list)")
    return tuple(dict.fromkeys(names))


def _output(value: str | None, *, dry_run: bool = False) -> Path:
    """Where the files go: --output, else the checkout's built-in matrix. A dry run writes
    nothing, so it compares with the built-in files even in an installed package."""
    from envcheck.matrix.load import GENERATED_DIR, builtin_dir

    if value:
        path = Path(value)
        if path.exists() and not path.is_dir():
            raise UsageError(f"--output {value}: not a directory")
        return path
    builtin = builtin_dir()
    if not dry_run and not (builtin.parent / "pyproject.toml").is_file():
        raise UsageError(
            "envcheck runs from an installed package, whose matrix is not written to: "
            "give --output DIR (a site overlay; then check with --matrix DIR)"
        )
    return builtin / GENERATED_DIR


def _since(value: str | None) -> Version | None:
    if value is None:
        return None
    try:
        return Version(value)
    except InvalidVersion:
        raise UsageError(f"--since {value!r} is not a version") from None


def run_refresh(args: argparse.Namespace) -> int:
    import logging

    from envcheck.index.cache import Cache, default_cache_dir
    from envcheck.index.client import ClientOptions, IndexClient
    from envcheck.index.config import choose_index
    from envcheck.matrix.refresh import RefreshOptions, refresh

    # urllib3 logs each retry as a warning; the summary reports retries instead
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    if args.workers < 1 or args.timeout <= 0 or args.retries < 0:
        raise UsageError("--workers and --timeout must be positive, --retries not negative")
    if args.offline and args.no_cache:
        raise UsageError("--offline answers from the cache; it cannot go with --no-cache")
    options = RefreshOptions(
        packages=_packages(args.packages),
        output=_output(args.output, dry_run=args.dry_run),
        today=datetime.date.today().isoformat(),
        since=_since(args.since),
        pre=args.pre,
        dry_run=args.dry_run,
    )
    choice = choose_index(args.index_url, os.environ, timeout=args.timeout)
    if not args.json:
        for url, why in choice.skipped:
            sys.stderr.write(f"envcheck: note: skipping index {url}: {why}\n")
    cache = None if args.no_cache else Cache(Path(args.cache_dir or default_cache_dir(os.environ)))
    client = IndexClient(
        cache,
        ClientOptions(
            timeout=args.timeout,
            retries=args.retries,
            workers=args.workers,
            offline=args.offline,
            command_deadline=args.deadline,
        ),
    )
    from envcheck.formats.progress import status as spinner

    try:
        with spinner(f"refreshing {', '.join(options.packages)} from the index"):
            result = refresh(client, choice, options)
    finally:
        client.close()
    code = 1 if result.failed else 0
    if args.json:
        from envcheck.model.envelope import envelope

        data = {
            "index": {
                "urls": list(choice.urls),
                "origin": choice.origin,
                "skipped": [{"url": u, "reason": r} for u, r in choice.skipped],
            },
            "dry_run": options.dry_run,
            "output": str(options.output),
            "packages": [p.as_dict() for p in result.packages],
            "requests": result.counters,
            "seconds": round(result.seconds, 3),
        }
        errors = [{"message": f"{p.name}: {p.error}"} for p in result.failed]
        status = "partial" if result.failed else "ok"
        common.emit(common.json_text(envelope("matrix refresh", status, code, data, errors)))
        return code
    common.emit(_text(result, choice, options))
    return code


def _text(result: Any, choice: Any, options: Any) -> str:
    from envcheck.matrix.diff import render

    lines = [f"index: {', '.join(choice.urls)} ({choice.origin})"]
    width = max(len(p.name) for p in result.packages)
    for p in result.packages:
        if p.error:
            state = "left as it was" if Path(p.file).exists() else "not written"
            lines.append(f"{p.name:{width}}  FAILED: {p.error}; {p.file} {state}")
            continue
        parts = [f"{p.releases} releases" + (f" ({p.yanked} yanked)" if p.yanked else "")]
        if p.metadata:
            parts.append(f"metadata of {sum(p.metadata.values())} wheels: " + _how(p.metadata))
        if p.unknown:
            parts.append(f"{len(p.unknown)} unknown")
        if p.kept:
            parts.append(f"{p.kept} kept from the previous refresh")
        counts = {
            k: sum(1 for c in p.changes if c.kind == k) for k in ("added", "changed", "removed")
        }
        change = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no change"
        if options.dry_run and p.changes:
            where = f"would write {p.file}"
        elif p.written:
            where = f"wrote {p.file}"
        elif Path(p.file).exists():
            where = f"kept {p.file}"
        else:
            where = f"nothing to write ({p.file} does not exist)"
        lines.append(f"{p.name:{width}}  {'; '.join(parts)}")
        lines.append(f"{'':{width}}  {change}: {where}")
        for entry, reason in p.unknown[:SHOWN_UNKNOWN]:
            lines.append(f"{'':{width}}  unknown: {entry}: {reason}")
        if len(p.unknown) > SHOWN_UNKNOWN:
            lines.append(f"{'':{width}}  ... {len(p.unknown) - SHOWN_UNKNOWN} more in the file")
        for problem in p.problems[:SHOWN_UNKNOWN]:
            lines.append(f"{'':{width}}  skipped file: {problem}")
    c = result.counters
    lines.append(
        f"requests: {c['requests']} ({c['retries']} retries, {c['not_modified']} not modified, "
        f"{c['cache_hits']} answered from the cache), {c['bytes'] / 1e6:.1f} MB "
        f"in {result.seconds:.1f} s"
    )
    if options.dry_run:
        changes = [ch for p in result.packages for ch in p.changes]
        if changes:
            lines.append("")
            lines.append(render(changes).rstrip("\n"))
        lines.append("dry run: nothing written")
    return "\n".join(lines) + "\n"


_HOW = {
    "metadata file": "from metadata files",
    "range requests": "read from the wheel by range requests",
    "metadata file (cached)": "from the cache",
    "range requests (cached)": "from the cache",
    "unknown": "unknown",
    "unknown (cached)": "known unavailable (cached)",
}


def _how(counts: dict[str, int]) -> str:
    merged: dict[str, int] = {}
    for key, n in counts.items():
        label = _HOW.get(key, key)
        merged[label] = merged.get(label, 0) + n
    order = list(dict.fromkeys(_HOW.values()))
    return ", ".join(
        f"{n} {label}"
        for label, n in sorted(
            merged.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99
        )
    )


def run_diff(args: argparse.Namespace) -> int:
    from envcheck.matrix.diff import diff_trees, render

    changes = diff_trees(args.old, args.new)
    code = 1 if changes else 0
    counts = {k: sum(1 for c in changes if c.kind == k) for k in ("added", "removed", "changed")}
    if args.json:
        from envcheck.model.envelope import envelope

        data = {
            "old": args.old,
            "new": args.new,
            "counts": counts,
            "changes": [c.as_dict() for c in changes],
        }
        status = "findings" if changes else "ok"
        common.emit(common.json_text(envelope("matrix diff", status, code, data)))
        return code
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) if changes else "no differences"
    common.emit(render(changes) + summary + "\n")
    return code
