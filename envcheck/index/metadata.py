"""Core metadata of a file on the index, without downloading the file.

First the PEP 658 metadata file (``<file-url>.metadata``); when the index has none (it says so,
or answers 404), a wheel's ``*.dist-info/METADATA`` is read with HTTP range requests: a lazy,
seekable view of the remote wheel is handed to :class:`zipfile.ZipFile`, which reads the zip's
central directory and the one member from the few ranges it touches. A server that ignores
``Range`` is never read in full: the metadata is then recorded as unavailable.
"""

from __future__ import annotations

import hashlib
import io
import re
import time
import zipfile
from dataclasses import dataclass
from typing import Any

from packaging.utils import canonicalize_name

from envcheck.index.cache import Cache
from envcheck.index.client import FetchError, IndexClient, NotFound
from envcheck.index.simple import IndexFile

CHUNK = 64 * 1024  # bytes per range request
MAX_RANGE_BYTES = 8 * 1024 * 1024  # a wheel's central directory is far smaller than this
MAX_METADATA = 16 * 1024 * 1024  # bytes of an unpacked METADATA (real ones: a few KiB to ~1 MiB)
VIA_FILE, VIA_RANGE = "metadata file", "range requests"
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class RangeError(Exception):
    """The wheel cannot be read with range requests; ``permanent`` failures are cached."""

    def __init__(self, reason: str, *, permanent: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


@dataclass(frozen=True)
class Fetched:
    """The metadata text of one file, or why it is unknown."""

    text: str | None
    how: str | None = None  # VIA_FILE or VIA_RANGE
    unknown: str | None = None
    cached: bool = False


class RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches only the ranges read."""

    def __init__(self, client: IndexClient, url: str, *, chunk: int = CHUNK) -> None:
        super().__init__()
        self.client, self.url, self.chunk = client, url, chunk
        self.fetched = 0
        self._pos = 0
        self.size = 0
        start, data, total = self._request(f"bytes=-{chunk}")
        self.size = total
        self._segments: list[tuple[int, bytes]] = [(start, data)]

    def _request(self, spec: str) -> tuple[int, bytes, int]:
        try:
            response = self.client.get(self.url, kind="range", headers={"Range": spec}, stream=True)
        except FetchError as exc:
            raise RangeError(exc.reason, permanent=False) from None
        try:
            if response.status_code == 200:
                raise RangeError("the server ignores Range requests; the wheel was not downloaded")
            if response.status_code in (404, 410):
                raise RangeError(f"the wheel itself is missing (HTTP {response.status_code})")
            if response.status_code == 416:
                raise RangeError("the server rejected the byte range (HTTP 416)")
            if response.status_code != 206:
                raise RangeError(f"HTTP {response.status_code}", permanent=False)
            match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
            if match is None:
                raise RangeError("a partial response without a usable Content-Range")
            first, last, total = (int(g) for g in match.groups())
            expected = last - first + 1
            if self.fetched + expected > MAX_RANGE_BYTES:
                raise RangeError(f"more than {MAX_RANGE_BYTES} bytes needed; gave up")
            data = self._read(response, expected)
        finally:
            response.close()
        if len(data) != expected:
            raise RangeError(f"got {len(data)} bytes for a range of {expected}", permanent=False)
        self.client.bump("range_requests")
        self.client.add_bytes(len(data))
        self.fetched += len(data)
        return first, data, total

    def _read(self, response: Any, expected: int) -> bytes:
        """At most ``expected + 1`` raw bytes, before the request's deadline."""
        deadline = getattr(response, "envcheck_deadline", None)
        data = bytearray()
        try:
            while len(data) <= expected:
                want = min(CHUNK, expected + 1 - len(data))
                block = response.raw.read1(want, decode_content=False)
                if not block:
                    break
                data += block
                if deadline is not None and time.monotonic() > deadline:
                    raise RangeError("no complete answer before the deadline", permanent=False)
        except RangeError:
            raise
        except Exception as exc:  # a timeout, a reset connection
            raise RangeError(
                f"reading the range failed: {type(exc).__name__}", permanent=False
            ) from None
        return bytes(data)

    def _read_at(self, pos: int, n: int) -> bytes:
        end = min(pos + n, self.size)
        if pos >= end:
            return b""
        for start, data in self._segments:
            if start <= pos and end <= start + len(data):
                return data[pos - start : end - start]
        last = min(max(end, pos + self.chunk), self.size) - 1
        start, data, _ = self._request(f"bytes={pos}-{last}")
        self._segments.append((start, data))
        return data[pos - start : end - start]

    # io.RawIOBase --------------------------------------------------------------------------
    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        n = self.size - self._pos if size is None or size < 0 else size
        data = self._read_at(self._pos, n)
        self._pos += len(data)
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _dist_info_metadata(names: list[str], project: str) -> str | None:
    candidates = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
    key = canonicalize_name(project)
    for name in candidates:
        if canonicalize_name(name.split("-")[0]) == key:
            return name
    return candidates[0] if len(candidates) == 1 else None


def read_wheel_metadata(client: IndexClient, file: IndexFile, project: str) -> str:
    """METADATA of a remote wheel via range requests; raises RangeError."""
    remote = RemoteFile(client, file.url)
    try:
        with zipfile.ZipFile(remote) as archive:
            member = _dist_info_metadata(archive.namelist(), project)
            if member is None:
                raise RangeError("the wheel has no single *.dist-info/METADATA")
            info = archive.getinfo(member)
            if info.file_size > MAX_METADATA:
                raise RangeError(f"METADATA says it is {info.file_size} bytes; not unpacked")
            with archive.open(member) as handle:
                data = handle.read(MAX_METADATA + 1)  # the size in the header may lie
            if len(data) > MAX_METADATA:
                raise RangeError(f"METADATA unpacks to more than {MAX_METADATA} bytes; not read")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, KeyError, ValueError) as exc:
        raise RangeError(f"not a readable wheel: {exc}") from None
    except NotImplementedError as exc:  # an unsupported compression method
        raise RangeError(f"cannot unpack METADATA: {exc}") from None
    return data.decode("utf-8", errors="replace")


def fetch_metadata(client: IndexClient, file: IndexFile, project: str) -> Fetched:
    """The core metadata of ``file``: cached, from its metadata file, or by range requests."""
    cache: Cache | None = client.cache
    key = Cache.metadata_key(file.sha256, file.url)
    if cache is not None:
        hit = cache.metadata(key)
        if hit is not None:
            client.bump("cache_hits")
            if hit.text is None:
                return Fetched(None, unknown=hit.how, cached=True)
            return Fetched(hit.text, how=hit.how, cached=True)
    if client.options.offline:
        return Fetched(None, unknown="offline, and the metadata is not in the cache")
    text, how, unknown, permanent = _fetch(client, file, project)
    if cache is not None:
        if text is not None and how is not None:
            cache.store_metadata(key, text, how)
        elif unknown is not None and permanent:
            cache.store_unavailable(key, unknown)
    return Fetched(text, how=how, unknown=unknown)


def _fetch(
    client: IndexClient, file: IndexFile, project: str
) -> tuple[str | None, str | None, str | None, bool]:
    """(text, how, unknown reason, whether the failure is permanent)."""
    why_no_file = "the index says it has no metadata file"
    if file.core_metadata is not False:
        try:
            response = client.get(f"{file.url}.metadata", kind="metadata")
            client.raise_for_status(response)
        except NotFound as exc:
            why_no_file = f"metadata file: {exc.reason}"
        except FetchError as exc:
            return None, None, f"metadata file: {exc.reason}", False
        else:
            body = response.content
            if file.metadata_sha256 and hashlib.sha256(body).hexdigest() != file.metadata_sha256:
                return None, None, "metadata file does not match the index's sha256", True
            client.bump("metadata_files")
            return body.decode("utf-8", errors="replace"), VIA_FILE, None, True
    if not file.filename.endswith(".whl"):
        return None, None, f"{why_no_file}, and only wheels can be read by range", True
    try:
        return read_wheel_metadata(client, file, project), VIA_RANGE, None, True
    except RangeError as exc:
        return None, None, f"{why_no_file}; range read: {exc.reason}", exc.permanent
