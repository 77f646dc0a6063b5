"""PEP 691 JSON project pages of a simple repository, parsed into typed records.

A page that is not valid JSON, or not a project page, raises :class:`IndexDataError`; a single
malformed file entry is skipped and named in ``ProjectPage.problems`` so one bad entry never
hides the rest of a project.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote, urljoin

ACCEPT_JSON = "application/vnd.pypi.simple.v1+json"


class IndexDataError(ValueError):
    """The index answered with something that is not a usable project page."""


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str  # absolute (relative URLs are resolved against the page URL)
    sha256: str | None = None
    requires_python: str | None = None
    yanked: bool = False
    yanked_reason: str | None = None
    # PEP 658/714: True when the index says a metadata file exists, False when it says none
    # does, None when the page does not say (then envcheck tries the metadata file anyway).
    core_metadata: bool | None = None
    metadata_sha256: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class ProjectPage:
    name: str
    url: str
    files: tuple[IndexFile, ...]
    versions: tuple[str, ...] = ()
    api_version: str | None = None
    problems: tuple[str, ...] = ()


def _metadata_flag(entry: Mapping[str, Any]) -> tuple[bool | None, str | None]:
    # PEP 714 renamed dist-info-metadata to core-metadata; indexes may send either or both.
    for key in ("core-metadata", "dist-info-metadata"):
        if key not in entry:
            continue
        value = entry[key]
        if isinstance(value, Mapping):
            digest = value.get("sha256")
            return True, digest if isinstance(digest, str) else None
        if isinstance(value, bool):
            return value, None
    return None, None


def _file(entry: Any, base: str) -> IndexFile:
    if not isinstance(entry, Mapping):
        raise IndexDataError("a file entry is not an object")
    filename, url = entry.get("filename"), entry.get("url")
    if not isinstance(filename, str) or not filename or "/" in filename:
        raise IndexDataError(f"a file entry has no usable filename ({filename!r})")
    if not isinstance(url, str) or not url:
        raise IndexDataError(f"{filename}: no url")
    hashes = entry.get("hashes")
    sha256 = hashes.get("sha256") if isinstance(hashes, Mapping) else None
    requires_python = entry.get("requires-python")
    yanked = entry.get("yanked", False)
    size = entry.get("size")
    has_metadata, metadata_sha256 = _metadata_flag(entry)
    return IndexFile(
        filename=filename,
        url=urljoin(base, url),
        sha256=sha256.lower() if isinstance(sha256, str) else None,
        requires_python=requires_python if isinstance(requires_python, str) else None,
        yanked=bool(yanked),
        yanked_reason=yanked if isinstance(yanked, str) and yanked else None,
        core_metadata=has_metadata,
        metadata_sha256=metadata_sha256.lower() if metadata_sha256 else None,
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
    )


def parse_project(body: bytes, url: str) -> ProjectPage:
    """Parse a PEP 691 JSON project page fetched from ``url``."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise IndexDataError("the project page is not UTF-8") from None
    except ValueError as exc:
        raise IndexDataError(f"the project page is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise IndexDataError("the project page has no 'files' list (not a PEP 691 page)")
    meta = data.get("meta")
    api = meta.get("api-version") if isinstance(meta, dict) else None
    if isinstance(api, str) and not api.startswith("1."):
        raise IndexDataError(f"unsupported simple API version {api}")
    files, problems = [], []
    for index, entry in enumerate(data["files"]):
        try:
            files.append(_file(entry, url))
        except IndexDataError as exc:
            problems.append(f"files[{index}]: {exc}")
    versions = data.get("versions")
    name = data.get("name")
    return ProjectPage(
        name=name if isinstance(name, str) else "",
        url=url,
        files=tuple(files),
        versions=tuple(v for v in versions if isinstance(v, str))
        if isinstance(versions, list)
        else (),
        api_version=api if isinstance(api, str) else None,
        problems=tuple(problems),
    )


ACCEPT_ANY = f"{ACCEPT_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._open, self._text = dict(attrs), ""

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            self.found.append((self._open, self._text.strip()))
            self._open = None


def parse_project_html(body: bytes, url: str) -> ProjectPage:
    """A PEP 503 HTML project page (what indexes without PEP 691 JSON serve: the PyTorch
    index): each anchor's file name, URL, ``#sha256=`` fragment, ``data-requires-python`` and
    ``data-yanked`` (PEP 592)."""
    parser = _Anchors()
    try:
        parser.feed(body.decode("utf-8", errors="replace"))
    except (ValueError, AssertionError) as exc:
        raise IndexDataError(f"the project page is not readable HTML: {exc}") from None
    files, problems = [], []
    for attrs, text in parser.found:
        href = attrs.get("href") or ""
        link, _, fragment = href.partition("#")
        filename = (text or unquote(link.rsplit("/", 1)[-1])).strip()
        if not link or not filename or "/" in filename:
            problems.append(f"an anchor without a usable file name ({href!r})")
            continue
        digest = fragment.partition("=")[2] if fragment.startswith("sha256=") else None
        yanked = "data-yanked" in attrs
        reason = attrs.get("data-yanked") or None
        files.append(
            IndexFile(
                filename=filename,
                url=urljoin(url, link),
                sha256=digest.lower() if digest else None,
                requires_python=attrs.get("data-requires-python") or None,
                yanked=yanked,
                yanked_reason=reason,
            )
        )
    return ProjectPage(name="", url=url, files=tuple(files), problems=tuple(problems))
