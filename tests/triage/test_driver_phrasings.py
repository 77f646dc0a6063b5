"""The driver family's conditions as each library and release words them.

Each row is a line (or the few lines a library prints together) copied from the source that
prints it or from a public thread that quotes it, the URL of that source, and the cause codes
that name the condition (any one counts). The battery asserts that triage names one of them
and does not rule it out: a wording that matches nothing, or only another cause, fails here.
The conditions are the ones the driver family decides: the NVML/kernel-module version mismatch
(GPU102/DRV170), NVML unable to reach the driver (DRV151), CUDA's unknown error 999 and the
other error codes (DRV150), forward compatibility (GPU103), no device or no driver visible
(DRV103), a driver too old for the runtime (DRV101/DRV220), the module build and load failures
(DRV222-DRV228) and Xid (DRV200)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

PYNVML = "https://github.com/gpuopenanalytics/pynvml/blob/master/pynvml/nvml.py"
NVSMI = "https://github.com/NVIDIA/nvidia-container-toolkit/issues/154"
LIBNVC = "https://github.com/NVIDIA/libnvidia-container/blob/main/src/nvc.c"
TORCH = "https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp"
NUMBA = "https://github.com/numba/numba/blob/main/numba/cuda/cudadrv/driver.py"
XLA = "https://github.com/openxla/xla/blob/main/xla/stream_executor/cuda/cuda_diagnostics.cc"
XLA_DRV = "https://github.com/openxla/xla/blob/main/xla/stream_executor/cuda/cuda_driver.cc"
TF_STUB = "https://github.com/tensorflow/tensorflow/blob/master/third_party/xla/xla/tsl/cuda/cudart_stub.cc"
JAX = "https://github.com/jax-ml/jax/blob/main/jax/_src/xla_bridge.py"
CUPY = "https://github.com/cupy/cupy/blob/main/cupy_backends/cuda/api/runtime.pyx"
CUPY_DRV = "https://github.com/cupy/cupy/blob/main/cupy_backends/cuda/api/driver.pyx"
ORT = "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/providers/cuda/cuda_call.cc"
GGML = "https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/ggml-cuda.cu"
OLLAMA = "https://github.com/ollama/ollama/blob/main/discover/gpu_info_nvcuda.c"
TRT = "https://github.com/NVIDIA/TensorRT/issues/3581"
NCCL = "https://github.com/NVIDIA/nccl/blob/master/src/include/checks.h"
SAMPLES = "https://github.com/NVIDIA/cuda-samples/blob/master/Samples/1_Utilities/deviceQuery/deviceQuery.cpp"
KMOD = "https://github.com/kmod-project/kmod/blob/master/tools/modprobe.c"
DKMS = "https://github.com/dell/dkms/blob/master/dkms.in"
INSTALLER = "https://github.com/NVIDIA/nvidia-installer/blob/main/kernel.c"
NVRM = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv.c"
XID = "https://docs.nvidia.com/deploy/xid-errors/index.html"
DOCKER = "https://github.com/NVIDIA/nvidia-docker/issues/1034"
PLUGIN = "https://github.com/NVIDIA/k8s-device-plugin/blob/main/cmd/nvidia-device-plugin/main.go"
TRITON = "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/driver.py"

MISMATCH = ("GPU102", "DRV170")
NVML = ("DRV151",)
UNKNOWN = ("DRV150",)
NO_DEVICE = ("DRV103", "DRV150")
TOO_OLD = ("DRV101", "DRV220", "DRV150")
COMPAT = ("GPU103", "DRV101", "DRV150")

BATTERY: list[tuple[str, str, tuple[str, ...]]] = [
    # NVML: the user-space library and the loaded kernel module differ
    ("Failed to initialize NVML: Driver/library version mismatch", NVSMI, MISMATCH),
    (
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.54",
        NVSMI,
        MISMATCH,
    ),
    (
        "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
        PYNVML,
        MISMATCH,
    ),
    (
        "nvidia-container-cli: initialization error: nvml error: driver/library version "
        "mismatch: unknown",
        LIBNVC,
        MISMATCH,
    ),
    (
        "NVRM: API mismatch: the client has the version 535.113.01, but\n"
        "NVRM: this kernel module has the version 535.104.05.  Please",
        NVRM,
        MISMATCH,
    ),
    # NVML cannot reach the driver
    ("pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded", PYNVML, NVML),
    ("NVMLError_DriverNotLoaded: Driver Not Loaded", PYNVML, NVML),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", PYNVML, NVML),
    ("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost", PYNVML, ("DRV151", "DRV200")),
    ("pynvml.nvml.NVMLError_NoPermission: Insufficient Permissions", PYNVML, NVML),
    (
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
        LIBNVC,
        NVML,
    ),
    (
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
        "cannot open shared object file: no such file or directory: unknown",
        LIBNVC,
        ("DRV151", "DRV103", "SYS150"),
    ),
    (
        "nvidia-container-cli: initialization error: driver rpc error: timed out: unknown",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/202",
        ("GPU120",),
    ),
    ("Failed to initialize NVML: Unknown Error", NVSMI, NVML),
    ("Failed to initialize NVML: GPU access blocked by the operating system", NVSMI, NVML),
    ("Failed to initialize NVML: Insufficient Permissions", NVSMI, NVML),
    ("Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND", PLUGIN, NVML),
    (
        "thread 'main' panicked at 'Failed to initialize nvml: DriverNotLoaded', "
        "src/environment/mod.rs:37:31",
        "https://github.com/damomine/aleominer/issues/14",
        NVML,
    ),
    (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
        "that the latest NVIDIA driver is installed and running. This can also be happening if "
        "non-NVIDIA GPU is running as primary display, and NVIDIA GPU is in WDDM mode.",
        NVSMI,
        NVML,
    ),
    (
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that "
        "the NVIDIA Display Driver is properly installed and present in your system.",
        NVSMI,
        NVML,
    ),
    ("Unable to determine the device handle for GPU0000:01:00.0: Unknown Error", NVSMI, NVML),
    (
        "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the "
        "system to recover this GPU",
        NVSMI,
        ("DRV151", "DRV200"),
    ),
    # CUDA's unknown error (999), often after suspend/resume
    ("RuntimeError: CUDA error: unknown error", TORCH, UNKNOWN),
    (
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly "
        "set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. "
        "Setting the available devices to be zero.",
        TORCH,
        UNKNOWN,
    ),
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run "
        "some cuda functions before calling NumCudaDevices() that might have already set an "
        "error? Error 999: unknown error",
        TORCH,
        UNKNOWN,
    ),
    (
        "numba.cuda.cudadrv.driver.CudaAPIError: [999] Call to cuInit results in CUDA_ERROR_UNKNOWN",
        NUMBA,
        UNKNOWN,
    ),
    ("failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", XLA_DRV, UNKNOWN),
    ("failed call to cuInit: UNKNOWN ERROR (303)", XLA_DRV, UNKNOWN),
    (
        "CUDA failure 999: unknown error ; GPU=0 ; hostname=node1 ; expr=cudaSetDevice(info_.device_id);",
        ORT,
        UNKNOWN,
    ),
    ("ggml_cuda_init: failed to initialize CUDA: unknown error", GGML, UNKNOWN),
    (
        'level=WARN source=gpu.go:562 msg="unknown error initializing cuda driver library" '
        'library=/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03 error="cuda driver library '
        'init failure: 999"',
        OLLAMA,
        UNKNOWN,
    ),
    (
        'level=WARN source=gpu.go:616 msg="unknown error initializing cuda driver library '
        "/usr/lib/x86_64-linux-gnu/libcuda.so.575.64.03: cuda driver library init failure: "
        '999. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md for more information"',
        OLLAMA,
        UNKNOWN,
    ),
    ("cudaGetDeviceCount returned 999\n-> unknown error", SAMPLES, UNKNOWN),
    # no device visible
    (
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results "
        "in CUDA_ERROR_NO_DEVICE (100)",
        NUMBA,
        NO_DEVICE,
    ),
    (
        "numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE",
        NUMBA,
        NO_DEVICE,
    ),
    (
        "failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
        XLA_DRV,
        NO_DEVICE,
    ),
    (
        "kernel driver does not appear to be running on this host (node1): "
        "/proc/driver/nvidia/version does not exist",
        XLA,
        ("DRV103", "DRV151"),
    ),
    (
        "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU "
        "devices. (you may need to uninstall the failing plugin package, or set "
        "JAX_PLATFORMS=cpu to skip this backend.)",
        JAX,
        ("DRV103",),
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: no supported devices found for platform CUDA",
        JAX,
        ("DRV104", "DRV103", "DRV150"),
    ),
    (
        "CUDA backend failed to initialize: FAILED_PRECONDITION: No visible GPU devices. (Set "
        "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        JAX,
        ("DRV103",),
    ),
    (
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable "
        "device is detected",
        CUPY,
        NO_DEVICE,
    ),
    (
        "CUDA failure 100: no CUDA-capable device is detected ; GPU=32574 ; hostname=node1 ; "
        "file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_execution_provider.cc ; "
        "line=245 ; expr=cudaSetDevice(info_.device_id);",
        ORT,
        NO_DEVICE,
    ),
    (
        "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
        GGML,
        NO_DEVICE,
    ),
    ("cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected", SAMPLES, NO_DEVICE),
    ("RuntimeError: 0 active drivers ([]). There should only be one.", TRITON, ("DRV103",)),
    (
        "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu.",
        TORCH,
        ("DRV103",),
    ),
    ("RuntimeError: No CUDA GPUs are available", TORCH, ("DRV103",)),
    (
        'docker: Error response from daemon: could not select device driver "" with '
        "capabilities: [[gpu]].",
        DOCKER,
        ("DRV103",),
    ),
    (
        "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",
        DOCKER,
        ("DRV103",),
    ),
    # the driver is older than the runtime
    (
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA "
        "driver version is insufficient for CUDA runtime version",
        CUPY,
        TOO_OLD,
    ),
    (
        "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0 ; "
        "hostname=node1 ; expr=cudaSetDevice(info_.device_id);",
        ORT,
        TOO_OLD,
    ),
    (
        "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA "
        "runtime version",
        GGML,
        TOO_OLD,
    ),
    (
        "[TRT] [W] CUDA initialization failure with error: 35. Please check your CUDA "
        "installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
        TRT,
        TOO_OLD,
    ),
    (
        "[TRT] [E] createInferBuilder: Error Code 6: API Usage Error (CUDA initialization "
        "failure with error: 35)",
        TRT,
        TOO_OLD,
    ),
    (
        "NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'",
        NCCL,
        TOO_OLD,
    ),
    (
        "NCCL WARN Cuda failure 35 'CUDA driver version is insufficient for CUDA runtime version'",
        NCCL,
        TOO_OLD,
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please "
        "update your GPU driver by downloading and installing a new version from the URL: "
        "http://www.nvidia.com/Download/index.aspx",
        TORCH,
        ("DRV101",),
    ),
    # forward compatibility and the 803 mismatch
    (
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results "
        "in UNKNOWN_CUDA_ERROR (804)",
        NUMBA,
        COMPAT,
    ),
    (
        "numba.cuda.cudadrv.driver.CudaAPIError: [804] Call to cuInit results in UNKNOWN_CUDA_ERROR",
        NUMBA,
        COMPAT,
    ),
    (
        "failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility "
        "was attempted on non supported HW",
        XLA_DRV,
        COMPAT,
    ),
    (
        "ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non supported HW",
        GGML,
        COMPAT,
    ),
    (
        "failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display "
        "driver / cuda driver combination",
        XLA_DRV,
        MISMATCH,
    ),
    (
        "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system "
        "has unsupported display driver / cuda driver combination",
        CUPY_DRV,
        MISMATCH,
    ),
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run "
        "some cuda functions before calling NumCudaDevices() that might have already set an "
        "error? Error 803: system has unsupported display driver / cuda driver combination",
        TORCH,
        MISMATCH,
    ),
    # the kernel module: build, signature, load
    ("modprobe: ERROR: could not insert 'nvidia': Required key not available", KMOD, ("DRV225",)),
    ("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", KMOD, ("DRV225",)),
    ("modprobe: ERROR: could not insert 'nvidia': Exec format error", KMOD, ("DRV224",)),
    (
        "systemd-modules-load[580]: Failed to insert module 'nvidia_uvm': Exec format error",
        "https://github.com/systemd/systemd/blob/main/src/modules-load/modules-load.c",
        ("DRV224",),
    ),
    (
        "modprobe: ERROR: could not insert 'nvidia': No such device",
        KMOD,
        ("DRV222", "DRV228", "DRV110", "DRV151"),
    ),
    (
        "Error! Your kernel headers for kernel 6.8.0-31-generic cannot be found at "
        "/lib/modules/6.8.0-31-generic/build or /lib/modules/6.8.0-31-generic/source.",
        DKMS,
        ("DRV223",),
    ),
    (
        "Error! Your kernel headers for kernel 6.8.0-31-generic cannot be found. Please install "
        "the linux-headers-6.8.0-31-generic package or use the --kernelsourcedir option to tell "
        "DKMS where it's located.",
        DKMS,
        ("DRV223",),
    ),
    (
        "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please "
        "make sure you have installed the kernel source files for your kernel",
        INSTALLER,
        ("DRV223",),
    ),
    (
        "ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is "
        "incompatible with the NVIDIA driver",
        INSTALLER,
        ("DRV222",),
    ),
    (
        "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.",
        INSTALLER,
        ("DRV226",),
    ),
    (
        "WARNING: An NVIDIA kernel module 'nvidia-drm' appears to be already loaded in your "
        "kernel.",
        INSTALLER,
        ("DRV226",),
    ),
    ("NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:667)", NVRM, ("DRV228",)),
    (
        "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2684)\n"
        "NVRM: installed in this system is not supported by the\n"
        "NVRM: NVIDIA 470.223.02 driver release.",
        NVRM,
        ("DRV110",),
    ),
    # Xid
    (
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        XID,
        ("DRV200",),
    ),
    (
        "NVRM: Xid (PCI:0000:b1:00): 48, pid=0, DBE (0x00000002) (0x00000000)",
        XID,
        ("DRV200", "GPU110"),
    ),
]


@pytest.mark.parametrize(
    ("text", "source", "codes"), BATTERY, ids=[f"{i:02d}" for i in range(len(BATTERY))]
)
def test_the_wording_names_its_cause(
    tmp_path: Path, text: str, source: str, codes: tuple[str, ...]
) -> None:
    assert source.startswith("https://")
    log = tmp_path / "job.log"
    log.write_text(text + "\n")
    result = run_cli("triage", str(log), "--no-probe", "--json")
    assert result.returncode in (0, 1), result.stderr
    named = [
        (c["code"], c["verdict"]) for m in result.json()["data"]["matches"] for c in m["causes"]
    ]
    assert any(code in codes and verdict != "ruled_out" for code, verdict in named), named


def test_a_pasted_nvidia_smi_that_found_no_devices_is_a_failure(tmp_path: Path) -> None:
    """nvidia-smi's 'No devices were found' (the driver answered, no GPU came up) pasted alone
    is DRV151 with the errors table's fix, not a node with nothing wrong."""
    dump = tmp_path / "smi.txt"
    dump.write_text("$ nvidia-smi\nNo devices were found\n")
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "DRV151" in result.stdout
    assert "dmesg" in result.stdout
