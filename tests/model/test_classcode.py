"""envcheck.classcode: dataclasses compiled through the cache behave as without it, the file is
keyed by the interpreter and only read when it is the user's own."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from envcheck import classcode

SOURCE = """
from __future__ import annotations
import dataclasses

@dataclasses.dataclass(frozen=True)
class Part:
    name: str
    size: int = 3
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

@dataclasses.dataclass
class Box:
    parts: list[Part]
    label: str | None = None

def behaviour():
    a = Part("x")
    b = Part("x", 3, ())
    box = Box([a], label="L")
    box.label = "M"
    try:
        a.size = 4
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    return (repr(a), a == b, hash(a) == hash(b), repr(box), frozen,
            [f.name for f in dataclasses.fields(Part)], Part.__init__.__defaults__,
            Part.__init__.__code__.co_filename)
"""


def _behaviour() -> object:
    module = types.ModuleType("classcode_sample")
    sys.modules[module.__name__] = module  # dataclasses resolves string annotations through it
    try:
        exec(compile(SOURCE, "classcode_sample.py", "exec"), vars(module))
        return module.behaviour()
    finally:
        del sys.modules[module.__name__]


@pytest.fixture
def cache_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    yield {"ENVCHECK_CACHE_DIR": str(tmp_path)}
    classcode.uninstall()


def _file(tmp_path: Path) -> Path:
    files = list((tmp_path / "code").glob("dataclasses-*.marshal"))
    assert len(files) == 1, files
    return files[0]


def test_classes_behave_the_same_through_the_cache(
    tmp_path: Path, cache_env: dict[str, str]
) -> None:
    plain = _behaviour()
    cache = classcode.install(cache_env)
    assert cache is not None and not cache.codes
    first = _behaviour()
    assert cache.added and len(cache.codes) >= 4  # __init__, __repr__, __eq__, frozen setattr...
    classcode.uninstall()
    assert "exec" not in vars(dataclasses)
    _file(tmp_path)
    # a second run reads every text back and compiles nothing
    cache = classcode.install(cache_env)
    assert cache is not None and cache.codes
    again = _behaviour()
    assert not cache.added
    assert first == plain == again


def test_off_when_caching_is_off(tmp_path: Path) -> None:
    assert (
        classcode.install({"ENVCHECK_NO_CACHE": "1", "ENVCHECK_CACHE_DIR": str(tmp_path)}) is None
    )
    assert "exec" not in vars(dataclasses)
    assert classcode.install({}) is None  # no HOME, no cache directory


def test_a_damaged_or_foreign_file_is_an_empty_cache(
    tmp_path: Path, cache_env: dict[str, str]
) -> None:
    classcode.install(cache_env)
    _behaviour()
    classcode.uninstall()
    stored = _file(tmp_path)
    stored.write_bytes(b"\x00garbage")
    cache = classcode.install(cache_env)
    assert cache is not None and cache.codes == {}
    assert _behaviour() == _behaviour()
    classcode.uninstall()
    # a directory others may write to is not trusted
    os.chmod(stored.parent, 0o777)
    cache = classcode.install(cache_env)
    assert cache is not None and cache.codes == {}
    classcode.uninstall()
    os.chmod(stored.parent, 0o700)


def test_the_command_writes_and_reuses_the_file(tmp_path: Path) -> None:
    env = {**os.environ, "ENVCHECK_CACHE_DIR": str(tmp_path)}

    def probe() -> None:
        run = subprocess.run(
            [sys.executable, "-m", "envcheck", "probe", "--json"],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, run.stderr

    probe()
    stored = _file(tmp_path)
    assert stored.stat().st_mode & 0o077 == 0
    written = stored.stat().st_mtime_ns
    cache = classcode.CodeCache(stored)
    cache.load()
    assert any("def __init__(self," in text for text in cache.codes)
    probe()  # every text is found: nothing is written again
    assert stored.stat().st_mtime_ns == written
