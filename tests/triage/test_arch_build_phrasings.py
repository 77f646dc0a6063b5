"""The arch/compile and build families in the other wordings of their conditions: each line of
tests/triage/data/arch_build_phrasings.toml (older and newer releases of a library, the same
condition in another runtime's or tool's words, each with its source) must be named by a
signature that is not noise and whose causes include the expected code; and the readings the
new wordings reach print the fix their threads established."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from envcheck.matrix_validate import load
from envcheck.triage.encoding import normalize
from envcheck.triage.scan import Scanner
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data" / "arch_build_phrasings.toml"


def _rows() -> list[dict[str, object]]:
    with DATA.open("rb") as fh:
        rows: list[dict[str, object]] = tomllib.load(fh)["line"]
    return rows


@cache
def _scanner() -> Scanner:
    return Scanner(load([]).signatures, "re")


@pytest.mark.parametrize("row", _rows(), ids=lambda r: str(r["text"])[:60])
def test_each_wording_names_its_cause(row: dict[str, object]) -> None:
    assert str(row["source"]).strip()
    text = str(row["text"])
    result = _scanner().scan(io.BytesIO(normalize(text.encode() + b"\n")))
    named = [t.signature for t in result.ordered() if not t.signature.noise]
    assert named, f"nothing but noise matched: {text!r}"
    expect = {str(c) for c in row["expect"]}  # type: ignore[attr-defined]
    assert any(expect & set(s.causes) for s in named), [(s.id, s.causes) for s in named]


@pytest.mark.parametrize(
    ("line", "gpu", "fix"),
    [
        (  # TensorRT 10.0 on a GTX 1080 Ti: the release dropped Pascal
            "[TRT] [E] 1: [caskUtils.cpp::nvinfer1::rt::task::trtSmToCask::193] Error Code 1: "
            "Internal Error (Unsupported SM: 0x601)",
            "sm_61, compute capability 6.1",
            "8.5.3 was the last for Kepler and Maxwell",
        ),
        (  # TensorRT 8.4 on an RTX 4080: the release predates Ada
            "[TRT] [E] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: Internal Error "
            "(Unsupported SM: 0x809)",
            "sm_89, compute capability 8.9",
            "RTX 40xx (sm_89) from TensorRT 8.5.1",
        ),
        (  # TensorRT 10.7 on an RTX 5070 Ti: no Blackwell without a CUDA 12.8 build
            "[E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error "
            "(Target GPU SM 120 is not supported by this TensorRT release.)",
            "sm_120, compute capability 12.0",
            "CUDA 12.8 or newer build",
        ),
    ],
)
def test_tensorrt_refusal_reads_the_gpu_and_the_direction(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, gpu: str, fix: str
) -> None:
    cud151 = causes(cli, log_file(tmp_path, line))["CUD151"]
    assert cud151["verdict"] == "confirmed"
    (finding,) = cud151["findings"]
    assert gpu in finding["message"]
    assert fix in fix_text(cud151)


def test_tensorrt_bare_assertion_names_no_gpu_and_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "[E] [TRT] ../rtSafe/cuda/caskUtils.cpp (80) - Assertion Error in "
        "trtSmToCask: 0 (Unsupported SM.)",
    )
    assert causes(cli, log)["CUD151"]["verdict"] != "confirmed"


def test_msvc_linker_names_the_toolkit_of_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'")
    spec = tmp_path / "node.toml"
    spec.write_text('[packages]\ntorch = "2.1.0+cu121"\n')
    sys164 = causes(cli, log, "--spec", str(spec))["SYS164"]
    assert sys164["verdict"] == "confirmed"
    assert "cudart.lib" in sys164["findings"][0]["message"]
    assert "CUDA\\v12.1\\lib\\x64" in fix_text(sys164)


def test_a_projects_own_library_is_not_the_toolkits(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "LINK : fatal error LNK1181: cannot open input file 'mistralcuda.lib'")
    result = cli("triage", str(log), "--json", "--no-probe")
    codes = {c["code"] for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert "SYS164" not in codes


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: CMake must be installed to build the following extensions: _C",
        "sh: 1: cmake: not found",
        "FileNotFoundError: [Errno 2] No such file or directory: 'cmake'",
    ],
)
def test_no_cmake_prints_its_install(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    sys153 = causes(cli, log_file(tmp_path, line))["SYS153"]
    assert sys153["verdict"] == "confirmed"
    assert "pip install cmake" in fix_text(sys153)


@pytest.mark.parametrize(
    "lines",
    [
        (  # thrust's system_error in a CMake program (ingowald/cudaKDTree#18's form)
            "terminate called after throwing an instance of 'thrust::system::system_error'",
            "  what():  parallel_for failed: cudaErrorNoKernelImageForDevice: no kernel image is "
            "available for execution on the device",
        ),
        ("Error: no kernel image is available for execution on the device 209",),
    ],
)
def test_a_native_programs_own_report_names_its_build(
    tmp_path: Path, cli: Callable[..., CliResult], lines: tuple[str, ...]
) -> None:
    cud153 = causes(cli, log_file(tmp_path, *lines))["CUD153"]
    assert cud153["verdict"] == "confirmed"
    assert "-DCMAKE_CUDA_ARCHITECTURES=" in fix_text(cud153)
    assert "-gencode arch=compute_" in fix_text(cud153)


def test_torchs_own_cpp_exception_is_not_a_native_programs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: no kernel image is available for execution on the device",
    )
    assert causes(cli, log)["CUD153"]["verdict"] != "confirmed"


@pytest.mark.parametrize(
    ("line", "flag"),
    [
        (
            "/usr/lib/python3.11/site-packages/torch/include/ATen/ATen.h:4:2: error: #error C++17 "
            "or later compatible compiler is required to use ATen.",
            "-std=c++17",
        ),
        (
            "ATen/ATen.h:5: error: C++20 or later compatible compiler is required to use ATen.",
            "-std=c++20",
        ),
    ],
)
def test_torchs_headers_name_the_standard_to_compile(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, flag: str
) -> None:
    sys131 = causes(cli, log_file(tmp_path, line))["SYS131"]
    assert sys131["verdict"] == "confirmed"
    text = fix_text(sys131)
    assert f"'cxx': ['{flag}']" in text
    assert text.index(flag) < text.index("CC=gcc-")  # the flag first, the compiler second
