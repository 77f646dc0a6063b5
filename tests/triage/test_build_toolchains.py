"""Build and ABI fixes derived from the line's own facts: nvcc's host-compiler ceiling with the
CUDA toolkit its path names and the first toolkit that accepts the build's gcc
(matrices/cuda/host_compilers.toml), CMake's missing CUDA compiler (CUDACXX), and an extension
of the pre-C++11 ABI under a C++11-ABI torch (matrices/packages/cxx_abi.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules import nvcc_host
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_HOST_CONFIG = (
    "{path}/include/crt/host_config.h:129:2: error: #error -- unsupported GNU version! gcc "
    "versions later than {ceiling} are not supported!"
)


def test_the_table_reads_each_release_and_the_first_that_accepts_a_gcc() -> None:
    matrix = builtin_matrix()
    assert nvcc_host.gcc_max(matrix, "11.8") == 11
    assert nvcc_host.gcc_max(matrix, "12.1.105") == 12  # nvcc's full release, read by minor
    assert nvcc_host.gcc_max(matrix, "9.1") is None  # not listed: unknown, not guessed
    first = nvcc_host.first_cuda_for_gcc(matrix, 13)
    assert first is not None and str(first[0]) == "12.4" and first[1] == 13
    assert nvcc_host.first_cuda_for_gcc(matrix, 40) is None
    # the CUDA 13 rows, read from NVIDIA's nvidia-cuda-crt wheels' host_config.h
    assert nvcc_host.gcc_max(matrix, "13.0") == 15
    assert nvcc_host.gcc_max(matrix, "13.4.92") == 16
    first = nvcc_host.first_cuda_for_gcc(matrix, 15)
    assert first is not None and str(first[0]) == "13.0" and first[1] == 15
    assert nvcc_host.range_top(">=6.0.0, <13.0") == 12
    assert nvcc_host.range_top(">=6.0.0, <=11.4") == 11
    assert nvcc_host.range_top(">=6.0.0") is None
    assert nvcc_host.cuda_in_text("/usr/local/cuda-9.0/bin/..//include/crt/host_config.h") == "9.0"
    assert nvcc_host.cuda_in_text("/opt/cuda/10.0/bin/nvcc") == "10.0"
    assert nvcc_host.cuda_in_text("/usr/local/cuda/include/crt/host_config.h") is None


@pytest.mark.parametrize(
    ("path", "ceiling", "banner", "toolkit"),
    [
        # the toolkit's release from its path; the first listed toolkit above the ceiling
        ("/opt/cuda/10.0", "7", None, "CUDA 10.1 or newer"),
        # cjlin1/simpleNN#10: CUDA 9.0's ceiling (the thread moved to gcc-6)
        ("/usr/local/cuda-9.0", "6", None, "CUDA 10.0 or newer"),
        # gcc 13 under CUDA 12.1 (NVlabs/instant-ngp#1562): the gcc the banner states decides
        ("/usr/local/cuda", "12", "gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0", "CUDA 12.4 or newer"),
        # gcc 15 (Fedora 42, Ubuntu 25.10) under CUDA 12.8: CUDA 13.0's host_config.h takes 15
        ("/usr/local/cuda-12.8", "14", "gcc (GCC) 15.1.1 20250521", "CUDA 13.0 or newer"),
    ],
)
def test_host_gcc_ceiling_names_the_toolkit_that_accepts_the_gcc(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    path: str,
    ceiling: str,
    banner: str | None,
    toolkit: str,
) -> None:
    lines = [_HOST_CONFIG.format(path=path, ceiling=ceiling)]
    log = log_file(tmp_path, *([banner] if banner else []), *lines)
    found = causes(cli, log)["SYS131"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert f"apt install gcc-{ceiling} g++-{ceiling}" in text  # the older gcc stays first
    assert toolkit in text
    if banner:  # the gcc the banner states is the one the named toolkit accepts
        major = banner.split(")")[1].strip().split(".")[0]
        assert f"accepts gcc {major}" in text


def test_host_gcc_newer_than_every_listed_toolkit_names_no_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _HOST_CONFIG.format(path="/usr/local/cuda", ceiling="16"))
    text = fix_text(causes(cli, log)["SYS131"])
    assert "a newer CUDA toolkit that accepts this gcc" in text
    assert "CUDA 1" not in text  # no release number the table does not hold


def test_cmake_without_a_cuda_compiler_points_cmake_at_nvcc(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "-- The CUDA compiler identification is unknown",
        "CMake Error at CMakeLists.txt:43 (enable_language):",
        "  No CMAKE_CUDA_COMPILER could be found.",
    )
    found = causes(cli, log)["SYS152"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "export CUDACXX=/usr/local/cuda/bin/nvcc" in text
    assert "-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc" in text


def test_old_abi_extension_names_the_official_torch_of_the_same_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # rusty1s/pytorch_scatter#470: conda-forge's torch 2.4.0 with PyG's wheel for PyPI's torch
    log = log_file(
        tmp_path,
        "pip install torch-scatter -f https://data.pyg.org/whl/torch-2.4.0+cu118.html",
        "torch_scatter/_version_cuda.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
    )
    found = causes(cli, log)["TOR150"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert text.index("pre-C++11 ABI") < text.index("data.pyg.org")  # the ABI fix comes first
    assert "pip install torch==2.4.0 --index-url https://download.pytorch.org/whl/cu118" in text
    assert "conda install pytorch -c pytorch" in text
    assert "--no-binary torch-scatter" in text


def test_old_abi_extension_under_a_newer_torch_says_torch_is_cxx11(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "torch                     2.7.1+cu126",
        "OSError: /venv/lib/python3.12/site-packages/torch_scatter/_version_cuda.so: undefined "
        "symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
    )
    text = fix_text(causes(cli, log)["TOR150"])
    assert "2.7.1+cu126, is a C++11-ABI build" in text
    assert "torch==2.7" not in text  # no PyPI build of 2.7 has the old ABI
    assert "its PyPI wheels up to 2.6 are pre-C++11 ABI" in text


def test_pasted_version_rows_decide_the_flash_attn_pairing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # a pasted list of versions decides the matrix's flash-attn/torch pairing (TOR106)
    log = log_file(
        tmp_path,
        "Environment:",
        "| flash-attn | 2.5.8 |",
        "| torch | 2.1.0 |",
        "ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c104impl3cow11cow_deleterEPv",
    )
    found = causes(cli, log)
    assert found["TOR106"]["verdict"] == "confirmed"
    assert "flash-attn==2.5.7" in fix_text(found["TOR106"])


def test_gcc_without_the_standard_flag_asks_for_a_newer_gcc(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, 'cc1plus: error: unrecognized command line option "-std=c++17"')
    found = causes(cli, log)["SYS131"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "export CC=gcc-11 CXX=g++-11" in text
    assert "gcc-toolset-11" in text  # RHEL 7/8's way to a newer gcc


def test_no_msvc_on_path_asks_for_the_build_tools(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "C:\\venv\\lib\\site-packages\\torch\\utils\\cpp_extension.py:383: UserWarning: Error "
        "checking compiler version for cl: [WinError 2] The system cannot find the file specified",
    )
    text = fix_text(causes(cli, log)["SYS163"])
    assert "Microsoft C++ Build Tools" in text


def test_a_failed_nvcc_command_names_the_gcc_the_log_states_above_nvccs_ceiling(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0",
        "Cuda compilation tools, release 12.1, V12.1.105",
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1",
    )
    found = causes(cli, log)
    assert found["SYS153"]["verdict"] == "confirmed"
    assert found["SYS131"]["verdict"] == "confirmed"
    text = fix_text(found["SYS131"])
    assert "export CC=gcc-12 CXX=g++-12" in text
    assert "CUDA 12.4 or newer" in text


def test_a_gcc_within_nvccs_ceiling_rules_the_host_compiler_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
        "Cuda compilation tools, release 12.1, V12.1.105",
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1",
    )
    assert causes(cli, log)["SYS131"]["verdict"] != "confirmed"


@pytest.mark.parametrize(
    ("line", "code", "words"),
    [
        ("nvcc fatal   : Cannot find compiler 'cl.exe' in PATH", "SYS163", "Build Tools"),
        (
            "nvcc fatal   : The version ('1929') of the host compiler ('Microsoft Visual "
            "Studio') is not supported",
            "SYS131",
            "-allow-unsupported-compiler",
        ),
        (
            "nvcc fatal   : The version ('80100') of the host compiler ('Apple clang') is not "
            "supported",
            "SYS131",
            "an older clang",
        ),
    ],
)
def test_nvcc_refusing_or_missing_the_host_compiler(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, words: str
) -> None:
    found = causes(cli, log_file(tmp_path, line))[code]
    assert found["verdict"] == "confirmed"
    assert words in fix_text(found)


def test_the_nvcc_a_compile_command_runs_decides_nvcc_against_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # flash-attn's setup.py prints torch's version, ninja echoes each nvcc command: the build
    # ran CUDA 11.5's nvcc under a CUDA 12.1 torch (the summary lines alone name no cause)
    log = log_file(
        tmp_path,
        "      torch.__version__  = 2.1.0+cu121",
        "      [1/49] /usr/local/cuda-11.5/bin/nvcc  -I/tmp/x/csrc/flash_attn -c -c "
        "/tmp/x/flash_fwd_hdim64_fp16_sm80.cu -o /tmp/x.o",
        "      RuntimeError: Error compiling objects for extension",
    )
    found = causes(cli, log)
    assert found["SYS153"]["verdict"] == "confirmed"
    assert found["CUD110"]["verdict"] == "confirmed"
    text = fix_text(found["CUD110"])
    assert "CUDA_HOME=/usr/local/cuda-12.1" in text


def test_a_failed_source_build_of_a_cuda_package_is_checked_against_the_stated_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "stack.toml"
    spec.write_text('[packages]\ntorch = "2.1.0+cu121"\n[system]\nnvcc = "11.8"\n')
    cuda = log_file(tmp_path, "  ERROR: Failed building wheel for flash-attn", name="a.log")
    assert causes(cli, cuda, "--spec", str(spec))["CUD110"]["verdict"] == "confirmed"
    # a package that compiles no CUDA code: the toolkit is not in use
    plain = log_file(tmp_path, "  ERROR: Failed building wheel for tokenizers", name="b.log")
    assert causes(cli, plain, "--spec", str(spec))["CUD110"]["verdict"] == "ruled_out"


def test_setuptools_could_not_start_nvcc_or_cl(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # 'nvcc' ends in 'cc': it is the CUDA toolkit that is missing, not a C compiler
    nvcc = log_file(tmp_path, "error: command 'nvcc' failed: No such file or directory")
    found = causes(cli, nvcc)
    assert found["SYS152"]["verdict"] == "confirmed" and "SYS163" not in found
    cl = log_file(tmp_path, "error: command 'cl.exe' failed: None", name="cl.log")
    assert causes(cli, cl)["SYS163"]["verdict"] == "confirmed"


@pytest.mark.parametrize(
    "line",
    [
        # torch's cpp_extension raises it (major mismatch), also where a paste cuts it
        "RuntimeError: The detected CUDA version (11.5) mismatches the version that was used to "
        "compile",
        # flash-attn's setup.py, from the nvcc it found
        "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure "
        "nvcc has a supported version by running nvcc -V.",
        # torch's ninja build passes an option nvcc has from CUDA 10.2
        "nvcc fatal   : Unknown option '-generate-dependencies-with-compile'",
    ],
)
def test_a_build_that_refuses_its_nvcc_confirms_the_toolkit_mismatch(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    found = causes(cli, log_file(tmp_path, line))["CUD110"]
    assert found["verdict"] == "confirmed"
    assert "CUDA_HOME=" in fix_text(found)
