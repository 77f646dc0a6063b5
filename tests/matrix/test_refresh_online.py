"""The real index (the one pip is configured with): run with ENVCHECK_ONLINE=1."""

from __future__ import annotations

import os

import pytest
from packaging.version import Version

from envcheck.index.cache import Cache
from envcheck.index.client import IndexClient
from envcheck.index.config import choose_index
from envcheck.matrix.crosscheck import crosscheck
from envcheck.matrix.refresh import RefreshOptions, refresh
from envcheck.matrix_validate import load


@pytest.mark.online
def test_real_index_reproduces_curated_vllm_and_torch_facts(tmp_path) -> None:
    choice = choose_index(None, dict(os.environ))
    client = IndexClient(Cache(tmp_path / "cache"))
    for package, since in (("vllm", "0.10.0"), ("torch", "2.8.0")):
        options = RefreshOptions((package,), tmp_path / "out", "2026-01-01", since=Version(since))
        result = refresh(client, choice, options)
        assert not result.failed
    matrix = load([str(tmp_path / "out")], env={})
    verified = [d for d in crosscheck(matrix) if d.curated_verified]
    assert verified == []
    assert any(w.version == Version("2.8.0") for w in matrix.generated.torch_wheel)
