"""An HTTP client for package indexes: one requests Session per worker thread, timeouts,
retries with backoff on 429 and 5xx (urllib3 ``Retry`` via ``HTTPAdapter``), conditional
requests for cached project pages, a small thread pool, and ``offline`` mode that answers from
the cache only. Every request that goes out is counted.

An index is not trusted to be polite (docs/security.md): every attempt has one deadline for
the whole answer (``request_deadline``: a server dripping a byte a second never trips a
per-read timeout, but it trips this), the command has one deadline for all its requests
(``command_deadline``), a ``Retry-After`` is honoured up to ``RETRY_AFTER_CAP`` seconds and
never past the command's deadline, and a body is read up to ``max_body`` bytes after
decompression (an endless body or a gzip bomb is cut off, not held in memory).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, NewConnectionError, ReadTimeoutError
from urllib3.util.retry import Retry

from envcheck.index.cache import Cache, CachedPage
from envcheck.index.simple import ACCEPT_JSON
from envcheck.version import __version__

T = TypeVar("T")
R = TypeVar("R")

RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRY_AFTER_CAP = 60.0  # seconds: a longer Retry-After is not waited for in full
MAX_BODY = 64 * 1024 * 1024  # bytes of one answer, after decompression
_BLOCK = 64 * 1024


class FetchError(Exception):
    """A request failed for good (after retries); ``reason`` says why in a few words."""

    def __init__(self, reason: str, *, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class NotFound(FetchError):
    """404 or 410."""


@dataclass
class Counters:
    """What went over the wire; ``requests`` counts every attempt, retries included."""

    requests: int = 0
    retries: int = 0
    not_modified: int = 0
    range_requests: int = 0
    metadata_files: int = 0
    cache_hits: int = 0
    bytes: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "retries": self.retries,
            "not_modified": self.not_modified,
            "range_requests": self.range_requests,
            "metadata_files": self.metadata_files,
            "cache_hits": self.cache_hits,
            "bytes": self.bytes,
            "by_kind": dict(sorted(self.by_kind.items())),
        }


class _CountingRetry(Retry):
    """urllib3 retries happen below requests; this counts each one."""

    on_retry: Callable[[], None] | None = None
    time_left: Callable[[], float] | None = None  # seconds to the command's deadline

    def new(self, **kw: Any) -> _CountingRetry:
        retry = super().new(**kw)
        retry.on_retry = self.on_retry
        retry.time_left = self.time_left
        return retry

    def parse_retry_after(self, retry_after: str) -> float:
        """A server's Retry-After, capped: at most RETRY_AFTER_CAP seconds and never past the
        command's deadline (a value of days, or a date years ahead, is not slept on)."""
        seconds = min(super().parse_retry_after(retry_after), RETRY_AFTER_CAP)
        if self.time_left is not None:
            seconds = min(seconds, max(self.time_left(), 0.0))
        return max(seconds, 0.0)

    def increment(self, *args: Any, **kwargs: Any) -> _CountingRetry:
        retry = super().increment(*args, **kwargs)
        if self.on_retry is not None:
            self.on_retry()
        return retry


@dataclass(frozen=True)
class ClientOptions:
    timeout: float = 30.0  # seconds, for connecting and for each read
    retries: int = 3
    request_deadline: float | None = None  # seconds for one whole answer (None: 4 x timeout)
    command_deadline: float = 1800.0  # seconds for every request of the command together
    max_body: int = MAX_BODY
    backoff: float = 0.5  # urllib3 backoff_factor: 0.5, 1, 2 ... seconds between tries
    backoff_max: float = 30.0
    workers: int = 4  # concurrent requests: polite to a public index
    offline: bool = False


class IndexClient:
    def __init__(self, cache: Cache | None, options: ClientOptions | None = None) -> None:
        self.cache = cache
        self.options = options or ClientOptions()
        self.counters = Counters()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._started = time.monotonic()

    # --- deadlines ---------------------------------------------------------------------------

    def time_left(self) -> float:
        """Seconds until the command's deadline."""
        return self.options.command_deadline - (time.monotonic() - self._started)

    def _request_deadline(self) -> float:
        per = self.options.request_deadline or 4 * self.options.timeout
        return time.monotonic() + min(per, max(self.time_left(), 0.0))

    def read_body(self, response: requests.Response, *, limit: int | None = None) -> bytes:
        """The body of a streamed response, decompressed, at most ``limit`` bytes (default
        ``max_body``), before the request's deadline; FetchError otherwise."""
        limit = self.options.max_body if limit is None else limit
        deadline = getattr(response, "envcheck_deadline", None) or self._request_deadline()
        data = bytearray()
        try:
            # read1: whatever has arrived (a dripping server's byte included), so that the
            # deadline is checked between reads; read(n) would wait for all n bytes
            while block := response.raw.read1(_BLOCK, decode_content=True):
                data += block
                if len(data) > limit:
                    raise FetchError(f"the answer is larger than {limit} bytes; not read further")
                if time.monotonic() > deadline:
                    raise FetchError(self._late())
        except FetchError:
            response.close()
            raise
        except (requests.exceptions.RequestException, OSError, ValueError) as exc:
            response.close()
            if "timed out" in str(exc).lower():
                raise FetchError(self._late()) from None
            raise FetchError(f"reading the answer failed: {type(exc).__name__}: {exc}") from None
        except Exception as exc:  # urllib3's ProtocolError, DecodeError, ReadTimeoutError
            response.close()
            raise FetchError(f"reading the answer failed: {type(exc).__name__}") from None
        return bytes(data)

    def _late(self) -> str:
        if self.time_left() <= 0:
            return f"the command's deadline of {self.options.command_deadline:g} s passed"
        per = self.options.request_deadline or 4 * self.options.timeout
        return f"no complete answer within {per:g} s"

    # --- plumbing ---------------------------------------------------------------------------

    def _count(self, kind: str, *, retries: int = 0, nbytes: int = 0) -> None:
        with self._lock:
            self.counters.requests += 1
            self.counters.by_kind[kind] = self.counters.by_kind.get(kind, 0) + 1
            self.counters.bytes += nbytes

    def _retried(self) -> None:
        with self._lock:
            self.counters.requests += 1
            self.counters.retries += 1

    def add_bytes(self, nbytes: int) -> None:
        with self._lock:
            self.counters.bytes += nbytes

    def bump(self, name: str) -> None:
        with self._lock:
            setattr(self.counters, name, getattr(self.counters, name) + 1)

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            opts = self.options
            retry = _CountingRetry(
                total=opts.retries,
                connect=opts.retries,
                read=opts.retries,
                status=opts.retries,
                backoff_factor=opts.backoff,
                backoff_max=opts.backoff_max,
                status_forcelist=RETRY_STATUSES,
                allowed_methods=frozenset({"GET", "HEAD"}),
                respect_retry_after_header=True,
                raise_on_status=False,
            )
            retry.on_retry = self._retried
            retry.time_left = self.time_left
            adapter = HTTPAdapter(max_retries=retry, pool_maxsize=max(opts.workers, 1))
            session = requests.Session()
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            session.headers["User-Agent"] = f"envcheck/{__version__} (matrix refresh)"
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def get(
        self, url: str, *, kind: str, headers: dict[str, str] | None = None, stream: bool = False
    ) -> requests.Response:
        """One GET (plus its retries). Connection problems become FetchError."""
        if self.options.offline:
            raise FetchError("offline: not in the cache")
        if self.time_left() <= 0:
            raise FetchError(self._late())
        deadline = self._request_deadline()
        read_timeout = max(min(self.options.timeout, deadline - time.monotonic()), 0.01)
        try:
            response = self._session().get(
                url,
                headers=headers or {},
                timeout=(self.options.timeout, read_timeout),
                stream=True,
            )
        except requests.exceptions.RequestException as exc:
            self._count(kind)
            raise FetchError(self._describe(exc)) from None
        response.envcheck_deadline = deadline  # type: ignore[attr-defined]
        if stream:
            self._count(kind)
            return response
        body = self.read_body(response)
        response._content = body  # the body as requests would hold it, read within bounds
        response._content_consumed = True  # type: ignore[attr-defined]
        self._count(kind, nbytes=len(body))
        return response

    def _describe(self, exc: requests.exceptions.RequestException) -> str:
        cause: object = exc
        if exc.args and isinstance(exc.args[0], MaxRetryError):
            cause = exc.args[0].reason
        tries = f"{self.options.retries + 1} tries"
        if isinstance(cause, (requests.exceptions.Timeout, TimeoutError, ReadTimeoutError)):
            return f"timed out after {self.options.timeout:g} s ({tries})"
        if isinstance(cause, NewConnectionError):
            return f"cannot connect ({tries}): {cause}"
        return f"request failed: {type(cause).__name__}: {cause}"

    @staticmethod
    def raise_for_status(response: requests.Response) -> None:
        status = response.status_code
        if status in (404, 410):
            raise NotFound(f"HTTP {status}", status=status)
        if status >= 400:
            tries = " after retries" if status in RETRY_STATUSES else ""
            raise FetchError(f"HTTP {status}{tries}", status=status)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn`` over ``items`` with at most ``workers`` at a time, results in order."""
        todo = list(items)
        if self.options.workers <= 1 or len(todo) <= 1:
            return [fn(item) for item in todo]
        with ThreadPoolExecutor(max_workers=self.options.workers) as pool:
            return list(pool.map(fn, todo))

    def close(self) -> None:
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()

    # --- project pages ----------------------------------------------------------------------

    def project_page(self, url: str) -> PageResult:
        """A PEP 691 project page: revalidated when cached, from the cache alone when offline.
        Call :meth:`remember_page` once the body parsed, so a broken page is never cached."""
        cached = self.cache.page(url) if self.cache else None
        if self.options.offline:
            if cached is None:
                raise FetchError("offline, and the project page is not in the cache")
            self.bump("cache_hits")
            return PageResult(cached.body, "cache (offline)")
        headers = {"Accept": ACCEPT_JSON}
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        response = self.get(url, kind="page", headers=headers)
        if response.status_code == 304 and cached is not None:
            self.bump("not_modified")
            return PageResult(cached.body, "not modified")
        self.raise_for_status(response)
        ctype = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype and "json" not in ctype:
            raise FetchError(f"the index answered {ctype}, not PEP 691 JSON ({ACCEPT_JSON})")
        return PageResult(
            response.content,
            "fetched",
            response.headers.get("ETag"),
            response.headers.get("Last-Modified"),
        )

    def remember_page(self, url: str, page: PageResult) -> None:
        if self.cache is not None and page.how == "fetched":
            self.cache.store_page(CachedPage(url, page.body, page.etag, page.last_modified))


@dataclass(frozen=True)
class PageResult:
    body: bytes
    how: str  # "fetched", "not modified", "cache (offline)"
    etag: str | None = None
    last_modified: str | None = None
