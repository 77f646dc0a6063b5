"""The shell's bare `Killed` is a compiler's when a compile command runs just above it (a pip
build of flash-attn: ninja's `[1/49] .../nvcc ... -c ...`, CMake's `Building CUDA object`):
SYS160, with the build's parallel jobs as the fix; elsewhere it stays SYS190, host memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_NINJA_STEP = (
    "      [1/49] /usr/local/cuda/bin/nvcc  -I/tmp/pip-install-x/flash-attn/csrc/flash_attn "
    "-c -c /tmp/pip-install-x/flash-attn/csrc/flash_attn/src/flash_bwd_hdim128_bf16_sm80.cu "
    "-o /tmp/x.o -gencode arch=compute_80,code=sm_80"
)


def test_killed_below_a_compile_command_is_the_compiler(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "      Precompiled wheel not found. Building from source...",
        _NINJA_STEP,
        "      Killed",
    )
    found = _causes(cli, log)
    assert found["SYS160"]["verdict"] == "confirmed"
    assert "nvcc was killed" in found["SYS160"]["findings"][0]["message"]
    assert "MAX_JOBS" in _fix(found["SYS160"])
    assert found["SYS190"]["verdict"] != "confirmed"


def test_killed_below_cmakes_compile_step(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(
        tmp_path,
        "[ 31%] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/fattn.cu.o",
        "Killed",
    )
    assert _causes(cli, log)["SYS160"]["verdict"] == "confirmed"


def test_killed_after_a_training_step_stays_host_memory(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "Epoch 3: 450/1000 [10:00<12:00, loss=0.31]", "Killed")
    found = _causes(cli, log)
    assert found["SYS190"]["verdict"] == "confirmed"
    assert found["SYS160"]["verdict"] != "confirmed"
