"""Kernel-build failures read from the lines around them: ninja's `FAILED: <object>` stands
before the compiler's own error and is noise (a fact: a .cu object means nvcc), so the error
below it keeps its cause; atomicAdd's operand type comes from nvcc's `argument types are:`
line below the overload error (TOR193: double and __half2 need sm_60, __half sm_70; torch's
c10::Half has no atomicAdd at any architecture)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file, triage_data

_FAILED = "FAILED: /tmp/build/temp.linux-x86_64-cpython-310/csrc/ops.cuda.o"
_OVERLOAD = (
    'csrc/ops.cu(41): error: no instance of overloaded function "atomicAdd" matches the '
    "argument list"
)


def test_ninja_failed_line_does_not_stand_before_the_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path, _FAILED, _OVERLOAD, "            argument types are: (double *, double)"
    )
    data = triage_data(cli, log)
    failures = [m for m in data["matches"] if not m.get("noise")]
    assert failures[0]["id"] == "atomic-overload-below-target"
    found = _causes(cli, log)
    assert found["TOR193"]["verdict"] == "confirmed"
    assert "6.0 and newer" in _fix(found["TOR193"])


def test_atomic_on_a_type_without_atomicadd_is_not_the_architecture(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _OVERLOAD, "            argument types are: (c10::Half *, c10::Half)")
    assert _causes(cli, log)["TOR193"]["verdict"] != "confirmed"


def test_half2_atomic_names_sm60_and_half_sm70(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    half2 = log_file(
        tmp_path, _OVERLOAD, "  argument types are: (__half2 *, __half2)", name="a.log"
    )
    half = log_file(tmp_path, _OVERLOAD, "  argument types are: (__half *, __half)", name="b.log")
    assert "6.0 and newer" in _fix(_causes(cli, half2)["TOR193"])
    assert "7.0 and newer" in _fix(_causes(cli, half)["TOR193"])


def test_lone_ninja_failed_line_is_noise(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    result = cli("triage", str(log_file(tmp_path, _FAILED)), "--json", "--no-probe")
    assert [m.get("noise") for m in result.json()["data"]["matches"]] == [True]


def test_bf16_name_with_a_cuda11_nvcc_is_not_the_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Cuda compilation tools, release 11.8, V11.8.89",
        "csrc/ops.h:12:3: error: '__nv_bfloat16' does not name a type",
    )
    assert _causes(cli, log)["CUD110"]["verdict"] != "confirmed"
