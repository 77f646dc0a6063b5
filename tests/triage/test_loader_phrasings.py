"""The loader / CUDA-library family's wordings, from the libraries' own sources: the same
condition (a shared library the loader or a runtime could not open, a libstdc++ or glibc
without a symbol version, a CUDA library of another release) as glibc, Python's ctypes, torch,
TensorFlow, JAX, ONNX Runtime, CuPy, Numba, PaddlePaddle, TensorRT, cuDNN, CTranslate2,
llama-cpp-python and cuda-python print it. Each row is (line, where the wording comes from,
the cause code some match must name, whether the line alone confirms it). Round 20's
battery: on main 9 of 48 rows matched nothing (torch's _preload_cuda_deps ValueError x3,
CuPy's short form, cuDNN's 'Please make sure ... is in your library path!', cuda-python's
libfabric's 'Failed to dlopen libcudart.so', cpm_kernels' 'Library cublasLt is not
initialized' x2) and 1 did not name SYS150 (cuDNN's and XLA's
'Cannot load symbol cublasLt...').
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from envcheck.cli import main

GLIBC = "bminor/glibc elf/dl-load.c, elf/dl-catch.c ('error while loading shared libraries', 'cannot open shared object file')"
CTYPES = "python/cpython Lib/ctypes/__init__.py (CDLL: OSError from dlerror())"
TORCH_PRELOAD = "pytorch/pytorch torch/__init__.py (_preload_cuda_deps: raise ValueError(f'{lib_name} not found in the system path {sys.path}'), lib_name a glob such as 'libcublas.so.*[0-9]')"
CUPY = "cupy/cupy cupy_backends/cuda/_softlink.pyx (f'CuPy failed to load {libname}: {type(e).__name__}: {e}')"
CUDNN8 = "cuDNN 8 libcudnn.so.8 ('Could not load library %s. Error: %s', 'Please make sure %s is in your library path!') ; https://github.com/OpenTalker/SadTalker/issues/323"
CUDA_PYTHON = "NVIDIA/cuda-python cuda/bindings/_bindings (RuntimeError('Failed to dlopen libcuda.so.1')) ; ofiwg/libfabric fabtests ('Failed to dlopen libcudart.so')"
ORT = "microsoft/onnxruntime onnxruntime/core/session/provider_bridge_ort.cc ('Failed to load library %s with error: %s'; Windows: 'LoadLibrary failed with error %d \"%s\" when trying to load \"%s\"')"
TF = "tensorflow/tensorflow stream_executor/platform/default/dso_loader.cc ('Could not load dynamic library '%s'; dlerror: %s') and core/common_runtime/gpu/gpu_device.cc ('Cannot dlopen some GPU libraries.')"
JAX = "jax-ml/jax jax_plugins/cuda/__init__.py ('Unable to load {name}. Is it installed?'), jaxlib/cuda/versions_helpers.cc, jax/_src/xla_bridge.py ('CUDA backend failed to initialize: {err}')"
NUMBA = "numba/numba numba/cuda/cudadrv/nvvm.py ('libNVVM cannot be found. Do `conda install cudatoolkit`:'), numba/cuda/cudadrv/driver.py ('CUDA driver library cannot be found.')"
PADDLE = "PaddlePaddle/Paddle paddle/phi/backends/dynload/dynamic_loader.cc ('The third-party dynamic library (%s) that Paddle depends on is not configured correctly. (error code is %s)') and dynload/cudnn.cc ('Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.')"
TRT = "NVIDIA/TensorRT libLoader ('Error Code 6: Internal Error (Unable to load library: %s: %s)')"
CT2 = "OpenNMT/CTranslate2 src/cuda/utils.cc ('Library %s is not found or cannot be loaded'), its cuDNN 9 shim ('Unable to load any of {...}'); cuDNN 8's loader ('Invalid handle. Cannot load symbol %s')"
LLAMA_CPP = "abetlen/llama-cpp-python llama_cpp/_ctypes_extensions.py (RuntimeError(f\"Failed to load shared library '{lib_path}': {e}\"))"
NVRTC = "NVRTC libnvrtc.so ('nvrtc: error: failed to open %s.\\n  Make sure that %s is installed correctly.')"
TRITON = "triton-lang/triton third_party/nvidia/backend/driver.py ('libcuda.so cannot found!')"
CPM = 'OpenBMB/cpm_kernels cpm_kernels/library/base.py (raise RuntimeError("Library %s is not initialized" % self.__name)) ; https://github.com/zai-org/ChatGLM-6B/issues/465'
MUSL = "musl ldso/dynlink.c ('Error loading shared library %s: %m (needed by %s)')"
VERSION = 'bminor/glibc elf/dl-version.c (match_symbol: "version `%s\' not found (required by %s)")'
CUDNN_FRAMEWORKS = "openxla/xla xla/stream_executor/cuda/cuda_dnn.cc ('Loaded runtime CuDNN library: %s but source was compiled with: %s') ; pytorch/pytorch torch/backends/cudnn/__init__.py ('cuDNN version incompatibility: PyTorch was compiled against {} but found runtime version {}')"

# (line, source, expected code, confirmed by the line alone)
ROWS: list[tuple[str, str, str, bool]] = [
    (
        "python3: error while loading shared libraries: libpython3.10.so.1.0: cannot open shared object file: No such file or directory",
        GLIBC,
        "SYS150",
        True,
    ),
    (
        "OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
        CTYPES,
        "SYS150",
        True,
    ),
    (
        "OSError: /usr/local/cuda/lib64/libcudart.so: cannot open shared object file: No such file or directory",
        CTYPES,
        "SYS150",
        True,
    ),
    (
        "OSError: libcudnn_ops.so.9: cannot open shared object file: No such file or directory",
        CTYPES,
        "SYS150",
        True,
    ),
    (
        "OSError: cannot load library 'libcudnn.so.8': libcudnn.so.8: cannot open shared object file: No such file or directory",
        "cffi (dlopen: \"cannot load library '%s': %s\")",
        "SYS150",
        True,
    ),
    (
        "libcudart.so.12 => not found",
        "bminor/glibc elf/rtld.c (trace mode: '%s => not found')",
        "SYS150",
        True,
    ),
    (
        "ValueError: libcublas.so.*[0-9] not found in the system path ['/home/u', '/usr/lib/python310.zip', '/home/u/venv/lib/python3.10/site-packages']",
        TORCH_PRELOAD,
        "SYS150",
        True,
    ),
    (
        "ValueError: libnvrtc.so.*[0-9].*[0-9] not found in the system path ['/app', '/usr/local/lib/python3.11/site-packages']",
        TORCH_PRELOAD,
        "SYS150",
        True,
    ),
    (
        "E   ValueError: libcublasLt.so.*[0-9] not found in the system path ['/app/tests', '/usr/local/lib/python3.10/site-packages']",
        TORCH_PRELOAD,
        "SYS150",
        True,
    ),
    (
        "RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file: No such file or directory",
        CUPY,
        "SYS150",
        True,
    ),
    ("RuntimeError: CuPy failed to load libcublas.so.12", CUPY, "SYS150", False),
    (
        "nvrtc: error: failed to open libnvrtc-builtins.so.12.1.\n  Make sure that libnvrtc-builtins.so.12.1 is installed correctly.",
        NVRTC,
        "SYS150",
        True,
    ),
    (
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory",
        CUDNN8,
        "CUD154",
        True,
    ),
    ("Please make sure libcudnn_cnn_infer.so.8 is in your library path!", CUDNN8, "CUD154", True),
    (
        "Please make sure libcudnn_ops_infer.so.8 is in your library path!\nAborted (core dumped)",
        CUDNN8,
        "CUD154",
        True,
    ),
    (
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory",
        CUDNN8,
        "CUD154",
        True,
    ),
    (
        "Could not load library libcudnn_ops_infer.so.8. Error: libcublasLt.so.11: cannot open shared object file: No such file or directory",
        CUDNN8,
        "CUD154",
        True,
    ),
    (
        "Could not load library libcublasLt.so.12. Error: libcublasLt.so.12: cannot open shared object file: No such file or directory",
        CUDNN8,
        "SYS150",
        True,
    ),
    ("Invalid handle. Cannot load symbol cublasLtCreate", CT2, "SYS150", False),
    (
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}",
        CT2,
        "CUD154",
        True,
    ),
    ("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded", CT2, "SYS150", True),
    ("RuntimeError: Failed to dlopen libcuda.so.1", CUDA_PYTHON, "DRV210", True),
    ("Failed to dlopen libcudart.so", CUDA_PYTHON, "SYS150", False),
    (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1548 TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file or directory",
        ORT,
        "SYS150",
        True,
    ),
    (
        '[E:onnxruntime:Default, provider_bridge_ort.cc:1862 onnxruntime::TryGetProviderInfo_CUDA] D:\\a\\_work\\1\\s\\onnxruntime\\core\\session\\provider_bridge_ort.cc:1539 onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" when trying to load "C:\\Users\\u\\venv\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"',
        ORT,
        "CUD190",
        True,
    ),
    (
        "2023-01-01 W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
        TF,
        "SYS150",
        True,
    ),
    (
        "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.",
        TF,
        "CUD190",
        True,
    ),
    (
        "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/nvidia/lib:/usr/local/nvidia/lib64",
        TF,
        "SYS150",
        True,
    ),
    ("RuntimeError: Unable to load cuDNN. Is it installed?", JAX, "CUD104", True),
    (
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty(MAJOR_VERSION, &major) failed: The cuSPARSE library was not found.",
        JAX,
        "CUD104",
        True,
    ),
    (
        "CUDA backend failed to initialize: Unable to load CUDA. Is it installed? (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        JAX,
        "CUD190",
        True,
    ),
    (
        "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:\nlibrary nvvm not found",
        NUMBA,
        "CUD190",
        True,
    ),
    (
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: \nCUDA driver library cannot be found.",
        NUMBA,
        "DRV103",
        True,
    ),
    (
        "The third-party dynamic library (libcudnn.so) that Paddle depends on is not configured correctly. (error code is libcudnn.so: cannot open shared object file: No such file or directory)",
        PADDLE,
        "CUD190",
        True,
    ),
    (
        "PreconditionNotMetError: Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion.",
        PADDLE,
        "CUD154",
        False,
    ),
    (
        "[TRT] [E] 6: [libLoader.cpp::Impl::293] Error Code 6: Internal Error (Unable to load library: libnvinfer_builder_resource.so.8.6.1: libnvinfer_builder_resource.so.8.6.1: cannot open shared object file: No such file or directory)",
        TRT,
        "SYS150",
        True,
    ),
    (
        "ImportError: libnvinfer.so.10: cannot open shared object file: No such file or directory",
        CTYPES,
        "SYS150",
        True,
    ),
    (
        "RuntimeError: Failed to load shared library '/home/u/venv/lib/python3.11/site-packages/llama_cpp/lib/libllama.so': libcudart.so.12: cannot open shared object file: No such file or directory",
        LLAMA_CPP,
        "SYS150",
        True,
    ),
    ("AssertionError: libcuda.so cannot found!", TRITON, "SYS164", True),
    ("RuntimeError: Library cublasLt is not initialized", CPM, "SYS150", True),
    ("!!! Exception during processing!!! Library cudart is not initialized", CPM, "SYS150", True),
    (
        "Error loading shared library libstdc++.so.6: No such file or directory (needed by /usr/local/lib/python3.11/site-packages/torch/lib/libtorch.so)",
        MUSL,
        "SYS150",
        True,
    ),
    (
        "OSError: /opt/conda/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1)",
        VERSION,
        "SYS151",
        True,
    ),
    (
        "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version GLIBCXX_3.4.32' not found (required by /x/site-packages/pkg/_C.so)",
        VERSION,
        "SYS151",
        True,
    ),
    (
        "/lib64/libc.so.6: version `GLIBC_2.28' not found (required by /usr/local/lib/python3.9/site-packages/vllm/_C.abi3.so)",
        VERSION,
        "SYS132",
        True,
    ),
    (
        "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version.",
        CUDNN_FRAMEWORKS,
        "CUD104",
        True,
    ),
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime version (8, 5, 0). PyTorch already comes bundled with cuDNN.",
        CUDNN_FRAMEWORKS,
        "CUD104",
        True,
    ),
]


def _triage(tmp_path: Path, log: str) -> dict[str, Any]:
    path = tmp_path / "job.log"
    path.write_text(log + "\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["triage", str(path), "--json"])
    data: dict[str, Any] = json.loads(out.getvalue())["data"]
    return data


@pytest.mark.parametrize(("line", "source", "code", "confirmed"), ROWS)
def test_phrasing_names_its_cause(
    tmp_path: Path, line: str, source: str, code: str, confirmed: bool
) -> None:
    data = _triage(tmp_path, line)
    causes = [c for m in data["matches"] if not m["noise"] for c in m["causes"]]
    named = [c for c in causes if c["code"] == code]
    assert named, (source, [(m["id"], [c["code"] for c in m["causes"]]) for m in data["matches"]])
    if confirmed:
        assert any(c["verdict"] == "confirmed" for c in named), (source, named)


def test_rows_cite_their_source() -> None:
    assert all(source.strip() for _, source, _, _ in ROWS)
    assert len({line for line, _, _, _ in ROWS}) == len(ROWS)


def test_cudnn_names_the_cuda_library_it_could_not_open(tmp_path: Path) -> None:
    """cuDNN 8 found, the cuBLASLt it opens not: the fix is cuBLASLt's (the dlerror's SONAME),
    not cuDNN's."""
    data = _triage(
        tmp_path,
        "Could not load library libcudnn_ops_infer.so.8. Error: libcublasLt.so.11: cannot open "
        "shared object file: No such file or directory",
    )
    causes = [c for m in data["matches"] for c in m["causes"] if c["code"] == "CUD154"]
    fix = causes[0]["fix"]
    text = fix["summary"] + " ".join(fix["commands"])
    assert "nvidia-cublas-cu11" in text
    assert "libcublasLt.so.11 it loads is not" in causes[0]["findings"][0]["message"]


def test_torch_preload_fix_reinstalls_torch_first(tmp_path: Path) -> None:
    data = _triage(
        tmp_path,
        "ValueError: libcublas.so.*[0-9] not found in the system path ['/app', "
        "'/usr/lib/python3/dist-packages']",
    )
    (cause,) = [c for m in data["matches"] for c in m["causes"] if c["code"] == "SYS150"]
    assert cause["fix"]["summary"].index("torch torchvision torchaudio") < cause["fix"][
        "summary"
    ].index("nvidia-cublas-cu")
    assert "!=2.0.1" in cause["fix"]["summary"]


def test_torch_variant_is_one_the_stated_driver_runs(tmp_path: Path) -> None:
    """nvidia-smi's CUDA 12.2 on the log: the torch build offered is a cu12x at most 12.2,
    never the newest CUDA 13 one."""
    data = _triage(
        tmp_path,
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    )
    (cause,) = [c for m in data["matches"] for c in m["causes"] if c["code"] == "SYS150"]
    urls = [u for u in cause["fix"]["summary"].split() if "download.pytorch.org/whl/cu" in u]
    assert urls
    for url in urls:
        variant = url.rstrip("),.").rsplit("/", 1)[-1]
        assert variant.startswith("cu12") and int(variant[2:]) <= 122, variant


PYG = """Traceback (most recent call last):
  File "/home/u/venv/lib/python3.10/site-packages/torch_scatter/__init__.py", line 16, in <module>
    torch.ops.load_library(spec.origin)
  File "/home/u/venv/lib/python3.10/site-packages/torch/_ops.py", line 643, in load_library
    ctypes.CDLL(path)
OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory"""


def test_ops_library_loaded_through_torch_names_its_package(tmp_path: Path) -> None:
    """torch.ops.load_library is torch's helper: the package above it (torch_scatter) is the
    build for another CUDA, and its own wheel index leads the fix, not torch's reinstall."""
    data = _triage(tmp_path, PYG)
    (cause,) = [c for m in data["matches"] for c in m["causes"] if c["code"] == "SYS150"]
    summary = cause["fix"]["summary"]
    assert "torch-scatter -f https://data.pyg.org/whl/torch-" in summary
    assert "torch's own CUDA libraries are incomplete" not in summary
