from __future__ import annotations

import json

import pytest

from envcheck.index.simple import IndexDataError, parse_project
from tests.index.server import FIXTURES

PAGE_URL = "http://127.0.0.1:9/simple/torch/"


def test_recorded_page_parses_with_relative_urls_resolved() -> None:
    body = (FIXTURES / "pages" / "torch.json").read_bytes()
    page = parse_project(body, PAGE_URL)
    recorded = json.loads(body)
    assert page.name == recorded["name"] and page.api_version == recorded["meta"]["api-version"]
    assert [f.filename for f in page.files] == [f["filename"] for f in recorded["files"]]
    for file, raw in zip(page.files, recorded["files"], strict=True):
        assert file.url == f"http://127.0.0.1:9/files/{raw['filename']}"
        assert file.sha256 == raw["hashes"]["sha256"]
        assert file.requires_python == raw["requires-python"]
        assert file.size == raw["size"]
    assert not page.problems


@pytest.mark.parametrize(
    ("entry", "core_metadata", "metadata_sha256"),
    [
        ({}, None, None),
        ({"core-metadata": True}, True, None),
        ({"core-metadata": False}, False, None),
        ({"dist-info-metadata": {"sha256": "AB"}}, True, "ab"),  # PEP 714's older spelling
        ({"core-metadata": {"sha256": "cd"}, "dist-info-metadata": {"sha256": "cd"}}, True, "cd"),
    ],
)
def test_pep714_metadata_flags(entry, core_metadata, metadata_sha256) -> None:
    data = {
        "meta": {"api-version": "1.1"},
        "name": "x",
        "files": [{"filename": "x-1.whl", "url": "x-1.whl", "hashes": {}, **entry}],
    }
    (file,) = parse_project(json.dumps(data).encode(), PAGE_URL).files
    assert (file.core_metadata, file.metadata_sha256) == (core_metadata, metadata_sha256)


@pytest.mark.parametrize(
    ("yanked", "expected"),
    [(False, (False, None)), (True, (True, None)), ("broken wheel", (True, "broken wheel"))],
)
def test_yanked_flag_and_reason(yanked, expected) -> None:
    data = {
        "files": [{"filename": "x-1.tar.gz", "url": "/x-1.tar.gz", "hashes": {}, "yanked": yanked}]
    }
    (file,) = parse_project(json.dumps(data).encode(), PAGE_URL).files
    assert (file.yanked, file.yanked_reason) == expected


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"files": [', "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[]", "no 'files' list"),
        (b'{"name": "x"}', "no 'files' list"),
        (b'{"meta": {"api-version": "2.0"}, "files": []}', "unsupported simple API version"),
    ],
)
def test_unusable_pages_raise_with_a_reason(body, message) -> None:
    with pytest.raises(IndexDataError, match=message):
        parse_project(body, PAGE_URL)


def test_one_bad_file_entry_is_skipped_and_named() -> None:
    data = {
        "files": [
            {"filename": "x-1.tar.gz", "url": "x-1.tar.gz", "hashes": {}},
            {"filename": "x-2.tar.gz"},
            "not an object",
            {"filename": "../evil", "url": "x"},
        ]
    }
    page = parse_project(json.dumps(data).encode(), PAGE_URL)
    assert [f.filename for f in page.files] == ["x-1.tar.gz"]
    assert len(page.problems) == 3 and "files[1]: x-2.tar.gz: no url" in page.problems
