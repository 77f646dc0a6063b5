"""The arch family's fix forms, derived from a log's own facts: the GPU and torch build an
issue's environment list states (matrices/signatures/arch_checks.toml), the torch build with the
GPU's kernels in the forms threads run (the same release's other variant for a dropped GPU,
torch with its companions, the first CUDA variant that compiles a GPU older releases cover),
and concrete fixes for the causes a bare 'no kernel image' leaves open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_an_environment_list_decides_a_dropped_gpu_same_release_other_variant(
    cli: Cli, tmp_path: Path
) -> None:
    # bnsreenu/digitalsreeni-image-annotator#57: a GTX 1050 (sm_61) on torch 2.8.0+cu128
    log = log_file(
        tmp_path,
        "## Environment",
        "- GPU: NVIDIA GeForce GTX 1050 (compute capability 6.1)",
        "- PyTorch: 2.8.0+cu128",
        "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the "
        "device",
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    # cu128 builds of 2.8 dropped Pascal; the same release's cu126 build has it
    assert "pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126" in text
    # the older variants that still have sm_61 are listed too (the thread ran 2.4.1+cu121)
    assert "+cu121 (torch 2.1.0-2.5.1)" in text
    assert "torchvision==0.23.0" in text and "torch==2.8.0+cu126" in text


def test_a_gpu_newer_than_every_release_the_table_lists_gets_its_first_variant(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "NVIDIA GeForce RTX 3080 Laptop GPU with CUDA capability sm_86 is not compatible with "
        "the current PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
    )
    text = fix_text(causes(cli, log)["TOR101"])
    assert "+cu111" in text  # CUDA 11.1 is the first to compile sm_86 ([[sm]])
    assert "torch_stable.html" in text


def test_an_older_pinned_release_gets_its_own_variant_from_the_previous_versions_table(
    cli: Cli, tmp_path: Path
) -> None:
    """A torch before the [[torch]] table's first (1.13): [[legacy_torch]] (pytorch.org's
    previous versions) names the variants with the GPU's kernels by release, and the stated
    release's own wheel with its torchvision (andreimargeloiu/WPFS#3: torch==1.10.1+cu111)."""
    log = log_file(
        tmp_path,
        "torch                    1.9.0",
        "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current "
        "PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
    )
    text = fix_text(causes(cli, log)["TOR101"])
    assert "+cu111 (torch 1.8.0-1.10.1), +cu113 (torch 1.11.0-1.12.1)" in text
    assert "+cu110" not in text  # CUDA 11.0 does not compile sm_86
    assert "pip install torch==1.9.0+cu111 torchvision==0.10.0+cu111 -f " in text
    # no release stated: the variants by release, the example without one
    bare = log_file(
        tmp_path,
        "NVIDIA A100-SXM4-80GB with CUDA capability sm_80 is not compatible with the current "
        "PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
        name="bare.log",
    )
    text = fix_text(causes(cli, bare)["TOR101"])
    assert "+cu110 (torch 1.7.0-1.7.1), +cu111 (torch 1.8.0-1.10.1)" in text
    assert "torch==<release>+<variant>" in text


def test_torch_1_7_1_to_1_8_1_get_their_torchvision_from_the_previous_versions_page(
    cli: Cli, tmp_path: Path
) -> None:
    """torch 1.7.1, 1.8.0 and 1.8.1 have their own torchvision in pytorch.org's previous
    versions (0.8.2, 0.9.0, 0.9.1): the older-release example installs the pair."""
    for torch, vision, variant in (
        ("1.8.1", "0.9.1", "cu111"),
        ("1.8.0", "0.9.0", "cu111"),
        ("1.7.1", "0.8.2", "cu110"),
    ):
        log = log_file(
            tmp_path,
            f"torch                    {torch}",
            "NVIDIA A100-SXM4-80GB with CUDA capability sm_80 is not compatible with the "
            "current PyTorch installation.",
            "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
            name=f"{torch}.log",
        )
        text = fix_text(causes(cli, log)["TOR101"])
        assert f"pip install torch=={torch}+{variant} torchvision=={vision}+{variant} -f " in text


def test_a_gpu_older_than_every_known_toolkit_gets_no_invented_variant(
    cli: Cli, tmp_path: Path
) -> None:
    """sm_50's first toolkit (CUDA 6.x/7.0) predates every torch wheel the matrix knows: no
    '+cu70' wheel is named, only the variants that exist."""
    log = log_file(
        tmp_path,
        ">>> torch.__version__",
        "'2.8.0+cu128'",
        ">>> torch.cuda.get_device_name(0)",
        "'NVIDIA GeForce GTX 750 Ti'",
        _NO_IMAGE,
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "--index-url https://download.pytorch.org/whl/cu126" in text
    assert "+cu7" not in text and "torch_stable.html" not in text


def test_a_variant_the_table_lists_gets_no_first_variant_line(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 "
        "sm_86 sm_90.",
    )
    text = fix_text(causes(cli, log)["TOR101"])
    assert "--index-url https://download.pytorch.org/whl/cu128" in text
    assert "torch_stable.html" not in text


def test_open_causes_of_a_bare_kernel_image_line_get_the_gpus_own_fixes(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(tmp_path, "GPU 0: NVIDIA GeForce RTX 5090", _NO_IMAGE)
    found = causes(cli, log)
    tor101, cud153 = found["TOR101"], found["CUD153"]
    # sm_120 is in no default torch build before 2.7: torch's is the likely build without it
    # (test_kernel_image_new_gpu.py); the extension's cause stays open with the GPU's own fix
    assert tor101["verdict"] == "confirmed" and cud153["verdict"] == "unknown"
    assert "--index-url https://download.pytorch.org/whl/cu128" in fix_text(tor101)
    assert 'TORCH_CUDA_ARCH_LIST="12.0"' in cud153["fix"]["summary"]
    # flash-attn's pre-Ampere refusal cannot be the cause on a Blackwell GPU
    assert found["TOR102"]["verdict"] == "ruled_out"


def test_without_a_gpu_the_open_causes_keep_the_documented_fix(cli: Cli, tmp_path: Path) -> None:
    found = causes(cli, log_file(tmp_path, _NO_IMAGE))
    # open, not confirmed: the line alone does not say whose kernel had no image
    assert found["TOR101"]["verdict"] == "unknown"
    assert found["TOR101"]["fix"]["summary"].startswith("if a GPU's architecture")
    assert found["CUD153"]["fix"]["summary"].startswith("if a CUDA extension")
    assert found["TOR102"]["verdict"] == "unchecked"


def test_flash_attn_head_dim_backward_in_both_wordings_is_the_library_refusing_the_gpu(
    cli: Cli, tmp_path: Path
) -> None:
    for line in (
        "RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
        "RuntimeError: FlashAttention backward for head dim 256 with dropout, or head dim 224 "
        "with/without dropout requires A100/A800 or H100/H800",
    ):
        cause = causes(cli, log_file(tmp_path, "GPU 0: NVIDIA GeForce RTX 3090", line))["CUD151"]
        assert cause["verdict"] == "confirmed"
        text = fix_text(cause)
        assert "attn_implementation='sdpa'" in text and "flash-attn>=2.5.5" in text


def test_torch_sdpa_flash_backward_check_names_the_flash_switch(cli: Cli, tmp_path: Path) -> None:
    line = "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false."
    cause = causes(cli, log_file(tmp_path, line))["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "torch.backends.cuda.enable_flash_sdp(False)" in fix_text(cause)


def test_vllm_refusing_a_pre_volta_gpu_is_confirmed_by_its_own_line(
    cli: Cli, tmp_path: Path
) -> None:
    line = "ValueError: GPUs with compute capability below 7.0 are not supported."
    assert causes(cli, log_file(tmp_path, line))["VLM110"]["verdict"] == "confirmed"


def test_the_gpu_torch_names_quoted_decides_the_open_causes_fixes(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path, ">>> torch.cuda.get_device_name(0)", "'NVIDIA GeForce RTX 5090'", _NO_IMAGE
    )
    found = causes(cli, log)
    assert found["TOR102"]["verdict"] == "ruled_out"
    assert 'TORCH_CUDA_ARCH_LIST="12.0"' in found["CUD153"]["fix"]["summary"]


def test_a_known_torch_build_without_a_gpu_names_the_builds_for_newer_gpus(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(tmp_path, "torch 2.5.1+cu124", _NO_IMAGE)
    tor101 = causes(cli, log)["TOR101"]
    assert tor101["verdict"] == "unknown"
    assert "newer than sm_90" in tor101["fix"]["summary"]  # torch 2.5.1+cu124's list ends there
    assert (
        "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128"
        in tor101["fix"]["commands"]
    )
