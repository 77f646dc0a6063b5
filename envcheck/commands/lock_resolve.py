"""The resolving half of ``lock``: the index, uv's project resolver, the rules on every
target's resolved set, and the lock text."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from envcheck.commands.lock_options import EXIT_INDEX, LockOptions, LockResult
from envcheck.model.plan import Stack
from envcheck.plan.resolve import IndexConfig


def index_for(options: LockOptions) -> tuple[IndexConfig, tuple[str, ...]]:
    """The index: the command line's, else pip's configuration without the entries that name
    this machine (a lock meant to travel cannot use them); notes say what was left out."""
    from envcheck.errors import UsageError
    from envcheck.plan.resolve import pip_index_config
    from envcheck.plan.uvproject import is_local

    cli = bool(
        options.index_url or options.extra_index_urls or options.find_links or options.no_index
    )
    index = pip_index_config(
        index_url=options.index_url,
        extra_index_urls=options.extra_index_urls,
        find_links=options.find_links,
        no_index=options.no_index,
    )
    if options.allow_local:
        return index, ()
    if cli:
        local = [
            u
            for u in [options.index_url or "", *options.extra_index_urls, *options.find_links]
            if u and is_local(u)
        ]
        if local:
            raise UsageError(
                f"{local[0]} is a local path: a lock meant to travel names no local path or "
                "file:// URL (use an index URL, or --allow-local to keep it)"
            )
        return index, ()
    dropped = [
        u
        for u in [index.index_url or "", *index.extra_index_urls, *index.find_links]
        if u and is_local(u)
    ]
    if not dropped:
        return index, ()
    kept = replace(
        index,
        index_url=None if index.index_url and is_local(index.index_url) else index.index_url,
        extra_index_urls=tuple(u for u in index.extra_index_urls if not is_local(u)),
        find_links=tuple(u for u in index.find_links if not is_local(u)),
    )
    note = (
        f"left out {len(dropped)} local index(es) of {index.source}: a lock meant to travel "
        "names no local path (--allow-local keeps them)"
    )
    return kept, (note,)


def resolver_line(options: LockOptions, stack: Stack, index: IndexConfig, targets: Any) -> str:
    from envcheck.plan.resolve import python_platform, redact_url

    sources = [
        redact_url(u)
        for u in ([index.index_url] if index.index_url else []) + list(index.extra_index_urls)
    ]
    where = f"{python_platform(stack.target)} / Python {stack.target.python}"
    if len(targets.markers()) > 1:
        where = "; ".join(targets.markers())
    line = f"uv lock (project resolver) for {where}; default index from {index.source}"
    if sources or index.find_links:
        line += " (" + ", ".join(sources + list(index.find_links)) + ")"
    if options.exclude_newer:
        line += f"; files uploaded before {options.exclude_newer}"
    return line


def resolve_and_check(
    options: LockOptions, stack: Stack, matrix: Any, rules: Any, spec_report: Any
) -> LockResult:
    from envcheck.engine import evaluate
    from envcheck.errors import UsageError
    from envcheck.plan.resolve import ResolveFailed, find_uv
    from envcheck.plan.target import target_report, with_packages
    from envcheck.plan.uvproject import (
        IndexUnreachable,
        LocalIndexRefused,
        LockRequest,
        LockTargets,
        lock_project,
        pins_per_target,
    )

    uv = find_uv()
    index, notes = index_for(options)
    pythons = (stack.target.python, *options.python[1:])
    arches = (stack.target.arch, *options.arch[1:])
    targets = LockTargets(tuple(dict.fromkeys(pythons)), tuple(dict.fromkeys(arches)))
    keep: dict[str, str] | None = None
    if options.from_lock:
        from envcheck.plan.lockfile import read_lock

        keep = read_lock(options.from_lock, targets.environments()[0])
    request = LockRequest(
        stack,
        index,
        targets,
        fmt="pylock" if options.format == "pylock" else "requirements",
        exclude_newer=options.exclude_newer,
        keep_pins=keep,
        upgrade=options.upgrade_packages,
        allow_local=options.allow_local,
    )
    from envcheck.commands.lock_bounds import MAX_ROUNDS, bound_repairs, with_repairs

    for _round in range(MAX_ROUNDS + 1):
        try:
            resolution = lock_project(request, uv=uv)
        except IndexUnreachable as exc:
            stack = replace(request.stack, notes=request.stack.notes + notes)
            return LockResult(
                EXIT_INDEX, "unreachable", stack, f"{exc}; nothing was written", notes=notes
            )
        except LocalIndexRefused as exc:
            raise UsageError(str(exc)) from None
        except ResolveFailed as exc:
            stack = replace(request.stack, notes=request.stack.notes + notes)
            return LockResult(1, "unresolved", stack, exc.message, detail=exc.detail, notes=notes)
        # what the metadata allowed but the packages do not run with (matrix [[bound]]):
        # a constraint or a requirement, and the stack is resolved again
        resolved_sets = pins_per_target(resolution, targets)
        repairs = [r for pins in resolved_sets for r in bound_repairs(matrix.bounds, pins)]
        repaired = with_repairs(request.stack, repairs) if _round < MAX_ROUNDS else None
        if repaired is None:
            break
        request = replace(request, stack=repaired)
    stack = replace(request.stack, notes=request.stack.notes + notes)
    base = spec_report if spec_report is not None else target_report(stack.target)
    found = [
        evaluate(with_packages(base, pins, origin="resolved lock"), matrix, rules).findings
        for pins in resolved_sets
    ]
    # what the bare target already shows is not the lock's doing: only the rules that found
    # something in a resolved set need to run on it (a rule's findings depend on the report
    # alone), and none when nothing was found
    fired = {f.code for findings in found for f in findings}
    before: set[tuple[str, str]] = set()
    if fired:
        bare = with_packages(base, {}, origin="target")
        asked = [r for r in rules if r.code in fired]
        before = {(f.code, f.message) for f in evaluate(bare, matrix, asked).findings}
    brought: list[Any] = []
    seen: set[tuple[str, str]] = set()
    for findings in found:
        for finding in findings:
            key = (finding.code, finding.message)
            if key not in before and key not in seen:
                seen.add(key)
                brought.append(finding)
    blocking = [f for f in brought if f.severity.at_least(options.severity)]
    text = emit_lock(options, stack, resolution, resolver_line(options, stack, index, targets))
    if blocking and not options.force:
        return LockResult(
            1,
            "findings",
            stack,
            f"the resolved set fails {len(blocking)} rule(s): lock not written "
            "(use --force to write it anyway)",
            findings=tuple(brought),
            pins=resolution.pins,
            blocking=len(blocking),
            notes=notes,
        )
    message = f"locked {len(resolution.pins)} packages"
    if blocking:
        message += f" despite {len(blocking)} finding(s) (--force)"
    return LockResult(
        1 if blocking else 0,
        "findings" if blocking else "ok",
        stack,
        message,
        text=text,
        findings=tuple(brought),
        pins=resolution.pins,
        blocking=len(blocking),
        notes=notes,
    )


def emit_lock(options: LockOptions, stack: Stack, resolution: Any, resolver: str) -> str:
    if options.format == "pylock":
        from envcheck.plan.emit.pylock import lock_pylock

        text = lock_pylock(stack, resolution, resolver=resolver)
    elif options.format == "conda":
        from envcheck.plan.emit.conda import lock_conda

        name = (stack.profile or "envcheck").split(":", 1)[0]
        text = lock_conda(stack, resolution, resolver=resolver, name=name)
    else:
        from envcheck.plan.emit.requirements import lock_requirements

        text = lock_requirements(stack, resolution, resolver=resolver)
    return header_without_local_paths(text)


_FILE_URL = re.compile(r"file://\S*[^\s,;)\]]")
_ABS_PATH = re.compile(r"(?<![\w:/.~-])(?:~/|/)(?:[\w.+@-]+/)+[\w.+@-]*")


def header_without_local_paths(text: str) -> str:
    """A lock travels: its comments name no local path or file:// URL (a profile or spec read
    from a file, a local --find-links kept with --allow-local); the pins stay as they are."""
    out = []
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("#"):
            hidden = _FILE_URL.sub("<a local index of the machine that locked>", line)
            out.append(_ABS_PATH.sub("<a local path>", hidden))
        else:
            out.append(line)
    return "".join(out)
