from __future__ import annotations

import time

import pytest

from envcheck.index.cache import Cache
from envcheck.index.client import ClientOptions, FetchError, IndexClient, NotFound

FAST = ClientOptions(timeout=2.0, retries=3, backoff=0.0, workers=4)


def _client(tmp_path, **kwargs) -> IndexClient:
    options = ClientOptions(**{**FAST.__dict__, **kwargs})
    return IndexClient(Cache(tmp_path / "cache"), options)


def test_429_is_retried_then_succeeds(index_server, tmp_path) -> None:
    index_server.page("demo", {"files": []}, fail_first=2)
    client = _client(tmp_path)
    page = client.project_page(f"{index_server.index}/demo/")
    assert page.how == "fetched" and page.body == b'{"files": []}'
    assert index_server.log.hits["/simple/demo/"] == 3
    assert client.counters.requests == 3 and client.counters.retries == 2


@pytest.mark.parametrize("status", [429, 503])
def test_persistent_errors_give_up_after_the_retries(index_server, tmp_path, status) -> None:
    index_server.page("demo", {"files": []}, fail_first=100, fail_status=status)
    client = _client(tmp_path, retries=2)
    with pytest.raises(FetchError, match=f"HTTP {status} after retries"):
        client.project_page(f"{index_server.index}/demo/")
    assert index_server.log.hits["/simple/demo/"] == 3 == client.counters.requests


def test_slow_responses_time_out(index_server, tmp_path) -> None:
    index_server.page("slow", {"files": []}, delay=1.5)
    client = _client(tmp_path, timeout=0.3, retries=1)
    start = time.perf_counter()
    with pytest.raises(FetchError, match=r"timed out after 0.3 s \(2 tries\)"):
        client.project_page(f"{index_server.index}/slow/")
    assert time.perf_counter() - start < 5
    assert index_server.log.hits["/simple/slow/"] == 2  # the try and one retry


def test_404_is_not_found_and_not_retried(index_server, tmp_path) -> None:
    client = _client(tmp_path)
    with pytest.raises(NotFound):
        client.project_page(f"{index_server.index}/missing/")
    assert index_server.log.hits["/simple/missing/"] == 1


def test_an_html_answer_is_refused(index_server, tmp_path) -> None:
    index_server.add("/simple/html/", b"<html></html>", content_type="text/html")
    with pytest.raises(FetchError, match="not PEP 691 JSON"):
        _client(tmp_path).project_page(f"{index_server.index}/html/")


def test_etag_revalidation_and_offline(index_server, tmp_path) -> None:
    index_server.page("demo", {"files": []}, etag='"v1"')
    url = f"{index_server.index}/demo/"
    client = _client(tmp_path)
    first = client.project_page(url)
    client.remember_page(url, first)
    again = client.project_page(url)
    assert again.how == "not modified" and again.body == first.body
    sent = [h for path, h in index_server.log.headers if path == "/simple/demo/"]
    assert "If-None-Match" not in sent[0] and sent[1]["If-None-Match"] == '"v1"'
    assert sent[0]["Accept"] == "application/vnd.pypi.simple.v1+json"
    offline = _client(tmp_path, offline=True)
    assert offline.project_page(url).how == "cache (offline)"
    assert index_server.log.hits["/simple/demo/"] == 2
    with pytest.raises(FetchError, match="offline"):
        offline.project_page(f"{index_server.index}/other/")


def test_changed_page_replaces_the_cached_one(index_server, tmp_path) -> None:
    url = f"{index_server.index}/demo/"
    index_server.page("demo", {"files": [], "name": "v1"}, etag='"v1"')
    client = _client(tmp_path)
    client.remember_page(url, client.project_page(url))
    index_server.page("demo", {"files": [], "name": "v2"}, etag='"v2"')
    page = client.project_page(url)
    assert page.how == "fetched" and b"v2" in page.body


def test_map_keeps_order_and_limits_concurrency(tmp_path) -> None:
    import threading

    active, peak, lock = [0], [0], threading.Lock()

    def work(n: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return n * n

    client = _client(tmp_path, workers=3)
    assert client.map(work, range(12)) == [n * n for n in range(12)]
    assert 1 < peak[0] <= 3
