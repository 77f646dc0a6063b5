"""Architecture lines in the words of the libraries that check the GPU themselves (signatures
in matrices/signatures/arch_floors.toml): a kernel library's floor (bitsandbytes' int8 matmul,
SageAttention's dispatch), a ceiling (xformers' ops refusing a newer GPU: TOR190), PTX older
than its target and a ptxas that predates the GPU (CUD150, with the Triton release that knows
it), and torch's own warning that a GPU is too old or beyond its range (TOR101)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text

Cli = Callable[..., CliResult]


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.log"
    path.write_text(text)
    return path


def test_bitsandbytes_int8_matmul_names_the_release_with_int8_on_every_gpu(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(
        tmp_path,
        "CUDA SETUP: Highest compute capability among GPUs detected: 6.1\n"
        "=============================================\n"
        "ERROR: Your GPU does not support Int8 Matmul!\n"
        "=============================================\n",
    )
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "bitsandbytes>=0.37.0" in text
    assert "sm_61" in cause["findings"][0]["message"]


def test_bitsandbytes_line_on_a_turing_gpu_says_what_it_means_there(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(
        tmp_path,
        "CUDA SETUP: Highest compute capability among GPUs detected: 7.5\n"
        "ERROR: Your GPU does not support Int8 Matmul!\n",
    )
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "no-cuBLASLt library anyway" in cause["findings"][0]["message"]


def test_sageattention_below_its_floor_turns_it_off(cli: Cli, tmp_path: Path) -> None:
    log = _log(tmp_path, "ValueError: Unsupported CUDA architecture: sm75\n")
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "pip uninstall -y sageattention" in text
    assert "sm_75" in cause["findings"][0]["message"]


def test_sageattention_on_a_newer_gpu_is_its_dispatch_not_the_floor(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(tmp_path, "ValueError: Unsupported CUDA architecture: sm121\n")
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "dispatcher has no branch" in cause["findings"][0]["message"]
    assert "git+https://github.com/thu-ml/SageAttention" in fix_text(cause)


def test_xformers_too_new_names_the_index_of_the_cuda_that_compiles_the_gpu(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(
        tmp_path,
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "`cutlassF-pt` is not supported because:\n"
        "    requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)\n",
    )
    cause = causes(cli, log)["TOR190"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "pip install -U xformers --index-url https://download.pytorch.org/whl/cu128" in text
    assert "pip uninstall -y xformers" in text
    assert "sm_90" in cause["findings"][0]["message"]


def test_xformers_too_new_on_a_hopper_gpu_takes_cu118(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "    requires device with capability < (8, 0) but your GPU has capability (9, 0) (too new)\n",
    )
    text = fix_text(causes(cli, log)["TOR190"])
    assert "whl/cu118" in text


def test_ptx_older_than_the_target_names_the_triton_release(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "ptxas /tmp/x.ptx, line 6; error   : PTX .version 8.4 does not support .target sm_120a\n",
    )
    cause = causes(cli, log)["CUD150"]
    assert cause["verdict"] == "confirmed"
    assert "pip install -U 'triton>=3.3.0'" in fix_text(cause)


def test_ptxas_unknown_target_leads_with_triton_and_keeps_the_toolkit(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(tmp_path, "ptxas fatal   : Value 'sm_89' is not defined for option 'gpu-name'\n")
    text = fix_text(causes(cli, log)["CUD150"])
    assert text.startswith("Install triton 2.1.0 or newer")
    assert "TRITON_PTXAS_PATH=/usr/local/cuda-11.8/bin/ptxas" in text


def test_nvcc_dropped_arch_does_not_offer_triton(cli: Cli, tmp_path: Path) -> None:
    log = _log(tmp_path, "nvcc fatal   : Unsupported gpu architecture 'compute_35'\n")
    text = fix_text(causes(cli, log)["CUD150"])
    assert "triton" not in text.lower()
    assert "CUDA 11.8 toolkit" in text


def test_torch_too_old_with_no_prebuilt_build_says_build_from_source(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(
        tmp_path,
        "Found GPU0 NVIDIA GTX TITAN Black which is of cuda capability 3.5. PyTorch no longer "
        "supports this GPU because it is too old. The minimum cuda capability supported by this "
        "library is 3.7.\n",
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert 'TORCH_CUDA_ARCH_LIST="3.5"' in text and "from source" in text
    assert "CUDA 11.8" in text


def test_torch_range_below_the_minimum_takes_an_older_build(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "    Found GPU0 NVIDIA GeForce GTX 1070 which is of cuda capability 6.1.\n"
        "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
        "    (7.0) - (12.0)\n",
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    assert "newer builds dropped this GPU's architecture" in fix_text(cause)


def test_torch_range_within_the_newest_major_is_no_cause(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n"
        "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
        "    (8.0) - (12.0)\n",
    )
    assert causes(cli, log)["TOR101"]["verdict"] == "ruled_out"


def test_flash_attn_ampere_line_on_a_blackwell_gpu_is_the_release_not_the_gpu(
    cli: Cli, tmp_path: Path
) -> None:
    log = _log(
        tmp_path,
        "GPU 0: NVIDIA GeForce RTX 5090\n"
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n",
    )
    found = causes(cli, log)
    assert found["TOR102"]["verdict"] == "ruled_out"
    assert found["CUD151"]["verdict"] == "confirmed"
    assert "pip install -U flash-attn --no-build-isolation" in fix_text(found["CUD151"])


def test_flash_attn_ampere_line_on_a_v100_stays_pre_ampere(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "GPU 0: Tesla V100-SXM2-32GB\n"
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n",
    )
    found = causes(cli, log)
    assert found["TOR102"]["verdict"] == "confirmed"
    assert "VLLM_ATTENTION_BACKEND=XFORMERS" in fix_text(found["CUD151"])


def test_ggml_without_the_gpu_arch_rebuilds_for_it(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "ggml/src/ggml-cuda/mmq.cuh:2422: ERROR: CUDA kernel mul_mat_q has no device code "
        "compatible with CUDA arch 600. ggml-cuda.cu was compiled for: 520,610,700\n",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "-DCMAKE_CUDA_ARCHITECTURES=60" in text and "CUDAARCHS=60" in text
    assert "520,610,700" in cause["findings"][0]["message"]


def test_vllm_without_a_scaled_mm_kernel_for_the_gpu(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "NotImplementedError: No compiled cutlass_scaled_mm for a compute capability less than "
        "CUDA device capability: 121\n",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    assert 'TORCH_CUDA_ARCH_LIST="12.1"' in fix_text(cause)


def test_llvm_unknown_processor_names_the_triton_release(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path, "'sm_120' is not a recognized processor for this target (ignoring processor)\n"
    )
    cause = causes(cli, log)["CUD150"]
    assert cause["verdict"] == "confirmed"
    assert fix_text(cause).startswith("Install triton 3.3.0 or newer")


def test_torch_suggested_cuda_configuration_is_the_index(cli: Cli, tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        "UserWarning:\n"
        "    Please install PyTorch with a following CUDA\n"
        "    configurations:  12.6 following instructions at\n"
        "    https://pytorch.org/get-started/locally/\n",
    )
    cause = causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    assert "--index-url https://download.pytorch.org/whl/cu126" in fix_text(cause)
