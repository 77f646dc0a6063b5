"""Fixtures for plans and locks: the built-in matrix, its rules, and a local wheel index."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from envcheck.rules import all_rules
from envcheck.rules.base import Rule
from tests.index.wheels import WheelIndexes
from tests.specs import TINYZERO
from tests.wheelfactory import CUDA_MARK, STANDARD, WheelSpec, make_simple_index, make_wheels

TINYZERO_SPEC = TINYZERO  # the README's declared node (tests/specs.py)

# torch builds that only a variant's index serves (as download.pytorch.org/whl/cuXYZ does)
VARIANT_WHEELS = {
    "cu128": (
        WheelSpec("torch", "2.11.0+cu128", (f"nvidia-cublas-cu12==12.8.4.1; {CUDA_MARK}",)),
        WheelSpec("nvidia-cublas-cu12", "12.8.4.1"),
    ),
}


@pytest.fixture(scope="session")
def matrix() -> Matrix:
    return load()


@pytest.fixture(scope="session")
def rules(matrix: Matrix) -> Sequence[Rule]:
    return all_rules(matrix)


@dataclass(frozen=True)
class LocalIndex:
    root: Path
    wheels: Path  # a find-links folder
    url: str  # the default index, served on 127.0.0.1 (PEP 691 JSON)
    overlay: Path  # a matrix overlay pointing the torch variant index at the loopback server
    server: WheelIndexes
    file_url: str  # the same default index as a file:// folder (a host-local mirror)

    def matrix(self) -> Matrix:
        return load([str(self.overlay)])


@pytest.fixture(scope="session")
def local_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    """Two indexes on loopback: ``/pypi/simple`` plays the default index, ``/whl/<variant>``
    the PyTorch index (only torch builds and their CUDA wheels, as the real one)."""
    root = tmp_path_factory.mktemp("index")
    wheels = make_wheels(root / "wheels", STANDARD)
    file_url = make_simple_index(root / "simple", wheels)
    server = WheelIndexes(root / "served")
    # as on the real default index, the CUDA wheels a variant torch needs are served there too
    server.add("pypi", (*STANDARD, WheelSpec("nvidia-cublas-cu12", "12.8.4.1")))
    for variant, specs in VARIANT_WHEELS.items():
        server.add(f"whl/{variant}", specs)
    server.start()
    overlay = root / "overlay"
    overlay.mkdir()
    template = server.base + "/whl/{variant}"
    (overlay / "torch_index.toml").write_text(
        f'[[torch_index]]\nurl_template = "{template}"\nsource = "envcheck tests: a local copy"\n',
        encoding="utf-8",
    )
    yield LocalIndex(root, root / "wheels", server.url("pypi"), overlay, server, file_url)
    server.stop()
