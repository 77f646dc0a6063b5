"""Generated tables in the matrix: loaded from generated/, filling gaps, never beating curated."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.matrix.crosscheck import crosscheck
from envcheck.matrix.generated import TorchWheel, VllmMetadata
from envcheck.matrix.load import load, parse_text
from envcheck.matrix.tomlwrite import document
from envcheck.matrix_validate import validate
from tests.builtin_matrix import builtin_matrix
from tests.conftest import run_cli

BUILTIN = builtin_matrix()
T240 = BUILTIN.torch_release(Version("2.4.0"))
assert T240 is not None

GENERATED = textwrap.dedent(
    """\
    [meta]
    generated_by = "envcheck matrix refresh"

    [[torch_wheel]]
    version = "2.99.0"
    arch = "x86_64"
    read = "2026-01-02"
    python = ["2.7", "3.12", "3.13"]
    file = "torch-2.99.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    sha256 = "aa"
    metadata = "metadata file"
    variant = "cu128"
    [torch_wheel.pins]
    "nvidia-cublas-cu12" = "==12.8.4.1"

    [[torch_wheel]]
    version = "2.4.0"
    arch = "x86_64"
    read = "2026-01-02"
    python = ["3.11"]
    file = "torch-2.4.0-cp311-cp311-manylinux1_x86_64.whl"
    variant = "cu121"
    [torch_wheel.pins]
    "nvidia-cublas-cu12" = "==12.1.3.2"

    [[vllm_metadata]]
    version = "0.99.0"
    read = "2026-01-02"
    file = "vllm-0.99.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    torch = "==2.99.0"
    ray = ">=2.48.0"

    [[vllm_metadata]]
    version = "0.98.0"
    read = "2026-01-02"
    unknown = "metadata file: HTTP 404; range read: the wheel itself is missing (HTTP 404)"

    [[ray_wheels]]
    version = "2.99.0"
    read = "2026-01-02"
    python = ["3.10", "3.11"]
    wheels = ["ray-2.99.0-cp310-cp310-manylinux2014_x86_64.whl", "ray-2.99.0-cp311-cp311-manylinux2014_x86_64.whl"]

    [[companion_metadata]]
    package = "xformers"
    version = "0.0.99"
    read = "2026-01-02"
    torch = "==2.99.0"
    """
)


def _overlay(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "generated").mkdir(parents=True)
    (site / "generated" / "test.toml").write_text(GENERATED)
    return site


def test_generated_dir_fills_gaps_and_curated_entries_win(tmp_path) -> None:
    matrix = load([str(_overlay(tmp_path))], env={})
    from_overlay = [
        w for w in matrix.generated.torch_wheel if matrix.origin(w)[0].endswith("test.toml")
    ]
    assert len(from_overlay) == 2  # beside the shipped set (matrices/generated/)
    new = matrix.torch_release(Version("2.99.0"))
    assert new is not None and new.python == ("3.12", "3.13")  # the cp27 tag is not a Python 3
    assert new.pins == {"nvidia-cublas-cu12": SpecifierSet("==12.8.4.1")}
    assert new.variants == ("cu128",) and new.pypi_default == "cu128"
    assert "torch-2.99.0-cp312" in new.source and "read 2026-01-02" in new.source
    assert matrix.origin(new)[1] == "torch_wheel" and matrix.origin(new)[0].endswith("test.toml")
    assert matrix.torch_release(Version("2.4.0")) == T240  # curated wins
    vllm = matrix.vllm_release(Version("0.99.0"))
    assert vllm is not None and vllm.torch == SpecifierSet("==2.99.0") and str(vllm.cuda) == "12.8"
    assert matrix.vllm_release(Version("0.98.0")) is None  # unknown facts fill nothing
    assert matrix.ray_release(Version("2.99.0")).python == ("3.10", "3.11")
    assert matrix.companion("xformers", Version("0.0.99")).torch == Version("2.99.0")
    assert validate(matrix) == []


def test_disagreements_are_listed_field_by_field(tmp_path) -> None:
    matrix = load([str(_overlay(tmp_path))], env={})
    found = {(d.key, d.field): d for d in crosscheck(matrix)}
    assert set(found) == {("2.4.0", "python"), ("2.4.0", "pins.nvidia-cublas-cu12")} | {
        ("2.4.0", f"pins.{name}") for name in T240.pins if name != "nvidia-cublas-cu12"
    }
    cublas = found[("2.4.0", "pins.nvidia-cublas-cu12")]
    assert (cublas.curated, cublas.generated) == (
        str(T240.pins["nvidia-cublas-cu12"]),
        "==12.1.3.2",
    )
    assert "torch-2.4.0-cp311-cp311-manylinux1_x86_64.whl" in str(cublas)


def test_validate_warns_and_strict_fails(tmp_path) -> None:
    site = str(_overlay(tmp_path))
    ok = run_cli("matrix", "validate", site)
    assert ok.returncode == 0 and "matrix ok" in ok.stdout
    assert (
        "warning: generated vs curated: torch 2.4.0: pins.nvidia-cublas-cu12: curated ==12.1.3.1, index ==12.1.3.2"
        in ok.stderr
    )
    strict = run_cli("matrix", "validate", "--strict", "--json", site)
    assert strict.returncode == 2
    data = strict.json()["data"]
    assert {d["field"] for d in data["disagreements"]} >= {"python", "pins.nvidia-cublas-cu12"}
    shown = run_cli("matrix", "show", "torch", "2.99.0", "--json", "--matrix", site)
    assert shown.returncode == 0 and shown.json()["data"]["file"].endswith("test.toml")


def test_builtin_layout_reads_its_generated_dir(tmp_path) -> None:
    copy = tmp_path / "matrices"
    shutil.copytree(Path(__file__).resolve().parents[2] / "matrices", copy)
    (copy / "generated").mkdir(exist_ok=True)
    (copy / "generated" / "x.toml").write_text(GENERATED)
    matrix = load([str(copy)], env={}, include_builtin=False)
    assert matrix.torch_release(Version("2.99.0")) is not None


def test_writer_output_round_trips_through_the_strict_parser() -> None:
    records = [
        TorchWheel(
            Version("2.4.0"),
            "x86_64",
            "2026-01-02",
            python=("3.10", "3.11"),
            pins={
                "nvidia-cublas-cu12": SpecifierSet("==12.1.3.1"),
                "weird name": SpecifierSet(">=1"),
            },
            markers={
                "nvidia-cublas-cu12": 'platform_system == "Linux" and platform_machine == "x86_64"'
            },
            unknown='quote " backslash \\ tab \t newline \n del \x7f é',
        ),
        VllmMetadata(Version("0.6.3"), "2026-01-02", yanked=True, yanked_reason="broken"),
    ]
    text = document(
        "a header\nover two lines",
        {"generated_by": "envcheck matrix refresh"},
        {"torch_wheel": records[:1], "vllm_metadata": records[1:]},
    )
    parsed = parse_text(text, "x.toml")
    assert parsed.torch_wheel == tuple(records[:1]) and parsed.vllm_metadata == tuple(records[1:])
    assert text.startswith("# a header\n# over two lines\n")


def test_every_generated_field_is_documented() -> None:
    import dataclasses

    from envcheck.matrix import generated
    from tests.conftest import REPO

    doc = (REPO / "docs" / "refresh.md").read_text()
    records = [
        generated.TorchWheel,
        generated.VllmMetadata,
        generated.RayWheels,
        generated.FlashAttnIndex,
        generated.IsaacSimIndex,
        generated.CompanionMetadata,
    ]
    missing = [
        f"{cls.__name__}.{f.name}"
        for cls in records
        for f in dataclasses.fields(cls)
        if f"`{f.name}`" not in doc
    ]
    assert missing == []
    assert all(f"`[[{table}]]`" in doc for table in generated.TABLES)
