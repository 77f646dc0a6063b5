"""GPU memory short in a library's own words (matrices/signatures/memory_runtimes.toml): cuDNN's
convolution algorithm search (SYS230), torch's out-of-memory report failing at NVML (SYS230),
TensorFlow's cuDNN and cuBLAS calls beside its preallocation (SYS182). Each fix is the
out-of-memory fix in the knobs of the program that printed the line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

TORCH_CONV = (
    'Traceback (most recent call last):\n  File "train.py", line 602, in <module>\n'
    "    main(opt)\n"
    "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution"
)
TORCH_CONV_OLD = (
    "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution (try_all at "
    "/opt/conda/conda-bld/pytorch_1591914868920/work/aten/src/ATen/native/cudnn/Conv.cpp:693)"
)
DARKNET = " Error: cuDNN isn't found FWD algo for convolution."
NVML_R = (
    'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/'
    'CUDACachingAllocator.cpp":995, please report a bug to PyTorch.'
)
NVML_INIT = (
    "RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED at "
    '"../c10/cuda/CUDACachingAllocator.cpp":1123, please report a bug to PyTorch.'
)
TF_CONV = (
    "tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution "
    "algorithm. This is probably because cuDNN failed to initialize, so try looking to see if "
    "a warning log message was printed above."
)
TF_BLAS = (
    "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
    "a.shape=(100, 784), b.shape=(784, 10), m=100, n=10, k=784"
)


@pytest.mark.parametrize("line", [TORCH_CONV, TORCH_CONV_OLD])
def test_torch_conv_algorithm_search_is_gpu_memory(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    found = causes(cli, log_file(tmp_path, line))
    cause = found["SYS230"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert text.index("smaller batch size") < text.index("nvidia-smi")
    # the other processes on the GPU and a stale cuDNN stay open beside it
    assert found["DRV104"]["verdict"] != "confirmed"
    assert "CUD104" in found


def test_darknet_wording_names_its_cfg_knobs(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    cause = causes(cli, log_file(tmp_path, DARKNET))["SYS230"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "subdivisions=" in text and "batch=" in text
    assert "--batch-size" not in text  # torch's knob, not darknet's


def test_nvml_assert_in_torch_oom_report_is_an_oom_on_a_mig_slice(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = causes(cli, log_file(tmp_path, NVML_R))["SYS230"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "CUDA_VISIBLE_DEVICES" in text and "MIG" in text
    assert "reboot" not in text


def test_nvml_init_assert_adds_the_driver_library_mismatch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = causes(cli, log_file(tmp_path, NVML_INIT))["SYS230"]
    assert cause["verdict"] == "confirmed"
    assert "NVML could not start" in cause["findings"][0]["message"]
    assert "reboot after a driver update" in fix_text(cause)


def test_an_nvml_assert_elsewhere_is_not_the_allocator(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at foo.cpp:1")
    result = cli("triage", str(log), "--json", "--no-probe")
    matched = {m["id"] for m in result.json()["data"]["matches"]}
    assert "torch-oom-report-nvml-assert" not in matched


@pytest.mark.parametrize("line", [TF_CONV, TF_BLAS])
def test_tensorflow_library_calls_point_at_memory_growth(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS182"]
    assert cause["verdict"] == "confirmed"
    assert "TensorFlow" in cause["findings"][0]["message"]
    text = fix_text(cause)
    # TensorFlow's switch first, its in-code form beside it; JAX's only after them
    assert text.index("TF_FORCE_GPU_ALLOW_GROWTH=true") < text.index("set_memory_growth")
    assert text.index("set_memory_growth") < text.index("XLA_PYTHON_CLIENT_PREALLOCATE")


def test_xla_line_keeps_jax_knobs(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
        "to allocate 7406166528 bytes."
    )
    cause = causes(cli, log_file(tmp_path, line))["SYS182"]
    text = fix_text(cause)
    assert text.index("XLA_PYTHON_CLIENT_PREALLOCATE=false") < text.index("MEM_FRACTION")
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in text and "set_memory_growth" not in text


def test_sigkill_on_wsl_names_the_vm_memory_setting_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A bare `Killed` under WSL 2 (GPTQ-for-LLaMa#160: .wslconfig's swap fixed it): the VM's
    memory= / swap= first when the node's kernel is WSL 2's, an alternative otherwise."""
    log = log_file(tmp_path, "Loading model ...", "Killed")
    plain = fix_text(causes(cli, log)["SYS190"])
    assert ".wslconfig" in plain
    assert plain.index("num_workers") < plain.index(".wslconfig")
    dump = tmp_path / "uname.txt"
    dump.write_text(
        "$ uname -a\nLinux pc 5.15.153.1-microsoft-standard-WSL2 #1 SMP Fri Mar 29 23:14:13 UTC "
        "2024 x86_64 x86_64 x86_64 GNU/Linux\n"
    )
    cause = causes(cli, log, "--from", str(dump))["SYS190"]
    assert "WSL 2" in cause["findings"][0]["fix"]["summary"]
    texts = [a["text"] for a in cause["findings"][0]["fix"]["actions"]]
    wsl = next(i for i, t in enumerate(texts) if ".wslconfig" in t)
    workers = next(i for i, t in enumerate(texts) if "num_workers" in t)
    assert wsl < workers


@pytest.mark.parametrize(
    ("line", "knob", "not_knob"),
    [
        (
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 24289.03 MiB on device 0: "
            "cudaMalloc failed: out of memory",
            "-ngl",
            "PYTORCH_CUDA_ALLOC_CONF",
        ),
        (
            "Error: llama runner process has terminated: CUDA error: out of memory",
            "num_ctx",
            "PYTORCH_CUDA_ALLOC_CONF",
        ),
        ("RuntimeError: CUDA failed with error out of memory", "int8_float16", "-ngl"),
        (
            "CUDA failure 2: out of memory ; GPU=0 ; hostname=x ; file=/onnxruntime_src/"
            "onnxruntime/core/providers/cuda/cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)"
            "&p, size);",
            "kSameAsRequested",
            "-ngl",
        ),
        (
            "Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, "
            "6.000000GB memory has been allocated and available memory is only 0.000000B.",
            "decrease the batch size",
            "-ngl",
        ),
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 23.69 GiB of which 1.2 GiB is free.",
            "smaller batch size",
            "-ngl",
        ),
    ],
)
def test_gpu_runtime_oom_names_that_runtimes_knobs(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, knob: str, not_knob: str
) -> None:
    """The out-of-memory fix in the words of the runtime that printed the line: llama.cpp's
    layers and context, CTranslate2's compute type, ONNX Runtime's arena, Paddle's batch."""
    found = causes(cli, log_file(tmp_path, line))
    cause = found["DRV150"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert knob in text and not_knob not in text
    assert "nvidia-smi" in text
    assert found.get("DRV104", {}).get("verdict") != "confirmed"
