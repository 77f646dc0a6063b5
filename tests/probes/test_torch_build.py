from __future__ import annotations

import pytest

from envcheck.model.section import Status
from envcheck.probes.python_env import probe_packages
from envcheck.probes.torch_build import parse_version_py, probe_torch, variant_of
from tests.distfactory import make_dist, make_fake_torch

LINUX = {
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "python_version": "3.11",
    "sys_platform": "linux",
}


def test_version_py_1x_plain_form():
    text = "__version__ = '1.13.1+cu116'\ndebug = False\ncuda = '11.6'\ngit_version = '49444c3e546bf240bed24a101e747422d1f8a0ee'\nhip = None\n"
    values = parse_version_py(text)
    assert values == {
        "__version__": "1.13.1+cu116",
        "cuda": "11.6",
        "git_version": "49444c3e546bf240bed24a101e747422d1f8a0ee",
        "hip": None,
    }


def test_version_py_ignores_non_literals():
    values = parse_version_py(
        "import os\ncuda: Optional[str] = os.environ.get('X')\n__version__ = '2.4.0'\n"
    )
    assert values == {"__version__": "2.4.0"}


@pytest.mark.parametrize(
    ("version", "cuda", "hip", "label", "variant"),
    [
        ("2.4.0+cu121", "12.1", None, "cu121", "cu121"),
        ("2.4.0", "12.1", None, None, "cu121"),  # PyPI wheels carry no label
        ("2.9.1+cpu", None, None, "cpu", "cpu"),
        ("2.5.1+rocm6.2", None, "6.2.41133-dd7f95766", "rocm6.2", "rocm6.2"),
        ("2.7.0a0+ecf3bae40a.nv25.02", "12.8", None, "ecf3bae40a.nv25.02", "cu128"),  # NGC
        ("2.11.0", "13.0", None, None, "cu130"),
    ],
)
def test_variant(version, cuda, hip, label, variant):
    assert variant_of(version, cuda, hip, known=True) == (label, variant)


def test_variant_unknown_when_version_py_missing():
    assert variant_of("2.4.0", None, None, known=False) == (None, None)


def test_torch_build_with_pins_and_installed_wheels(tmp_path):
    site = tmp_path / "site"
    make_fake_torch(site, "2.4.0", "12.1")
    make_dist(site, "nvidia-cublas-cu12", "12.3.4.1")
    make_dist(site, "nvidia-nccl-cu12", "2.20.5")
    packages = probe_packages({"sys_path": [str(site)]})
    build = probe_torch(packages, LINUX).data
    assert (build.version, build.cuda, build.variant, build.local_label) == (
        "2.4.0",
        "12.1",
        "cu121",
        None,
    )
    assert build.requires_cuda["nvidia-cublas-cu12"] == "==12.1.3.1"
    assert build.requires_cuda["triton"] == "==3.0.0"
    assert build.installed_cuda == {"nvidia-cublas-cu12": "12.3.4.1", "nvidia-nccl-cu12": "2.20.5"}
    assert build.version_file == str(site / "torch" / "version.py")


def test_torch_pins_follow_the_nodes_markers(tmp_path):
    site = tmp_path / "site"
    make_fake_torch(site)
    packages = probe_packages({"sys_path": [str(site)]})
    arm = {**LINUX, "platform_machine": "aarch64"}
    assert probe_torch(packages, arm).data.requires_cuda == {}
    py313 = {**LINUX, "python_version": "3.13"}
    assert "triton" not in probe_torch(packages, py313).data.requires_cuda


def test_torch_not_installed(tmp_path):
    packages = probe_packages({"sys_path": [str(tmp_path)]})
    section = probe_torch(packages, LINUX)
    assert section.status is Status.UNAVAILABLE and section.reason == "torch is not installed"


def test_torch_without_version_py(tmp_path):
    site = tmp_path / "site"
    make_dist(site, "torch", "2.4.0")
    section = probe_torch(probe_packages({"sys_path": [str(site)]}), LINUX)
    assert section.is_ok and section.data.cuda is None and section.data.variant is None
    assert "CUDA build unknown" in section.notes[0]
