"""Applying actions to a copy of a report."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Action
from envcheck.plan.simulate import changes_something, simulate, variant_of_index, version_within


@pytest.mark.parametrize(
    ("spec", "current", "expected"),
    [
        ("==1.26.4", None, "1.26.4"),
        ("<2", "2.1.3", "1.999"),
        ("<2", "1.26.4", "1.26.4"),
        ("<2.0.0,>=1.23.5", None, "1.999"),
        (">=2.41.0", None, "2.41.0.1"),
        ("==2.10.*", None, "2.10.1"),
        (">=2,<2", None, None),
        ("==2.4.0", "2.5.1", "2.4.0"),
    ],
)
def test_version_within(spec: str, current: str | None, expected: str | None) -> None:
    got = version_within(SpecifierSet(spec), Version(current) if current else None)
    assert (str(got) if got else None) == expected
    if got is not None:
        assert SpecifierSet(spec).contains(got, prereleases=True)


@pytest.mark.parametrize(
    ("url", "variant"),
    [
        ("https://download.example/whl/cu124", "cu124"),
        ("https://download.example/whl/cu128/", "cu128"),
        ("file:///tmp/whl/cpu", "cpu"),
        ("https://mirror.example/simple", None),
        (None, None),
    ],
)
def test_variant_of_index(url: str | None, variant: str | None) -> None:
    assert variant_of_index(url) == variant


SPEC = """
[gpu]
driver = "550.54.15"
models = ["NVIDIA H100 80GB HBM3"]
[python]
version = "3.10.12"
[packages]
torch = "2.4.0"
"nvidia-cublas-cu12" = "12.1.3.1"
numpy = "2.1.3"
[env]
LD_LIBRARY_PATH = "/usr/local/cuda-12.1/lib64:/opt/other/lib"
"""


def test_torch_from_a_variant_index_becomes_that_build(matrix: Matrix) -> None:
    report = spec_to_report(parse_spec(SPEC, "n.toml"), "n.toml")
    url = matrix.torch_index_url("cu124")
    after, _ = simulate(
        report, [Action(kind="pip_install", packages=("torch==2.5.1",), index_url=url)], matrix
    )
    assert after.torch.data is not None
    assert (after.torch.data.version, after.torch.data.variant, after.torch.data.cuda) == (
        "2.5.1+cu124",
        "cu124",
        "12.4",
    )


def test_pypi_torch_brings_its_pinned_cuda_wheels(matrix: Matrix) -> None:
    report = spec_to_report(parse_spec(SPEC, "n.toml"), "n.toml")
    after, _ = simulate(report, [Action(kind="pip_install", packages=("torch==2.5.1",))], matrix)
    assert after.packages.data is not None
    assert after.packages.data.version("nvidia-cublas-cu12") == "12.4.5.8"
    assert after.torch.data is not None and after.torch.data.variant == "cu124"


def test_ranges_env_and_uninstall(matrix: Matrix) -> None:
    report = spec_to_report(parse_spec(SPEC, "n.toml"), "n.toml")
    actions = [
        Action(kind="pip_install", packages=("numpy<2",)),
        Action(kind="env", env={"LD_LIBRARY_PATH": "/opt/other/lib"}),
        Action(kind="pip_uninstall", packages=("nvidia-cublas-cu12",)),
    ]
    after, assumed = simulate(report, actions, matrix)
    assert after.packages.data is not None
    assert Version(after.packages.data.version("numpy") or "9") < Version("2")
    assert after.packages.data.version("nvidia-cublas-cu12") is None
    assert any("numpy" in a for a in assumed)
    assert after.libraries.data is not None
    assert after.libraries.data.ld_library_path == ("/opt/other/lib",)
    # the original is untouched
    assert report.packages.data is not None and report.packages.data.version("numpy") == "2.1.3"


def test_an_applied_action_changes_nothing(matrix: Matrix) -> None:
    report = spec_to_report(parse_spec(SPEC, "n.toml"), "n.toml")
    assert not changes_something(Action(kind="pip_install", packages=("numpy>=2",)), report, matrix)
    assert changes_something(Action(kind="pip_install", packages=("numpy<2",)), report, matrix)
    assert not changes_something(Action(kind="manual", text="reboot"), report, matrix)
