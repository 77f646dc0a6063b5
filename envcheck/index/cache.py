"""The on-disk cache of index responses.

Project pages are stored with their validators (ETag, Last-Modified) and revalidated with a
conditional request. Metadata is keyed by the sha256 of the file it describes: a file on an
index never changes, so its metadata is never fetched twice. Failures that will not change
(no metadata file and no way to read the wheel's) are remembered the same way; transient ones
(timeouts, 5xx) are not. Every write is atomic.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from envcheck.fileio import write_atomic


def default_cache_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "envcheck" / "index"


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


@dataclass(frozen=True)
class CachedPage:
    url: str
    body: bytes
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class CachedMetadata:
    text: str | None  # None: known to be unavailable
    how: str  # "metadata file" or "range requests"; for unavailable entries, the reason


class Cache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, kind: str) -> Path:
        path = self.root / kind
        path.mkdir(parents=True, exist_ok=True)
        return path

    # --- project pages ------------------------------------------------------------------

    def page(self, url: str) -> CachedPage | None:
        head = self.root / "pages" / f"{_key(url)}.json"
        body = head.with_suffix(".body")
        try:
            info = json.loads(head.read_text(encoding="utf-8"))
            data = body.read_text(encoding="utf-8").encode("utf-8")
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(info, dict) or info.get("url") != url:
            return None
        etag, modified = info.get("etag"), info.get("last_modified")
        return CachedPage(
            url,
            data,
            etag if isinstance(etag, str) else None,
            modified if isinstance(modified, str) else None,
        )

    def store_page(self, page: CachedPage) -> None:
        directory = self._dir("pages")
        key = _key(page.url)
        write_atomic(directory / f"{key}.body", page.body.decode("utf-8"))
        info = {"url": page.url, "etag": page.etag, "last_modified": page.last_modified}
        write_atomic(directory / f"{key}.json", json.dumps(info))

    # --- metadata, keyed by the described file's sha256 -----------------------------------

    @staticmethod
    def metadata_key(sha256: str | None, url: str) -> str:
        return sha256 if sha256 else f"url-{_key(url)}"

    def metadata(self, key: str) -> CachedMetadata | None:
        directory = self.root / "metadata"
        try:
            text = (directory / f"{key}.metadata").read_text(encoding="utf-8")
            how = (directory / f"{key}.how").read_text(encoding="utf-8").strip()
            return CachedMetadata(text, how or "metadata file")
        except (OSError, UnicodeDecodeError):
            pass
        try:
            reason = (directory / f"{key}.unavailable").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return CachedMetadata(None, reason)

    def store_metadata(self, key: str, text: str, how: str) -> None:
        directory = self._dir("metadata")
        write_atomic(directory / f"{key}.how", how)
        write_atomic(directory / f"{key}.metadata", text)

    def store_unavailable(self, key: str, reason: str) -> None:
        write_atomic(self._dir("metadata") / f"{key}.unavailable", reason)
