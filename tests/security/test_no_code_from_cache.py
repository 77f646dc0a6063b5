"""No executable data (issue 21): the caches hold data only. A cache directory committed to a
repository or restored from an untrusted CI cache, in the right place and owned by the
current user, used to run code (marshal'ed code objects, pickles); a relative HOME or
XDG_CACHE_HOME put the cache in the working directory."""

from __future__ import annotations

import pickle
import subprocess
from pathlib import Path

import pytest

from envcheck.cachefiles import cache_root
from envcheck.matrix.compiled import cache_dir
from tests.conftest import REPO, cli_env, run_cli

CUD102_BAD = (REPO / "tests" / "rules" / "cases" / "CUD102" / "bad.toml").read_text()


class _Payload:
    """Unpickling this runs ``open(marker, "a")``: a pickle is code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.marker, "a"))


def _poison(cache: Path, marker: Path) -> None:
    """Every file the old caches read, planted with a payload under each name they used."""
    payload = pickle.dumps(_Payload(str(marker)))
    matrix = cache / "matrix"
    matrix.mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    for name in [f"{'0' * 48}.pickle", f"merged-{'0' * 48}.pickle"]:
        (matrix / name).write_bytes(payload)
    code = cache / "code"
    code.mkdir(mode=0o700)
    (code / "dataclasses-any.marshal").write_bytes(payload)


def test_a_planted_cache_never_runs(tmp_path: Path) -> None:
    """Entries under every name the old caches read are passed over: the check runs, its
    verdict stands, and no payload ran. Pickle names found in the directory are not deleted
    either (not envcheck's)."""
    cache = tmp_path / "cache"
    marker = tmp_path / "marker"
    _poison(cache, marker)
    # a matrix entry under the current name, holding a pickle: not JSON, a miss
    work = tmp_path / "job"
    work.mkdir()
    (work / "spec.toml").write_text(CUD102_BAD)
    env = cli_env(HOME=str(tmp_path), ENVCHECK_CACHE_DIR=str(cache))
    for _ in range(2):  # a cold and a warm run
        result = run_cli("check", "--spec", "spec.toml", "--json", cwd=work, env=env)
        assert result.returncode == 1, result.stderr
    assert not marker.exists()
    for entry in (cache / "matrix").glob("m-*.json"):
        entry.write_bytes(pickle.dumps(_Payload(str(marker))))
    assert run_cli("check", "--spec", "spec.toml", cwd=work, env=env).returncode == 1
    assert not marker.exists()
    assert len(list((cache / "matrix").glob("*.pickle"))) == 2


def test_no_loader_of_code_remains_in_the_package() -> None:
    found = subprocess.run(
        ["grep", "-rnE", r"\b(pickle|marshal)\.loads?\(", str(REPO / "envcheck")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.stdout == ""
    assert not (REPO / "envcheck" / "classcode.py").exists()


@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "relative-home"},
        {"HOME": "", "XDG_CACHE_HOME": ".cache"},
        {"HOME": "/h", "XDG_CACHE_HOME": "cache"},
        {"HOME": "/h", "ENVCHECK_CACHE_DIR": "./c"},
    ],
)
def test_a_relative_cache_location_disables_the_cache(env: dict[str, str]) -> None:
    assert cache_root(env) is None
    assert cache_dir(env) is None


def test_a_relative_home_never_reads_the_working_directory(tmp_path: Path) -> None:
    """HOME=. with a committed .cache/envcheck in the working directory: nothing of it is read
    and nothing written there."""
    work = tmp_path / "repo"
    work.mkdir()
    marker = tmp_path / "marker"
    _poison(work / ".cache" / "envcheck", marker)
    (work / "spec.toml").write_text(CUD102_BAD)
    env = cli_env(HOME=".")
    env.pop("XDG_CACHE_HOME", None)
    env.pop("ENVCHECK_CACHE_DIR", None)
    planted = sorted((work / ".cache").rglob("*"))
    result = run_cli("check", "--spec", "spec.toml", cwd=work, env=env)
    assert result.returncode == 1, result.stderr
    assert not marker.exists()
    assert sorted((work / ".cache").rglob("*")) == planted  # nothing written there either
