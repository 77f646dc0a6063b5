"""Libraries by absolute path (issue 21): an empty component in LD_LIBRARY_PATH made a plain
``check`` dlopen ./libnvidia-ml.so.1 from the working directory (NVML through pynvml), and the
--deep children ./libcuda.so.1. A library planted there must never be loaded: its constructor
writes a marker."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envcheck.probes.libpath import find_library, safe_library_path
from tests.conftest import cli_env, run_cli

CONSTRUCTOR = """
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen("%s", "a");
    if (f) { fputs("%s loaded\\n", f); fclose(f); }
}
"""


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A working directory holding a fake libnvidia-ml.so.1 and libcuda.so.1, and the marker
    file their constructors write."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler to build the planted library")
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "marker"
    for name in ("libnvidia-ml.so.1", "libcuda.so.1"):
        source = tmp_path / f"{name}.c"
        source.write_text(CONSTRUCTOR % (marker, name))
        subprocess.run(
            [compiler, "-shared", "-fPIC", "-o", str(work / name), str(source)],
            check=True,
            timeout=60,
        )
    return work, marker


def _env(tmp_path: Path) -> dict[str, str]:
    env = cli_env(HOME=str(tmp_path), LD_LIBRARY_PATH=":/nonexistent-lib-dir:")
    env.pop("ENVCHECK_LIBCUDA", None)
    env.pop("ENVCHECK_LIBNVML", None)
    return env


def test_a_plain_check_does_not_load_a_library_from_the_working_directory(
    planted: tuple[Path, Path], tmp_path: Path
) -> None:
    work, marker = planted
    for args in (["probe", "--json"], ["check", "--json"]):
        result = run_cli(*args, cwd=work, env=_env(tmp_path))
        assert result.returncode in (0, 1), result.stderr
    assert not marker.exists(), marker.read_text()


def test_the_deep_children_do_not_load_a_library_from_the_working_directory(
    planted: tuple[Path, Path], tmp_path: Path
) -> None:
    work, marker = planted
    result = run_cli("probe", "--deep", "--json", "--timeout", "10", cwd=work, env=_env(tmp_path))
    assert result.returncode in (0, 1), result.stderr
    assert not marker.exists(), marker.read_text()


def test_libraries_are_found_by_absolute_path_only(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libfake.so.1").write_bytes(b"")
    env = {"LD_LIBRARY_PATH": f"::lib:{lib}"}
    assert find_library("libfake.so.1", env) == str(lib / "libfake.so.1")
    # relative and empty components are never searched
    assert find_library("libfake.so.1", {"LD_LIBRARY_PATH": "::lib:."}) is None
    assert safe_library_path(env) == str(lib)


def test_the_loaders_cache_names_absolute_paths(tmp_path: Path) -> None:
    """A path named in /etc/ld.so.cache's string table is found when the file exists."""
    lib = tmp_path / "usr" / "lib"
    lib.mkdir(parents=True)
    (lib / "libfake.so.1").write_bytes(b"")
    cache = tmp_path / "ld.so.cache"
    cache.write_bytes(
        b"glibc-ld.so.cache1.1\x00libfake.so.1\x00" + str(lib / "libfake.so.1").encode() + b"\x00"
    )
    assert find_library("libfake.so.1", {}, cache=str(cache)) == str(lib / "libfake.so.1")
    assert find_library("libfake.so.1", {}, cache=str(tmp_path / "none")) is None


def test_commands_are_not_found_in_the_working_directory(tmp_path: Path) -> None:
    """The same for executables: with an empty PATH component, an ``nvidia-smi`` left in the
    working directory is not run by the GPU probe's fallback."""
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "marker"
    smi = work / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    smi.chmod(0o755)
    env = _env(tmp_path)
    env["PATH"] = ":" + env.get("PATH", "/usr/bin:/bin")
    result = run_cli("probe", "--json", cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
