"""What was learned by installing locks is matrix data (matrices/packages/bounds.toml), and the
next lock avoids it: pyarrow>=26 with a numpy<2 pin becomes `pyarrow<26`, a triton 3.0-3.2
without setuptools gets `setuptools>=40.8.0` (loopback index of local wheels)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from envcheck.commands.lock_bounds import bound_repairs, exclusion
from envcheck.matrix_validate import load
from tests.conftest import run_cli
from tests.index.wheels import WheelIndexes, serve
from tests.wheelfactory import WheelSpec

PY = ".".join(map(str, sys.version_info[:2]))
WORLD = [
    WheelSpec("torch", "2.4.0", ("triton==3.0.0; platform_machine == 'x86_64'", "numpy")),
    WheelSpec("triton", "3.0.0", ("filelock",)),
    WheelSpec("setuptools", "80.9.0"),
    WheelSpec("pyarrow", "25.0.0"),
    WheelSpec("pyarrow", "26.0.0"),
    WheelSpec("numpy", "1.26.4"),
    WheelSpec("numpy", "2.1.3"),
    WheelSpec("filelock", "3.16.1"),
]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[WheelIndexes]:
    served = serve(tmp_path / "served", {"pypi": WORLD})
    yield served
    served.stop()


def test_the_bounds_are_matrix_data_with_sources() -> None:
    bounds = {(b.package, b.dependency): b for b in load([]).bounds}
    arrow = bounds[("pyarrow", "numpy")]
    assert str(arrow.versions) == ">=26.0.0" and str(arrow.allowed) == ">=2"
    assert "pyarrow/lib.pyx" in arrow.source and "0cccd36e" in arrow.source
    triton = bounds[("triton", "setuptools")]
    assert triton.required and "triton/runtime/build.py line 8" in triton.source


@pytest.mark.parametrize(
    ("versions", "expected"),
    [(">=26.0.0", "pyarrow<26.0.0"), ("<0.8.1", "pyarrow>=0.8.1"), (">=1,<2", "pyarrow!=1.5")],
)
def test_exclusion(versions: str, expected: str) -> None:
    assert exclusion("pyarrow", SpecifierSet(versions), "1.5") == expected


def test_repairs_from_the_resolved_set() -> None:
    bounds = load([]).bounds
    broken = {"pyarrow": "26.0.1", "numpy": "1.26.4", "triton": "3.2.0", "torch": "2.6.0"}
    assert [(kind, value) for kind, value, _ in bound_repairs(bounds, broken)] == [
        ("constraint", "pyarrow<26.0.0"),
        ("requirement", "setuptools>=40.8.0"),
    ]
    fine = {"pyarrow": "26.0.1", "numpy": "2.1.3", "triton": "3.3.0", "torch": "2.7.0"}
    assert bound_repairs(bounds, fine) == []


def test_the_lock_avoids_what_was_learned(index: WheelIndexes, tmp_path: Path) -> None:
    result = run_cli(
        "lock", "--index-url", index.url("pypi"), "--python", PY, "torch==2.4.0", "numpy<2",
        "pyarrow", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = result.json()["data"]
    assert data["resolved"]["pyarrow"] == "25.0.0" and data["resolved"]["numpy"] == "1.26.4"
    assert data["resolved"]["setuptools"] == "80.9.0"
    bounds = {c["value"] for c in data["stack"]["choices"] if c["subject"] == "bound"}
    assert bounds == {"pyarrow<26.0.0", "setuptools>=40.8.0"}
    assert "pyarrow<26.0.0" in data["stack"]["constraints"]
