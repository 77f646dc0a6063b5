"""TOR101 from what a log states: torch's own 'sm_XY is not compatible' warning establishes the
cause and its finding names the closest build with kernels for the GPU; a printed
torch.cuda.get_arch_list() is checked against the declared build. Lines as torch and users print
them (sources in matrices/signatures*.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix


def test_sm120_warning_confirms_tor101_with_a_cu128_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"
    log.write_text(
        "/opt/conda/lib/python3.12/site-packages/torch/cuda/__init__.py:235: UserWarning:\n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not comp\n"
    )
    tor101 = _causes(cli, log)["TOR101"]
    assert (tor101["verdict"], tor101["evidence"]) == ("confirmed", "confirmed from line 2")
    (finding,) = tor101["findings"]
    assert "NVIDIA GeForce RTX 5090 (sm_120)" in finding["message"]
    # CUDA 12.8 is the first toolkit that compiles sm_120: every build offered is cu128 or later
    assert "torch 2.7.0+cu128" in _fix(tor101)
    assert "--index-url https://download.pytorch.org/whl/cu128" in _fix(tor101)


def test_sm61_warning_with_a_supported_build_offers_no_cu128(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A Pascal GPU (sm_61): the closest build is not forced onto CUDA 12.8."""
    log = tmp_path / "job.log"
    log.write_text(
        "UserWarning: NVIDIA GeForce GTX 1080 with CUDA capability sm_61 is not compatible "
        "with the current PyTorch installation.\n"
    )
    tor101 = _causes(cli, log)["TOR101"]
    assert tor101["verdict"] == "confirmed"
    assert "sm_61" in tor101["findings"][0]["message"]
    assert "pip install torch==" in _fix(tor101)


def test_printed_arch_list_is_checked_against_the_declared_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """vllm-project/production-stack#528: the list is cut after 'sm_60'; the declared torch
    2.7.0+cu126 (no sm_120) on an RTX 5090 decides."""
    log = tmp_path / "job.log"
    log.write_text(
        "PyTorch version: 2.7.0+cu126\nCUDA version: 12.6\nTORCH_CUDA_ARCH_LIST: ['sm_50', 'sm_60\n"
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[gpu]\nmodels = ["NVIDIA GeForce RTX 5090"]\n\n[packages]\ntorch = "2.7.0+cu126"\n'
    )
    tor101 = _causes(cli, log, "--spec", str(spec))["TOR101"]
    assert tor101["verdict"] == "confirmed"
    assert "whl/cu128" in _fix(tor101)


def test_printed_arch_list_with_the_gpu_in_the_build_rules_tor101_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"
    log.write_text("['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100']\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[gpu]\nmodels = ["NVIDIA H100 80GB HBM3"]\n\n[packages]\ntorch = "2.7.0+cu128"\n'
    )
    result = cli("triage", str(log), "--json", "--spec", str(spec))
    causes = {c["code"]: c for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert causes["TOR101"]["verdict"] == "ruled_out"


def test_flash_attn_ampere_error_confirms_tor102_with_sdpa(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """huggingface/transformers#28188: the error alone establishes the cause; the fix is another
    attention implementation."""
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n")
    tor102 = _causes(cli, log)["TOR102"]
    assert (tor102["verdict"], tor102["evidence"]) == ("confirmed", "confirmed from line 1")
    assert 'attn_implementation="sdpa"' in _fix(tor102)


def test_flash_attn_ampere_error_names_the_declared_pre_ampere_gpu(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('[gpu]\nmodels = ["Tesla T4", "NVIDIA A100-SXM4-80GB"]\n')
    (finding,) = _causes(cli, log, "--spec", str(spec))["TOR102"]["findings"]
    assert "Tesla T4 (sm_75)" in finding["message"] and "A100" not in finding["message"]


def test_torchvision_nms_missing_confirms_tor104(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """pytorch/torchtitan#3022: a nightly torch beside an old torchvision; the log states no
    versions, so the fix is the pairing rule (same channel and index as torch)."""
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: operator torchvision::nms does not exist\n")
    tor104 = _causes(cli, log)["TOR104"]
    assert (tor104["verdict"], tor104["evidence"]) == ("confirmed", "confirmed from line 1")
    assert "Reinstall torchvision from the channel and index torch came from" in _fix(tor104)


def test_torchvision_nms_missing_with_a_declared_torch_names_its_pair(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch 2.5.1 declared (torchvision not): the matrix's pair 0.20.1 is named."""
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: operator torchvision::nms does not exist\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.5.1"\n')
    tor104 = _causes(cli, log, "--spec", str(spec))["TOR104"]
    assert "pip install torchvision==0.20.1" in _fix(tor104)
