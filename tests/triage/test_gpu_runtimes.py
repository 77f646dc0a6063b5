"""GPU runtime and inference libraries in their own words (matrices/signatures/runtimes.toml):
a build without CUDA (PKG180), a CUDA part that could not load its libraries (CUD190), no GPU
visible (DRV103), CUDA's error through ggml (DRV150), XLA's kernel/DSO mismatch (GPU102). Each
line as the library prints it (its source file is in the signature's `source`); the fix is the
library's own install command from matrices/packages/gpu_builds.toml, for the node's CUDA major
where the node states it; lines of healthy runs raise nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.matrix_validate import load
from envcheck.triage.scan import Scanner
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file
from tests.triage.mined_lines import matched

SCANNER = Scanner(load([]).signatures, "re")


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(text)
    return path


# (line as printed, signature, confirmed cause, a fix substring, library named in the message)
LINES = [
    (
        "/usr/lib/python3.10/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py:69: "
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider "
        "names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        "onnxruntime-cpu-package",
        "PKG180",
        "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu",
        "ONNX Runtime",
    ),
    (
        "WARNING:2025-06-15 17:04:55,449:jax._src.xla_bridge:791: An NVIDIA GPU may be present on "
        "this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        "jax-cpu-jaxlib",
        "PKG180",
        'pip install -U "jax[cuda12]"',
        "JAX",
    ),
    (
        "2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, falling "
        "back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "jax-cpu-jaxlib",
        "PKG180",
        "jax[cuda12]",
        "JAX",
    ),
    (
        "warning: not compiled with GPU offload support, --gpu-layers option will be ignored",
        "llamacpp-built-without-gpu",
        "PKG180",
        "-DGGML_CUDA=ON",
        "llama.cpp",
    ),
    (
        "ValueError: This CTranslate2 package was not compiled with CUDA support",
        "ctranslate2-cpu-build",
        "PKG180",
        "-DWITH_CUDA=ON",
        "CTranslate2",
    ),
    (
        "E0714 16:34:40.972663 31948 pybind.cc:1277] Cannot use GPU because you have installed CPU "
        "version PaddlePaddle.",
        "paddle-cpu-package",
        "PKG180",
        "pip install paddlepaddle-gpu",
        "PaddlePaddle",
    ),
    (
        "UserWarning: The installed version of bitsandbytes was compiled without GPU support. "
        "8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
        "bitsandbytes-cpu-library",
        "PKG180",
        "pip install -U bitsandbytes",
        "bitsandbytes",
    ),
    (
        "2023-08-23 13:49:27,776 - WARNING - qlinear_old.py:16 - CUDA extension not installed.",
        "autogptq-cuda-extension-missing",
        "PKG180",
        "pip install auto-gptq --no-build-isolation",
        "AutoGPTQ",
    ),
    (
        "ImportError: CuPy is not correctly installed.",
        "cupy-import-failed",
        "PKG180",
        "pip install cupy-cuda12x",
        "CuPy",
    ),
    (
        "2023-07-31 14:22:06.483132863 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:640 "
        "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference "
        "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements "
        "to ensure all dependencies are met.",
        "onnxruntime-cuda-provider-not-created",
        "CUD190",
        "pip install onnxruntime-gpu",
        "ONNX Runtime",
    ),
    (
        "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1956] Cannot dlopen some GPU "
        "libraries. Please make sure the missing libraries mentioned above are installed properly "
        "if you would like to use GPU.",
        "tensorflow-gpu-libraries-not-loaded",
        "CUD190",
        'pip install "tensorflow[and-cuda]"',
        "TensorFlow",
    ),
    (
        "WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load CUDA. "
        "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "jax-cuda-library-not-loaded",
        "CUD190",
        'pip install -U "jax[cuda12]"',
        "JAX",
    ),
    (
        "W0623 12:29:30.035391 62732 dynamic_loader.cc:305] The third-party dynamic library "
        "(libcudnn.so) that Paddle depends on is not configured correctly. (error code is "
        "/usr/local/cuda/lib64/libcudnn.so: cannot open shared object file: No such file or "
        "directory)",
        "paddle-cuda-library-not-loaded",
        "CUD190",
        "conda install -c conda-forge cudnn",
        "PaddlePaddle",
    ),
]


@pytest.mark.parametrize(("line", "signature", "code", "fix", "library"), LINES)
def test_each_library_wording_confirms_the_family_cause_with_its_install_command(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    line: str,
    signature: str,
    code: str,
    fix: str,
    library: str,
) -> None:
    assert [s.id for s in matched(SCANNER, line)] == [signature]
    cause = _causes(cli, log_file(tmp_path, line + "\n"))[code]
    assert cause["verdict"] == "confirmed"
    (finding,) = cause["findings"]
    assert finding["message"].startswith(library)
    assert fix in _fix(cause)


def test_the_cuda_major_of_the_install_follows_the_node(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """CuPy's wheel is per CUDA major: a torch built with CUDA 11.8 asks for cupy-cuda11x."""
    log = log_file(tmp_path, "ImportError: CuPy is not correctly installed.\n")
    spec = _spec(tmp_path, '[packages]\ntorch = "2.3.1+cu118"\n')
    pkg180 = _causes(cli, log, "--spec", str(spec))["PKG180"]
    assert "pip install cupy-cuda11x" in _fix(pkg180)
    assert "pip install cupy-cuda12x" not in _fix(pkg180)


def test_jax_on_a_cuda_13_driver_without_torch_gets_the_cuda13_extra(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not "
        "installed. Falling back to cpu.\n",
    )
    spec = _spec(tmp_path, '[gpu]\ndriver = "580.65.06"\ncuda = "13.0"\n')
    pkg180 = _causes(cli, log, "--spec", str(spec))["PKG180"]
    assert 'pip install -U "jax[cuda13]"' in _fix(pkg180)


def test_a_library_that_falls_back_to_the_cpu_is_a_warning_one_that_fails_an_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    warned = _causes(
        cli,
        log_file(
            tmp_path,
            "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not "
            "installed. Falling back to cpu.\n",
        ),
    )["PKG180"]
    assert warned["findings"][0]["severity"] == "warning"
    failed = _causes(
        cli,
        log_file(
            tmp_path, "ValueError: This CTranslate2 package was not compiled with CUDA support\n"
        ),
    )["PKG180"]
    assert failed["findings"][0]["severity"] == "error"


def test_onnxruntime_states_the_majors_it_needs_and_the_node_has_another(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """ONNX Runtime 1.19's line names CUDA 12 and cuDNN 9; on a CUDA 11.8 torch the message says
    the node's CUDA is another, and the CUDA 11 release is among the fixes."""
    log = log_file(
        tmp_path,
        "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 onnxruntime::python::"
        "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Require cuDNN "
        "9.* and CUDA 12.*, and the latest MSVC runtime. Please install all dependencies as "
        "mentioned in the GPU requirements page, make sure they're in the PATH, and that your "
        "GPU is supported.\n",
    )
    spec = _spec(tmp_path, '[packages]\ntorch = "2.0.1+cu118"\n')
    cud190 = _causes(cli, log, "--spec", str(spec))["CUD190"]
    message = cud190["findings"][0]["message"]
    assert "the build needs CUDA 12 and cuDNN 9" in message
    assert "the node's CUDA is 11" in message
    assert 'pip install "onnxruntime-gpu<1.19"' in _fix(cud190)


def test_ggml_names_nvidias_error_and_the_table_gives_its_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected\n"
        "warning: no usable GPU found, --gpu-layers option will be ignored\n",
    )
    drv150 = _causes(cli, log)["DRV150"]
    assert drv150["verdict"] == "confirmed"
    assert "cudaErrorNoDevice" in drv150["findings"][0]["message"]
    assert "CUDA_VISIBLE_DEVICES" in _fix(drv150)


def test_jax_with_no_visible_gpu_names_the_container_and_the_driver(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU "
        "devices. (you may need to uninstall the failing plugin package, or set "
        "JAX_PLATFORMS=cpu to skip this backend.)\n",
    )
    drv103 = _causes(cli, log)["DRV103"]
    assert drv103["verdict"] == "confirmed"
    assert drv103["findings"][0]["message"].startswith("the process saw no usable NVIDIA driver")
    assert "--gpus all" in _fix(drv103)


def test_xla_kernel_dso_mismatch_is_the_driver_library_mismatch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "2025-03-13 13:26:48.680427: E external/xla/xla/stream_executor/cuda/"
        "cuda_diagnostics.cc:262] kernel version 535.183.6 does not match DSO version 560.28.3 "
        "-- cannot find working devices in this configuration\n",
    )
    assert _causes(cli, log)["GPU102"]["verdict"] == "confirmed"


@pytest.mark.parametrize(
    "line",
    [
        "ggml_cuda_init: found 1 CUDA devices:",
        "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes",
        "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: {}",
        "[CudaDevice(id=0), CudaDevice(id=1)]",
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1928] Created device "
        "/job:localhost/replica:0/task:0/device:GPU:0 with 22279 MB memory",
        "llm_load_tensors: offloaded 33/33 layers to GPU",
        "kernel version seems to match DSO: 535.104.5",
        "bin /usr/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda121.so",
    ],
)
def test_lines_of_healthy_runs_raise_nothing(line: str) -> None:
    assert [s.id for s in matched(SCANNER, line)] == []


@pytest.mark.parametrize(
    ("line", "said", "fix"),
    [
        (
            "[05/02/2022-15:17:45] [TRT] [E] 6: The engine plan file is not compatible with this "
            "version of TensorRT, expecting library version 8.2.3 got 8.2.1, please rebuild.",
            "built by TensorRT 8.2.1 and TensorRT 8.2.3 runs it",
            "pip install tensorrt==8.2.1",
        ),
        (
            "[TensorRT] ERROR: INVALID_CONFIG: The engine plan file is generated on an incompatible "
            "device, expecting compute 6.1 got compute 7.5, please rebuild.",
            "compute capability 7.5 and this GPU is 6.1",
            "trtexec --onnx=model.onnx --saveEngine=model.engine",
        ),
        (
            "[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization "
            "(Serialization assertion stdVersionRead == serializationVersion failed.Version tag "
            "does not match. Note: Current Version: 232, Serialized Engine Version: 213)",
            "built by TensorRT 213 and TensorRT 232 runs it",
            "--saveEngine",
        ),
    ],
)
def test_a_tensorrt_engine_of_another_build_is_rebuilt_with_the_installed_tensorrt(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, said: str, fix: str
) -> None:
    cud191 = _causes(cli, log_file(tmp_path, line + "\n"))["CUD191"]
    assert cud191["verdict"] == "confirmed"
    assert said in cud191["findings"][0]["message"]
    assert fix in _fix(cud191)


def test_tensorrt_states_cudas_error_by_number(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "[TRT] [W] CUDA initialization failure with error: 35. Please check your CUDA "
        "installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html\n",
    )
    drv150 = _causes(cli, log)["DRV150"]
    assert "cudaErrorInsufficientDriver" in drv150["findings"][0]["message"]


def test_jax_loading_an_older_cuda_library_names_both_versions_and_the_extra(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "CUDA backend failed to initialize: Found cuSPARSE version 12103, but JAX was built "
        "against version 12200, which is newer. The copy of cuSPARSE that is installed must be "
        "at least as new as the version against which JAX was built. (Set "
        "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
    )
    cud190 = _causes(cli, log)["CUD190"]
    assert cud190["verdict"] == "confirmed"
    assert (
        "it loaded cuSPARSE 12103, older than the 12200 JAX was built against"
        in (cud190["findings"][0]["message"])
    )
    assert 'pip install -U "jax[cuda12]"' in _fix(cud190) and "unset LD_LIBRARY_PATH" in _fix(
        cud190
    )


@pytest.mark.parametrize(
    ("line", "code", "fix"),
    [
        (
            "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library "
            "cannot be found.",
            "DRV103",
            "--gpus all",
        ),
        (
            "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install "
            "cudatoolkit`:",
            "CUD190",
            'conda install -c conda-forge cuda-nvcc cuda-nvrtc "cuda-version>=12"',
        ),
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Couldn't get ptxas version string: "
            "INTERNAL: Couldn't invoke ptxas --version",
            "CUD190",
            'pip install -U "jax[cuda12]"',
        ),
    ],
)
def test_numba_and_xla_name_the_toolkit_piece_they_lack(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, fix: str
) -> None:
    cause = _causes(cli, log_file(tmp_path, line + "\n"))[code]
    assert cause["verdict"] == "confirmed"
    assert fix in _fix(cause)


@pytest.mark.parametrize(
    "line",
    [
        "2023-10-10 20:16:12.417514: I tensorflow/compiler/xla/stream_executor/cuda/"
        "cuda_driver.cc:1960] Could not find cuda drivers on your machine, GPU will not be used.",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime "
        "executable: run time error: custom call 'xla.gpu.custom_call' failed: "
        "jaxlib/gpu/solver_kernels.cc:45: operation gpusolverDnCreate(&handle) failed: cuSolver "
        "internal error.",
        "ValueError: Requested float16 compute type, but the target device or backend do not "
        "support efficient float16 computation.",
    ],
)
def test_lines_printed_on_cpu_only_runs_too_name_causes_without_an_error(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    """TensorFlow says it found no driver on every CPU-only machine, and CTranslate2's compute
    type refusal is as often a CPU run: the causes are named and left to the node's facts."""
    causes = _causes(cli, log_file(tmp_path, line + "\n"))
    assert causes and all(c["verdict"] != "confirmed" for c in causes.values())


def test_ollamas_cuinit_failure_is_looked_up_by_its_number(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        'time=2024-05-01T10:00:00.000Z level=WARN source=gpu.go:228 msg="unknown error '
        "initializing cuda driver library /usr/lib/x86_64-linux-gnu/libcuda.so.535.161.08: cuda "
        "driver library init failure: 999. see https://github.com/ollama/ollama/blob/main/docs/"
        'troubleshooting.md for more information"\n',
    )
    drv150 = _causes(cli, log)["DRV150"]
    assert "999" in drv150["findings"][0]["message"]
    assert "nvidia_uvm" in _fix(drv150)
