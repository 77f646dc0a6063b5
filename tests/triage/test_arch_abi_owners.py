"""Which binary lacks the kernel, or which package's extension lacks the symbol, read from what
the log shows: the innermost frame at a 'no kernel image' in a source checkout or printed after
the message (rules/node/trace_frames.py), a CMake build's own architecture list
(rules/node/arch_cmake_list.py), a private top-level extension module owned by a package the
import-name table names (torchaudio 0.x's `_torch_sox`), a torch release stated in prose."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_NO_IMAGE = "CUDA error: no kernel image is available for execution on the device"


def test_frames_after_the_message_name_the_extension_in_a_source_checkout(
    cli: Cli, tmp_path: Path
) -> None:
    # open-mmlab/mmcv#2201: VS Code prints the frames innermost first, below the message
    log = log_file(
        tmp_path,
        "GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-1)",
        "Exception has occurred: RuntimeError",
        _NO_IMAGE,
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        '  File "/root/mmcv/mmcv/ops/focal_loss.py", line 60, in forward',
        "    ext_module.sigmoid_focal_loss_forward(",
        '  File "/root/mmdetection/mmdet/models/losses/focal_loss.py", line 139, in loss',
        "    loss = _sigmoid_focal_loss(pred, target)",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert 'TORCH_CUDA_ARCH_LIST="7.0"' in text and "mmcv" in text


def test_the_last_frame_above_the_error_in_a_checkout_of_torch_is_torchs(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 10, in <module>',
        "    y = x.cuda() + 1",
        '  File "/home/u/src/pytorch/torch/_tensor.py", line 40, in wrapped',
        "    return f(*args, **kwargs)",
        f"RuntimeError: {_NO_IMAGE}",
    )
    found = causes(cli, log)
    assert found["CUD153"]["verdict"] == "ruled_out"
    assert found["TOR101"]["verdict"] == "confirmed"


def test_a_project_frame_no_table_names_leaves_the_binary_open(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/home/u/project/model.py", line 10, in forward',
        "    out = self.layer(x)",
        f"RuntimeError: {_NO_IMAGE}",
    )
    assert causes(cli, log)["CUD153"]["verdict"] != "confirmed"


def test_a_cmake_list_set_in_the_log_names_the_build_in_cmake_spelling(
    cli: Cli, tmp_path: Path
) -> None:
    # laugh12321/TensorRT-YOLO#74: set(CMAKE_CUDA_ARCHITECTURES 89) on another GPU
    log = log_file(
        tmp_path,
        "CUDA Error:",
        "    File:       TensorRT-YOLO/source/deploy/vision/inference.cpp",
        "    Error code: 98",
        "    Error text: invalid device function",
        "The thing I changed in CMakeLists to make the code build",
        "# set(CMAKE_CUDA_ARCHITECTURES native)",
        "set(CMAKE_CUDA_ARCHITECTURES 89)",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "-DCMAKE_CUDA_ARCHITECTURES=<XY>" in text and "compute_cap" in text
    assert "torch==" not in text


def test_a_cmake_list_the_known_gpu_runs_is_not_the_cause(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)",
        "cmake -B build -DCMAKE_CUDA_ARCHITECTURES=86 ..",
        "Error text: invalid device function",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] != "confirmed" or "CMAKE_CUDA_ARCHITECTURES" not in fix_text(cause)


def test_a_cmake_list_without_the_known_gpu_names_its_capability(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "GPU 0: Tesla T4 (UUID: GPU-1)",
        "cmake -B build -DCMAKE_CUDA_ARCHITECTURES=89 ..",
        "Error text: invalid device function",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    assert "-DCMAKE_CUDA_ARCHITECTURES=75" in fix_text(cause)


def test_a_private_top_level_module_is_owned_by_the_package_the_table_names(
    cli: Cli, tmp_path: Path
) -> None:
    # pytorch/audio#99: torchaudio 0.x's _torch_sox beside the torchaudio package
    log = log_file(
        tmp_path,
        "ImportError: /usr/local/lib/python3.5/dist-packages/_torch_sox.cpython-35m-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE",
    )
    found = causes(cli, log)
    assert found["TOR104"]["verdict"] == "confirmed"
    assert "torchaudio" in fix_text(found["TOR104"])
    assert "-torch-sox" not in str(found)


def test_an_unknown_private_module_is_never_made_a_distribution_name(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /usr/lib/python3/dist-packages/_private_sox.cpython-310-x86_64-linux-gnu."
        "so: undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE",
    )
    assert "-private-sox" not in str(causes(cli, log))


def test_a_source_build_fix_names_setup_py_clean(cli: Cli, tmp_path: Path) -> None:
    # pytorch/audio#171: a stale build/ survived the reinstall
    log = log_file(
        tmp_path,
        "ImportError: /home/u/audio/_torch_sox.cpython-36m-x86_64-linux-gnu.so: undefined "
        "symbol: _ZN2at19NonVariableTypeMode10is_enabledEv",
    )
    assert "python setup.py clean --all" in fix_text(causes(cli, log)["TOR150"])


def test_a_torch_release_stated_in_prose_pairs_the_companion(cli: Cli, tmp_path: Path) -> None:
    # RangiLyu/nanodet#547
    log = log_file(
        tmp_path,
        "OSError: /usr/local/lib/python3.8/dist-packages/torchaudio/lib/libtorchaudio.so: "
        "undefined symbol: _ZNK3c107SymBool10guard_boolEPKcl",
        "",
        "My torch version is 1.13.1, and pytorch_lightning version is 1.9.5.",
    )
    assert "torchaudio==0.13.1" in fix_text(causes(cli, log)["TOR104"])


def test_a_check_site_in_an_extensions_source_names_its_build(cli: Cli, tmp_path: Path) -> None:
    # facebookresearch/xformers#1251: the bundled flash-attention kernels of a wheel, sm_120
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-1)",
        "CUDA error (/__w/xformers/xformers/third_party/flash-attention/hopper/"
        "flash_fwd_launch_template.h:175): no kernel image is available for execution on the "
        "device",
    )
    found = causes(cli, log)
    assert found["CUD153"]["verdict"] == "confirmed"
    text = fix_text(found["CUD153"])
    assert 'TORCH_CUDA_ARCH_LIST="12.0"' in text
    assert "git+https://github.com/facebookresearch/xformers.git" in text
    assert found["TOR101"]["verdict"] != "confirmed"


def test_a_check_site_in_torchs_own_source_is_not_an_extensions(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "CUDA error (/pytorch/aten/src/ATen/native/cuda/Loops.cuh:94): no kernel image is "
        "available for execution on the device",
    )
    assert causes(cli, log)["CUD153"]["verdict"] != "confirmed"


def test_the_drivers_no_binary_names_the_loaded_module_not_torch(cli: Cli, tmp_path: Path) -> None:
    # scripts/gpu_failures.py cubin_other_arch: an sm_80 cubin loaded through CuPy on an H200
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA H200 (UUID: GPU-1)",
        "Traceback (most recent call last):",
        '  File "cupy/cuda/function.pyx", line 191, in cupy.cuda.function.Module.load_file',
        '  File "cupy_backends/cuda/api/driver.pyx", line 229, in '
        "cupy_backends.cuda.api.driver.moduleLoad",
        "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_NO_BINARY_FOR_GPU: no "
        "kernel image is available for execution on the device",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "nvcc -cubin -arch=sm_90" in text and "RawModule(code=" in text
    assert "TORCH_CUDA_ARCH_LIST" not in text and "torch==" not in text


def test_pybind11_at_a_torch_cpp_type_is_a_registry_not_torchs(cli: Cli, tmp_path: Path) -> None:
    # llvm/torch-mlir#138: the extension's pybind11 does not know torch's registered type
    log = log_file(
        tmp_path,
        "TypeError: import_function(): incompatible function arguments. The following argument "
        "types are supported:",
        "    1. (self: _torch_mlir.ModuleBuilder, arg0: torch::jit::StrongFunctionPtr) -> "
        "torch::jit::StrongFunctionPtr",
        "",
        "Invoked with: <_torch_mlir.ModuleBuilder object at 0x7f81c3e8d0b0>, "
        "<torch.jit.ScriptFunction object at 0x7f81a8cb36d0>",
    )
    cause = causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "torch.utils.cpp_extension" in text and "_PYBIND11_COMPILER_TYPE" in text


def test_pybind11_at_the_callers_own_types_is_not_an_abi_cause(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "TypeError: only_float(): incompatible function arguments. The following argument types "
        "are supported:",
        "    1. (arg0: float) -> float",
        "",
        "Invoked with: 'a'",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    found = {c["code"]: c for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert found.get("TOR150", {}).get("verdict") != "confirmed"


def test_xformers_bundled_flash_attention_3_is_built_without_it(cli: Cli, tmp_path: Path) -> None:
    """facebookresearch/xformers#1329: a source checkout (any directory name) whose check site
    is its bundled FlashAttention-3, third_party/flash-attention/hopper: xformers builds it only
    for sm_80/sm_90 (setup.py), so on an RTX 5090 the fix is a build without it."""
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-1)",
        "CUDA error (/workspace/xfrm2/third_party/flash-attention/hopper/"
        "flash_fwd_launch_template.h:188): no kernel image is available for execution on the "
        "device",
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert 'XFORMERS_DISABLE_FLASH_ATTN=1 TORCH_CUDA_ARCH_LIST="12.0"' in text
    assert "0.0.33" in text
