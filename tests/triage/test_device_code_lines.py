"""CUDA device code the build's target or toolkit does not declare: nvcc's `identifier "<name>"
is undefined` for the functions of matrices/cuda/device_functions.toml (TOR193 below a target's
floor, CUD110 for a toolkit older than the function), and a compiler's missing-include error for
a header of matrices/cuda/header_releases.toml (CUD110 for an older toolkit, SYS152 for an older
toolkit's include directory read before the nvcc's own)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from envcheck.matrix_validate import load
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_BLOCK = 'hydro.cu(185): error: identifier "atomicExch_block" is undefined'
_RN = 'bias.cu(159): error: identifier "__hmul2_rn" is undefined'
_FP4 = "conversion.h:31:10: fatal error: cuda_fp4.h: No such file or directory"


def _spec(tmp_path: Path, body: str) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(body)
    return spec


def test_every_listed_function_is_in_the_signature() -> None:
    matrix = load()
    pattern = next(s for s in matrix.signatures if s.id == "device-function-undefined").pattern
    names = {
        name.split(".", 2)[2]
        for name in matrix.constants
        if name.startswith(
            ("cuda.device_fn_cc.", "cuda.device_fn_since.", "cuda.device_fn_cc_below.")
        )
    }
    assert len(names) > 50
    for name in names:
        assert re.search(pattern, f'x.cu(1): error: identifier "{name}" is undefined'), name


def test_scoped_atomic_below_sm60_names_the_floor_and_the_guard(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, log_file(tmp_path, _BLOCK))
    assert found["TOR193"]["verdict"] == "confirmed"
    assert "6.0 and newer" in _fix(found["TOR193"])
    assert "__CUDA_ARCH__ >= 600" in _fix(found["TOR193"])
    assert found["CUD110"]["verdict"] == "ruled_out"


def test_a_stated_target_that_has_the_function_rules_the_architecture_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    pass_line = (
        '1 error detected in the compilation of "/tmp/tmpxft_0_00000000-13_k.compute_70.cpp1.ii".'
    )
    found = _causes(cli, log_file(tmp_path, _BLOCK, pass_line))
    assert found["TOR193"]["verdict"] == "ruled_out"


def test_an_old_default_target_lacks_every_atomic(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, 'loss.impl(34): error: identifier "atomicAdd" is undefined')
    found = _causes(cli, log)
    assert found["TOR193"]["verdict"] == "confirmed"
    assert "-arch=sm_" in _fix(found["TOR193"])


def test_non_sync_shuffle_on_volta_names_the_sync_form(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    command = "/usr/local/cuda/bin/nvcc -gencode=arch=compute_80,code=sm_80 -c k.cu -o k.o"
    log = log_file(tmp_path, command, 'k.cu(9): error: identifier "__shfl_down" is undefined')
    found = _causes(cli, log)
    assert found["TOR193"]["verdict"] == "confirmed"
    assert "__shfl_down_sync(0xffffffff" in _fix(found["TOR193"])


def test_function_younger_than_the_toolkit_is_the_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[system]\nnvcc = "11.3"\n')
    found = _causes(cli, log_file(tmp_path, _RN), "--spec", str(spec))
    assert found["CUD110"]["verdict"] == "confirmed"
    assert "11.6 or newer" in _fix(found["CUD110"])
    assert found["TOR193"]["verdict"] == "ruled_out"


def test_function_of_the_toolkit_leaves_the_architecture(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[system]\nnvcc = "12.1"\n')
    found = _causes(cli, log_file(tmp_path, _RN), "--spec", str(spec))
    assert found["CUD110"]["verdict"] == "ruled_out"
    assert found["TOR193"]["verdict"] == "confirmed"


def test_header_younger_than_the_toolkit(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    spec = _spec(tmp_path, '[system]\nnvcc = "12.4"\n')
    found = _causes(cli, log_file(tmp_path, _FP4), "--spec", str(spec))
    assert found["CUD110"]["verdict"] == "confirmed"
    assert "12.8 or newer" in _fix(found["CUD110"])
    assert found["SYS152"]["verdict"] == "ruled_out"


def test_header_missing_beside_a_new_enough_nvcc_is_the_include_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    banner = "Cuda compilation tools, release 12.8, V12.8.93"
    found = _causes(cli, log_file(tmp_path, banner, _FP4))
    assert found["CUD110"]["verdict"] == "ruled_out"
    assert found["SYS152"]["verdict"] == "confirmed"
    assert "CUDA_HOME=/usr/local/cuda-12.8" in _fix(found["SYS152"])


def test_header_missing_without_a_release_is_the_toolkit_s_age(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, log_file(tmp_path, _FP4))
    assert found["CUD110"]["verdict"] == "confirmed"
    assert found["SYS152"]["verdict"] == "unknown"


def test_any_other_missing_include_names_the_header(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for text, header in (
        (
            "csrc/x.cu:3:10: fatal error: infiniband/verbs.h: No such file or directory",
            "infiniband/verbs.h",
        ),
        ("csrc/y.cpp:1:10: fatal error: 'omp.h' file not found", "omp.h"),
        (
            "a.cpp(2): fatal error C1083: Cannot open include file: 'omp.h': No such file or directory",
            "omp.h",
        ),
        ('csrc/z.cu(4): catastrophic error: cannot open source file "nvshmem.h"', "nvshmem.h"),
    ):
        cause = _causes(cli, log_file(tmp_path, text))["SYS161"]
        assert cause["verdict"] == "unknown"
        assert f"apt-file search {header}" in cause["fix"]["summary"], text


def test_a_known_system_header_keeps_its_package(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "csrc/aio.cpp:1:10: fatal error: libaio.h: No such file or directory")
    found = _causes(cli, log)["SYS161"]
    assert found["verdict"] == "confirmed"
    assert "libaio-dev" in _fix(found)


def test_nvcc_option_newer_than_the_toolkit(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = "nvcc fatal   : Unknown option '--threads'"
    old = _causes(cli, log_file(tmp_path, line))["CUD110"]
    assert old["verdict"] == "confirmed"
    assert "CUDA 11.2 added" in old["findings"][0]["message"]
    spec = _spec(tmp_path, '[system]\nnvcc = "12.1"\n')
    assert _causes(cli, log_file(tmp_path, line), "--spec", str(spec))["CUD110"]["verdict"] == (
        "ruled_out"
    )
