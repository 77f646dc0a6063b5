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
from tests.wheelfactory import CUDA_MARK, STANDARD, WheelSpec, make_simple_index, make_wheels

TINYZERO_SPEC = """\
[gpu]
driver = "535.104.05"
models = ["NVIDIA H20", "NVIDIA H20"]   # names as nvidia-smi prints them; one entry per GPU
# compute_capability = "9.0"           # when the name is not in the matrix

[python]
version = "3.10.12"

[packages]                              # distribution = installed version
torch = "2.4.0+cu121"
vllm = "0.6.3"
"nvidia-cublas-cu12" = "12.1.3.1"
numpy = "1.26.4"

[system]
os = "Ubuntu 22.04"
glibc = "2.35"
memory_gib = 1024
shm_gib = 0.0625
in_container = true
disks = [{ path = "/tmp/ray", size_gib = 100, free_gib = 3 }]

[env]
LD_LIBRARY_PATH = "/usr/local/cuda-12.1/lib64"
GLOO_SOCKET_IFNAME = "^lo,docker0"

[network]
hostname_resolves_to = "127.0.1.1"
interfaces = [{ name = "eth0", ipv4 = "10.0.0.5", up = true }, { name = "docker0", ipv4 = "172.17.0.1", up = true }]
"""

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
