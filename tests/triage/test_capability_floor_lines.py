"""A library's own compute-capability check in any wording (signature
library-capability-floor-refused, matrices/signatures/arch_checks.toml): the floor read in any
writing, the GPU where the line or the log names it, and CUD151's fix from the feature the line
names (the [[arch_floor]] entries' keywords) and the GPU table (the GPUs that meet the floor)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("line", "floor", "fallback"),
    [
        # the floor as sm_XY after 'Minimum required', no feature named: the GPUs that meet it
        (
            "Error: CUDA capability sm_61 is not supported. Minimum required: sm_75",
            "7.5",
            "Turing (T4",
        ),
        # FlashInfer's older check_cuda_arch: 'sm75+'
        ("RuntimeError: FlashInfer requires sm75+", "7.5", "TORCH_CUDA_ARCH_LIST"),
        # '>= 8.0' and flash attention written apart
        (
            "AssertionError: Flash Attention 2 requires compute capability >= 8.0",
            "8.0",
            'attn_implementation="sdpa"',
        ),
        # an architecture name as the floor: the GPU table's lowest Hopper is 9.0
        (
            "RuntimeError: FlashAttention-3 only supports Hopper GPUs or newer.",
            "9.0",
            'attn_implementation="sdpa"',
        ),
        ("RuntimeError: bf16 requires Ampere or newer", "8.0", "torch_dtype=torch.float16"),
        # 'X.Y or higher required': TransformerEngine's FP8 check
        (
            "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
            "8.9",
            "bf16/fp16 instead of FP8",
        ),
        # the feature named first decides: Float8 before quantization
        (
            "AssertionError: Float8 dynamic activation quantization is only supported on "
            "CUDA>=8.9 and MI300+",
            "8.9",
            "bf16/fp16 instead of FP8",
        ),
        (
            "RuntimeError: Marlin kernels require compute capability >= 8.0",
            "8.0",
            "--quantization gptq",
        ),
        # TransformerEngine's NVTE_CHECK: 'SM_90+', the GPU as 'current device is SM_86'
        (
            "RuntimeError: NCCL EP requires SM_90+ (Hopper or later), but current device is SM_86",
            "9.0",
            "Hopper (H100",
        ),
        ("RuntimeError: Kernel is only supported on SM 9.0+.", "9.0", "Hopper (H100"),
        # a floor written as the first refused value ('SM < 90')
        ("RuntimeError: FP4 data type is not supported on SM < 90", "9.0", "Mxfp4Config"),
        # the capability's floor, not the CUDA release the same line also requires
        (
            "RuntimeError: FP8 block scaled GEMM requires compute capability 9.0 or higher and "
            "CUDA >= 12.9.",
            "9.0",
            "bf16/fp16 instead of FP8",
        ),
    ],
)
def test_a_floor_in_any_writing_confirms_the_refusal_with_the_features_fallback(
    cli: Cli, tmp_path: Path, line: str, floor: str, fallback: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert f"compute capability {floor} or newer" in cause["findings"][0]["message"]
    text = fix_text(cause) + "\n" + str(cause["findings"][0]["fix"])
    assert fallback in text


def test_the_gpus_that_meet_the_floor_come_from_the_gpu_table(cli: Cli, tmp_path: Path) -> None:
    cause = causes(
        cli,
        log_file(tmp_path, "RuntimeError: FlashAttention-3 only supports Hopper GPUs or newer."),
    )["CUD151"]
    text = str(cause["findings"][0]["fix"])
    assert "Hopper (H100" in text
    assert "A100" not in text  # Ampere is below sm_90


def test_the_gpu_the_line_states_below_the_floor_is_named(cli: Cli, tmp_path: Path) -> None:
    cause = causes(
        cli,
        log_file(
            tmp_path, "ValueError: WAN fused V1 requires SM75+; got compute_capability=(7, 0)."
        ),
    )["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "sm_70" in cause["findings"][0]["message"]


def test_a_gpu_at_or_above_the_stated_floor_rules_the_cause_out(cli: Cli, tmp_path: Path) -> None:
    line = (
        "ValueError: SGLANG_VQ_FP8_FMT=e4m3 requires compute capability >= 8.9 "
        "(this device is sm90)"
    )
    assert causes(cli, log_file(tmp_path, line))["CUD151"]["verdict"] == "ruled_out"


def test_the_gpu_another_line_names_is_read_against_the_floor(cli: Cli, tmp_path: Path) -> None:
    below = log_file(
        tmp_path,
        "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-1)",
        "RuntimeError: FlashInfer requires sm75+",
        name="v100.log",
    )
    cause = causes(cli, below)["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "7.0" in cause["findings"][0]["message"]
    above = log_file(
        tmp_path,
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)",
        "AssertionError: Flash Attention 2 requires compute capability >= 8.0",
        name="a100.log",
    )
    assert causes(cli, above)["CUD151"]["verdict"] == "ruled_out"


def test_a_requirement_stated_without_an_error_is_no_refusal(cli: Cli, tmp_path: Path) -> None:
    """argparse's help and a log's notes state floors on healthy nodes too."""
    log = log_file(
        tmp_path,
        "  --bf16  Whether to use bf16 (mixed) precision training instead of 32-bit training. "
        "Requires Ampere or higher NVIDIA architecture or using CPU (no_cuda).",
        "Flash Attention 2 requires compute capability >= 8.0; using sdpa",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    matches = result.json()["data"]["matches"]
    assert "library-capability-floor-refused" not in {m["id"] for m in matches}
    verdicts = {c["verdict"] for m in matches for c in m["causes"] if c["code"] == "CUD151"}
    assert "confirmed" not in verdicts


def test_a_floor_stated_without_an_error_marker_is_decided_by_the_line(
    cli: Cli, tmp_path: Path
) -> None:
    """An issue's title line or a traceback's message on a line of its own is the refusal; a
    GPU the log names at or above the floor rules it out."""
    title = "FP8 models require a GPU with Compute Capability 8.9 or higher"
    cause = causes(cli, log_file(tmp_path, title))["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "bf16/fp16 instead of FP8" in str(cause["findings"][0]["fix"])
    above = log_file(tmp_path, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)", title, name="h.log")
    assert causes(cli, above)["CUD151"]["verdict"] == "ruled_out"


def test_a_gpu_above_a_check_that_accepts_one_family_only_is_not_below_a_floor(
    cli: Cli, tmp_path: Path
) -> None:
    """'requires SM100 or SM103, got SM120': a kernel for another family, not a GPU too old."""
    line = "RuntimeError: Cake Router GEMM requires SM100 or SM103, got SM120"
    assert causes(cli, log_file(tmp_path, line))["CUD151"]["verdict"] == "ruled_out"


def test_a_known_checks_fix_names_the_gpus_at_its_floor_too(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)",
        "ValueError: type fp8e4nv not supported in this architecture. The supported fp8 dtypes "
        "are ('fp8e4b15', 'fp8e5')",
    )
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    text = str(cause["findings"][0]["fix"])
    assert "Ada Lovelace (L4" in text
    assert "Ampere (" not in text  # sm_80 is below fp8e4nv's sm_89


def test_flashinfers_old_check_names_the_build_arch_list_first(cli: Cli, tmp_path: Path) -> None:
    """'FlashInfer requires sm75+' is raised when ANY architecture in the build's list is below
    7.5 (flashinfer#371: an L20 under NGC's TORCH_CUDA_ARCH_LIST): the list is the first fix."""
    cause = causes(cli, log_file(tmp_path, "RuntimeError: FlashInfer requires sm75+"))["CUD151"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert text.index("TORCH_CUDA_ARCH_LIST") < text.index("VLLM_USE_FLASHINFER_SAMPLER=0")
    above = log_file(
        tmp_path,
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)",
        "RuntimeError: FlashInfer requires sm75+",
        name="a100.log",
    )
    cause = causes(cli, above)["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "meets its floor" in cause["findings"][0]["message"]
    assert "unset TORCH_CUDA_ARCH_LIST" in str(cause["findings"][0]["fix"])
