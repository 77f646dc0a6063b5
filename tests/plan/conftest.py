"""Fixtures for plans and locks: the built-in matrix, its rules, and a local wheel index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from envcheck.matrix.load import load
from envcheck.matrix.model import Matrix
from envcheck.rules import all_rules
from envcheck.rules.base import Rule
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
    url: str  # a PEP 503 index (file://)
    overlay: Path  # a matrix overlay pointing the torch variant index at local folders

    def matrix(self) -> Matrix:
        return load([str(self.overlay)])


@pytest.fixture(scope="session")
def local_index(tmp_path_factory: pytest.TempPathFactory) -> LocalIndex:
    root = tmp_path_factory.mktemp("index")
    wheels = make_wheels(root / "wheels", STANDARD)
    url = make_simple_index(root / "simple", wheels)
    for variant, specs in VARIANT_WHEELS.items():
        made = make_wheels(root / "variant-wheels" / variant, specs)
        make_simple_index(root / "whl" / variant, made)
    overlay = root / "overlay"
    overlay.mkdir()
    template = (root / "whl").resolve().as_uri() + "/{variant}"
    (overlay / "torch_index.toml").write_text(
        f'[[torch_index]]\nurl_template = "{template}"\nsource = "envcheck tests: a local copy"\n',
        encoding="utf-8",
    )
    return LocalIndex(root, root / "wheels", url, overlay)
