"""Architecture lines whose own facts decide the cause (signatures in
matrices/signatures/arch_checks.toml, and the facts arch.toml's kernel-image lines read):
ptxas refusing an arch-specific instruction on a plain target (TOR191), a kernel image missing
from a native program's own build (CUD153 over torch's TOR101), and a build whose architecture
list reaches below a kernel's floor (CUD151 worded for the build, not the GPU)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_PTXAS = "ptxas /tmp/tmpxft_000793eb_00000000-6_{file}.ptx, line 283031; error   : {what}"


def test_block_scaled_mma_on_plain_sm_120_names_the_arch_specific_target(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        _PTXAS.format(
            file="ds4_mmq",
            what="Instruction 'mma with block scale' not supported on .target 'sm_120'",
        ),
        _PTXAS.format(
            file="ds4_mmq", what="Feature '.kind::mxf4' not supported on .target 'sm_120'"
        ),
    )
    cause = causes(cli, log)["TOR191"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "-DCMAKE_CUDA_ARCHITECTURES=120a" in text
    assert 'TORCH_CUDA_ARCH_LIST="12.0a"' in text
    assert "-gencode arch=compute_120a,code=sm_120a" in text
    assert "CUDA 12.8 or newer" in text  # the [[sm]] table's first toolkit for sm_120


def test_wgmma_on_plain_sm_90_derives_sm_90a_from_the_line(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        _PTXAS.format(
            file="flash_fwd", what="Instruction 'wgmma.fence' not supported on .target 'sm_90'"
        ),
    )
    text = fix_text(causes(cli, log)["TOR191"])
    assert "-DCMAKE_CUDA_ARCHITECTURES=90a" in text
    assert 'TORCH_CUDA_ARCH_LIST="9.0a"' in text
    assert "120" not in text


def test_a_kernel_file_of_another_architecture_is_left_out_of_that_target(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "[ 75%] Building CUDA object src/turbomind/kernels/gemm/CMakeFiles/gemm2.dir/kernel/"
        "sm90_q64n32.cu.o",
        "ptxas /tmp/tmpxft_00001af0_00000000-6_sm90_q64n32.ptx, line 10531; error   : Instruction "
        "'tensormap.replace' not supported on .target 'sm_120'",
    )
    cause = causes(cli, log)["TOR191"]
    text = fix_text(cause)
    assert "Build the sm_90 kernels only for sm_90a" in text
    assert "leave sm_120 out" in text
    assert "-DCMAKE_CUDA_ARCHITECTURES=90a" in text


def test_a_refusal_on_an_arch_specific_target_is_not_this_cause(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        _PTXAS.format(
            file="gemm", what="Instruction 'tcgen05.mma' not supported on .target 'sm_90a'"
        ),
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    codes = {c["code"] for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert "TOR191" not in codes


def test_no_kernel_image_in_a_ggml_build_confirms_its_own_build_for_the_stated_gpu(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Device 0: NVIDIA GeForce RTX 5060, compute capability 12.0, VMM: yes, VRAM: 8150 MiB",
        "ggml_cuda_compute_forward: IM2COL failed",
        "CUDA error: no kernel image is available for execution on the device",
        "  current device: 0, in function ggml_cuda_compute_forward at "
        "D:\\a\\CrispASR\\CrispASR\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:2824",
    )
    found = causes(cli, log)
    cause = found["CUD153"]
    assert cause["verdict"] == "confirmed"
    assert "ggml-cuda.cu" in cause["findings"][0]["message"]
    text = fix_text(cause)
    assert "-DCMAKE_CUDA_ARCHITECTURES=120" in text
    assert "-gencode arch=compute_120,code=sm_120" in text
    assert found["TOR101"]["verdict"] != "confirmed"


def test_invalid_device_function_at_a_programs_cu_line_names_the_nvcc_flags(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "/home/u/src/voxcraft-sim/src/VX3/VX3_SimulationManager.cu(413): CUDA Function Error: "
        "invalid device function ",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "-gencode arch=compute_" in text
    assert "compute_cap" in text  # no GPU stated: how to read its compute capability


def test_torchs_own_source_on_the_line_is_not_a_programs_build(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: cuda runtime error (209) : no kernel image is available for execution on "
        "the device at /pytorch/aten/src/THC/generic/THCTensorMath.cu:16",
    )
    assert causes(cli, log)["CUD153"]["verdict"] != "confirmed"


def test_ptxas_floor_in_a_ptx_file_for_an_old_target_words_the_build_list(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ptxas /tmp/tmpxft_00026252_00000000-13_marlin_cuda_kernel.compute_60.ptx, line 7532; "
        "error   : Feature 'ldmatrix' requires .target sm_75 or higher",
    )
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert 'TORCH_CUDA_ARCH_LIST="7.5"' in text
    assert "sm_60" in cause["findings"][0]["message"]


def test_fp8_ops_below_sm_89_name_the_floor_and_what_the_gpu_runs(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes",
        "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute "
        "capability >= 9.0 or 8.9, or ROCm MI300+",
    )
    cause = causes(cli, log)["CUD151"]
    assert cause["verdict"] == "confirmed"
    assert "sm_86" in cause["findings"][0]["message"]
    assert "bf16/fp16" in fix_text(cause)
    triton = log_file(
        tmp_path,
        "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89",
        name="triton.log",
    )
    assert "sm_89+" in fix_text(causes(cli, triton)["CUD151"])


def test_cutlass_stub_names_the_arch_specific_target_it_was_built_without(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ERROR : Arch conditional MMA instruction used without targeting sm90a compute "
        "capability. Aborting.",
    )
    cause = causes(cli, log)["TOR191"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert 'TORCH_CUDA_ARCH_LIST="9.0a"' in text
    assert "-DCMAKE_CUDA_ARCHITECTURES=90a" in text
    newer = log_file(
        tmp_path,
        "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-0e1d2c3b-4a59-6877-8695-a4b3c2d1e0f9)",
        "ERROR : Arch conditional MMA instruction used without targeting appropriate compute "
        "capability. Aborting.",
        name="newer.log",
    )
    assert 'TORCH_CUDA_ARCH_LIST="12.0a"' in fix_text(causes(cli, newer)["TOR191"])


def test_torch_cmake_refusing_an_autodetected_name_sets_the_list_without_it(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "-- Autodetected CUDA architecture(s): 3.5;5.0;8.0;8.6;8.9;9.0;9.0a",
        "CMake Error at cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake:225 "
        "(message):",
        "  Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS",
    )
    cause = causes(cli, log)["TOR192"]
    assert cause["verdict"] == "confirmed"
    assert 'export TORCH_CUDA_ARCH_LIST="3.5 5.0 8.0 8.6 8.9 9.0"' in fix_text(cause)
    alone = log_file(
        tmp_path,
        "Unknown CUDA Architecture Name 12.1(2.0) in CUDA_SELECT_NVCC_ARCH_FLAGS",
        name="alone.log",
    )
    assert 'TORCH_CUDA_ARCH_LIST="12.1"' in fix_text(causes(cli, alone)["TOR192"])
