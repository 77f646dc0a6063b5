"""What the index says about a lock's pinned files, for ``check --lock``: each file's
Requires-Python, its name (hence its wheel tags) and whether it is yanked, read from the
project pages (PEP 691 JSON, or PEP 503 HTML where an index serves no JSON) of the indexes the
lock names, else the one pip is configured with. Every request is bounded; an index that
cannot be read is named, and what it would have said is left unchecked."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from envcheck.plan.installable import IndexedFile, LockedPin, Node, ParsedLock, marker_applies

if TYPE_CHECKING:
    from envcheck.index.simple import ProjectPage

TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Served:
    files: dict[str, list[IndexedFile]]  # package key -> the files the indexes serve
    indexes: tuple[str, ...]  # what was read (credentials hidden)
    unread: tuple[str, ...] = ()  # "INDEX: why" for each index that could not be read


def lock_indexes(lock: ParsedLock, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The HTTP(S) indexes pip would read for this lock: an ``--index-url`` line replaces the
    configured index, ``--extra-index-url`` lines add to it (as for pip); a pylock names each
    package's ``index``; with neither, pip's configuration."""
    from envcheck.errors import UsageError
    from envcheck.index.config import choose_index, is_http

    named = [*lock.indexes, *(p.index for p in lock.pins if p.index)]
    found = tuple(dict.fromkeys(u for u in named if u and is_http(u)))
    if lock.replaces_default or (found and lock.fmt == "pylock"):
        return found
    try:
        configured = choose_index(None, dict(os.environ if env is None else env), timeout=10.0)
    except UsageError:  # no HTTP index configured: only the lock's own
        return found
    return tuple(dict.fromkeys((*configured.urls, *found)))


def _files(page: ProjectPage) -> list[IndexedFile]:
    return [
        IndexedFile(f.filename, f.sha256, f.requires_python, f.yanked, f.yanked_reason)
        for f in page.files
    ]


def _page_url(index: str, name: str) -> str:
    return f"{index.rstrip('/')}/{name}/"


def served_files(
    lock: ParsedLock,
    node: Node,
    indexes: Sequence[str],
    *,
    timeout: float = TIMEOUT_S,
) -> Served:
    """The files each index serves for the pins that apply on the node."""
    from envcheck.index.client import ClientOptions, FetchError, IndexClient, NotFound
    from envcheck.index.simple import (
        ACCEPT_ANY,
        IndexDataError,
        parse_project,
        parse_project_html,
    )
    from envcheck.plan.resolve import redact_url

    pins = {p.key: p for p in lock.pins if marker_applies(p.marker, node)}
    files: dict[str, list[IndexedFile]] = {}
    unread: dict[str, str] = {}
    client = IndexClient(None, ClientOptions(timeout=timeout, retries=1, backoff=0.2, workers=4))

    def fetch(job: tuple[str, LockedPin]) -> tuple[str, str, ProjectPage | None, str | None]:
        index, pin = job
        url = _page_url(index, pin.key)
        try:
            response = client.get(url, kind="page", headers={"Accept": ACCEPT_ANY})
            client.raise_for_status(response)
        except NotFound:
            return index, pin.key, None, None
        except FetchError as exc:
            return index, pin.key, None, exc.reason
        ctype = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if "json" in ctype:
                page = parse_project(response.content, url)
            else:
                page = parse_project_html(response.content, url)
        except IndexDataError as exc:
            return index, pin.key, None, f"{pin.key}: {exc}"
        return index, pin.key, page, None

    try:
        todo = list(pins.values())
        readable = []
        for index in indexes:  # one request first: an index that cannot be read is asked once
            if not todo:
                break
            _, key, page, problem = fetch((index, todo[0]))
            if problem is not None and page is None and not problem.startswith(f"{key}:"):
                unread[index] = problem
                continue
            readable.append(index)
            if page is not None:
                files.setdefault(key, []).extend(_files(page))
        jobs = [(index, pin) for index in readable for pin in todo[1:]]
        for index, key, page, problem in client.map(fetch, jobs):
            if problem is not None:
                unread.setdefault(index, problem)
            if page is not None:
                files.setdefault(key, []).extend(_files(page))
    finally:
        client.close()
    return Served(
        files,
        tuple(redact_url(i) for i in indexes),
        tuple(f"{redact_url(i)}: {why}" for i, why in unread.items()),
    )
