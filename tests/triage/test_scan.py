"""The scanner: every built-in signature on a real-format line, line numbers across chunk
boundaries, collapsing, noise, both engines, odd bytes."""

from __future__ import annotations

import atexit
import bisect
import gzip
import io
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from envcheck.triage import grep_engine as grep_mod
from envcheck.triage import scan as scan_mod
from envcheck.triage.grep_engine import GrepScanner, gnu_grep
from envcheck.triage.patterns import re2_module, required_literals
from envcheck.triage.scan import Scanner

FIXTURES = Path(__file__).parent.parent / "fixtures" / "triage"
ENGINES = [
    "re",
    *(["re2"] if re2_module() is not None else []),
    # grep: piped in by the feeder thread; grep-file: a regular file as grep's stdin
    *(["grep", "grep-file"] if gnu_grep() is not None else []),
]

# one line in the form the tools print it, per signature (sources in matrices/signatures/*.toml)
EXAMPLES = [
    (
        "(raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons",
        "ray-memory-monitor-kill",
    ),
    (
        "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)",
        "nccl-shm-allocation",
    ),
    (
        "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.",
        "pip-resolver-conflict",
    ),
    ("misc3:123:456 [0] NCCL INFO NCCL version 2.25.1+cuda12.8", "nccl-version-banner"),
    (
        "(raylet) Memory on the node (IP: 10.0.0.50, ID: 4a8c) where the task (task ID: ffff, pid=1234, memory used=0.10GB) was running was 30.50GB / 32.00GB (0.953125), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 9f8c) because it was the most recently scheduled task",
        "ray-memory-monitor-kill",
    ),
    ("(WorkerDict pid=129668) Fatal Python error: Floating point exception", "cublaslt-sigfpe"),
    ("Caught signal 8 (Floating point exception: integer divide by zero)", "cublaslt-sigfpe"),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
        "cublas-status-error",
    ),
    (
        "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
        "undefined-symbol-nvjitlink",
    ),
    (
        "ImportError: /opt/conda/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "undefined-symbol-flash-attn",
    ),
    (
        # GOATmessi8/ASFF#52 (torchvision built for another torch)
        "ImportError: /home/u/anaconda3/envs/a/lib/python3.7/site-packages/torchvision/_C.so: undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "undefined-symbol-torch-companion",
    ),
    (
        # rusty1s/pytorch_sparse#180 (macOS's dyld)
        "OSError: dlopen(/Users/a/envs/r/lib/python3.8/site-packages/torch_sparse/_version_cpu.so, 6): Symbol not found: __ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_S2_",
        "symbol-not-found-macos",
    ),
    (
        # facebookresearch/pytorch3d#1872 (Windows)
        "ImportError: DLL load failed while importing _C: The specified procedure could not be found.",
        "dll-procedure-not-found",
    ),
    (
        # Dao-AILab/flash-attention#235 (FlashAttention 1.x's extension)
        "E   ImportError: /home/dsuser/.local/lib/python3.8/site-packages/flash_attn_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN3c104impl8GPUTrace13gpuTraceStateE",
        "undefined-symbol-flash-attn-1",
    ),
    (
        # pytorch/pytorch#69202
        "I have tried to install cudatoolkit 11.3 with `conda install -c pytorch pytorch=1.9.0 torchvision cudatoolkit=11.3`.",
        "conda-pytorch-cudatoolkit-11-3-no-build",
    ),
    (
        "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj",
        "undefined-symbol-vllm",
    ),
    (
        "ImportError: /usr/lib/python3/dist-packages/torch_scatter/_scatter_cuda.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE",
        "undefined-symbol-torch",
    ),
    (
        "ImportError: /usr/lib/python3/dist-packages/torch_scatter/_scatter_cuda.so: undefined symbol: cudaLaunchKernelExC",
        "undefined-symbol",
    ),
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "no-kernel-image",
    ),
    (
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        "sm-not-compatible",
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 10010).",
        "driver-too-old",
    ),
    (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "driver-insufficient",
    ),
    (
        "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
        "ptx-unsupported-toolchain",
    ),
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
        "cuda-error-802",
    ),
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported display driver / cuda driver combination",
        "cuda-error-803",
    ),
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was attempted on non supported HW",
        "cuda-error-804",
    ),
    (
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory. Memory on the node (IP: 10.0.0.5, ID: 3a4b) where the task was running was 110.69GB / 124.35GB (0.890133), which exceeds the memory usage threshold of 0.95.",
        "ray-memory-monitor-kill",
    ),
    ("[12345.678901] Out of memory: Killed process 129668 (ray::WorkerDict)", "kernel-oom-killer"),
    (
        "The actor is dead because its worker process has died. Worker exit type: UNEXPECTED_SYSTEM_EXIT Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file.",
        "ray-unexpected-system-exit",
    ),
    (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "ray-actor-died",
    ),
    (
        "(raylet) file_system_monitor.cc:116: /tmp/ray/session_2025-02-11_10-20-01_123456_1 is over 95% full, available space: 5.2GB; capacity: 100GB. Object creation will fail if spilling is required.",
        "ray-disk-over-threshold",
    ),
    ("ray.exceptions.OutOfDiskError: Local disk is full", "ray-out-of-disk"),
    (
        "WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!",
        "ray-object-store-in-tmp",
    ),
    (
        "RuntimeError: Version mismatch: The cluster was started with:",
        "ray-version-mismatch",
    ),
    ("Unable to register worker with raylet", "ray-register-worker"),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: ^lo,docker0",
        "gloo-unable-to-find-address",
    ),
    (
        "[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.",
        "gloo-hostname-loopback",
    ),
    (
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "gloo-connect-full-mesh",
    ),
    (
        "node-0:1234:1290 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
        "nccl-shm-no-space",
    ),
    (
        "node-0:1234:1290 [0] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-aBcDeF to 9637892 bytes, error: No space left on device (28)",
        "nccl-shm-no-space",
    ),
    (
        "node-0:1234:1290 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : Permission denied",
        "nccl-shm-allocation",
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "nccl-unhandled-system-error",
    ),
    (
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600032 milliseconds before timing out.",
        "nccl-watchdog-timeout",
    ),
    (
        "A module that was compiled using NumPy 1.x cannot be run in",  # NumPy wraps the line
        "numpy2-abi",
    ),
    (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
        "xformers-cannot-load",
    ),
    (
        "TypeError: Descriptors cannot not be created directly.",
        "protobuf-descriptors",
    ),
    (
        "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1",
        "transformers-disables-torch",
    ),
    (
        "AttributeError: partially initialized module 'cv2' has no attribute 'mat_wrapper' (most likely due to a circular import)",
        "opencv-dual-install",
    ),
    (
        "(WorkerDict pid=249887) /usr/local/lib/python3.10/dist-packages/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict willbe returned.",
        "fsdp-no-shard-full-state-dict",
    ),
    (
        "[Error] [carb.windowing-glfw.plugin] GLFW initialization failed.",
        "glfw-headless",
    ),
    (
        "[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has known issues.",
        "omniverse-driver-unsupported",
    ),
    (
        "[Error] [omni.hydra] HydraEngine rtx failed creating scene renderer.",
        "rtx-scene-renderer-failed",
    ),
    (
        "[Error] [omni.graph.core.plugin] /Render/PostProcess/SDGPipeline/RenderProduct_omni_kit_widget_viewport_ViewportTexture_0_LdrColorSDhostPtr: [/Render/PostProcess/SDGPipeline] SdRenderVarPtr missing valid input renderVar LdrColorSDhost",
        "sdrendervar-missing",
    ),
    (
        "RuntimeError: vk::createInstanceUnique: ErrorIncompatibleDriver (VK ERROR_INCOMPATIBLE_DRIVER)",
        "vulkan-incompatible-driver",
    ),
    (
        "RuntimeError: The MUJOCO_EGL_DEVICE_ID environment variable must be an integer between 0 and 0 (inclusive), got 1.",
        "mujoco-egl-device",
    ),
    (
        "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by isaacsim/kit/libcarb.so)",
        "glibc-too-old",
    ),
    # the memory and CUDA-library families (matrices/signatures/memory.toml, cuda_libs.toml)
    (
        "OSError: /home/u/env/lib/python3.7/site-packages/nvidia/cublas/lib/libcublas.so.11: undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11",
        "cuda-lib-symbol-from-other-copy",
    ),
    (
        "RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`",
        "cuda-math-library-status",
    ),
    (
        "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.",
        "cudnn-older-than-build",
    ),
    (
        "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
        "cudnn-sublibrary-mismatch",
    ),
    ("RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "cufft-internal-error"),
    ("nvidia-cublas-cu12                12.1.3.1", "nvidia-wheel-listed"),
    (
        "Warning  Evicted  pod/egg-1  The node was low on resource: memory. Container egg was using 5053216Ki, which exceeds its request of 0.",
        "kubelet-memory-eviction",
    ),
    ("libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.", "memlock-limit"),
    ("OSError: [Errno 28] No space left on device", "no-space-left"),
    ("RuntimeError: Pin memory thread exited unexpectedly", "pinned-host-memory"),
    (
        "torch 2.4.0 requires nvidia-cudnn-cu12==9.1.0.70, but you have nvidia-cudnn-cu12 9.5.1.17 which is incompatible.",
        "pip-nvidia-wheel-conflict",
    ),
    (
        "ray.exceptions.ObjectStoreFullError: Failed to put object 00ffff in object store because it is full. Object size is 1000000 bytes.",
        "ray-object-store-full",
    ),
    (
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker exits unexpectedly. Worker exits with an exit code None. The worker may have exceeded K8s pod memory limits.",
        "ray-worker-memory-limit",
    ),
    (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        "serving-engine-kv-cache-memory",
    ),
    (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
        "slurm-oom-kill",
    ),
    (
        "ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
        "torch-lib-lacks-cuda-symbol",
    ),
    ("RuntimeError: received 0 items of ancdata", "torch-shm-too-many-open-files"),
    (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete.",
        "windows-paging-file",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
        "xla-tf-gpu-out-of-memory",
    ),
]

# lines from the corpus of real failures (tests/corpus/<id>/log.txt), one per signature of
# matrices/signatures/ (from the corpus)
EXAMPLES += [
    (
        "Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on this node or reducing task parallelism by requesting more CPUs per task.",
        "ray-oom-kill-advice",
    ),
]
EXAMPLES += [
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "flash-attn-needs-ampere"),
    ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not comp", "sm-not-compatible-cut"),
    ("RuntimeError: operator torchvision::nms does not exist", "torchvision-nms-missing"),
    (
        'raise AssertionError("Torch not compiled with CUDA enabled")',
        "torch-not-compiled-with-cuda",
    ),
    (
        "(APIServer pid=75487) AttributeError: Qwen2Tokenizer has no attribute all_special_tokens_extended. Did you mean: 'num_special_tokens_to_add'?",
        "tokenizer-all-special-tokens-extended",
    ),
    (
        "AttributeError: 'MistralTokenizer' object has no attribute 'all_special_tokens_extended'",
        "tokenizer-no-all-special-tokens-extended",
    ),
    (
        "ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' (/usr/local/lib/python3.10/dist-packages/transformers/__init__.py)",
        "trl-top-k-top-p-filtering",
    ),
    (
        "ImportError: vllm>=0.4.3,<=0.6.2 is required for a normal functioning of this module, but found vllm==0.6.3.",
        "require-version-found",
    ),
    (
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.",
        "pip-resolver-conflicts",
    ),
    (
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)",
        "pip-no-torch-for-python",
    ),
    (
        "ERROR: Could not find a version that satisfies the requirement ray==2.3.1 (from versions: 0.6.0, 0.6.1)",
        "pip-no-ray-for-python",
    ),
    (
        "ERROR: isaacsim-4.5.0.0-cp310-none-manylinux_2_34_x86_64.whl is not a supported wheel on this platform",
        "isaacsim-wheel-platform",
    ),
    ("/lib64/libc.so.6: version `GLIBC_2.33' or higher not found", "glibc-or-higher-not-found"),
    (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container: unknown.",
        "container-cuda-requirement",
    ),
    (
        "ImportError: Cannot initialize a EGL device display. This likely means that your EGL driver does not support the PLATFORM_DEVICE extension, which is required for creating a headless rendering context.",
        "egl-device-display",
    ),
    ("RuntimeError: vk::createInstanceUnique: ErrorIncompatibleDriver", "vulkan-no-device"),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.0.1]:14221: Connection refused",
        "gloo-connect-loopback-refused",
    ),
    (
        "deepspeed.ops.op_builder.builder.CUDAMismatchException",
        "cuda-version-mismatch-build",
    ),
    (
        "  The detected CUDA version (10.1) mismatches the version that was used to compile",
        "cpp-extension-cuda-mismatch",
    ),
    (
        "Exception: >- DeepSpeed Op Builder: Installed CUDA version 9.1 does not match the version torch was compiled with 11.8, unable to compile cuda/cpp extensions without a matching cuda version.",
        "deepspeed-cuda-mismatch",
    ),
    (
        "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by running nvcc -V.",
        "flash-attn-build-nvcc-too-old",
    ),
    (
        "Failed to get device capability: SM 12.x requires CUDA >= 12.9",
        "flashinfer-jit-cuda-too-old-for-sm",
    ),
    ("Invalid config blocking attribute value -2147483648", "nccl-config-blocking-invalid"),
    (
        "[rank0]: AttributeError: 'PyNcclCommunicator' object has no attribute 'device'",
        "vllm-pynccl-no-device",
    ),
    (
        "RuntimeError: GPUs with compute capability below 7.0 are not supported.",
        "vllm-compute-capability-below-7",
    ),
    (
        "AssertionError: CublasLt version 12.1.3.x or higher required for FP8 execution on Ada.",
        "fp8-ada-cublaslt-version",
    ),
    # simsys: rendering userspace, MuJoCo backends, build prerequisites
    (
        "ERROR: [Loader Message] Code 0 : libGLX_nvidia.so.0: cannot open shared object",
        "vulkan-icd-library-missing",
    ),
    (
        "libEGL warning: failed to open /dev/dri/renderD128: Permission denied",
        "egl-dri-permission-denied",
    ),
    ("AttributeError: 'GLXPlatform' object has no attribute 'EGL'", "pyopengl-platform-mismatch"),
    ("an OpenGL platform library has not been loaded", "mujoco-no-opengl-context"),
    (
        "python_headers.h:12:10: fatal error: Python.h: No such file or directory",
        "python-h-missing",
    ),
    (
        "RuntimeError: The current installed version of g++ (4.8.5) is less than the minimum "
        "required version by CUDA 11.7 (6.0.0). Please make sure to use an adequate version of "
        "g++ (>=6.0.0, <12.0).",
        "gxx-outside-cuda-range",
    ),
    (
        "- `libGLU.so.1: cannot open shared object file`",
        "system-library-cannot-open",
    ),
    (
        "[Error] [rtx.scenedb.plugin] Failed to create nrend renderer with error code 2",
        "isaacsim-nrend-renderer-failed",
    ),
    ("is unsupported by this version of iray photoreal.", "iray-gpu-unsupported"),
    (
        "        [omnigibson-2023.1.1] dependency: 'omni.kit.streamsdk.plugins' = { version='=2.5.2' } "
        "can't be satisfied. Available versions:",
        "omnigibson-kit-dependency-unsatisfied",
    ),
    (
        "isaacsim-kernel 5.0.0.0 requires numpy==1.26.0, but you have numpy 2.2.6 which is "
        "incompatible.",
        "isaacsim-numpy-conflict",
    ),
    (
        '  File "/envs/isaaclab/lib/python3.10/site-packages/isaacsim/extscache/'
        'omni.kit.pip_archive-0.0.0+d02c707b.lx64.cp310/pip_prebundle/numpy/core/records.py", '
        "line 44, in <module>",
        "isaacsim-prebundle-numpy-crash",
    ),
]

# matrices/signatures/arch.toml (leggedlab-26, kokoro-fastapi-306 in tests/corpus)
EXAMPLES += [
    (
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
        "torch-arch-list-warning",
    ),
    ("    Found GPU0 GeForce GTX 670M which is of cuda capability 2.1.", "gpu-too-old-for-torch"),
    (
        "ImportError: /usr/local/lib/python3.11/dist-packages/sgl_kernel/common_ops.abi3.so: "
        "undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
        "undefined-symbol-sgl-kernel",
    ),
]

# matrices/signatures/arch.toml, abi.toml (vllm-productionstack-528, flash-attention-1348, -853 in tests/corpus)
EXAMPLES += [
    ("TORCH_CUDA_ARCH_LIST: ['sm_50', 'sm_60", "torch-arch-list-printed"),
    (
        '  File "/usr/local/lib/python3.10/dist-packages/flash_attn/__init__.py", line 3, in <module>',
        "flash-attn-import-traceback",
    ),
    (
        "`pip install flash_attn-2.5.5+cu118torch2.2cxx11abiTRUE-cp38-cp38-linux_x86_64.whl`",
        "flash-attn-wheel-cxx11abi-true",
    ),
]

# matrices/signatures/packages.toml (lines from tests/corpus/<id>/log.txt)
EXAMPLES += [
    (
        "To fix: run `pip install vllm>=0.4.3,<=0.7.3` or set `DISABLE_VERSION_CHECK=1` to skip this check.",
        "llamafactory-check-version",
    ),
    ("module 'torch' has no attribute 'compiler'", "torch-no-compiler"),
    (
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'",
        "vllm-engineargs-worker-extension-cls",
    ),
    (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
        "Your Tesla T4 GPU has compute capability 7.5.",
        "vllm-bf16-needs-sm80",
    ),
    ("  Unable to find installation candidates for ray (1.9.0)", "poetry-no-ray-candidates"),
    (
        '  File "/envs/lf/LLaMA-Factory/src/llamafactory/extras/misc.py", line 92, in check_dependencies',
        "llamafactory-check-dependencies",
    ),
    ("ModuleNotFoundError: No module named 'numpy.lib.function_base'", "numpy2-private-lib-module"),
    (
        "ValueError: vllm version 0.8.5.post1 not supported. Currently supported versions are "
        "0.3.1, 0.4.2, 0.5.4 and 0.6.3.",
        "verl-vllm-version-not-supported",
    ),
    (
        "ERROR: Package 'trl' requires a different Python: 3.8.17 not in '>=3.9'",
        "pip-requires-different-python",
    ),
]
# matrices/signatures/packages.toml: lines that state a package cause by themselves
EXAMPLES += [
    ("NumPy 2.0.0 as it may crash. To support both 1.x and 2.x", "numpy1-module-under-numpy2"),
    (
        "TRL CLI: error: argument command: invalid choice: 'vllm-serve' (choose from 'chat', "
        "'dpo', 'env', 'grpo', 'kto', 'sft')",
        "trl-cli-invalid-command",
    ),
    (
        '  File "/envs/qwen/lib/python3.11/site-packages/transformers/models/auto/'
        'configuration_auto.py", line 723, in __getitem__',
        "transformers-unknown-model-type",
    ),
    (
        "ValueError: Tokenizer class TokenizersBackend does not exist or is not currently "
        "imported.",
        "transformers-tokenizer-class-unknown",
    ),
    (
        "Exception: flashinfer with minimum required version 0.1.6 is not installed. Please "
        "uninstall the old version and reinstall the latest version by following the "
        "instructions at https://docs.flashinfer.ai/installation.html.",
        "sglang-flashinfer-dist-missing",
    ),
]

# matrices/signatures/simulators.toml (lines from tests/corpus/<id>/log.txt)
EXAMPLES += [
    ("ModuleNotFoundError: No module named 'omni.kit.usd'", "omni-kit-usd-module-missing"),
    (
        "2026-03-16T16:11:44Z [21,750ms] [Fatal] [carb.crashreporter-breakpad.plugin] 000: "
        "rtx.scenedb.plugin.dll!carbOnPluginStartup+0x252db",
        "rtx-scenedb-plugin-crash",
    ),
]
# the memory family: torch's DataLoader and shared-memory lines, the kernel's OOM killer, SIGKILL
EXAMPLES += [
    (
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
        "shared memory (shm).",
        "dataloader-shm-bus-error",
    ),
    (
        "RuntimeError: unable to write to file </torch_31911_952036340_6686>: No space left on "
        "device (28)",
        "torch-shm-no-space",
    ),
    (
        "RuntimeError: DataLoader worker (pid(s) 2081, 2082) exited unexpectedly",
        "dataloader-worker-exited",
    ),
    (
        "[Mon Apr 29 14:55:41 2024] Out of memory: Killed process 1440763 (python) "
        "total-vm:87033376kB, anon-rss:60356340kB",
        "kernel-oom-killer",
    ),
    ("  traceback : Signal 9 (SIGKILL) received by PID 2187", "process-sigkilled"),
    ("Bus error (core dumped)", "bare-bus-error"),
    ("Killed", "compile-step-killed-bare"),  # SYS190 there too, below no compile
    (
        "ImportError: DLL load failed while importing _C: 找不到指定的程序。",
        "dll-procedure-not-found",
    ),
    # glibc's strsignal() in the node's language (po/zh_CN.po, po/de.po, po/ja.po)
    ("run.sh: 第 28 行： 8156 已杀死               python3 train.py", "process-sigkilled"),
    ("DataLoader worker (pid 4242) is killed by signal: Getötet.", "process-sigkilled"),
    ("バスエラー (コアダンプ)", "bare-bus-error"),
    ("[1]+  浮点异常 (核心已转储) python infer.py", "cublaslt-sigfpe"),
    (
        "ValueError: Free memory on device (10.95/79.15 GiB) on startup is less than desired GPU "
        "memory utilization (0.9, 71.24 GiB).",
        "vllm-free-memory-below-utilization",
    ),
    (
        "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other "
        "processes. min_per_gpu_memory=20.1",
        "sglang-memory-unbalanced",
    ),
    (
        "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough "
        "memory: you tried to allocate 4194304 bytes.",
        "host-allocation-failed",
    ),
]
# NCCL's error classes, torch's watchdog and store, Gloo's pairs; Magnum (habitat-sim), SAPIEN and
# dm_control renderers
EXAMPLES += [
    (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, internal error - please report this issue to the NCCL developers, NCCL version 2.18.1",
        "nccl-internal-error",
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
        "nccl-invalid-usage",
    ),
    (
        "node1:2301:2390 [0] proxy.cc:1523 NCCL WARN [Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 3",
        "nccl-proxy-failed",
    ),
    (
        "node1:2301:2401 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<36742> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
        "nccl-ib-runtime-error",
    ),
    (
        "[rank0]:[E ProcessGroupNCCL.cpp:1182] [Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
        "nccl-watchdog-stuck",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:41235",
        "gloo-pair-connection-lost",
    ),
    (
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "c10d-store-wait-timeout",
    ),
    (
        "Platform::WindowlessEglApplication::tryCreateContext(): unable to find EGL device for CUDA device 0",
        "magnum-egl-context",
    ),
    (
        "[2023-09-04 10:25:11.337] [svulkan2] [error] Some required Vulkan extension is not present. You may not use the renderer to render, however, CPU resources will be still available.",
        "sapien-vulkan-unusable",
    ),
    ("ImportError: Cannot initialize a headless EGL display.", "dm-control-headless-egl"),
    (
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        "nccl-unhandled-system-error",
    ),
]
# the failure families (loader, abi, python, build): lines as glibc, CPython, torch's
# cpp_extension, nvcc, ninja, setuptools and pip print them
EXAMPLES += [
    (
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
        "shared-object-cannot-open",
    ),
    ("\tlibcublasLt.so.12 => not found", "ldd-not-found"),
    (
        "ImportError: /opt/conda/envs/py310/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not "
        "found (required by /opt/conda/envs/py310/lib/python3.10/site-packages/x/_ext.so)",
        "libstdcxx-version-not-found",
    ),
    (
        "OSError: /lib64/libc.so.6: version 'GLIBC_2.28' not found (required by /x/libarrow.so)",
        "glibc-version-not-found",
    ),
    (
        "ImportError: cannot import name 'Cache' from 'transformers' "
        "(/usr/lib/python3.10/site-packages/transformers/__init__.py)",
        "cannot-import-name",
    ),
    ("ModuleNotFoundError: No module named 'cv2'", "no-module-named"),
    ("ImportError: No module named torch", "no-module-named-bare"),
    (
        "ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 "
        "from C header, got 88 from PyObject",
        "numpy-size-changed",
    ),
    (
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and "
        "torchvision versions are incompatible, or if you had errors while compiling torchvision "
        "from source.",
        "torchvision-custom-ops-not-loaded",
    ),
    (
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA "
        "major versions. PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1.",
        "torchvision-cuda-major-differs",
    ),
    ("ImportError: cannot import name Conv1D", "cannot-import-name-bare"),
    (
        "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` "
        "instead.",
        "numpy2-removed-attribute",
    ),
    ("AttributeError: module 'numpy' has no attribute 'float'", "module-has-no-attribute"),
    (
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU "
        "version! gcc versions later than 12 are not supported!",
        "nvcc-unsupported-gnu-version",
    ),
    (
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install "
        "root.",
        "cuda-home-not-set",
    ),
    (
        "csrc/x.cu:1:10: fatal error: cuda_runtime.h: No such file or directory",
        "cuda-header-missing",
    ),
    (
        "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)",
        "ninja-required",
    ),
    (
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        "ninja-subprocess-failed",
    ),
    ("error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1", "nvcc-command-failed"),
    ("  ERROR: Failed building wheel for flash-attn", "pip-wheel-build-failed"),
    ("RuntimeError: Error building extension 'fused_adam'", "extension-build-failed"),
    ("c++: fatal error: Killed signal terminated program cc1plus", "compiler-killed-oom"),
    ("nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "compiler-killed-oom"),
    (
        "/opt/conda/include/python3.10/Python.h:44:10: fatal error: crypt.h: No such file or "
        "directory",
        "system-header-missing",
    ),
    ("csrc/aio.h:10:10: fatal error: 'libaio.h' file not found", "system-header-missing-clang"),
    ("  × Getting requirements to build wheel did not run successfully.", "pip-build-step-failed"),
    (
        "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
        "c-compiler-missing",
    ),
    ("    error: command 'gcc' failed: No such file or directory", "c-compiler-missing"),
    ("    arch_list[-1] += '+PTX'", "cuda-arch-list-empty"),
    ("/usr/bin/ld: cannot find -lcuda: No such file or directory", "linker-cannot-find-library"),
    (
        "/torch/include/c10/util/C++17.h:16:2: error: #error C++17 or later compatible compiler "
        "is required to use PyTorch.",
        "torch-headers-need-cxx17",
    ),
    (
        "/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded "
        "with '...':",
        "nvcc-gcc11-std-function",
    ),
    (
        "  Using cached flash_attn-2.7.2.post1.tar.gz (3.1 MB)",
        "pip-source-distribution",
    ),
    (
        "RuntimeError: ('The detected CUDA version (%s) mismatches the version that was used to "
        "compilePyTorch (%s). Please make sure to use the same CUDA versions.', '12.1', '13.0')",
        "cpp-extension-cuda-mismatch-unformatted",
    ),
]


# NCCL, Gloo and torch.distributed's rendezvous in more phrasings; rendering lines of vulkaninfo,
# Kit, GLFW, MuJoCo, PyOpenGL, pyrender and Qt
EXAMPLES += [
    (
        "node1:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2",
        "nccl-socket-ifname-stated",
    ),
    (
        "node1:9:9 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>",
        "nccl-socket-virtual-interface",
    ),
    (
        "node1:9:9 [0] NCCL INFO NET/Socket : Using [0]veth3f2a1b:10.1.0.4<0> [1]eth0:10.0.0.5<0>",
        "nccl-socket-virtual-interface",
    ),
    (
        "gpu-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out",
        "nccl-socket-connect-failed",
    ),
    (
        'node [0] /app/rccl/build/release/hipify/src/init.cc:213 NCCL WARN Missing "iommu=pt" from '
        "kernel command line which can lead to system instablity or hang!",
        "nccl-iommu-not-passthrough",
    ),
    (
        "RuntimeError: The server socket has failed to listen on any local network address. port: "
        "29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "c10d-store-port-in-use",
    ),
    (
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to 0.0.0.0:50002 (errno: 98 "
        "- Address already in use).",
        "c10d-store-port-in-use",
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
        "variable MASTER_ADDR expected, but not set",
        "c10d-env-rendezvous-unset",
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1691, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.19.3",
        "nccl-unhandled-cuda-error",
    ),
    (
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
        "c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
        "c10d-nccl-unique-id-store",
    ),
    (
        "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
        "nccl-shm-open-failed",
    ),
    (
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of (node-0, 29500) cannot be "
        "retrieved (gai error: -2 - Name or service not known).",
        "c10d-hostname-unresolvable",
    ),
    (
        "e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address "
        "family not supported by protocol",
        "nccl-no-socket-interface",
    ),
    (
        "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither "
        "AF_INET(2) nor AF_INET6(10)",
        "nccl-socket-address-family-garbage",
    ),
    (
        "gpu-1:2:3 [0] NCCL WARN Net : Call to recv from 10.0.0.2<43218> failed : Connection "
        "reset by peer",
        "nccl-remote-exited",
    ),
    ("RuntimeError: NCCL Error 3: internal error", "nccl-internal-error"),
    (
        "paigcr-b-gpu-1012:4152:4206 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>",
        "nccl-socket-virtual-interface",
    ),
    (
        # ENOMEM from a verbs call: the memlock limit (SYS180) first, NET150 second
        "host:1:2 [0] misc/ibvwrap.cc:106 NCCL WARN Call to ibv_create_cq failed with error "
        "Cannot allocate memory",
        "memlock-limit",
    ),
    (
        "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
        "for recv operation to complete",
        "gloo-collective-timeout",
    ),
    (
        "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility isaac-sim",
        "nvidia-driver-capabilities-stated",
    ),
    ("Cannot create Vulkan instance.", "vulkan-instance-not-created"),
    (
        "ERROR: [Loader Message] Code 0 : loader_scanned_icd_add: Could not get 'vkCreateInstance' "
        "via 'vk_icdGetInstanceProcAddr' for ICD libGLX_nvidia.so.0",
        "vulkan-instance-not-created",
    ),
    (
        "2025-10-27 09:21:42 [2,385ms] [Error] [omni.gpu_foundation_factory.plugin] Failed to "
        "create any GPU devices, including an attempt with compatibility mode.",
        "kit-no-gpu-device",
    ),
    (
        "/home/u/envs/sim/lib/python3.10/site-packages/glfw/__init__.py:917: GLFWError: (65542) "
        "b'EGL: Failed to initialize EGL: EGL is not or could not be initialized'",
        "egl-display-not-initialised",
    ),
    (
        "eglQueryDevicesEXT(): EGL_BAD_ALLOC error: In eglQueryDevicesEXT: Failed to allocate "
        "device list.",
        "egl-display-not-initialised",
    ),
    ("mujoco.FatalError: gladLoadGL error", "glfw-not-initialised"),
    ("RuntimeError: Failed to initialize OpenGL", "glfw-not-initialised"),
    ('Xlib:  extension "NV-GLX" missing on display ":0".', "glx-extension-missing"),
    (
        "ValueError: Failed to initialize Pyglet window with an OpenGL >= 3+ context. If you're "
        "logged in via SSH, ensure that you're running your script with vglrun (i.e. VirtualGL).",
        "glx-extension-missing",
    ),
    ("freeglut (python): failed to open display ''", "no-x-display"),
    (
        "/build/vulkan-tools-KEbD_A/vulkan-tools-1.2.131.1+dfsg1/vulkaninfo/vulkaninfo.h:477: "
        "failed with ERROR_INITIALIZATION_FAILED",
        "vulkan-found-no-drivers",
    ),
    (
        'qt.qpa.plugin: Could not load the Qt platform plugin "xcb" in "/venv/lib/python3.10/'
        'site-packages/cv2/qt/plugins" even though it was found.',
        "qt-xcb-plugin-not-loaded",
    ),
    (
        "qt.qpa.plugin: From 6.5.0, xcb-cursor0 or libxcb-cursor0 is needed to load the Qt xcb "
        "platform plugin.",
        "qt-xcb-plugin-not-loaded",
    ),
]


# NCCL's WARN lines by the subsystem that printed them, PyOpenGL's EGL error, a GPU named with its
# compute capability (tried after every specific line)
EXAMPLES += [
    (
        "node4:565139:565160 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got async event : "
        "port error",
        "nccl-warn-ib",
    ),
    (
        "node1:88:120 [0] transport/shm.cc:114 NCCL WARN Unable to map /dev/shm/nccl-Xk2 : No "
        "space left on device",
        "nccl-warn-shm",
    ),
    (
        "z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : "
        "217 peer access is not supported between these two devices",
        "nccl-warn-p2p",
    ),
    (
        "server1:6601:6625 [0] misc/socket.cc:54 NCCL WARN Net : Call to recv from "
        "10.0.0.2<46012> failed : Connection timed out",
        "nccl-warn-socket",
    ),
    ("\tbaseOperation = eglInitialize,", "pyopengl-egl-call-failed"),
    (
        "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes",
        "gpu-compute-capability-stated",
    ),
    (
        "Nvidia driver version: 535.54.03",
        "driver-version-stated",
    ),
    (
        '     "cuda:0"   : "NVIDIA GeForce RTX 5090" (32 GiB, sm_120, mempool enabled)',
        "warp-device-line",
    ),
    (
        "2024-05-02 10:11:12 [2,100ms] [Info] [gpu.foundation.plugin] GPU table",
        "omniverse-kit-line",
    ),
    (
        "ae05277d311f:55933:55933 [1] NCCL INFO NET/Plugin: Using internal network plugin.",
        "nccl-line-from-container",
    ),
    ("Using device: NVIDIA GeForce RTX 5090", "gpu-model-named"),
    ("2.0.1+cu117 11.7 True NVIDIA GeForce RTX 4090", "torch-facts-printed"),
    (
        "Successfully installed numpy-1.26.4 torch-2.5.1 torchvision-0.20.1",
        "torch-version-installed",
    ),
]

# NumPy's C-API / C-ABI check (signatures/python_imports.toml)
EXAMPLES += [
    (
        "RuntimeError: module compiled against API version 0xc but this version of numpy is 0xa",
        "numpy-c-api-version",
    ),
    (
        "RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is 0x2000000",
        "numpy-c-api-version",
    ),
    (
        "importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes",
        "package-metadata-not-found",
    ),
    (
        "ImportError: This modeling file requires the following packages that were not found in your environment: flash_attn. Run `pip install flash_attn`",
        "required-packages-not-found",
    ),
    ("ImportError: numpy.core.multiarray failed to import", "numpy-multiarray-failed-to-import"),
    ("RuntimeError: Numpy is not available", "torch-numpy-not-available"),
]
# the installers' and pkg_resources' own wordings of a requirement not met
# (envcheck/rules/node/resolver_lines.py)
EXAMPLES += [
    (
        "transformers 4.40.0 requires tokenizers<0.20,>=0.19, which is not installed.",
        "pip-requirement-not-installed",
    ),
    (
        "pkg_resources.ContextualVersionConflict: (tokenizers 0.15.0 (/usr/lib/python3/dist-packages), Requirement.parse('tokenizers<0.14,>=0.11.1'), {'transformers'})",
        "pkg-resources-version-conflict",
    ),
    (
        "pkg_resources.DistributionNotFound: The 'tokenizers<0.14,>=0.11.1' distribution was not found and is required by transformers",
        "pkg-resources-distribution-not-found",
    ),
    (
        "ERROR: Cannot install vllm==0.6.3 and torch==2.5.1 because these package versions have conflicting dependencies.",
        "pip-resolution-impossible",
    ),
    (
        "  ╰─▶ Because vllm==0.6.3 depends on torch==2.4.0 and you require torch==2.5.1, we can conclude that your requirements and vllm==0.6.3 are incompatible.",
        "uv-no-solution",
    ),
    (
        "Because vllm (0.6.3) depends on torch (2.4.0) and my-project depends on torch (2.5.1), version solving failed.",
        "poetry-version-solving-failed",
    ),
    (
        "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package flash_attn seems to be not installed. Please refer to the documentation of https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install Flash Attention 2.",
        "flash-attn-2-package-not-installed",
    ),
    (
        "ImportError: Loading an AWQ quantized model requires auto-awq library (`pip install autoawq`)",
        "import-guard-names-pip-install",
    ),
    (
        "ImportError: Missing optional dependency 'openpyxl'.  Use pip or conda to install openpyxl.",
        "pandas-missing-optional-dependency",
    ),
    ("importlib.metadata.PackageNotFoundError: flash_attn", "package-not-found-error-bare-name"),
    (
        "ERROR: Could not find a version that satisfies the requirement vllm==0.9.0 (from versions: 0.5.0, 0.6.0)",
        "pip-requirement-not-offered",
    ),
]


# API skew and conda's solver (python_imports.toml: PY160-PY162)
EXAMPLES += [
    (
        "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'",
        "unexpected-keyword-argument",
    ),
    (
        "TypeError: LlamaAttention.forward() missing 1 required positional argument: 'position_embeddings'",
        "missing-required-argument",
    ),
    (
        "TypeError: __init__() got multiple values for argument 'config'",
        "multiple-values-for-argument",
    ),
    ("error: externally-managed-environment", "pip-externally-managed-environment"),
    (
        "  - package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 conflicting with __cuda-10.2-0",
        "conda-virtual-package-constraint",
    ),
    (
        "  - nothing provides __cuda >=12 needed by pytorch-cuda-12.1-ha16c6d3_6",
        "conda-virtual-package-not-provided",
    ),
    (
        "  - package torchaudio-2.0.2-py310_cu117 requires pytorch-cuda 11.7.*, but none of the providers can be installed",
        "conda-package-requires-unavailable",
    ),
    ("  - nothing provides requested pytorch-cuda 12.1**", "conda-nothing-provides"),
    (
        "UnsatisfiableError: The following specifications were found to be incompatible with each other:",
        "conda-unsatisfiable",
    ),
    (
        "PackagesNotFoundError: The following packages are not available from current channels:",
        "conda-packages-not-found",
    ),
    ("ResolvePackageNotFound: ", "conda-resolve-package-not-found"),
    (
        "The following specifications were found to be incompatible with your system:",
        "conda-incompatible-with-system",
    ),
]


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load()


# one scanner per matrix and engine, built once: building one compiles every signature (most
# of a single-line scan's time); a scan keeps no state between inputs but a line -> signature
# memo, so each test still scans its own input from the start. The matrix is kept with its
# scanner (its id cannot be reused); grep's pattern files are removed at exit.
_SCANNERS: dict[tuple[int, str], tuple[Matrix, Scanner]] = {}


def _scanner(matrix: Matrix, engine: str) -> Scanner:
    kind = "grep" if engine in ("grep", "grep-file") else engine
    made = _SCANNERS.get((id(matrix), kind))
    if made is None:
        if kind == "grep":
            grep = GrepScanner(matrix.signatures, gnu_grep() or "grep")
            atexit.register(grep.close)
            assert grep.usable()
            scanner: Scanner = grep
        else:
            scanner = Scanner(matrix.signatures, kind)  # type: ignore[arg-type]
        made = _SCANNERS[(id(matrix), kind)] = (matrix, scanner)
    return made[1]


def run_scan(matrix: Matrix, data: bytes, engine: str = "re") -> scan_mod.ScanResult:
    scanner = _scanner(matrix, engine)
    if engine == "grep-file":
        with tempfile.TemporaryFile() as handle:
            handle.write(data)
            handle.seek(0)
            with open(handle.fileno(), "rb", closefd=False) as stream:
                return scanner.scan(stream)
    return scanner.scan(io.BytesIO(data))


def test_every_signature_has_an_example(matrix: Matrix) -> None:
    assert {sig.id for sig in matrix.signatures} == {sid for _, sid in EXAMPLES}


def _example(line: str) -> bytes:
    return f"INFO starting\n{line}\nINFO done\n".encode()


class _Tee:
    """grep's stdout, keeping what the scanner read of it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.seen = bytearray()

    def readline(self, size: int = -1) -> bytes:
        got = self.raw.readline(size)
        self.seen += got
        return got

    def read(self, size: int = -1) -> bytes:
        return self.raw.read(size)


# what grep printed for each example's input, numbered from that input's start: one grep over
# all examples' inputs one after another (grep selects and numbers each line on its own, and
# the lines around each example, "INFO ...", are never selected), instead of one grep a test
# (grep reads the ~750 signatures' patterns again each time: ~0.1 s of CPU)
_PRINTED: dict[int, tuple[Matrix, dict[str, bytes]]] = {}


def _grep_printed(matrix: Matrix) -> dict[str, bytes]:
    made = _PRINTED.get(id(matrix))
    if made is not None:
        return made[1]
    scanner = _scanner(matrix, "grep")
    lines = list(dict.fromkeys(line for line, _ in EXAMPLES))
    data = [_example(line) for line in lines]
    tees: list[_Tee] = []
    real_spawn = grep_mod.spawn

    def spawn(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        proc = real_spawn(argv, **kwargs)
        tees.append(_Tee(proc.stdout))
        proc.stdout = tees[-1]  # type: ignore[assignment]
        return proc

    grep_mod.spawn = spawn  # type: ignore[assignment]
    try:
        scanner.scan(io.BytesIO(b"".join(data)))
    finally:
        grep_mod.spawn = real_spawn
    (tee,) = tees
    # each example's first line number and byte offset in the whole input
    starts, number, offset = [], 1, 0
    for block in data:
        starts.append((number, offset))
        number += block.count(b"\n")
        offset += len(block)
    printed: list[bytearray] = [bytearray() for _ in data]
    at = 0
    for raw in (part + b"\n" for part in bytes(tee.seen).split(b"\n")[:-1]):
        found = grep_mod._PRINTED.match(raw)
        if found is None:  # "--": between groups of one example's lines, never before them
            if printed[at]:
                printed[at] += raw
            continue
        at = bisect.bisect_right(starts, (int(found.group(1)), 1 << 62)) - 1
        base_number, base_offset = starts[at]
        sep = found.group(2)
        printed[at] += b"%d%s%d%s" % (
            int(found.group(1)) - base_number + 1,
            sep,
            int(found.group(3)) - base_offset,
            sep,
        )
        printed[at] += raw[found.end() :]
    result = dict(zip(lines, map(bytes, printed), strict=True))
    _PRINTED[id(matrix)] = (matrix, result)
    return result


class _Printed:
    """The grep process of one example's scan, replayed: what grep printed for its input."""

    def __init__(self, out: bytes) -> None:
        self.stdin = io.BytesIO()  # the feeder thread writes the input here
        self.stdout = io.BytesIO(out)
        self.stderr = io.BytesIO(b"")
        self.code = 0 if out else 1

    def wait(self) -> int:
        return self.code


def scan_example(matrix: Matrix, line: str, engine: str) -> scan_mod.ScanResult:
    """The scan of ``line`` between two others; grep's engines read what grep printed for it
    (``_grep_printed``) as they read a grep process's output, through the same code."""
    data = _example(line)
    if engine not in ("grep", "grep-file"):
        return run_scan(matrix, data, engine)
    scanner = _scanner(matrix, engine)
    assert isinstance(scanner, GrepScanner)
    proc = _Printed(_grep_printed(matrix)[line])
    result = scan_mod.ScanResult(engine="grep")
    collect = scanner._collect
    if engine == "grep":  # piped in by the feeder thread
        return collect(proc, result, None, io.BytesIO(data))  # type: ignore[arg-type]
    with tempfile.TemporaryFile() as handle:  # a regular file: its tail counted with pread()
        handle.write(data)
        handle.seek(0)
        return collect(proc, result, grep_mod._TailCount(handle.fileno(), 0), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("line", "expected"), EXAMPLES)
def test_signature_matches_its_line(matrix: Matrix, engine: str, line: str, expected: str) -> None:
    result = scan_example(matrix, line, engine)
    assert list(result.tallies) == [expected]
    tally = result.tallies[expected]
    assert (tally.count, tally.first.line, tally.first.text) == (1, 2, line.strip())


@pytest.mark.parametrize("engine", ENGINES)
def test_plain_log_matches_nothing(matrix: Matrix, engine: str) -> None:
    lines = [
        f"(WorkerDict pid={i}) step:{i} - actor/pg_loss:0.1 - critic/score/mean:0.5"
        for i in range(5000)
    ]
    result = run_scan(matrix, ("\n".join(lines) + "\n").encode(), engine)
    assert result.tallies == {}
    assert result.lines == 5000


@pytest.mark.parametrize("engine", ENGINES)
def test_line_numbers_across_chunks_and_collapse(
    matrix: Matrix, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_mod, "CHUNK", 64)  # many boundaries, lines cut in two
    filler = "x" * 50
    rows = []
    expected_lines = []
    for i in range(1, 301):
        if i % 37 == 0:
            rows.append("ray.exceptions.ActorDiedError: The actor died unexpectedly")
            expected_lines.append(i)
        else:
            rows.append(f"{filler} {i}")
    result = run_scan(matrix, ("\n".join(rows)).encode(), engine)  # no final newline
    tally = result.tallies["ray-actor-died"]
    assert tally.count == len(expected_lines)
    assert (tally.first.line, tally.last.line) == (expected_lines[0], expected_lines[-1])
    assert result.lines == 300


def test_engines_agree_on_the_tinyzero_log(matrix: Matrix) -> None:
    data = (FIXTURES / "tinyzero_h20.log").read_bytes()
    results = [run_scan(matrix, data, e) for e in ENGINES]
    summaries = [
        {k: (t.count, t.first.line, t.last.line) for k, t in r.tallies.items()} for r in results
    ]
    assert summaries[0] == {
        "fsdp-no-shard-full-state-dict": (1, 3, 3),
        "cublaslt-sigfpe": (2, 5, 7),
        "ray-actor-died": (3, 11, 17),
    }
    assert all(s == summaries[0] for s in summaries)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\xff\xfe" * 10000,  # binary
        "ünïcödé line\n".encode("latin-1") * 100
        + b"Fatal Python error: Floating point exception\n",
        b"\xff\xfeActorDiedError\x00\x00\n",
        b"",
        b"no newline at all, and no signature",
    ],
)
def test_odd_bytes_never_fail(matrix: Matrix, data: bytes) -> None:
    for engine in ENGINES:
        result = run_scan(matrix, data, engine)
        assert result.bytes_read == len(data)


def test_required_literals() -> None:
    assert required_literals("ActorDiedError|Worker exit type: SYSTEM_ERROR") == (
        "ActorDiedError",
        "Worker exit type: SYSTEM_ERROR",
    )
    assert required_literals("is over [0-9]+% full, available space") == (
        "% full, available space",
    )
    assert required_literals("a(b|c)d") is None
    assert required_literals("Unable to resolve hostname to a \\(local\\) address") == (
        "Unable to resolve hostname to a (local) address",
    )
    # a counted repetition's digits are not text of the line ("0,4000" was taken as one)
    assert required_literals("ab{0,4000}") is None
    assert required_literals("rank {1,3}[0-9]{2,10000}: Call to ibv_create_cq") == (
        ": Call to ibv_create_cq",
    )


@pytest.mark.parametrize("name", ["job.log.gz", "job.log.1"])  # gzip known by content
@pytest.mark.parametrize("engine", ["re", *(["grep"] if gnu_grep() is not None else [])])
def test_gzip_log(matrix: Matrix, tmp_path: Path, name: str, engine: str) -> None:
    from envcheck.triage.run import scan_log

    path = tmp_path / name
    path.write_bytes(gzip.compress((FIXTURES / "tinyzero_h20.log").read_bytes()))
    _, result = scan_log(str(path), matrix, engine)  # type: ignore[arg-type]
    assert result.lines == 17
    assert set(result.tallies) == {
        "fsdp-no-shard-full-state-dict",
        "cublaslt-sigfpe",
        "ray-actor-died",
    }


def test_grep_engine_is_the_default_and_falls_back(matrix: Matrix, tmp_path) -> None:
    """auto picks GNU grep, also for a pattern outside POSIX ERE (grep is handed a rewrite,
    triage/ere.py); only a pattern grep can be given neither as such, rewritten, nor as a
    literal makes it fall back to Python's engines."""
    from dataclasses import replace

    from envcheck.triage.run import _scanner

    if gnu_grep() is None:
        pytest.skip("GNU grep is not installed")
    assert _scanner(matrix, "auto").engine == "grep"
    python_only = replace(
        matrix.signatures[0], pattern="(?:Fatal Python error): Floating point exception"
    )
    rewritten = replace(matrix, signatures=(python_only, *matrix.signatures[1:]))
    assert _scanner(rewritten, "auto").engine == "grep"
    # a NUL byte cannot be written to grep's patterns file, and ignoring case no literal helps
    neither = replace(matrix.signatures[0], pattern="(?i)Fatal Python error\\x00?")
    odd = replace(matrix, signatures=(neither, *matrix.signatures[1:]))
    assert _scanner(odd, "auto").engine in ("re", "re2")
    with pytest.raises(RuntimeError, match="grep -E cannot read"):
        _scanner(odd, "grep")


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"Floating point exception", None),
        (r"CUDA error: (out of memory|an illegal memory access)", None),
        (r"sm_[0-9]+ is not compatible", None),
        (r"literal \(paren\) and \? and \.", None),
        (r"(?:Fatal) error", "(?...)"),
        (r"(?i)nccl error", "(?...)"),
        (r"rank \d+ failed", "escapes"),
        (r"\bSIGKILL\b", "escapes"),
        (r"(a)\1", "escapes"),
        (r"worker .*? died", "lazy"),
        (r"x{2,}? y", "lazy"),
    ],
)
def test_ere_problem_names_python_only_syntax(pattern: str, problem: str | None) -> None:
    from envcheck.triage.patterns import ere_problem

    found = ere_problem(pattern)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_every_shipped_signature_goes_to_grep(matrix: Matrix) -> None:
    """Every shipped pattern reaches grep, as such or rewritten, so the grep engine is usable."""
    from envcheck.triage.ere import grep_pattern

    assert [s.id for s in matrix.signatures if grep_pattern(s.pattern) is None] == []


@pytest.mark.parametrize(
    ("fix", "commands"),
    [
        (
            "if /dev/shm is Docker's 64 MB default: run with `--shm-size=16g` or `--ipc=host`",
            [],
        ),
        (
            "install torch 2.8.0 (`pip install torch==2.8.0 --index-url https://x/whl/cu129`), "
            "then `export NCCL_SOCKET_IFNAME=eth0`",
            [
                "pip install torch==2.8.0 --index-url https://x/whl/cu129",
                "export NCCL_SOCKET_IFNAME=eth0",
            ],
        ),
        # NET101's documented fix names `ray start` in its prose: a reference, not the fix
        (
            "Set the variable to this node's routable interface, on every node, before "
            "`ray start`.",
            [],
        ),
    ],
)
def test_a_causes_fix_keeps_its_prose_and_lists_its_commands(fix: str, commands: list[str]) -> None:
    """The prose reads whole (no "(below)" where a command was); the commands to run are
    listed apart, each printed on a line of its own."""
    from envcheck.triage.verdict import CauseFix

    parsed = CauseFix.from_text(fix)
    assert parsed.summary == fix
    assert list(parsed.commands) == commands


# the driver, arch, NCCL and graphics families (lines in the libraries' own wording: NVML's and
# nvidia-smi's strings, libcudart's messages, ptxas/nvcc, Triton, NCCL's src/, Mesa, the Vulkan
# loader)
EXAMPLES += [
    ("Failed to initialize NVML: Driver/library version mismatch", "nvml-driver-library-mismatch"),
    ("Failed to initialize NVML: Unknown Error", "nvml-failure"),
    ("No devices were found", "nvidia-smi-no-devices"),
    (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        "torch-found-no-driver",
    ),
    ("RuntimeError: CUDA error: no CUDA-capable device is detected", "cuda-error"),
    (
        "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
        "compiler-unknown-arch",
    ),
    (
        "triton.compiler.errors.CompilationError: at 1:0: type fp8e4nv not supported in this "
        "architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')",
        "library-arch-floor",
    ),
    ("RuntimeError: CUDA error: invalid device function", "invalid-device-function"),
    ("node1:2301:2388 [0] NCCL INFO NET/IB : No device found.", "nccl-ib-unavailable"),
    (
        "node1:2301:2388 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found",
        "nccl-no-socket-interface",
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version "
        "2.19.3",
        "nccl-remote-exited",
    ),
    (
        "node1:2301:2388 [0] NCCL INFO P2P is disabled between connected GPUs 0 and 1. You can "
        "repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
        "nccl-p2p-disabled",
    ),
    (
        "NCCL WARN NCCL library is too old. This application was compiled with NCCL version "
        "2.18.1, but is running with NCCL 2.14.3",
        "nccl-library-too-old",
    ),
    ("[EGL] Could not find an EGL device for CUDA device 0", "egl-not-initialized"),
    ("vkCreateInstance: Found no drivers!", "vulkan-found-no-drivers"),
    ("libGL error: failed to load driver: swrast", "glx-driver-not-loaded"),
    ("libEGL warning: failed to open /dev/dri/card0: Permission denied", "dri-permission-denied"),
]
EXAMPLES += [
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.06 GiB is free. Process 4242 has 61.20 GiB "
        "memory in use.",
        "cuda-out-of-memory",
    ),
    (
        "RuntimeError: Attempting to deserialize object on a CUDA device but "
        "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please "
        "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.",
        "torch-deserialize-on-cuda-without-cuda",
    ),
    ("glfw.GLFWError: (65544) b'X11: The DISPLAY environment variable is missing'", "no-x-display"),
]
EXAMPLES += [
    (
        "node1:2301:2388 [1] init.cc:871 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 "
        "both on CUDA device 1000",
        "nccl-duplicate-gpu",
    ),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "nccl-no-gpus"),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "nccl-not-built-in"),
    (
        "node1:2301:2388 [0] NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found",
        "nccl-nvml-call-failed",
    ),
    ("qt.qpa.xcb: could not connect to display", "no-x-display"),
]
EXAMPLES += [
    (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to "
        "[::ffff:10.0.0.1]:29500 (errno: 110 - Connection timed out).",
        "c10d-store-connect-failed",
    ),
]
EXAMPLES += [
    ("nvrtc: error: invalid value for --gpu-architecture (-arch)", "compiler-unknown-arch"),
]
# Windows' loader (signatures/windows.toml): the error number, CPython's and torch's own strings,
# the DLL's name; lines in the system's language
EXAMPLES += [
    (
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
        "cudnn8-zlibwapi-missing",
    ),
    (
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "openmp-runtime-twice",
    ),
    (
        'OSError: [WinError 127] 找不到指定的程序。 Error loading "D:\\venv\\Lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.',
        "windows-dll-procedure-not-found",
    ),
    (
        'OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "C:\\Program Files\\Python311\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
        "windows-dll-init-failed",
    ),
    (
        "ImportError: DLL load failed while importing cv2: %1 is not a valid Win32 application.",
        "windows-dll-wrong-architecture",
    ),
    (
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\x\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
        "windows-cudnn-dll-not-found",
    ),
    (
        'OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\\x\\torch\\lib\\caffe2_nvrtc.dll" or one of its dependencies.',
        "windows-dll-not-found",
    ),
    (
        "ImportError: DLL load failed while importing cv2: 지정된 모듈을 찾을 수 없습니다.",
        "windows-dll-load-failed",
    ),
]
EXAMPLES += [
    (
        "由于找不到 VCRUNTIME140_1.dll，无法继续执行代码。重新安装程序可能会解决此问题。",
        "windows-vc-runtime-missing",
    ),
    (
        "ERROR: Could not install packages due to an OSError: [WinError 225] Operation did not complete successfully because the file contains a virus or potentially unwanted software",
        "windows-antivirus-blocked-file",
    ),
]
# driver / arch / cuDNN: Docker without the NVIDIA runtime, torch's cuDNN version check, cuDNN
# status errors, torch's extension builder on an arch it does not know
EXAMPLES += [
    (
        'docker: Error response from daemon: could not select device driver "" with '
        "capabilities: [[gpu]].",
        "docker-no-gpu-runtime",
    ),
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 7, 0) but "
        "found runtime version (8, 2, 4).",
        "cudnn-version-incompatible",
    ),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "cudnn-status-error"),
    ("ValueError: Unknown CUDA arch (12.0) or GPU not supported", "cpp-extension-unknown-arch"),
    (
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, "
        "libcudnn_ops.so}",
        "cudnn-library-not-loadable",
    ),
    (
        "[   12.014918] NVRM: API mismatch: the client has the version 570.153.02, but",
        "nvrm-api-mismatch",
    ),
    (
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5b7c1a8e-2f3d-4c6b-9e1a-7d2f4b8c9e01)",
        "nvidia-smi-gpu-list",
    ),
    (
        "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
        "nvidia-smi-banner",
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
        "cublas-not-initialized",
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx(...)`",
        "cublas-arch-mismatch",
    ),
]
# the build and arch families, more of their tools' wording: DeepSpeed's op builder, apex's
# setup.py, flash-attn's setup.py running nvcc, torch's headers and cpp_extension, nvcc's
# option check and banner, ptxas, clang, pip's spinner
EXAMPLES += [
    (
        "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
        "deepspeed-cuda-home-missing",
    ),
    (
        "AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)",
        "deepspeed-cuda-home-missing",
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",
        "nvcc-missing",
    ),
    (
        '    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)',
        "nvcc-missing",
    ),
    ("/bin/sh: 1: nvcc: not found", "nvcc-missing"),
    ("      NameError: name 'bare_metal_version' is not defined", "setup-py-no-nvcc"),
    (
        "mamba_ssm was requested, but nvcc was not found.  Are you sure your environment has nvcc available?",
        "setup-py-no-nvcc",
    ),
    ("error: invalid command 'bdist_wheel'", "bdist-wheel-missing"),
    (
        "gcc: error trying to exec 'cc1plus': execvp: No such file or directory",
        "c-compiler-missing",
    ),
    (
        "gcc: fatal error: cannot execute 'cc1plus': execvp: No such file or directory",
        "c-compiler-missing",
    ),
    (
        "csrc/ops.cu:3:10: fatal error: curand_kernel.h: No such file or directory",
        "cuda-header-missing",
    ),
    ("src/kernel.cu:1:10: fatal error: 'cuda_runtime.h' file not found", "cuda-header-missing"),
    (
        "csrc\\ops.cpp(2): fatal error C1083: Cannot open include file: 'cuda_runtime_api.h': No such file or directory",
        "cuda-header-missing",
    ),
    (
        'src/op.cu(4): catastrophic error: cannot open source file "cub/cub.cuh"',
        "cub-headers-missing",
    ),
    ("GPU 0: NVIDIA GeForce RTX 5090", "collect-env-gpu-line"),
    (
        "|   0  NVIDIA GeForce RTX 4090        Off |   00000000:01:00.0  On |                  N/A |",
        "nvidia-smi-table-gpu",
    ),
    ("PyTorch version: 2.0.1+cu117", "torch-version-printed"),
    (
        "error: command 'C:\\\\Program Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v11.8\\\\bin\\\\nvcc.exe' failed with exit code 2",
        "nvcc-command-failed",
    ),
    (
        "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')",
        "library-arch-floor",
    ),
    ("      torch.__version__  = 2.3.1+cu121", "torch-version-printed"),
    (
        "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
        "library-arch-floor",
    ),
    (
        "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
        "library-arch-floor",
    ),
    (
        "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.",
        "library-arch-floor",
    ),
    (
        'error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ Build Tools": https://visualstudio.microsoft.com/visual-cpp-build-tools/',
        "c-compiler-missing",
    ),
    (
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.",
        "apex-cuda-mismatch",
    ),
    ("Cuda compilation tools, release 11.5, V11.5.119", "nvcc-version-banner"),
    ("nvcc fatal   : Value 'c++17' is not defined for option 'std'", "nvcc-lacks-cxx17"),
    (
        'C++17.h:16:2: error: #error "You\'re trying to build PyTorch with a too old version of GCC. We need GCC 9 or later."',
        "torch-headers-need-newer-gcc",
    ),
    (
        "subprocess.CalledProcessError: Command '['which', 'c++']' returned non-zero exit status 1.",
        "c-compiler-missing",
    ),
    (
        "UserWarning: Error checking compiler version for c++: [Errno 2] No such file or directory: 'c++'",
        "c-compiler-missing",
    ),
    (
        "/usr/include/python3.10/pyconfig.h:3:12: fatal error: 'Python.h' file not found",
        "python-h-missing",
    ),
    ("  × python setup.py egg_info did not run successfully.", "pip-build-step-failed"),
    ("  Building wheel for flash-attn (setup.py) ... error", "pip-wheel-build-failed"),
    ("    Running setup.py install for apex ... error", "pip-wheel-build-failed"),
    (
        "ptxas /tmp/compile-ptx-src-9e79cc, line 59; error   : Feature '.bf16' requires .target sm_80 or higher",
        "ptxas-feature-needs-arch",
    ),
]


# the family fallbacks and wordings of tests/triage/data/mined_lines.toml
EXAMPLES += [
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.",
        "framework-out-of-memory-any",
    ),
    (
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory",
        "gpu-out-of-memory-any-library",
    ),
    (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65538, Hardware limit: 65536.",
        "triton-shared-memory-over-limit",
    ),
    ("llama_model_load: error loading model: unable to allocate CPU buffer", "out-of-memory-any"),
    (
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
        "library-capability-floor-refused",
    ),
    (
        "2023-06-19 17:03:27.841329: W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at conv_ops.cc:1068 : UNIMPLEMENTED: DNN library is not found.",
        "tf-dnn-library-not-found",
    ),
    ("Outdated cuSPARSE installation found.", "cuda-lib-older-than-build"),
    ("The kernel appears to have died. It will restart automatically.", "jupyter-kernel-died"),
    (
        '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
        "rocm-no-code-object-for-gpu",
    ),
    (
        "InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: device kernel image is invalid",
        "framework-lacks-kernels-for-gpu",
    ),
    (
        "RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the implementation needs a large amount of shared memory.",
        "flash-attn-head-dim-needs-sm80",
    ),
    (
        "        CUDA Setup failed despite GPU being available. Please run the following command to get more information:",
        "bitsandbytes-cuda-setup-failed",
    ),
    ("cuBLAS API failed with status 15", "cuda-library-error-any"),
    (
        "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
        "runtime-loaded-cuda-library-missing",
    ),
    (
        "Non-zero status code returned while running ReduceSum node. onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 939524096",
        "onnxruntime-arena-allocation-failed",
    ),
    (
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.",
        "companion-op-missing-cuda-kernel",
    ),
    (
        "NotImplementedError: Could not run 'mmcv::nms' with arguments from the 'CUDA' backend.",
        "extension-op-missing-cuda-kernel",
    ),
]

# the CUDA-extension packages' own lines (matrices/signatures/extensions.toml)
EXAMPLES += [
    ("RuntimeError: Not compiled with GPU support", "extension-ops-not-compiled-with-gpu"),
    ("ModuleNotFoundError: No module named 'mmcv._ext'", "extension-ops-module-missing"),
    (
        "AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.",
        "openmmlab-mmcv-version-check",
    ),
    (
        "AssertionError: MMEngine==0.7.0 is used but incompatible. Please install mmengine>=0.7.1, <1.0.0.",
        "mmengine-version-check",
    ),
    (
        "RuntimeError: Detected that PyTorch and torch_sparse were compiled with different CUDA "
        "versions. PyTorch has CUDA version 11.8 and torch_sparse has CUDA version 12.1.",
        "pyg-extension-cuda-mismatch",
    ),
    (
        "OSError: Could not find compatible tinycudann extension for compute capability 86.",
        "tinycudann-no-build-for-cc",
    ),
    (
        "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32",
        "llvm-nvptx-cannot-select-intrinsic",
    ),
    (
        "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered",
        "triton-launcher-cuda-error",
    ),
    (
        "dgl._ffi.base.DGLError: Device API cuda is not enabled. Please install the cuda version of dgl.",
        "dgl-cpu-build-on-cuda",
    ),
    (
        "FileNotFoundError: Cannot find DGL C++ graphbolt library at /opt/venv/lib/python3.11/"
        "site-packages/dgl/graphbolt/libgraphbolt_pytorch_2.4.1.so",
        "dgl-graphbolt-missing-for-torch",
    ),
    (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:",
        "xformers-no-operator",
    ),
]
EXAMPLES += [
    ("gsplat: No CUDA toolkit found. gsplat will be disabled.", "gsplat-no-cuda-toolkit"),
]
# GPU runtime and inference libraries (matrices/signatures/runtimes.toml)
EXAMPLES += [
    (
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        "onnxruntime-cpu-package",
    ),
    (
        "WARNING:2025-05-27 20:22:28,949:jax._src.xla_bridge:791: An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        "jax-cpu-jaxlib",
    ),
    (
        "warning: one possible reason is that llama.cpp was compiled without GPU support",
        "llamacpp-built-without-gpu",
    ),
    (
        "ValueError: This CTranslate2 package was not compiled with CUDA support",
        "ctranslate2-cpu-build",
    ),
    (
        "Cannot use CUDAPlace in CPU only version, Please recompile or reinstall Paddle with CUDA support.",
        "paddle-cpu-package",
    ),
    (
        "AttributeError: /usr/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: cget_col_row_stats",
        "bitsandbytes-cpu-library",
    ),
    ("WARNING - CUDA extension not installed.", "autogptq-cuda-extension-missing"),
    ("Failed to import CuPy.", "cupy-import-failed"),
    (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1548 TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file or directory",
        "onnxruntime-cuda-provider-library-missing",
    ),
    (
        "2020-04-06 10:30:18.954700: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1592] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.",
        "tensorflow-gpu-libraries-not-loaded",
    ),
    (
        "WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load cuDNN. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "jax-cuda-library-not-loaded",
    ),
    (
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on is not configured correctly. (error code is 126)",
        "paddle-cuda-library-not-loaded",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.",
        "jax-no-visible-gpu",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: no supported devices found for "
        "platform CUDA",
        "xla-no-supported-devices",
    ),
    (
        "ggml_cuda_init: failed to initialize CUDA: system not yet initialized",
        "ggml-cuda-init-failed",
    ),
    (
        "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:306] kernel version 460.56.0 does not match DSO version 470.57.2 -- cannot find working devices in this configuration",
        "xla-kernel-module-dso-mismatch",
    ),
]
EXAMPLES += [
    (
        "[05/02/2022-15:17:45] [TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.2.3 got 8.2.1, please rebuild.",
        "tensorrt-engine-from-another-build",
    ),
    (
        "[TRT] [W] Requested amount of GPU memory (4294967296 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.",
        "tensorrt-gpu-out-of-memory",
    ),
    (
        "[TRT] [W] CUDA initialization failure with error: 35. Please check your CUDA installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
        "tensorrt-cuda-init-failure",
    ),
    (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:351] failed call to cuInit: UNKNOWN ERROR (303)",
        "tensorflow-cuinit-unknown-error",
    ),
]
EXAMPLES += [
    (
        "2023-10-10 20:16:12.417514: I tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:1960] Could not find cuda drivers on your machine, GPU will not be used.",
        "tensorflow-no-cuda-driver",
    ),
    (
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be found.",
        "numba-cuda-driver-not-found",
    ),
    (
        "numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:",
        "numba-nvvm-not-found",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Couldn't get ptxas version string: INTERNAL: Couldn't invoke ptxas --version",
        "xla-ptxas-missing",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call 'xla.gpu.custom_call' failed: jaxlib/gpu/solver_kernels.cc:45: operation gpusolverDnCreate(&handle) failed: cuSolver internal error.",
        "jax-cusolver-handle-failed",
    ),
    ("ERROR: Out of GPU memory trying to allocate 1.500 GiB", "runtime-gpu-out-of-memory-wordings"),
    (
        "Error named symbol not found at line 529 in file /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/ops.cu",
        "bitsandbytes-kernel-symbol-missing",
    ),
    (
        "ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.",
        "library-gpu-unsupported-compute-type",
    ),
]
EXAMPLES += [
    (
        'time=2024-07-09T13:56:46.484Z level=WARN source=gpu.go:226 msg="version mismatch between driver and cuda driver library - reboot or upgrade may be required: library /usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07"',
        "ollama-driver-library-mismatch",
    ),
    (
        'time=2024-05-01T10:00:00.000Z level=WARN source=gpu.go:228 msg="unknown error initializing cuda driver library /usr/lib/x86_64-linux-gnu/libcuda.so.535.161.08: cuda driver library init failure: 999. see https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md for more information"',
        "ollama-cuda-driver-init-failure",
    ),
    (
        'time=2024-05-01T10:00:00.000Z level=INFO source=gpu.go:396 msg="no compatible GPUs were discovered"',
        "ollama-no-gpu-found",
    ),
    (
        'time=2024-05-01T10:00:00.000Z level=INFO source=gpu.go:295 msg="[0] CUDA GPU is too old. Compute Capability detected: 3.0"',
        "ollama-gpu-too-old",
    ),
    (
        "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:640 CreateExecutionProviderInstance] "
        "Failed to create CUDAExecutionProvider. Please reference "
        "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements "
        "to ensure all dependencies are met.",
        "onnxruntime-cuda-provider-not-created",
    ),
]
# gpu_state.toml: the kernel driver's Xid lines by number; a program's own 'CUDA not usable'
EXAMPLES += [
    (
        "NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_8 faulted @ 0x73ac_1c000000.",
        "nvrm-xid-application",
    ),
    (
        "Dec  2 10:43:35 worker4 kernel: [240314.528856] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdd60000",
        "nvrm-xid-uncorrectable-ecc",
    ),
    (
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
        "nvrm-xid-row-remap",
    ),
    (
        "[Tue Apr  9 01:21:38 2024] NVRM: Xid (PCI:0000:a1:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "nvrm-xid",
    ),
    ("Warning: torch.cuda.is_available() returned False.", "cuda-is-available-false"),
    (">>> torch.cuda.is_available()", "cuda-is-available-repl"),
    (
        "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
        "autocast-cuda-unavailable",
    ),
    (
        "TypeError: type torch.cuda.BFloat16Tensor not available",
        "torch-cuda-tensor-type-unavailable",
    ),
    ("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'", "half-op-on-cpu"),
    ("torch==2.1.0+cpu", "torch-build-printed"),
]
# driver and NCCL failures as other layers word them (matrices/signatures/driver_nccl_layers.toml)
EXAMPLES += [
    ("RuntimeError: Failed to dlopen libcuda.so", "libcuda-dlopen-failed"),
    (
        'Unable to find cuda lib under the names ["cuda", "nvcuda"]. Please open GitHub issue.',
        "libcuda-dlopen-failed",
    ),
    (
        "terminate called after throwing an instance of 'std::runtime_error'  what():  Error "
        "(gpu_burn-drv.cpp:298): system not yet initialized",
        "cuda-system-not-ready-message",
    ),
    (
        "Spotllm:73025:73112 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to "
        "/opt/microsoft/ncv4/graph.xml",
        "nccl-graph-file-injected",
    ),
    (
        "vm:16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.",
        "nccl-graph-file-injected",
    ),
    (
        "llm207:149:157 [1] NCCL INFO NET/Socket : Using [0]eno1:172.17.120.207<0> "
        "[1]br-30d1aa8d4e26:172.31.0.1<0> [2]br-55beb62cf491:172.25.0.1<0>",
        "nccl-socket-interface-list",
    ),
    ("INFO NET/Socket : Using", "nccl-socket-interface-list"),
    (
        "Call to connect returned Connection timed out, retrying",
        "nccl-connect-returned",
    ),
    ("Proxy Call to rank 0 failed (Connect)", "nccl-proxy-call-failed"),
    ("torch.distributed.DistNetworkError: Socket Timeout", "c10d-socket-timeout"),
]

# arch_floors.toml: a kernel library's own floor or ceiling, PTX older than its target
EXAMPLES += [
    ("ERROR: Your GPU does not support Int8 Matmul!", "bitsandbytes-int8-matmul-unsupported"),
    ("ValueError: Unsupported CUDA architecture: sm75", "sageattention-unsupported-arch"),
    (
        "    requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too new)",
        "xformers-op-gpu-too-new",
    ),
    (
        "ptxas /tmp/tmpmwke15zw.ptx, line 6; error   : PTX .version 8.4 does not support .target sm_120a",
        "ptx-version-lacks-target",
    ),
]
EXAMPLES += [
    (
        "/src/ggml/src/ggml-cuda/mmv.cu:51: ERROR: CUDA kernel mul_mat_vec has no device code compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 520",
        "ggml-no-device-code-for-arch",
    ),
    (
        "NotImplementedError: No compiled cutlass_scaled_mm for a compute capability less than CUDA device capability: 121",
        "vllm-no-compiled-kernel-for-capability",
    ),
]
EXAMPLES += [
    (
        "'sm_120' is not a recognized processor for this target (ignoring processor)",
        "llvm-unknown-nvptx-processor",
    ),
]
EXAMPLES += [
    ("    Please install PyTorch with a following CUDA", "torch-suggests-cuda-configuration"),
]
EXAMPLES += [
    (
        "ImportError: /usr/lib/i386-linux-gnu/libcuda.so.1: wrong ELF class: ELFCLASS32",
        "shared-object-wrong-elf-class",
    ),
    (
        "OSError: /venv/lib/python3.10/site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: "
        "file too short",
        "shared-object-not-elf",
    ),
    (
        "ImportError: libctranslate2-bc15bf3f.so.4.5.0: cannot enable executable stack as shared "
        "object requires: Invalid argument",
        "shared-object-executable-stack",
    ),
    (
        "./app: relocation error: ./app: symbol _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaI"
        "cEE7compareEPKc version GLIBCXX_3.4.21 not defined in file libstdc++.so.6 with link time "
        "reference",
        "symbol-version-not-defined-link-time",
    ),
    ("GLEW initalization error: Missing GL version", "glew-missing-gl-version"),
    ("ValueError: Invalid device ID (0)", "pyrender-egl-no-device"),
    (
        "F0702 15:00:34.320842 19023 WindowlessContext.cpp:99] Check failed: numDevices > 0 [EGL] "
        "No devices detected",
        "egl-no-devices-detected",
    ),
    (
        "RuntimeError: Cannot find cuda device suitable for rendering cuda:0",
        "vulkan-cuda-device-not-found",
    ),
    ("pyglet.window.NoSuchConfigException", "pyglet-no-gl-config"),
]
EXAMPLES += [
    (
        "OSError: ('Unable to load OpenGL library', 'OSMesa: cannot open shared object file: No "
        "such file or directory', 'OSMesa', None)",
        "pyopengl-library-missing",
    ),
    (
        "OpenGL.error.Error: Attempt to retrieve context when no valid context",
        "pyopengl-no-current-context",
    ),
]
# memory seen through another layer (signatures/memory_layers.toml) and CUDA libraries a runtime
# loads itself (signatures/cuda_libs_layers.toml)
EXAMPLES += [
    (
        "Your session crashed after using all available RAM. If you are interested in access to "
        "high-RAM runtimes, you may want to check out Colab Pro.",
        "notebook-platform-ram-exhausted",
    ),
    (
        "Your notebook tried to allocate more memory than is available. It has restarted.",
        "notebook-platform-ram-exhausted",
    ),
    (
        "The Kernel crashed while executing code in the current cell or a previous cell. Please "
        "review the code in the cell(s) to identify a possible cause of the failure.",
        "notebook-kernel-crashed",
    ),
    (
        "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:49477 (pid=59029) exceeded "
        "95% memory budget. Restarting...",
        "dask-worker-memory-budget",
    ),
    (
        "Container killed by YARN for exceeding memory limits. 2.1 GB of 2 GB physical memory "
        "used. Consider boosting spark.yarn.executor.memoryOverhead.",
        "yarn-container-memory-limit",
    ),
    ("The node was low on resource: [MemoryPressure].", "kubelet-memory-pressure"),
    ("pyarrow.lib.ArrowMemoryError: malloc of size 134217728 failed", "arrow-memory-error"),
    (
        "Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)",
        "ollama-system-memory-check",
    ),
    (
        "ggml_new_object: not enough space in the context's memory pool (needed 26231472, "
        "available 26231136)",
        "ggml-buffer-allocation-failed",
    ),
    ("-bash: fork: Cannot allocate memory", "enomem-in-words"),
    (
        "OSError: [WinError 8] Not enough memory resources are available to process this command",
        "windows-not-enough-memory",
    ),
    (
        "RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.",
        "nvrtc-builtins-not-found",
    ),
    (
        "RuntimeError: Unable to load cuSPARSE. Is it installed?",
        "jax-cuda-library-not-loadable",
    ),
]
EXAMPLES += [
    ("Process finished with exit code -9", "sigkill-other-launchers"),
    (
        "billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 1.",
        "sigkill-other-launchers",
    ),
    (
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was "
        "terminated abruptly while the future was running or pending.",
        "process-pool-worker-terminated",
    ),
    ("Got an OOM, unloading all loaded models.", "gpu-memory-short-in-words"),
]
EXAMPLES += [
    ("memory allocation of 123456 bytes failed", "host-allocation-failed-other-wordings"),
    ("RuntimeError: OOM", "memory-short-in-words"),
]
EXAMPLES += [
    ("PBS: job killed: mem 16777216kb exceeded limit 8388608kb", "hpc-scheduler-memory-limit"),
    (
        "RuntimeError: Couldn't open shared file mapping: <torch_1234_5678>, error code: <1455>",
        "windows-paging-file-code",
    ),
    (
        "AssertionError: Error in memory profiling. Initial free memory 30.5 GiB, current free "
        "memory 35.2 GiB. This happens when the GPU memory was not properly cleaned up before "
        "initializing the vLLM instance.",
        "vllm-memory-profiling-changed",
    ),
    ("Could not load library libcublasLt.so.12. Error", "cuda-library-not-loadable-by-name"),
    ("Invalid handle. Cannot load symbol cublasLtCreate", "cuda-symbol-not-loadable"),
    (
        "RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support "
        "the graph.",
        "cudnn-frontend-no-plan",
    ),
]
EXAMPLES += [
    ("g++: internal compiler error: Killed (program cc1plus)", "compiler-killed-other-wording"),
    (
        "The command '/bin/sh -c pip install flash-attn' returned a non-zero code: 137",
        "sigkill-other-launchers",
    ),
    ("Not enough RAM to load the model", "memory-short-in-words"),
]
# build failures through another layer (matrices/signatures/build_layers.toml): uv's and pip's
# wrappers, pip's isolated build environment, setup.py's torch check, nvcc's MSVC and clang checks
EXAMPLES += [
    (
        "  Caused by: This error likely indicates that flash-attn==2.6.1 depends on torch, but "
        "doesn't declare it as a build dependency. If flash-attn==2.6.1 is a first-party package, "
        "consider adding torch to its `build-system.requires`. Otherwise, `uv pip install torch` "
        "into the environment and re-run with `--no-build-isolation`.",
        "uv-undeclared-build-dependency",
    ),
    (
        "      Building cuda extension requires PyTorch (>=1.13.0) being installed, please install "
        "PyTorch first: No module named 'torch'",
        "setup-requires-torch-installed-first",
    ),
    ("error: The build backend returned an error", "uv-build-backend-error"),
    (
        "  Caused by: Call to `setuptools.build_meta:__legacy__.build_wheel` failed (exit code: 1)",
        "uv-build-backend-error",
    ),
    ("error: metadata-generation-failed", "pip-build-error-reference"),
    ("× Encountered error while trying to install package.", "pip-build-error-reference"),
    (
        '        File "C:\\Users\\x\\AppData\\Local\\Temp\\pip-build-env-qlzqxgtq\\overlay\\Lib\\'
        'site-packages\\setuptools\\build_meta.py", line 334, in get_requires_for_build_wheel',
        "pip-isolated-build-env-frame",
    ),
    (
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.2\\include\\crt/host_config.h"
        "(157): fatal error C1189: #error:  -- unsupported Microsoft Visual Studio version! Only "
        "the versions between 2017 and 2022 (inclusive) are supported! The nvcc flag "
        "'-allow-unsupported-compiler' can be used to override this version check",
        "nvcc-unsupported-msvc-version",
    ),
    (
        "/usr/local/cuda/include/crt/host_config.h:151:2: error: -- unsupported clang version! "
        "clang version must be less than 16 and greater than 3.2 .",
        "nvcc-unsupported-clang-version",
    ),
    (
        "OSError: Could not load this library: /usr/local/lib/python3.10/dist-packages/"
        "torchaudio/lib/libtorchaudio.so",
        "torch-ops-load-library-failed",
    ),
    (
        "ImportError: /root/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: cannot "
        "open shared object file: No such file or directory",
        "jit-extension-cache-missing",
    ),
    (
        "ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or "
        "directory",
        "extension-links-old-torch-library",
    ),
    ("RuntimeError: No such operator torchvision::nms", "companion-operator-missing"),
    (
        "RuntimeError: operator torchvision::roi_align does not exist",
        "companion-operator-missing",
    ),
    (
        "/usr/local/lib/python3.10/dist-packages/torchvision/io/image.py:13: UserWarning: Failed "
        "to load image Python extension: ''If you don't plan on using image functionality from "
        "`torchvision.io`, you can ignore this warning.",
        "torchvision-image-extension-not-loaded",
    ),
]
# storage.toml: a full disk under a checkpoint, a download or a build
EXAMPLES += [
    (
        "RuntimeError: [enforce fail at inline_container.cc:857] . PytorchStreamWriter failed "
        "writing file data/37: file write failed",
        "torch-save-write-failed",
    ),
    (
        "RuntimeError: [enforce fail at inline_container.cc:659] . unexpected pos 2387758464 vs "
        "2387758376",
        "torch-save-write-failed",
    ),
    ("Error: No space left on device (os error 28)", "no-space-left-os-error"),
]
# nccl_transports.toml: NCCL's transports through launchers and engines; GL platforms an OS lacks
EXAMPLES += [
    (
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication "
        'broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or '
        "use `accelerate launch` which will do this automatically.",
        "accelerate-rtx4000-p2p",
    ),
    (
        "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer "
        "access is not supported between these two devices'",
        "custom-allreduce-peer-unsupported",
    ),
    (
        "(RayWorkerWrapper pid=67451, ip=10.1.0.7) ERROR 06-25 15:28:30 worker_base.py:148]     "
        "return func(*args, **kwargs)",
        "ray-worker-on-another-node",
    ),
    ("  min_nodes        : 2", "launcher-node-count"),
    (
        "FileNotFoundError: (\"Could not find module 'EGL' (or one of its dependencies). Try "
        "using the full path with constructor syntax.\", 'EGL', None)",
        "pyopengl-egl-on-windows-or-macos",
    ),
    ("OSError: dlopen(EGL, 6): image not found", "pyopengl-egl-on-windows-or-macos"),
    (
        "node1:1234:1300 [0] misc/cudawrap.cc:188 NCCL WARN cuDriverGetVersion failed with 34",
        "nccl-cu-driver-get-version-failed",
    ),
]
EXAMPLES += [
    (
        "2024-02-15 14:18:20.201828: W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The "
        "NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version "
        "(12.3.107). Because the driver is older than the ptxas version, XLA is disabling "
        "parallel compilation, which may slow down compilation.",
        "xla-ptxas-newer-than-driver",
    ),
    (
        "The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version "
        "(12.6.85). Because the driver is older than the PTX compiler version, XLA is disabling "
        "parallel compilation, which may slow down compilation.",
        "xla-ptxas-newer-than-driver",
    ),
]
EXAMPLES += [
    (
        "ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is "
        "incompatible with the NVIDIA driver, and must be disabled before proceeding.",
        "nvidia-installer-nouveau",
    ),
    (
        "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please "
        "make sure you have installed the kernel source files for your kernel",
        "nvidia-installer-no-kernel-source",
    ),
    ("cudaGetDeviceCount returned 100", "device-query-returned"),
]
# the NVIDIA kernel module not built for the running kernel (DRV224)
EXAMPLES += [
    (
        "Consult /var/lib/dkms/nvidia/535.161.07/build/make.log for more information.",
        "dkms-nvidia-build-failed",
    ),
    (
        "dpkg: error processing package nvidia-dkms-545 (--configure):",
        "dkms-nvidia-build-failed",
    ),
    (
        "Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)",
        "dkms-module-build-failed",
    ),
    (
        'ERROR: An error occurred while performing the step: "Building kernel modules". See '
        "/var/log/nvidia-installer.log for details.",
        "nvidia-installer-build-failed",
    ),
    ("ERROR: Unable to build the NVIDIA kernel module.", "nvidia-installer-build-failed"),
    (
        "gcc: error: unrecognized command-line option '-ftrivial-auto-var-init=zero'",
        "kernel-built-by-other-gcc",
    ),
    ("/bin/sh: 1: x86_64-linux-gnu-gcc-12: not found", "kernel-built-by-other-gcc"),
    (
        "  The kernel was built by: x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0",
        "kernel-built-by-gcc",
    ),
    (
        "/var/lib/dkms/nvidia/470.223.02/build/nvidia/nv-dma.c:747:12: error: implicit "
        "declaration of function 'dma_is_direct'",
        "dkms-nvidia-compile-error",
    ),
    (
        "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.5.0-14-generic",
        "modprobe-nvidia-not-found",
    ),
    (
        "modprobe: ERROR: could not insert 'nvidia': Exec format error",
        "modprobe-nvidia-exec-format",
    ),
    (
        "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
        "modprobe-nvidia-key-rejected",
    ),
    ("ERROR: Unable to load the 'nvidia-drm' kernel module.", "nvidia-installer-load-failed"),
    (
        "[    5.123456] NVRM: The NVIDIA probe routine was not called for 1 device(s).",
        "nvrm-probe-not-called",
    ),
    (
        "  CUDA Driver Version / Runtime Version          11.2 / 11.8",
        "device-query-versions",
    ),
    (
        "I tensorflow/compiler/xla/stream_executor/cuda/cuda_diagnostics.cc:180] kernel reported "
        "version is: 535.104.5",
        "tensorflow-kernel-reported-version",
    ),
    (
        "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.",
        "nvidia-installer-module-loaded",
    ),
    (
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.",
        "ngc-container-no-driver",
    ),
    ("RuntimeError: Failed to infer device type", "vllm-no-platform"),
    (
        "NVIDIA-SMI has failed because it couldn't communicate with NVIDIA driver. Make sure that "
        "latest NVIDIA driver is installed and running.",
        "nvidia-smi-no-driver-old-wording",
    ),
]
EXAMPLES += [
    ("bash: nvidia-smi: command not found", "nvidia-smi-not-installed"),
    ("Command 'nvidia-smi' not found, but can be installed with:", "nvidia-smi-not-installed"),
]

# arch_checks.toml: arch-specific PTX on a plain target, a native program's own CUDA check
EXAMPLES += [
    (
        "ptxas /tmp/tmpxft_000793eb_00000000-6_ds4_mmq.ptx, line 283031; error   : Instruction "
        "'mma with block scale' not supported on .target 'sm_120'",
        "ptxas-arch-specific-on-plain-target",
    ),
    (
        "ptxas /tmp/tmpxft_00000c40_00000000-6_quantize.ptx, line 6092; error   : Instruction "
        "'cvt with .e2m1x2' not supported on .target 'sm_120'",
        "ptxas-arch-specific-on-plain-target",
    ),
    (
        "current device: 0, in function ggml_cuda_compute_forward at "
        "D:\\a\\CrispASR\\CrispASR\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:2824",
        "ggml-cuda-check-site",
    ),
]
EXAMPLES += [
    (
        "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89",
        "fp8-op-below-sm89",
    ),
    (
        "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute "
        "capability >= 9.0 or 8.9, or ROCm MI300+",
        "fp8-op-below-sm89",
    ),
    (
        "ERROR : Arch conditional MMA instruction used without targeting sm90a compute "
        "capability. Aborting.",
        "cutlass-arch-conditional-mma",
    ),
]
EXAMPLES += [
    (
        "  Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS",
        "torch-cmake-unknown-arch-name",
    ),
    (
        "-- Autodetected CUDA architecture(s): 3.5;5.0;8.0;8.6;8.9;9.0;9.0a",
        "torch-cmake-autodetected-archs",
    ),
]

# memory_runtimes.toml: GPU memory short in a library's own words
EXAMPLES += [
    (
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
        "cudnn-convolution-no-algorithm",
    ),
    (
        " Error: cuDNN isn't found BWD filter algo for convolution.",
        "cudnn-convolution-no-algorithm",
    ),
    (
        "RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( "
        'pci_id, &nvml_device) INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp'
        '":815, please report a bug to PyTorch.',
        "torch-oom-report-nvml-assert",
    ),
    (
        "(0) Unknown: Failed to get convolution algorithm. This is probably because cuDNN failed "
        "to initialize, so try looking to see if a warning log message was printed above.",
        "tf-cudnn-convolution-algorithm-failed",
    ),
    (
        "tensorflow.python.framework.errors_impl.InternalError: Blas SGEMM launch failed : "
        "a.shape=(10000, 784), b.shape=(784, 500), m=10000, n=500, k=784",
        "tf-blas-launch-failed",
    ),
]
EXAMPLES += [
    (
        "RuntimeError: DataLoader worker (pid 1657) is killed by signal: Segmentation fault. "
        "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better "
        "error trace.",
        "dataloader-worker-segfault",
    ),
    ("ERROR: Unexpected segmentation fault encountered in worker.", "dataloader-worker-segfault"),
]
EXAMPLES += [
    (
        "[2024-05-02 10:11:12 +0000] [7] [ERROR] Worker (pid:123) was sent SIGKILL! Perhaps out "
        "of memory?",
        "process-manager-sigkill",
    ),
    (
        "May 02 10:11:12 node systemd[1]: ollama.service: Main process exited, code=killed, "
        "status=9/KILL",
        "process-manager-sigkill",
    ),
    (
        "May 02 10:11:12 node systemd[1]: ollama.service: A process of this unit has been killed "
        "by the OOM killer.",
        "process-manager-sigkill",
    ),
]
EXAMPLES += [
    ("OSError: [WinError 8] 存储空间不足，无法处理此命令。", "windows-not-enough-memory-code"),
    (
        "OSError: [WinError 1450] Insufficient system resources exist to complete the requested "
        "service",
        "windows-not-enough-memory",
    ),
    ("OSError: [WinError 14] 存储空间不足，无法完成此操作。", "windows-not-enough-memory-code"),
]
# build_toolchains.toml: CMake's missing CUDA compiler, the host gcc's version banner
EXAMPLES += [
    ("  No CMAKE_CUDA_COMPILER could be found.", "cmake-no-cuda-compiler"),
    (
        "  Could not find compiler set in environment variable CUDACXX:",
        "cmake-no-cuda-compiler",
    ),
    ("gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0", "gcc-version-banner"),
    ("GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0", "gcc-version-banner"),
]
EXAMPLES += [
    ("- flash-attn                2.5.8 ", "compiled-package-version-row"),
    ("| torch | 2.1.2 |", "compiled-package-version-row"),
]
EXAMPLES += [
    ("c++: error: unrecognized command-line option '-std=c++17'", "gcc-unknown-std-flag"),
    ('cc1plus: error: unrecognized command line option "-std=c++14"', "gcc-unknown-std-flag"),
    (
        "UserWarning: Error checking compiler version for cl: [WinError 2] The system cannot find "
        "the file specified",
        "msvc-not-on-path",
    ),
]
EXAMPLES += [
    (
        "  × Building wheel for flash-attn (pyproject.toml) did not run successfully.",
        "pip-building-wheel-did-not-run",
    ),
    (
        "/usr/include/c++/4.8.2/bits/c++0x_warning.h:32:2: error: #error This file requires "
        "compiler and library support for the ISO C++ 2011 standard. This support is currently "
        "experimental, and must be enabled with the -std=c++11 or -std=gnu++11 compiler options.",
        "gcc-iso-cxx11-guard",
    ),
]
EXAMPLES += [
    ("nvcc fatal   : Cannot find compiler 'cl.exe' in PATH", "nvcc-cannot-find-cl"),
    (
        "nvcc fatal   : The version ('80100') of the host compiler ('Apple clang') is not "
        "supported",
        "nvcc-host-compiler-version-unsupported",
    ),
]

EXAMPLES += [
    (
        "node0:1043:1187 [0] NCCL INFO comm 0x55d1c7a4e0 rank 0 nRanks 16 nNodes 2 localRanks 8 "
        "localRank 0 MNNVL 0",
        "nccl-comm-node-count",
    ),
    (
        "h100-15:136:136 [4] NCCL INFO Channel 00/0 : 1[1] -> 4[4] [receive] via "
        "NET/IBext_v8/4/GDRDMA",
        "nccl-channel-via-net",
    ),
    (
        "python -m torch.distributed.run --node_rank=1 --nproc_per_node=8 train.py",
        "launcher-node-rank",
    ),
    (
        "node0:88:88 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.",
        "nccl-shm-disabled-stated",
    ),
    ("xvfb-run: error: Xvfb failed to start", "xvfb-failed-to-start"),
    ("Could not get EGL display", "egl-get-display-failed"),
]
EXAMPLES += [
    (
        "node5:240:240 [6] misc/socket.cc:484 NCCL WARN socketPollConnect: Connect to "
        "10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)",
        "nccl-socket-poll-connect",
    ),
    (
        "node1:91:91 [0] init.cc:1270 NCCL WARN Mismatched NCCL version detected : rank 0 "
        "version 21806 rank 8 version 22005",
        "nccl-version-mismatch",
    ),
    (
        "node1:91:97 [0] transport/net_socket.cc:538 NCCL WARN NET/Socket : peer "
        "10.0.0.2<5432> message truncated : receiving 524288 bytes instead of 65536.",
        "nccl-message-truncated",
    ),
    (
        "node004:27907:27907 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the "
        "operation cannot be performed in the present state'",
        "nccl-nvls-cuda-failure",
    ),
]
EXAMPLES += [
    (
        "#  Rank  0 Group  0 Pid 587622 on Fairfax4way08RTX4090 device  0 [0x21] NVIDIA GeForce "
        "RTX 4090",
        "nccl-tests-device-line",
    ),
    ("GPU 0,1,2,3,4,5,6,7: NVIDIA H20", "engine-env-gpu-list"),
]
# python_imports.toml: an interpreter older than the code's language features, transformers'
# optional backends
EXAMPLES += [
    ("TypeError: 'type' object is not subscriptable", "python-generic-alias-before-3-9"),
    (
        "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'",
        "python-union-operator-before-3-10",
    ),
    (
        "SyntaxError: future feature annotations is not defined",
        "python-future-annotations-before-3-7",
    ),
    (
        "LlamaTokenizer requires the SentencePiece library but it was not found in your "
        "environment. Checkout the instructions on the",
        "transformers-requires-backend",
    ),
]

EXAMPLES += [
    (
        "AttributeError: 'MessageFactory' object has no attribute 'GetPrototype'",
        "protobuf-messagefactory-getprototype",
    ),
    (
        "ImportError: attempted relative import with no known parent package",
        "relative-import-no-parent-package",
    ),
]

EXAMPLES += [
    (
        "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
        "`pip install 'accelerate>=0.26.0'`",
        "transformers-requires-accelerate",
    ),
]

EXAMPLES += [
    ("SyntaxError: invalid syntax", "python-syntax-error-in-package"),
]

EXAMPLES += [
    (
        "ERROR: Ignored the following versions that require a different python version: "
        "1.21.2 Requires-Python >=3.7,<3.11",
        "pip-ignored-requires-python",
    ),
]

# memory_runtimes.toml (round 7): memory failures in other runtimes' and layers' words
EXAMPLES += [
    (
        "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
        "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:"
        "GPU:0 in order to run _EagerConst: Dst tensor is not initialized.",
        "tf-gpu-copy-dst-not-initialized",
    ),
    (
        "InternalError: Failed to call ThenRnnForward with model config: [rnn_mode, "
        "rnn_input_mode, rnn_direction_mode]: 2, 0, 0",
        "tf-cudnn-rnn-forward-failed",
    ),
    (
        "InternalError: Attempting to perform BLAS operation using StreamExecutor without BLAS "
        "support [Op:MatMul]",
        "tf-blas-without-blas-support",
    ),
    ("NotFoundError:  No algorithm worked! [Op:Conv2D]", "tf-cudnn-no-algorithm-worked"),
    (
        "InternalError: Failed to create cuFFT batched plan with scratch allocator",
        "tf-cufft-plan-failed",
    ),
    (
        "Can't reduce memory use below 10.50GiB (11268112384 bytes) by rematerialization; only "
        "reduced to 14.36GiB (15418277273 bytes)",
        "xla-rematerialization-short",
    ),
    ("Prefill out of memory. Try to lower your batch size.", "sglang-kv-pool-exhausted"),
    (
        "ggml_vulkan: Device memory allocation of size 4294967296 failed.",
        "device-memory-short-other-api",
    ),
    (
        "Error an illegal memory access was encountered at line 276 in file /src/csrc/ops.cu",
        "bitsandbytes-cuda-check",
    ),
    (
        "RuntimeError: cublas runtime error : resource allocation failed at "
        "/pytorch/aten/src/THC/THCGeneral.cpp:250",
        "thc-cublas-runtime-error-allocation",
    ),
    (
        "RuntimeError: cublas runtime error : the GPU program failed to execute at "
        "/pytorch/aten/src/THC/THCBlas.cu:249",
        "thc-cublas-runtime-error-execution",
    ),
    (
        "RuntimeError: FIND was unable to find an engine to execute this computation",
        "cudnn-find-no-engine",
    ),
    ("slurmstepd: error: Exceeded step memory limit at some point.", "slurm-memory-limit-exceeded"),
    ("The kernel died, restarting...", "ide-kernel-died"),
    (
        "systemd-oomd[812]: Killed /user.slice/user-1000.slice/session-2.scope due to memory "
        "pressure for /user.slice/user-1000.slice being 85.47% > 50.00% for > 20s with reclaim "
        "activity",
        "userspace-oom-killer",
    ),
    (
        "[ 1234.5678] Task in /docker/3f2a9c killed as a result of limit of /docker/3f2a9c",
        "kernel-oom-report-lines",
    ),
    ("3f2a9c1b   trainer:latest   Exited (137) 2 minutes ago   train", "container-exit-137"),
    (
        "RuntimeError: [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, "
        "nbytes) == 0. 12 vs 0",
        "host-allocation-errno-enomem",
    ),
    (
        "ERROR 11-26 10:00:00 [core_client.py:564] Engine core proc EngineCore_DP0 died "
        "unexpectedly, shutting down client.",
        "vllm-engine-core-died",
    ),
    (
        "进程已结束，退出代码为 137 (interrupted by signal 9:SIGKILL)",
        "sigkill-other-runtimes",
    ),
    (
        "UserWarning: Applied workaround for CuDNN issue, install nvrtc.so (Triggered internally "
        "at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:80.)",
        "cudnn-nvrtc-workaround-warning",
    ),
    ("cupy.cuda.cufft.CuFFTError: CUFFT_INVALID_SIZE", "cuda-math-library-error-class"),
    ("Process finished with exit code 135 (interrupted by signal 7: SIGBUS)", "ide-sigbus"),
    (
        "INFO 05-30 14:48:29 executor_base.py:110] # CUDA blocks: 0, # CPU blocks: 9362",
        "serving-engine-kv-cache-none-left",
    ),
    (
        "[WARNING] [stage3.py:2236:step] 1 pytorch allocator cache flushes since last step. this "
        "happens when there is high memory pressure and is detrimental to performance.",
        "gpu-memory-pressure-warning",
    ),
    (
        "PxgCudaDeviceMemoryAllocator fail to allocate memory 339738624 bytes!! Result = 2",
        "physx-gpu-allocation-failed",
    ),
    (
        "[Error] [omni.physx.plugin] PhysX error: Patch buffer overflow detected, please increase "
        "its size to at least 503808 in the scene desc!",
        "physx-gpu-buffer-overflow",
    ),
    (
        "WARNING: Insufficient arena memory for the number of constraints generated. Increase "
        "arena memory allocation above 14M bytes. Time = 0.0020.",
        "mujoco-arena-full",
    ),
]

EXAMPLES += [
    (
        "ImportError: /envs/x/lib/python3.10/site-packages/vllm/activation_ops.cpython-310-x86_64"
        "-linux-gnu.so: undefined symbol: _ZN3c106detail19maybe_wrap_dim_slowEllb",
        "undefined-symbol-vllm-ops",
    ),
    (
        "Error loading shared library ld-linux-x86-64.so.2: No such file or directory (needed by "
        "/usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)",
        "musl-error-loading-shared-library",
    ),
    # an undefined symbol named by its owner: the OpenMP runtime, libstdc++, the Python C API
    (
        "ImportError: /opt/conda/lib/python3.9/site-packages/implicit/_als.cpython-39-x86_64"
        "-linux-gnu.so: undefined symbol: GOMP_parallel",
        "undefined-symbol-openmp-runtime",
    ),
    (
        "python: symbol lookup error: /opt/intel/mkl/lib/intel64/libmkl_intel_thread.so: "
        "undefined symbol: __kmpc_global_thread_num",
        "undefined-symbol-openmp-runtime",
    ),
    (
        "ImportError: /usr/lib/python3/dist-packages/pylibtashkeel/pylibtashkeel.abi3.so: "
        "undefined symbol: _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7reserveEv",
        "undefined-symbol-libstdcxx",
    ),
    (
        "ImportError: /usr/local/lib/python3.8/site-packages/x/_y.so: undefined symbol: _ZdlPvm",
        "undefined-symbol-libstdcxx",
    ),
    (
        "ImportError: /venv/lib/python3.10/site-packages/ncls/src/ncls.cpython-310-x86_64-linux-"
        "gnu.so: undefined symbol: _PyGen_Send",
        "undefined-symbol-python-c-api",
    ),
    (
        "ImportError: /opt/intel/compilers_and_libraries_2018.1.163/linux/mkl/lib/intel64_lin/"
        "libmkl_gf_lp64.so: undefined symbol: mkl_lapack_ao_zgetrf",
        "undefined-symbol-mkl",
    ),
    # a torch function taking std::__cxx11::string is torch's, not libstdc++'s
    (
        "ImportError: /venv/lib/python3.10/site-packages/foo/_C.so: undefined symbol: "
        "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "undefined-symbol-torch",
    ),
]

EXAMPLES += [
    ("- PyTorch: 2.8.0+cu128", "torch-version-listed"),
    ("PyTorch Version (e.g., 1.0): 2.7", "torch-version-listed"),
    ("- GPU: NVIDIA GeForce GTX 1050 (compute capability 6.1)", "gpu-listed"),
    ("- GPU: GTX 1080 Ti (Pascal, compute capability 6.1)", "gpu-listed"),
]
EXAMPLES += [
    (
        "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.",
        "flash-attn-head-dim-needs-sm80",
    ),
]
EXAMPLES += [
    ("Using device: cuda (NVIDIA GeForce RTX 5090)", "gpu-name-quoted"),
    ("'NVIDIA GeForce RTX 5090'", "gpu-name-quoted"),
]

# build_toolchains.toml: the nvcc a compile command runs, an nvcc older than torch's CUDA, CMake
# without Python's headers, torch's removed THC API, ninja missing, a compiler that could not start
# or was killed
EXAMPLES += [
    (
        "[1/49] /usr/local/cuda-11.5/bin/nvcc  -I/tmp/pip-install-x/flash-attn/csrc/flash_attn -c "
        "-c /tmp/x/flash_fwd_hdim64_fp16_sm80.cu -o /tmp/x.o -gencode arch=compute_80,code=sm_80",
        "nvcc-compile-command",
    ),
    (
        "nvcc fatal   : Unknown option '-generate-dependencies-with-compile'",
        "nvcc-unknown-dependency-option",
    ),
    (
        "-- Could NOT find Python (missing: Python_INCLUDE_DIRS Interpreter Development.Module "
        'Development.SABIModule) (found version "3.10.12")',
        "cmake-python-headers-missing",
    ),
    (
        "AlphAction/alphaction/csrc/cuda/ROIPool3d_cuda.cu:4:10: fatal error: THC/THC.h: No such "
        "file or directory",
        "torch-thc-api-removed",
    ),
    ("src/roi_align.cpp:5:8: error: ‘THCState’ does not name a type", "torch-thc-api-removed"),
    (
        "/usr/local/lib/python3.10/dist-packages/torch/utils/cpp_extension.py:478: UserWarning: "
        "Attempted to use ninja as the BuildExtension backend but we could not find ninja.. "
        "Falling back to using the slow distutils backend.",
        "ninja-missing-distutils-fallback",
    ),
    ("error: command 'nvcc' failed: No such file or directory", "nvcc-could-not-start"),
    ("error: command 'cl.exe' failed: None", "msvc-cl-could-not-start"),
    (
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code -9",
        "build-killed-sigkill",
    ),
    (
        "subprocess.CalledProcessError: Command '['ninja', '-v']' died with <Signals.SIGKILL: 9>.",
        "build-killed-sigkill",
    ),
]


# a library's own capability check in any wording (matrices/signatures/arch_checks.toml)
EXAMPLES += [
    ("FATAL: this function is for sm80, but was built for sm750", "gpu-capability-requirement-any"),
    (
        "Error: CUDA capability sm_61 is not supported. Minimum required: sm_75",
        "library-capability-floor-refused",
    ),
    ("RuntimeError: FlashInfer requires sm75+", "library-capability-floor-refused"),
    (
        "AssertionError: Flash Attention 2 requires compute capability >= 8.0",
        "library-capability-floor-refused",
    ),
    (
        "RuntimeError: FlashAttention-3 only supports Hopper GPUs or newer.",
        "library-capability-floor-refused",
    ),
    (
        "AssertionError: Float8 dynamic activation quantization is only supported on CUDA>=8.9 and MI300+",
        "library-capability-floor-refused",
    ),
    (
        "ValueError: FP8 quantized models is only supported on GPUs with compute capability >= 9.0 (e.g H100)",
        "library-capability-floor-refused",
    ),
    (
        "FP8 models require a GPU with Compute Capability 8.9 or higher",
        "library-capability-floor-stated",
    ),
    (
        "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a "
        "PyTorch release that supports one of these CUDA versions: 12.8",
        "torch-gpu-cc-outside-build",
    ),
]

# NCCL's and aws-ofi-nccl's WARN lines by subsystem, in their source's wordings
EXAMPLES += [
    (
        "gpu1:100:200 [0] NCCL WARN NCCL_SOCKET_IFNAME set to ib0 but no interface found",
        "nccl-socket-ifname-no-interface",
    ),
    (
        "gpu1:100:200 [0] bootstrap.cc:577 NCCL WARN no device found matching exactly ib0, "
        "verify NCCL_OOB_NET_IFNAME",
        "nccl-socket-ifname-no-interface",
    ),
    ("gpu1:100:200 [0] NCCL INFO NCCL_SOCKET_IFNAME set to eth0", "nccl-socket-ifname-stated"),
    (
        "gpu1:100:200 [0] misc/socket.cc:339 NCCL WARN Net : No interface found in the same "
        "subnet as remote address 10.1.2.3<45671>",
        "nccl-no-interface-in-peer-subnet",
    ),
    (
        "gpu1:100:200 [0] misc/socket.cc:582 NCCL WARN bootstrap: connect to 10.0.0.2<38123> "
        "returned Connection timed out, exceeded error retry count after 35 attempts",
        "nccl-peer-connection-timeout",
    ),
    ("NCCL WARN Timeout waiting for connection from peer", "nccl-peer-connection-timeout"),
    (
        "gpu1:100:200 [0] misc/socket.cc:415 NCCL WARN socketTryAccept: Accept failed: Too many "
        "open files",
        "nccl-accept-too-many-open-files",
    ),
    (
        "gpu1:100:200 [0] graph/rings.cc:51 NCCL WARN Error : ring 0 does not contain rank 1",
        "nccl-ranks-disagree",
    ),
    (
        "gpu1:100:200 [0] bootstrap.cc:348 NCCL WARN Bootstrap Root : rank 3 of 8 ranks has "
        "already checked in",
        "nccl-ranks-disagree",
    ),
    (
        "gpu1:100:200 [0] init.cc:232 NCCL WARN NCCL version mismatch with remote peer gpu2 "
        "(local: 2.18.3, remote 2.21.5)",
        "nccl-ranks-disagree",
    ),
    (
        "gpu1:100:200 [0] graph/xml.cc:843 NCCL WARN Could not open XML graph file "
        "/opt/microsoft/ncv4/graph.xml : No such file or directory",
        "nccl-graph-file-unreadable",
    ),
    (
        "gpu1:100:200 [0] transport/p2p.cc:272 NCCL WARN Cuda failure 217 'peer access is not "
        "supported between these two devices'",
        "nccl-peer-access-unsupported",
    ),
    (
        "gpu1:100:200 [0] transport/p2p.cc:250 NCCL WARN cudaIpcGetMemHandle failed : operation "
        "not supported",
        "nccl-peer-access-unsupported",
    ),
    (
        "gpu1:100:200 [0] transport/nvls.cc:138 NCCL WARN Failed to bind NVLink SHARP (NVLS) "
        "Multicast memory of size 1073741824 : CUDA error 1 'invalid argument'.",
        "nccl-nvls-cuda-failure",
    ),
    (
        "gpu1:100:200 [0] nccl_ofi_net.c:583 NCCL WARN NET/OFI Couldn't find any optimal provider",
        "nccl-ofi-plugin-no-provider",
    ),
    (
        "gpu1:100:200 [0] nccl_ofi_rdma.cpp:7308 NCCL WARN NET/OFI OFI fi_getinfo() call failed: "
        "No data available",
        "nccl-ofi-plugin-no-provider",
    ),
    (
        "gpu1:100:200 [0] init.cc:215 NCCL WARN Error: network AWS Libfabric not found.",
        "nccl-ofi-plugin-no-provider",
    ),
    (
        "gpu1:100:200 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : "
        "libnccl-net.so: cannot open shared object file: No such file or directory",
        "nccl-net-plugin-absent",
    ),
    (
        "gpu1:100:200 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
        "nccl-net-plugin-absent",
    ),
    (
        "gpu1:1:2 [0] enqueue.cc:2063 NCCL WARN No algorithm/protocol available for function "
        "AllReduce with datatype ncclFloat32. NCCL_ALGO was set to NVLS.",
        "nccl-no-algorithm-available",
    ),
    (
        "Cuda failure 'peer access is not supported between these two devices'",
        "nccl-peer-access-unsupported",
    ),
    # a container's WARN line is its subsystem's failure, not the container's noise
    ("ae05277d311f:1:2 [0] NCCL WARN NET/Socket : socket progress error", "nccl-warn-socket"),
    (
        "ae05277d311f:1:2 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>",
        "nccl-line-from-container",
    ),
    (
        "DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, "
        "invalid argument, NCCL version 2.14.3",
        "torch-nccl-invalid-argument",
    ),
]
EXAMPLES += [
    (
        "Unable to allocate 38.1 GiB for an array with shape (100000, 51200) and data type float64",
        "numpy-array-allocation-failed",
    ),
    (
        "Stopped reason: OutOfMemoryError: Container killed due to memory usage",
        "container-platform-memory-limit",
    ),
    (
        "Memory limit of 512 MiB exceeded with 523 MiB used. Consider increasing the memory "
        "limit, see https://cloud.google.com/run/docs/configuring/memory-limits",
        "container-platform-memory-limit",
    ),
    ("app[web.1]: Error R14 (Memory quota exceeded)", "container-platform-memory-limit"),
    (
        "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease "
        "`--max-batch-prefill-tokens`",
        "tgi-warmup-prefill-memory",
    ),
    (
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for "
        "kv cache",
        "llama-kv-cache-allocation-failed",
    ),
    (
        "llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache",
        "llama-kv-cache-allocation-failed",
    ),
    (
        "/usr/include/x86_64-linux-gnu/bits/mathcalls.h(79): error: exception specification is "
        'incompatible with that of previous function "cospi" (declared at line 2601 of '
        "/usr/local/cuda/bin/../targets/x86_64-linux/include/crt/math_functions.h)",
        "nvcc-host-header-rejected",
    ),
    (
        "/usr/lib/gcc/x86_64-pc-linux-gnu/14.3.1/include/c++/type_traits(529): error: type name "
        "is not allowed",
        "nvcc-host-header-rejected",
    ),
    (
        "/bin/sh: line 1: /usr/local/cuda/bin/nvcc: No such file or directory",
        "nvcc-not-found-other-shells",
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'",
        "nvcc-not-found-other-shells",
    ),
    ("AssertionError: libcuda.so cannot found!", "triton-libcuda-not-found"),
]
EXAMPLES += [
    ("MemoryError: std::bad_alloc", "host-allocation-failed-other-wordings"),
    ("memory allocation of 34359738368 bytes failed", "host-allocation-failed-other-wordings"),
    (
        "warning: failed to mlock 4368302080-byte buffer (after previously locking 0 bytes): "
        "Cannot allocate memory",
        "llama-mlock-warning",
    ),
    (
        "[Error] [carb.gym.plugin] Gym cuda error: out of memory: "
        "../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1718",
        "isaac-gym-cuda-out-of-memory",
    ),
    (
        "[Error] [carb.gym.plugin] Gym cuda error: an illegal memory access was encountered: "
        "../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 6211",
        "isaac-gym-cuda-error",
    ),
]
EXAMPLES += [
    (
        "RuntimeError: The current installed version of x86_64-conda-linux-gnu-c++ (14.3.0) is "
        "greater than the maximum required version by CUDA 12.8. Please make sure to use an "
        "adequate version of x86_64-conda-linux-gnu-c++ (>=6.0.0, <14.0).",
        "host-compiler-outside-cuda-range",
    ),
    ("  Failed to find nvcc.", "cmake-cuda-toolkit-not-found"),
    (
        "-- Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE "
        "CUDA_INCLUDE_DIRS CUDA_CUDART_LIBRARY)",
        "findcuda-missing-toolkit",
    ),
    (
        "csrc\\ops.cpp(3): fatal error C1083: Cannot open include file: 'Python.h': No such file "
        "or directory",
        "msvc-python-h-missing",
    ),
    ("error: Unable to find vcvarsall.bat", "distutils-no-vcvarsall"),
]
EXAMPLES += [
    (
        "2023-01-01 12:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] "
        "****************************************************************************__________",
        "tf-bfc-allocator-dump",
    ),
]
EXAMPLES += [
    (
        "triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 110592Hardware limit: 101376",
        "triton-shared-memory-over-limit",
    ),
]
# error 802 by its number (driver_states.toml)
EXAMPLES += [
    ("cudaGetDeviceProperties returned 802", "cuda-error-802-by-number"),
    (
        "Currently `nvidia-fabricmanager` is not installed so on A100, H100, H200 and B200 "
        "instances, CUDA initialization fails with 802 system error.",
        "cuda-error-802-by-number",
    ),
]
EXAMPLES += [
    # graphics: Xlib, EGL and Vulkan applications' own words (graphics_layers.toml)
    ("ERROR: cannot connect to X server :0", "x-server-unreachable"),
    ("RuntimeError: eglGetDisplay failed", "egl-no-display"),
    ("eglGetDisplay() returned EGL_NO_DISPLAY", "egl-no-display"),
    ("RuntimeError: failed to find GPUs with Vulkan support!", "vulkan-no-physical-device"),
    (
        "thread 'main' panicked at src/main.rs:12: Failed to find a Vulkan device",
        "vulkan-no-physical-device",
    ),
    # the EGL device and backend a script sets: facts, noise by themselves
    ('os.environ["MUJOCO_EGL_DEVICE_ID"] = "1"', "mujoco-egl-env-stated"),
    ("CUDA_VISIBLE_DEVICES=0 MUJOCO_GL=egl python train.py", "mujoco-egl-env-stated"),
]
EXAMPLES += [
    # NCCL graph/rings.cc: the ranks' rings do not agree (nccl_transports.toml)
    (
        "node [0] graph/rings.cc:51 NCCL WARN Error : ring 1 does not loop back to start (3 != 1)",
        "nccl-ranks-disagree",
    ),
    (
        "node [0] graph/rings.cc:62 NCCL WARN Error : ring 0 does not contain rank 1",
        "nccl-ranks-disagree",
    ),
]
EXAMPLES += [
    # NCCL < 2.12's communicator line (no nNodes): its host prefix is the fact
    (
        "paigcr-b-gpu-1011:4289:4343 [0] NCCL INFO comm 0x7fc8e824c640 rank 0 nranks 4",
        "nccl-comm-node-count",
    ),
]
EXAMPLES += [
    # torch's NCCL error line with a reason no signature knows (here mistyped in the paste)
    (
        "fail to new train...e= NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, "
        "unhanled system error",
        "torch-nccl-error-any-reason",
    ),
]
EXAMPLES += [
    # the torch an environment list states: pip's name-version form, pip freeze's row
    ("torch-2.1.1", "torch-version-installed"),
    ("torch==2.2.0", "torch-version-installed"),
]
EXAMPLES += [
    # glibc's own symbols without a version label (linker_symbols.toml, glibc_symbols.toml)
    (
        "ImportError: /opt/venv/lib/python3.10/site-packages/fastcodec/_native.cpython-310-"
        "x86_64-linux-gnu.so: undefined symbol: fcntl64",
        "undefined-symbol-glibc",
    ),
    (
        "OSError: /usr/lib/libfoo.so.1: undefined symbol: __libc_single_threaded",
        "undefined-symbol-glibc",
    ),
]
EXAMPLES += [
    # the distribution an environment list or os-release names (device_torch_stated.toml)
    ("- OS: Rocky Linux 9.3 (Blue Onyx)", "os-distribution-stated"),
    ('PRETTY_NAME="CentOS Linux 7 (Core)"', "os-distribution-stated"),
]
EXAMPLES += [
    # CUDA's initialisation answering 500 in a container (Docker Desktop, driver 555.85)
    (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? "
        "Error 500: named symbol not found",
        "cuda-init-symbol-not-found",
    ),
    # WSL 2 / Docker Desktop as a log or an issue states them: facts, noise by themselves
    ("I'm using WSL2 (latest Docker Desktop).", "wsl-platform-stated"),
    (
        "Linux DESKTOP-1 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux",
        "wsl-platform-stated",
    ),
]
EXAMPLES += [
    # the kernel module's version line, printed by tools at start-up: the driver (a fact)
    (
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023",
        "nvrm-version-line",
    ),
]
EXAMPLES += [
    # the container runtime's mount of a driver library the image already has (WSL 2)
    (
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
        "0e4d/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown.",
        "container-driver-file-exists",
    ),
]
EXAMPLES += [
    # nvidia-container-cli's device and ldcache refusals (libnvidia-container configure.c)
    ("nvidia-container-cli: device error: 1: unknown device: unknown", "container-device-unknown"),
    (
        "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",
        "cdi-devices-unresolvable",
    ),
    (
        "nvidia-container-cli: ldcache error: open failed: /sbin/ldconfig.real: no such file or "
        "directory: unknown",
        "container-ldcache-missing-ldconfig",
    ),
]
EXAMPLES += [
    # an EGL call's error by its egl.h / eglext.h name or code (graphics.toml)
    ("  what():  Error EGL_BAD_PARAMETER", "egl-call-error-name"),
    ("eglQueryDevicesEXT failed: EGL_BAD_DEVICE_EXT", "egl-call-error-name"),
    ("RuntimeError: eglGetPlatformDisplayEXT failed with error 0x300c", "egl-call-error-name"),
]
EXAMPLES += [
    # torch's facts asked at the interactive prompt or printed (device_torch_stated.toml)
    (">>> torch.__version__", "torch-repl-version"),
    (">>> torch.cuda.get_device_name(0)", "torch-repl-device-name"),
    (">>> torch.cuda.get_device_capability()", "torch-repl-capability"),
    ("torch.cuda.get_device_capability() = (12, 0)", "torch-repl-capability"),
]
EXAMPLES += [
    # NCCL's echo of its InfiniBand HCA filter (nccl.toml): a fact, noise by itself
    ("node1:2301:2388 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1", "nccl-ib-hca-stated"),
]
EXAMPLES += [
    # the topology XML NCCL reads, the net plugin it loaded, NCCL refusing the XML
    # (driver_nccl_layers.toml)
    (
        "algo-1:18562:18635 [0] NCCL INFO NET/OFI Running on p4d.24xlarge platform, Setting "
        "NCCL_TOPO_FILE environment variable to /usr/local/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml",
        "nccl-topo-file-stated",
    ),
    (
        "node:1:1 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /tmp/topo.xml",
        "nccl-topo-file-stated",
    ),
    (
        "2a8874e7d1e6:281:281 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v7)",
        "nccl-net-plugin-loaded",
    ),
    (
        "algo-1:18563:18636 [1] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.11.0-aws",
        "nccl-net-plugin-loaded",
    ),
    (
        "test-nccl-p5-2-worker-0:75:95 [2] graph/xml.h:101 NCCL WARN Attribute arch of node cpu "
        "not found",
        "nccl-topology-xml-rejected",
    ),
    (
        "node:1:1 [0] graph/xml.cc:394 NCCL WARN XML Topology has wrong version 1, 2 needed",
        "nccl-topology-xml-rejected",
    ),
]
EXAMPLES += [
    # Omniverse Kit refusing the GPU for ray tracing (graphics.toml)
    (
        "2025-03-04 13:07:13 [10,621ms] [Error] [gpu.foundation.plugin] Raytracing is not "
        "supported on GPU: 0. Hardware, driver or Operating system upgrade is required.",
        "kit-raytracing-unsupported",
    ),
]
EXAMPLES += [
    # Xlib's report of a GLX error (graphics.toml glx-driver-not-loaded)
    ("X Error of failed request:  GLXBadContext", "glx-driver-not-loaded"),
]
EXAMPLES += [
    # egl-call-error-name: a hex code is read only whole (an address that starts with it is not)
    ("eglQueryDevicesEXT failed: 0x322B", "egl-call-error-name"),
]
EXAMPLES += [
    # any package's copy of flash-attn's setup.py check of CUDA_HOME's nvcc (causal-conv1d, mamba)
    (
        "RuntimeError: causal_conv1d is only supported on CUDA 11.6 and above.  Note: make sure "
        "nvcc has a supported version by running nvcc -V.",
        "flash-attn-build-nvcc-too-old",
    ),
    (
        "RuntimeError: mamba_ssm is only supported on CUDA 11.6 and above.  Note: make sure nvcc "
        "has a supported version by running nvcc -V.",
        "flash-attn-build-nvcc-too-old",
    ),
    # half-precision arithmetic compiled for a target below sm_53 (TOR193)
    (
        'kernels/gptq/q_gemm.cu(115): error: identifier "__hfma2" is undefined',
        "half-intrinsic-below-sm53",
    ),
    (
        "$SRC_DIR/torchao/csrc/cuda/marlin_qqq/marlin_qqq_kernel.cu(152): error: identifier "
        '"__hfma2" is undefined',
        "half-intrinsic-below-sm53",
    ),
    (
        'quant_cuda_kernel.cu(654): error: identifier "__hmul" is undefined',
        "half-intrinsic-below-sm53",
    ),
]
EXAMPLES += [
    # pip's cwd line of a failed build step names the requirement it was building (a fact)
    (
        "  cwd: /tmp/pip-install-j_w5fu6j/xformers_a410e59a64e44f4680a66d17fd87f8a9",
        "pip-build-dir-named",
    ),
]
EXAMPLES += [
    # torch's and the setup.py files' own warnings during a build: noise (build_layers.toml)
    (
        "/home/eric/llm-awq/.venv/lib/python3.10/site-packages/torch/utils/cpp_extension.py:388: "
        "UserWarning: The detected CUDA version (11.8) has a minor version mismatch with the "
        "version that was used to compile PyTorch (11.7). Most likely this shouldn't be a problem.",
        "torch-cuda-minor-mismatch-warning",
    ),
    (
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
        "torch-no-cuda-runtime-at-build",
    ),
    (
        "W0313 07:19:09.234000 57115 torch/utils/cpp_extension.py:531] There are no "
        "x86_64-linux-gnu-g++ version bounds defined for CUDA version 12.8",
        "torch-compiler-bounds-warning",
    ),
    (
        "Your compiler (c++) is not compatible with the compiler Pytorch was",
        "torch-wrong-compiler-warning",
    ),
    ("Precompiled wheel not found. Building from source...", "prebuilt-wheel-not-found"),
]
EXAMPLES += [
    # ninja 1.12+'s failed step killed by SIGKILL (137): a compiler out of memory (SYS160)
    (
        "[build] FAILED: [code=137] ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/template-instances/"
        "fattn-mma-f16-instance-ncols1_8-ncols2_2.cu.o",
        "ninja-step-killed",
    ),
]
EXAMPLES += [
    # torch's extension builder parsing torch.version.cuda, None in a CPU-only torch (TOR110)
    (
        "          torch_cuda_version = packaging.version.parse(torch.version.cuda)",
        "cpp-extension-cpu-torch",
    ),
]
EXAMPLES += [
    # CMake's own cmake_minimum_required check (SYS153: the CMake to install)
    (
        "  CMake 3.26 or higher is required.  You are running version 3.22.1",
        "cmake-too-old",
    ),
]
EXAMPLES += [
    # verbs calls refused with ENOMEM in NCCL's and UCX's words: the memlock limit (SYS180)
    (
        "msm-h200-2:4016:4653 [7] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed "
        "with error Cannot allocate memory",
        "memlock-limit",
    ),
    (
        "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot "
        "allocate memory",
        "memlock-limit",
    ),
    (
        "[1652740949.516398] [cn0337:3290573:0]         ib_mlx5.c:90   UCX  ERROR "
        "mlx5dv_create_cq(cqe=4096) failed: Cannot allocate memory",
        "memlock-limit",
    ),
    (
        "[1668693503.473099] [ampere:1188443:0]          ib_log.c:246  UCX  ERROR mlx5_0: "
        "ibv_create_cq() failed: Cannot allocate memory. Please set max locked memory "
        "(ulimit -l) to 'unlimited' (current: 64 kbytes)",
        "memlock-limit",
    ),
    # XLA's device allocator (TPU HBM) in its own words
    (
        "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 50.00M. "
        "That was not possible. There are 27.86M free.; (0x0x0_HBM0)",
        "xla-device-allocation-refused",
    ),
    (
        "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Error loading program "
        "'jit_train_step': Attempting to reserve 51.43G at the bottom of memory. That was not "
        "possible. There are 46.61G free, 0B reserved, and 46.61G reservable.",
        "xla-device-allocation-refused",
    ),
    # cuBLAS's allocation failure: GPU memory, apart from NOT_INITIALIZED
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "cublas-alloc-failed",
    ),
    # torch's allocator under a per-process fraction (ComfyUI): GPU memory, not host memory
    (
        "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out "
        "of memory)",
        "torch-allocation-exceeds-allowed",
    ),
    # torch's device out-of-memory exception by its type alone (ComfyUI's error report)
    ("- **Exception Type:** torch.OutOfMemoryError", "torch-device-oom-exception"),
    # GNU make reporting a recipe whose shell exited 128+9 (SIGKILL)
    ("make: *** [Makefile:12: train] Error 137", "sigkill-other-launchers"),
    # HTCondor's starter holding a job over its request_memory
    (
        "Job has gone over cgroup memory limit of 6144 megabytes. Last measured usage: 6150 "
        "megabytes.  Consider resubmitting with a higher request_memory.",
        "hpc-scheduler-memory-limit",
    ),
]

EXAMPLES += [
    # NCCL's driver-API check (numbered form) in its cuMem files: host memory in shm.cc,
    # device buffers in alloc.h (NET126); cuMemCreate's out of memory stays the CUDA error's
    (
        "[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda "
        "failure 217 'peer access is not supported between these two devices'",
        "nccl-cumem-cuda-failure",
    ),
    (
        "n176-080-198:2657296:2658232 [0] include/alloc.h:102 NCCL WARN Cuda failure 1 "
        "'invalid argument'",
        "nccl-cumem-cuda-failure",
    ),
    (
        "n176-080-198:2657296:2658232 [0] include/alloc.h:103 NCCL WARN Cuda failure 2 "
        "'out of memory'",
        "cuda-error",
    ),
]

EXAMPLES += [
    # NCCL's one-rank-per-GPU check in its newer wording (MIG instances, MPS) and NVLS forced
    # on over such ranks (CUD152)
    (
        "h200-0:2001:2040 [0] init.cc:1057 NCCL WARN Multiple Ranks are using the same "
        "GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.",
        "nccl-duplicate-gpu",
    ),
    (
        'h200-0:2001:2040 [0] transport/nvls.cc:254 NCCL WARN NCCL_NVLS_ENABLE has been set to "1"'
        " and communicator has multiple ranks using the same NVML device. This is not compatible "
        "with NCCL_NVLS_ENABLE=1.",
        "nccl-duplicate-gpu",
    ),
    # NCCL's MNNVL check: IMEX channel or IMEX domain (NET127), 2.25's wording too
    (
        "gb200-0:3310:3390 [0] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 8) is available but not "
        "working on this system. Check the IMEX channel configuration "
        "(/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
        "nccl-mnnvl-imex-not-working",
    ),
    (
        "gb200-0:3310:3390 [0] mnnvl.cc:62 NCCL WARN MNNVL (cliqueSize 4) is available but not "
        "supported on this system. Check the IMEX configuration.",
        "nccl-mnnvl-imex-not-working",
    ),
]

EXAMPLES += [
    # CUTLASS/CuTe headers a source build vendors as a git submodule (SYS165), in GCC's,
    # MSVC's and nvcc's front end's words
    (
        "csrc/flash_attn/src/flash.h:10:10: fatal error: cute/tensor.hpp: No such file or "
        "directory",
        "vendored-cutlass-headers-missing",
    ),
    (
        "tiny-cuda-nn/cutlass_matmul.h(40): fatal error C1083: Cannot open include file: "
        "'cutlass/cutlass.h': No such file or directory",
        "vendored-cutlass-headers-missing",
    ),
    (
        'csrc/grouped_gemm.cu(8): catastrophic error: cannot open source file "cutlass/bfloat16.h"',
        "vendored-cutlass-headers-missing",
    ),
]

# thread creation refused: the errno decides (EAGAIN a limit, EPERM a container's seccomp)
EXAMPLES += [
    (
        "OpenBLAS blas_thread_init: pthread_create failed for thread 50 of 64: Resource "
        "temporarily unavailable",
        "thread-create-refused-limit",
    ),
    (
        "OpenBLAS blas_thread_init: pthread_create: Resource temporarily unavailable",
        "thread-create-refused-limit",
    ),
    (
        "libgomp: Thread creation failed: Resource temporarily unavailable",
        "thread-create-refused-limit",
    ),
    ("OMP: System error #11: Resource temporarily unavailable", "thread-create-refused-limit"),
    ("bash: fork: retry: Resource temporarily unavailable", "thread-create-refused-limit"),
    ("<jemalloc>: arena 0 background thread creation failed (11)", "thread-create-refused-limit"),
    (
        "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or "
        "process/resource limits reached",
        "thread-create-refused-limit",
    ),
    (
        "thread '<unnamed>' panicked at 'failed to spawn thread: Os { code: 11, kind: "
        'WouldBlock, message: "Resource temporarily unavailable" }\'',
        "thread-create-refused-limit",
    ),
    (
        "OpenBLAS blas_thread_init: pthread_create failed for thread 1 of 40: Operation not "
        "permitted",
        "thread-create-refused-eperm",
    ),
    ("runtime/cgo: pthread_create failed: Operation not permitted", "thread-create-refused-eperm"),
    ("RuntimeError: can't start new thread", "python-thread-start-refused"),
]

# host and GPU memory in other runtimes' words (round 11): CUDA libraries' ALLOC_FAILED, CPython's
# and the JVM's fatal errors, Dask's KilledWorker, an exit code 137 capitalised
EXAMPLES += [
    (
        "cuDNN failure 2: CUDNN_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=node01 ; "
        "expr=finder(calgo, algoPerf)",
        "cuda-library-alloc-failed",
    ),
    ("RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", "cuda-library-alloc-failed"),
    (
        "Fatal Python error: Cannot recover from MemoryErrors while normalizing exceptions.",
        "host-allocation-errno-enomem",
    ),
    (
        "# Native memory allocation (mmap) failed to map 2147483648 bytes for committing "
        "reserved memory.",
        "host-allocation-errno-enomem",
    ),
    (
        "distributed.scheduler.KilledWorker: Attempted to run task 'taxcalc_advance-f47d516e' on "
        "4 different workers, but all those workers died while running it. The last worker that "
        "attempt to run the task was tcp://127.0.0.1:49266.",
        "dask-killed-worker",
    ),
    ("Exit code 137", "process-sigkilled"),
    (
        'job 4321 exceeds job hard limit "h_vmem" of queue "all.q@node01" (8589934592.00000 > '
        "limit:8589934592.00000) - sending SIGKILL",
        "hpc-scheduler-memory-limit",
    ),
    (
        "OMP: Error #34: System unable to allocate necessary resources for OMP thread:",
        "thread-create-refused-limit",
    ),
    (
        "OpenBLAS : Program is Terminated. Because you tried to allocate too many memory regions.",
        "openblas-thread-buffers-exhausted",
    ),
    ("State: OUT_OF_MEMORY (exit code 0)", "slurm-oom-kill"),
    ("123456.batch       batch            acct         4  OUT_OF_ME+    0:125", "slurm-oom-kill"),
    ("Container killed on request. Exit code is 137", "process-sigkilled"),
    (
        "ggml_aligned_malloc: insufficient memory (attempted to allocate 24576.00 MB)",
        "host-allocation-errno-enomem",
    ),
]

EXAMPLES += [
    # NumPy 1.x's C-API lookup in an extension under NumPy 2
    ("AttributeError: _ARRAY_API not found", "numpy1-module-array-api-missing"),
    # NumPy's wrapped message joined into one line names the NumPy release: PKG104's line
    (
        "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.2 as it may "
        "crash. To support both 1.x and 2.x versions of NumPy, modules must be compiled with "
        "NumPy 2.0.",
        "numpy1-module-under-numpy2",
    ),
    # pydantic 2's refusals of pydantic 1 code (pydantic/_migration.py, PydanticUserError)
    (
        "pydantic.errors.PydanticImportError: `BaseSettings` has been moved to the "
        "`pydantic-settings` package. See https://docs.pydantic.dev/2.5/migration/"
        "#basesettings-has-moved-to-pydantic-settings for more details.",
        "pydantic-basesettings-moved",
    ),
    (
        "PydanticImportError: `pydantic.utils:ValueItems` has been removed in V2.",
        "pydantic-removed-in-v2",
    ),
    (
        "pydantic.errors.PydanticUserError: The `field` and `config` parameters are not "
        "available in Pydantic V2, please use the `info` parameter instead.",
        "pydantic-v1-form-under-v2",
    ),
    (
        "pydantic.errors.PydanticUserError: If you use `@root_validator` with pre=False (the "
        "default) you MUST specify `skip_on_failure=True`. Note that `@root_validator` is "
        "deprecated and should be replaced with `@model_validator`.",
        "pydantic-v1-form-under-v2",
    ),
    (
        "pydantic.errors.PydanticUserError: `regex` is removed. use `pattern` instead",
        "pydantic-v1-form-under-v2",
    ),
    # pyOpenSSL reading a symbol cryptography's bindings dropped (not a distribution `lib`)
    (
        "AttributeError: module 'lib' has no attribute 'X509_V_FLAG_CB_ISSUER_CHECK'",
        "pyopenssl-binding-symbol-missing",
    ),
]

# the toolchain's own out-of-memory words (libiberty's xmalloc, GCC's heap, BFD's linker): SYS160
EXAMPLES += [
    (
        "cc1plus: out of memory allocating 1048576 bytes after a total of 3221225472 bytes",
        "compiler-out-of-memory",
    ),
    ("virtual memory exhausted: Cannot allocate memory", "compiler-out-of-memory"),
    ("/usr/bin/ld: final link failed: Memory exhausted", "compiler-out-of-memory"),
]

# The NVIDIA kernel module refusing a GPU in its own words (open module without GSP, a GPU the
# release does not know, a legacy branch it names), and CUDA 802 in torch's C10_CUDA_CHECK form
EXAMPLES += [
    ("NVRM: installed in this system is not supported by open", "nvrm-open-module-without-gsp"),
    (
        "             NVRM: nvidia.ko because it does not include the required GPU",
        "nvrm-open-module-without-gsp",
    ),
    (
        "NVRM: installed in this vGPU host system is not supported by",
        "nvrm-open-module-without-gsp",
    ),
    ("               NVRM: NVIDIA 550.120 driver release.", "nvrm-gpu-not-supported-by-release"),
    (
        "NVRM:  supported through the NVIDIA 390.xx Legacy drivers. Please",
        "nvrm-legacy-branch-named",
    ),
    (
        "[15280.304871] NVRM: The NVIDIA Tesla M2070 GPU installed in this system is",
        "nvrm-legacy-gpu-stated",
    ),
    ("Caught exception: CUDA error: system not yet initialized", "cuda-error-802"),
    ("cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY", "cuda-error-802"),
    # nvidia-smi's second line under the NVML mismatch: the user-space library's version
    ("NVML library version: 570.211", "nvml-library-version-stated"),
    # the kernel module's summary that it initialised no GPU: the lines above say why
    ("kernel: NVRM: None of the NVIDIA devices were initialized.", "nvrm-no-gpu-initialized"),
    (
        "[    6.402213] NVRM: The NVIDIA probe routine failed for 1 device(s).",
        "nvrm-no-gpu-initialized",
    ),
    # nvidia-installer: the module it built is refused for want of a trusted signature
    (
        "ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this "
        "is likely because it was not signed by a key that is trusted by the kernel.",
        "nvidia-installer-module-not-signed",
    ),
    (
        "Error: The kernel module failed to load. Secure boot is enabled on this system.",
        "nvidia-installer-module-not-signed",
    ),
    # the container runtime's driver RPC timing out (persistence mode off)
    (
        "stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: "
        "driver rpc error: timed out: unknown.",
        "container-driver-rpc-timeout",
    ),
    # zsh's, dash's and PowerShell's words for a missing nvidia-smi
    ("zsh: command not found: nvidia-smi", "nvidia-smi-not-installed"),
    ("sh: 1: nvidia-smi: not found", "nvidia-smi-not-installed"),
    (
        "nvidia-smi : The term 'nvidia-smi' is not recognized as the name of a cmdlet, function, "
        "script file, or operable program.",
        "nvidia-smi-not-installed",
    ),
]

# urllib3 2's OpenSSL check (the ImportError, and the LibreSSL warning as noise), and pandas
# 2.0's removed DataFrame/Series members by their AttributeError
EXAMPLES += [
    (
        "ImportError: urllib3 v2 only supports OpenSSL 1.1.1+, currently the 'ssl' module is "
        "compiled with 'OpenSSL 1.0.2k-fips  26 Jan 2017'. See: "
        "https://github.com/urllib3/urllib3/issues/2168",
        "urllib3-openssl-floor",
    ),
    (
        "ImportError: urllib3 v2.0 only supports OpenSSL 1.1.1+, currently the 'ssl' module is "
        "compiled with LibreSSL 2.8.3. See: https://github.com/urllib3/urllib3/issues/2168",
        "urllib3-openssl-floor",
    ),
    (
        "/Users/u/venv/lib/python3.9/site-packages/urllib3/__init__.py:35: NotOpenSSLWarning: "
        "urllib3 v2 only supports OpenSSL 1.1.1+, currently the 'ssl' module is compiled with "
        "'LibreSSL 2.8.3'. See: https://github.com/urllib3/urllib3/issues/3020",
        "urllib3-not-openssl-warning",
    ),
    (
        "AttributeError: 'DataFrame' object has no attribute 'append'. Did you mean: '_append'?",
        "object-member-removed",
    ),
    ("AttributeError: 'Series' object has no attribute 'iteritems'", "object-member-removed"),
    ("AttributeError: 'ImageDraw' object has no attribute 'textsize'", "object-member-removed"),
    (
        "AttributeError: 'FigureCanvasAgg' object has no attribute 'tostring_rgb'. Did you mean: "
        "'tostring_argb'?",
        "object-member-removed",
    ),
    (
        "AttributeError: 'FigureCanvasTkAgg' object has no attribute 'tostring_rgb'. Did you "
        "mean: 'tostring_argb'?",
        "object-member-removed",
    ),
]

# kernel-wide limits (SYS188) and torch's MPS allocator (SYS232), memory.toml
EXAMPLES += [
    (
        "elk_1  | max virtual memory areas vm.max_map_count [65530] is too low, increase to at "
        "least [262144]",
        "max-map-count-too-low",
    ),
    (
        "max virtual memory areas vm.max_map_count [65530] likely too low, increase to at least "
        "[262144]",
        "max-map-count-too-low",
    ),
    ("2024-11-28T21:05:16.089+00:00: vm.max_map_count is too low", "max-map-count-too-low"),
    (
        "RuntimeError: unable to mmap 4096 bytes from file </torch_362873_3123855485_63350>: "
        "Cannot allocate memory (12)",
        "torch-shared-mmap-refused",
    ),
    # ENOSPC on the same file is /dev/shm's size, not the map count
    (
        "RuntimeError: unable to mmap 280 bytes from file </torch_59534_1208885928>: No space "
        "left on device (28)",
        "torch-shm-no-space",
    ),
    ("OSError: [Errno 23] Too many open files in system", "system-file-table-full"),
    (
        "Error: ENFILE: file table overflow, open '/app/data/shard-0001.json'",
        "system-file-table-full",
    ),
    ("OSError: [Errno 24] Too many open files", "torch-shm-too-many-open-files"),
    (
        "RuntimeError: MPS backend out of memory (MPS allocated: 2.44 GB, other allocations: 4.34 "
        "GB, max allowed: 6.77 GB). Tried to allocate 10.58 MB on private pool. Use "
        "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may "
        "cause system failure).",
        "torch-mps-out-of-memory",
    ),
    # XLA's TPU compiler out of a memory space (SYS230), memory_runtimes.toml
    (
        "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. "
        "Ran out of memory in memory space smem. Used 1.00M of 1.00M smem. Exceeded smem "
        "capacity by 1.7K.",
        "xla-tpu-compile-out-of-memory",
    ),
    (
        "Compilation failure: Ran out of memory in memory space hbm. Used 12.34G of 8.00G hbm. "
        "Exceeded hbm capacity by 4.34G.",
        "xla-tpu-compile-out-of-memory",
    ),
    # the Kubernetes scheduler's FailedScheduling event (SYS189), memory.toml
    (
        "0/3 nodes are available: 1 PodToleratesNodeTaints, 3 Insufficient nvidia.com/gpu.",
        "k8s-scheduler-insufficient-resource",
    ),
    (
        "Warning  FailedScheduling  3m  default-scheduler  0/3 nodes are available: 3 "
        "Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims "
        "found for incoming pod.",
        "k8s-scheduler-insufficient-resource",
    ),
    (
        "message:0/2 nodes are available: 1 PodToleratesNodeTaints, 2 Insufficient "
        "nvidia.com/gpu. reason:Unschedulable status:False]]",
        "k8s-scheduler-insufficient-resource",
    ),
]

EXAMPLES += [
    # CUB's headers missing (SYS166): in the CUDA toolkit only from 11.0 on; GCC's, clang's,
    # MSVC's and nvcc's front end's words, a lower-case 'no such file' and one without a space
    (
        "src/operator/tensor/./././sort_op-inl.cuh:10:44: fatal error: "
        "cub/device/device_radix_sort.cuh: No such file or directory",
        "cub-headers-missing",
    ),
    ("fatal error: cub/cub.cuh: no such file or directory", "cub-headers-missing"),
    ('cub/cub.cuh:No such file or directory #include "cub/cub.cuh"', "cub-headers-missing"),
    (
        "kernel.cu:3:10: fatal error: 'cub/block/block_reduce.cuh' file not found",
        "cub-headers-missing",
    ),
    (
        "src\\sort.cu(4): fatal error C1083: Cannot open include file: 'cub/cub.cuh': "
        "No such file or directory",
        "cub-headers-missing",
    ),
    (
        'sort.cu(3): catastrophic error: cannot open source file "cub/cub.cuh"',
        "cub-headers-missing",
    ),
    # the toolkit's own headers stay the toolkit's (SYS152)
    ("fatal error: cuda_runtime.h: No such file or directory", "cuda-header-missing"),
]

EXAMPLES += [
    # Thrust's check that the CUB it includes is the toolkit's own (SYS167), GCC's and MSVC's
    (
        "/usr/local/cuda-11.0/bin/../targets/x86_64-linux/include/thrust/system/cuda/config.h:"
        "78:2: error: #error The version of CUB in your include path is not compatible with "
        "this release of Thrust. CUB is now included in the CUDA Toolkit, so you no longer need "
        "to use your own checkout of CUB. Define THRUST_IGNORE_CUB_VERSION_CHECK to ignore this.",
        "thrust-cub-version-mismatch",
    ),
    (
        "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.6/include\\thrust/system/cuda/"
        "config.h(79): fatal error C1189: #error:  The version of CUB in your include path is "
        "not compatible with this release of Thrust.",
        "thrust-cub-version-mismatch",
    ),
    (
        "thrust/system/cuda/config.h:78:2: error: #error Thrust version must match cub version "
        "exactly. Define THRUST_IGNORE_CUB_VERSION_CHECK to ignore.",
        "thrust-cub-version-mismatch",
    ),
]

EXAMPLES += [
    # ptxas refusing a PTX file's ISA version (CUD155), Linux's and Windows' temp files, and
    # the driver's own JIT that says the same of itself (DRV102)
    (
        "ptxas /tmp/tinycuda_03fe6308.ptx, line 9; fatal   : Unsupported .version 8.5; "
        "current version is '7.5'",
        "ptxas-older-than-ptx",
    ),
    (
        "ptxas C:\\Users\\ai\\AppData\\Local\\Temp\\tmpkoko0xtp.ptx, line 5; fatal   : "
        "Unsupported .version 8.8; current version is '8.7'",
        "ptxas-older-than-ptx",
    ),
    (
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.5; current "
        "version is '8.4'",
        "driver-jit-older-than-ptx",
    ),
]

# the NVIDIA kernel module failing to initialise a GPU it found (RmInitAdapter), DRV228
EXAMPLES += [
    (
        "[   81.967331] NVRM: GPU0 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed "
        "with booting GSP",
        "nvrm-gsp-wpr2-already-up",
    ),
    (
        "[    6.118201] NVRM: GPU 0000:01:00.0: GPU does not have the necessary power cables "
        "connected.",
        "nvrm-gpu-power-cables",
    ),
    (
        "[    3.204113] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
        "nvrm-pci-bar-invalid",
    ),
    (
        "[  217.545145] NVRM RmInitAdapter: Cannot initialize GSP firmware RM",
        "nvrm-gsp-firmware-init-failed",
    ),
    (
        "[  217.545142] NVRM kgspInitRm_IMPL: cannot bootstrap riscv/gsp: 0xffff",
        "nvrm-gsp-firmware-init-failed",
    ),
    (
        "[   43.337565] NVRM: kgspBootstrap_GH100: GSP-FMC reported an error while attempting "
        "to boot GSP: 0xb",
        "nvrm-gsp-firmware-init-failed",
    ),
    (
        "NVRM: GPU 000f:01:00.0: RmInitAdapter failed! (0x62:0x1a:2631)",
        "nvrm-gsp-firmware-init-failed",
    ),
    (
        "[  903.610907] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
        "nvrm-rm-init-adapter-failed",
    ),
    (
        "[87669.726572] NVRM: rm_init_adapter failed for device bearing minor number 0",
        "nvrm-rm-init-adapter-failed",
    ),
    (
        "[  903.611884] NVRM: GPU 0000:98:00.0: rm_init_adapter failed, device minor number 0",
        "nvrm-rm-init-adapter-failed",
    ),
    ("[   21.238204] NVRM: osInitNvMapping: *** Cannot attach gpu", "nvrm-rm-init-adapter-failed"),
    (
        "[ 1215.756689] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  535.98  Release "
        "Build  (dvs-builder@U16-I2-C02-10-4)  Tue Aug  1 21:54:36 UTC 2023",
        "nvrm-module-flavour-stated",
    ),
]

# Secure Boot's state as mokutil and bootctl print it (a fact for DRV225)
EXAMPLES += [
    ("SecureBoot enabled", "secure-boot-state-stated"),
    ("$ SecureBoot disabled", "secure-boot-state-stated"),
    ("     Secure Boot: enabled (user)", "secure-boot-state-stated"),
]

# the kernel module finding no GSP firmware file of its release (DRV228)
EXAMPLES += [
    ("[   10.11] NVRM: RmFetchGspRmImages: No firmware image found", "nvrm-gsp-firmware-missing"),
    (
        "[   10.12] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x61:0x56:1697)",
        "nvrm-gsp-firmware-missing",
    ),
]

# subprocess's "died with <Signals.SIGKILL: 9>" is a build's only where the command is one
# (build_toolchains.toml); a training script's is the process killed (SYS190)
EXAMPLES += [
    (
        "subprocess.CalledProcessError: Command '['python', 'train.py']' died with "
        "<Signals.SIGKILL: 9>.",
        "process-sigkilled",
    ),
    (
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'setup.py', "
        "'bdist_wheel']' died with <Signals.SIGKILL: 9>.",
        "build-killed-sigkill",
    ),
]

# a prebuilt binary using instructions the CPU lacks (cpu_instructions.toml: SYS243)
EXAMPLES += [
    ("Illegal instruction (core dumped)", "illegal-instruction-signal"),
    (
        "/bin/bash: line 1: 1758339 Illegal instruction     (core dumped) barbet --input x",
        "illegal-instruction-signal",
    ),
    ('zsh: illegal hardware instruction  python -c "import polars"', "illegal-instruction-signal"),
    ("Fatal Python error: Illegal instruction", "illegal-instruction-signal"),
    ("Illegal instruction: 4", "illegal-instruction-signal"),
    ("非法指令 (核心已转储)", "illegal-instruction-signal"),
    ("Ungültiger Maschinenbefehl (Speicherabzug geschrieben)", "illegal-instruction-signal"),
    (
        "qemu: uncaught target signal 4 (Illegal instruction) - core dumped",
        "illegal-instruction-signal",
    ),
    (
        "WARNING: The requested image's platform (linux/amd64) does not match the detected "
        "host platform (linux/arm64/v8) and no specific platform was requested",
        "container-image-platform-emulated",
    ),
    (
        "Process finished with exit code 132 (interrupted by signal 4: SIGILL)",
        "illegal-instruction-signal",
    ),
    (
        "/usr/lib/python3.10/site-packages/polars/_cpu_check.py:258: RuntimeWarning: "
        "Missing required CPU features.",
        "library-cpu-features-missing",
    ),
    (
        "2019-04-20 17:20:03.915545: F tensorflow/core/platform/cpu_feature_guard.cc:37] The "
        "TensorFlow library was compiled to use SSE4.1 instructions, but these aren't available "
        "on your machine.",
        "library-cpu-features-missing",
    ),
]

# a model file that is not the model: an LFS pointer, an HTML page, a cut-short download
# (model_files.toml: SYS244)
EXAMPLES += [
    ("_pickle.UnpicklingError: invalid load key, 'v'.", "pickle-invalid-load-key"),
    (
        "_pickle.UnpicklingError: Weights only load failed. Unsupported operand 118",
        "pickle-invalid-load-key",
    ),
    (
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central "
        "directory",
        "torch-zip-central-directory-missing",
    ),
    (
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        "safetensors-header-unreadable",
    ),
    (
        "OSError: Unable to synchronously open file (file signature not found)",
        "hdf5-file-signature-not-found",
    ),
    (
        "_pickle.UnpicklingError: Failed to interpret file 'data/x.npy' as a pickle",
        "numpy-load-not-a-pickle",
    ),
]

# text in the locale's legacy encoding (locale_encoding.toml: SYS245)
EXAMPLES += [
    (
        "UnicodeDecodeError: 'gbk' codec can't decode byte 0x80 in position 68: illegal "
        "multibyte sequence",
        "locale-codepage-decode-error",
    ),
    (
        "UnicodeEncodeError: 'charmap' codec can't encode character '\\u030c' in position 50: "
        "character maps to <undefined>",
        "locale-codepage-encode-error",
    ),
    (
        "UnicodeEncodeError: 'ascii' codec can't encode characters in position 7-9: ordinal "
        "not in range(128)",
        "locale-ascii-codec-error",
    ),
]

# torch's CUDA warnings out of memory (driver.toml's cuda-out-of-memory: DRV150)
EXAMPLES += [
    (
        "[W CUDAGuardImpl.h:46] Warning: CUDA warning: out of memory (function destroyEvent)",
        "cuda-out-of-memory",
    ),
]

# a file system quota used up (storage.toml: SYS210)
EXAMPLES += [
    ("OSError: [Errno 122] Disk quota exceeded", "disk-quota-exceeded"),
]

# a model hub the node cannot reach (model_hub.toml: SYS246)
EXAMPLES += [
    (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't "
        "find it in the cached files and it looks like bert-base-uncased is not the path to a "
        "directory containing a file named config.json.",
        "hub-files-unreachable",
    ),
    (
        "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /x/config.json (Caused by SSLError(SSLCertVerificationError"
        "(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local "
        "issuer certificate (_ssl.c:997)')))",
        "https-certificate-verify-failed",
    ),
    (
        "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /facebook/sam-vit-base/resolve/main/config.json (Caused "
        "by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection "
        "to huggingface.co timed out. (connect timeout=10)'))",
        "https-host-unreachable",
    ),
]

# TensorFlow 1.x's dso_loader: the CUDA library it could not open and the path it searched
EXAMPLES += [
    (
        "2018-10-07 12:40:45.846093: I tensorflow/stream_executor/dso_loader.cc:141] Couldn't "
        "open CUDA library libcupti.so.9.0. LD_LIBRARY_PATH: /usr/local/cuda-9.0/lib64",
        "tensorflow-dso-not-opened",
    ),
    (
        "tensorflow/stream_executor/dso_loader.cc:119] Couldn't open CUDA library libcupti.so. "
        "LD_LIBRARY_PATH: /usr/local/nvidia/lib:/usr/local/nvidia/lib64:",
        "tensorflow-dso-not-opened",
    ),
]

# nvidia-docker 1.0's refusal of an image whose CUDA label is newer than the driver's (DRV101)
EXAMPLES += [
    (
        "nvidia-docker | 2017/09/27 19:42:59 Error: unsupported CUDA version: driver 7.5 < "
        "image 8.0.61",
        "nvidia-docker-cuda-unsupported",
    ),
]

# libnvidia-container before 1.8 on a cgroup v2 host (DRV103)
EXAMPLES += [
    (
        "ERROR: for dalle-backend  Cannot start service dalle-backend: failed to create shim: OCI "
        "runtime create failed: runc create failed: unable to start container process: error "
        "during container init: error running hook #0: error running hook: exit status 1, "
        "stdout: , stderr: nvidia-container-cli: container error: cgroup subsystem devices not "
        "found: unknown",
        "container-cgroup-devices-not-found",
    ),
    (
        "Failure: nvidia-container-cli.real: container error: cgroup subsystem devices not found",
        "container-cgroup-devices-not-found",
    ),
]

# NCCL's INFO naming this node's own interface and address (noise, read for the address)
EXAMPLES += [
    (
        "v100-11:41449:41449 [6] NCCL INFO Bootstrap : Using [0]eth0:10.38.10.4<0>",
        "nccl-socket-own-address",
    ),
    (
        "gpu-1012:4152:4206 [0] NCCL INFO NET : Using interface eth0:10.151.40.240<0>",
        "nccl-socket-own-address",
    ),
    (
        "a100:33:33 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>",
        "nccl-socket-virtual-interface",
    ),
]

# the shell's bare 'Killed' below a compile command: the compiler's (SYS160), else SYS190
EXAMPLES += [
    ("      Killed", "compile-step-killed-bare"),
]

# the node count in Accelerate's flag, LLaMA-Factory's NNODES and srun's -N (noise, read for it)
EXAMPLES += [
    ("accelerate launch --num_machines 2 --machine_rank 0 train.py", "launcher-node-count"),
    (
        "FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 llamafactory-cli train cfg.yaml",
        "launcher-node-count",
    ),
    ("srun -N 2 --ntasks-per-node=8 python train.py", "launcher-node-count"),
    ("accelerate launch --machine_rank=1 train.py", "launcher-node-rank"),
]

# the hosts an mpirun or horovodrun -H names (noise, read for where the ranks ran)
EXAMPLES += [
    ("mpirun -np 16 -H host1:8,host2:8 python train.py", "launcher-host-list"),
    ("horovodrun -np 8 -H server1:4,server2:4 python train.py", "launcher-host-list"),
]

# torchrun's 'Rendezvous complete for workers' dump: one agent per node
EXAMPLES += [
    ("  group_world_size=2", "launcher-node-count"),
    ("  group_rank=1", "launcher-node-rank"),
]
# a paste that kept one quote of the pair (xinntao/Real-ESRGAN#777): the bare form reads it
EXAMPLES += [
    (
        "error message (ModuleNotFoundError: No module named "
        "'torchvision.transforms.functional_tensor)",
        "no-module-named-bare",
    ),
]

# NVIDIA's PyTorch container named by its image: a fact (its torch is NVIDIA's pre-release build)
EXAMPLES += [
    ("FROM nvcr.io/nvidia/pytorch:24.02-py3", "ngc-pytorch-image-named"),
    (
        "in the latest release of nvidia-pytorch-docker (the recommended base image), "
        "nvcr.io/nvidia/pytorch:23.11-py3:",
        "ngc-pytorch-image-named",
    ),
]

# torch 1.x's TCPStore raising the bind's errno bare (NET160); CUDA in a forked child (CUD195);
# Ray's GCS client giving up on the head's address (RAY110)
EXAMPLES += [
    ("RuntimeError: Address already in use", "c10d-store-bare-address-in-use"),
    ("执行中报错：RuntimeError: Address already in use", "c10d-store-bare-address-in-use"),
    (
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
        "multiprocessing, you must use the 'spawn' start method",
        "cuda-reinit-in-forked-child",
    ),
    (
        "(VllmWorkerProcess pid=307) ERROR 01-19 03:55:24 multiproc_worker_utils.py:233] "
        "Exception in worker VllmWorkerProcess while processing method init_device: Cannot "
        "re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
        "use the 'spawn' start method, Traceback (most recent call last):",
        "cuda-reinit-in-forked-child",
    ),
    (
        "[2025-02-16 16:05:55,537 E 350061 350061] gcs_rpc_client.h:179: Failed to connect to "
        "GCS at address 172.23.15.13:20000 within 5 seconds.",
        "ray-gcs-unreachable",
    ),
    (
        "ConnectionError: Failed to connect to GCS at address 10.0.0.1:6379 within 30 seconds.",
        "ray-gcs-unreachable",
    ),
    (
        "2023-06-14 23:53:52,845 WARNING utils.py:1397 -- Unable to connect to GCS at "
        "10.0.53.19:49650. Check that (1) Ray GCS with matching version started successfully "
        "at the specified address, and (2) there is no firewall setting preventing access.",
        "ray-gcs-unreachable",
    ),
    (
        "[2025-07-23 10:06:19,681 W 51000 51000] gcs_client.cc:183: Failed to get cluster ID "
        "from GCS server: TimedOut: Timed out while waiting for GCS to become available.",
        "ray-gcs-unreachable",
    ),
]

# vLLM v1's wrapper around a failed engine core (no cause of its own), ld passing over a
# library of another word size (noise), Ray's GCS losing a node (its memory or network)
EXAMPLES += [
    (
        "(APIServer pid=1370) RuntimeError: Engine core initialization failed. See root cause "
        "above. Failed core proc(s): {}",
        "vllm-engine-core-init-failed",
    ),
    (
        "/usr/bin/ld: skipping incompatible /usr/lib/libcuda.so when searching for -lcuda",
        "linker-skipping-incompatible",
    ),
    (
        "2022-09-02 12:53:00,741 WARNING worker.py:1829 -- The node with node id: 5ad7fa5dd64f "
        "and address: 137.78.248.21 and node name: 137.78.248.21 has been marked dead because "
        "the detector has missed too many heartbeats from it.",
        "ray-node-marked-dead",
    ),
]

# Ray's node-death lines in their other wordings: Ray 0.6's monitor, the raylet's own exit
EXAMPLES += [
    (
        "The node with client ID 1eadc9db2f074bfec34caf25dd5bf1f99fad0d59 has been marked dead "
        "because the monitor has missed too many heartbeats from it.",
        "ray-node-marked-dead",
    ),
    (
        "[2022-01-07 12:27:49,931 C 87 87] node_manager.cc:1012: [Timeout] Exiting because this "
        "node manager has mistakenly been marked as dead by the GCS: GCS didn't receive "
        "heartbeats from this node for 30000 ms.",
        "ray-node-marked-dead",
    ),
]

# Ray's later wording of the GCS refusal names the head
EXAMPLES += [
    (
        "2023-07-05 21:46:54,656     WARNING utils.py:1401 -- Unable to connect to GCS (ray head) "
        "at 172.17.0.2:6379. Check that (1) Ray with matching version started successfully at "
        "the specified address, (2) this node can reach the specified address, and (3) there is "
        "no firewall setting preventing access.",
        "ray-gcs-unreachable",
    ),
]

# ray.get's timeout (no cause of its own: pending resources or a hung task)
EXAMPLES += [
    (
        "ray.exceptions.GetTimeoutError: Get timed out: some object(s) not ready.",
        "ray-get-timeout",
    ),
]

# a Python package's own header missing in a build (SYS168), in each compiler's words, and a
# Rust-extension sdist built without a Rust toolchain (SYS169); a torch wheel file named
EXAMPLES += [
    (
        "csrc/flash_attn/flash_api.cpp:1:10: fatal error: torch/extension.h: "
        "No such file or directory",
        "python-package-header-missing",
    ),
    (
        "bbox.c:517:31: fatal error: numpy/arrayobject.h: No such file or directory",
        "python-package-header-missing",
    ),
    (
        "src/main.cpp:1:10: fatal error: 'pybind11/pybind11.h' file not found",
        "python-package-header-missing",
    ),
    (
        "ops.cpp(3): fatal error C1083: Cannot open include file: 'torch/extension.h': "
        "No such file or directory",
        "python-package-header-missing",
    ),
    (
        'kernel.cu(2): catastrophic error: cannot open source file "ATen/cuda/CUDAContext.h"',
        "python-package-header-missing",
    ),
    (
        "vision.h:3:10: fatal error: torch/extension.h: File or directory does not exist",
        "python-package-header-missing",
    ),
    ("fatal error: torch/extension.h: 没有那个文件或目录", "python-package-header-missing"),
    (
        "Cargo, the Rust package manager, is not installed or is not on PATH.",
        "rust-toolchain-missing-sdist-build",
    ),
    ("      error: can't find Rust compiler", "rust-toolchain-missing-sdist-build"),
    ("error: Can not find Rust compiler", "rust-toolchain-missing-sdist-build"),
    (
        "$ pip install https://example.org/whl/cu80/torch-0.4.1-cp35-cp35m-linux_x86_64.whl",
        "torch-wheel-file-named",
    ),
]

# CMake's CUDA architecture list (CUD156): a keyword passed verbatim, native without a GPU, empty
EXAMPLES += [
    (
        "nvcc fatal   : Unsupported gpu architecture 'compute_native'",
        "cmake-cuda-arch-keyword-passed-verbatim",
    ),
    (
        "nvcc fatal   : Unsupported gpu architecture 'compute_all-major'",
        "cmake-cuda-arch-keyword-passed-verbatim",
    ),
    (
        '  CUDA_ARCHITECTURES is set to "native", but no GPU was detected.',
        "cmake-cuda-arch-native-no-gpu",
    ),
    (
        '  CUDA_ARCHITECTURES is set to "native", but no NVIDIA GPU was detected.',
        "cmake-cuda-arch-native-no-gpu",
    ),
    ("  CMAKE_CUDA_ARCHITECTURES must be non-empty if set.", "cmake-cuda-arch-empty"),
]

# a process that died of a signal, in each launcher's words (signals.toml): the signal is a
# fact that routes the line to its family; and the native crash in its own words
EXAMPLES += [
    ("    exitcode  : -11 (pid: 6421)", "process-died-by-signal"),
    (
        "E0101 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) "
        "local_rank: 0 (pid: 1234) of binary: /usr/bin/python",
        "process-died-by-signal",
    ),
    (
        "[2024-01-01 00:00:00,000] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', "
        "'-u', 'train.py', '--local_rank=0'] exits with return code = -11",
        "process-died-by-signal",
    ),
    (
        "mpirun noticed that process rank 0 with PID 1234 on node n1 exited on signal 11 "
        "(Segmentation fault).",
        "process-died-by-signal",
    ),
    (
        "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
        "process-died-by-signal",
    ),
    ("srun: error: node-01: task 0: Segmentation fault (core dumped)", "process-died-by-signal"),
    (
        "subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit "
        "status 139.",
        "process-died-by-signal",
    ),
    ("trainer-1 exited with code 139", "process-died-by-signal"),
    ("    Exit Code:    134", "process-died-by-signal"),
    ("Main process exited, code=dumped, status=11/SEGV", "process-died-by-signal"),
    ("Segmentation fault (core dumped)", "native-crash"),
    ("Fatal Python error: Segmentation fault", "native-crash"),
    ("Fatal Python error: Aborted", "native-crash"),
    ("Aborted (core dumped)", "native-crash"),
    ("[1]    27331 segmentation fault  segfault_example.py", "native-crash"),
    (
        "*** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f12) from PID 0; stack trace: ***",
        "native-crash",
    ),
    ("*** SIGSEGV received at time=1700000000 on cpu 3 ***", "native-crash"),
    (
        "python[1234]: segfault at 0 ip 00007f3c9a2b1c4d sp 00007ffd1c2e3f40 error 4 in "
        "libcublasLt.so.12[7f3c98000000+1f000000]",
        "native-crash",
    ),
    ("double free or corruption (!prev)", "native-crash"),
    ("free(): invalid pointer", "native-crash"),
    ("malloc(): unaligned tcache chunk detected", "native-crash"),
    ("*** stack smashing detected ***: terminated", "native-crash"),
    ("terminate called after throwing an instance of 'c10::Error'", "native-crash"),
    (
        "[photon:943812:0:943812] Caught signal 11 (Segmentation fault: Sent by the kernel at address (nil))",
        "native-crash",
    ),
    ("段错误 (核心已转储)", "native-crash"),
]
# glibc's other heap checks and strsignal's texts in a shell's translation
EXAMPLES += [
    ("free(): double free detected in tcache 2", "native-crash"),
    ("corrupted double-linked list", "native-crash"),
    ("Aborted (core dumped) python train.py --config a.yaml", "native-crash"),
    ("Speicherzugriffsfehler (Speicherabzug geschrieben)", "native-crash"),
    ("已放弃 (核心已转储)", "native-crash"),
]
# more launchers' words for a signal: torch's spawn, multiprocessing's repr, Go's os/exec, Open
# MPI's backtrace, GNU make; Go's runtime and Windows' NTSTATUS for the crash itself
EXAMPLES += [
    (
        "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal "
        "SIGSEGV",
        "process-died-by-signal",
    ),
    (
        "<Process name='Process-1' pid=1234 parent=1 stopped exitcode=-SIGSEGV>",
        "process-died-by-signal",
    ),
    ("Error: signal: segmentation fault (core dumped)", "process-died-by-signal"),
    ("[node1:12345] Signal: Segmentation fault (11)", "process-died-by-signal"),
    ("make: *** [Makefile:12: train] Error 139", "process-died-by-signal"),
    (
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x7f3c9a2b1c4d]",
        "native-crash",
    ),
    ("Process finished with exit code -1073741819 (0xC0000005)", "native-crash"),
]
# the hosts a multi-node launcher states: DeepSpeed's workers and its pdsh command, its world
# (host -> GPU indices), Slurm's node list of several nodes
EXAMPLES += [
    (
        "[2024-01-08 16:13:56,462] [INFO] [multinode_runner.py:80:get_cmd] Running on the "
        "following workers: 192.168.3.100,192.168.3.101",
        "launcher-pdsh-workers",
    ),
    (
        "[INFO] [runner.py:571:main] cmd = pdsh -S -f 1024 -w worker-0,worker-1 export "
        "NCCL_DEBUG=INFO; cd /root; /usr/bin/python -u -m deepspeed.launcher.launch",
        "launcher-pdsh-workers",
    ),
    (
        "[INFO] [launch.py:145:main] WORLD INFO DICT: {'worker-0': [0, 1, 2, 3], "
        "'worker-1': [0, 1, 2, 3]}",
        "launcher-deepspeed-world-info",
    ),
    ("SLURM_JOB_NODELIST=gpu[01-02]", "slurm-node-list"),
    ("export SLURM_NODELIST=node1,node2", "slurm-node-list"),
]

# the GPU a sentence names by its model alone, after a word that says it is the GPU or runs on it
EXAMPLES += [
    ("I'm using an NVIDIA GeForce RTX 3090 with torch==2.0.1+cu117", "gpu-model-in-prose"),
    ("My GPU is a GTX 1080 Ti and I installed torch 2.4.0 from pip", "gpu-model-in-prose"),
    ("Running on a Tesla K80 with pytorch 1.13.1", "gpu-model-in-prose"),
    ("Training on 8x H100 fails at the first step", "gpu-model-in-prose"),
]

# the architecture list a log sets for an extension build
EXAMPLES += [
    ('**export TORCH_CUDA_ARCH_LIST="7.5"**', "torch-cuda-arch-list-set"),
    ("TORCH_CUDA_ARCH_LIST=8.0 bash compile.sh", "torch-cuda-arch-list-set"),
    ("My experimental environment is cuda11.0 RTX3080 pytorch1.7.1", "gpu-model-in-prose"),
]

# torchrun's arguments as PET_ variables (torch/distributed/argparse_util.py), DeepSpeed's rank map
EXAMPLES += [
    ("PET_NNODES=2", "launcher-node-count"),
    ("PET_NODE_RANK=1", "launcher-node-rank"),
    (
        "[INFO] [launch.py:164:main] global_rank_mapping=defaultdict(<class 'list'>, "
        "{'worker-0': [0, 1], 'worker-1': [2, 3]})",
        "launcher-deepspeed-world-info",
    ),
]

# pip's refusal of a wheel by its tags, for any package (PKG194), and a library's import-time
# guard worded as a bound and a side (numba's, PKG101)
EXAMPLES += [
    (
        "ERROR: flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl is not "
        "a supported wheel on this platform.",
        "flash-attn-wheel-not-supported",
    ),
    (
        "ERROR: datoviz-0.1.0a1-cp38-cp38-win_amd64.whl is not a supported wheel on this platform.",
        "wheel-tags-not-supported",
    ),
    (
        "lxml-4.5.0-cp37-cp37m-macosx_10_9_x86_64.whl is not a supported wheel on this platform.",
        "wheel-tags-not-supported",
    ),
    ("ImportError: Numba needs NumPy 1.24 or less", "library-version-guard"),
    ("ImportError: Numba needs NumPy 2.1 or less. Got NumPy 2.2.", "library-version-guard"),
    ("Numba needs NumPy 2.0 or less. Got NumPy 2.1.", "library-version-guard"),
    (
        "ImportError: Numba needs NumPy 1.22 or greater. Got NumPy 1.21.",
        "library-version-guard",
    ),
    (
        '    raise ImportError("Numba needs NumPy 1.22 or less")',
        "library-version-guard",
    ),
    (
        "ImportError: Numba requires SciPy version 1.0 or greater. Got SciPy 0.19.1.",
        "library-version-guard",
    ),
]

# the kernel's ENOEXEC in each layer's words: a binary or image for another CPU (SYS223)
EXAMPLES += [
    ("OSError: [Errno 8] Exec format error: '/usr/local/bin/kallisto'", "exec-format-error"),
    ("bash: ./ArchImmich: cannot execute binary file: Exec format error", "exec-format-error"),
    (
        "redlib.service: Failed to execute /var/www/redlib/redlib: Exec format error",
        "exec-format-error",
    ),
    (
        'standard_init_linux.go:178: exec user process caused "exec format error"',
        "exec-format-error",
    ),
    ("exec /docker-entrypoint.sh: exec format error", "exec-format-error"),
    ("zsh: exec format error: ./piper/piper", "exec-format-error"),
    ("zsh: bad CPU type in executable: ./tool", "exec-format-error"),
    ("-bash: ./tool: Bad CPU type in executable", "exec-format-error"),
]

# uv's refusal of a wheel given by URL (PKG194); a flash-attn file named before its ABI signature
EXAMPLES += [
    (
        "  Caused by: A URL dependency is incompatible with the current platform: "
        "https://example.org/wheels/xformers-0.0.28-cp311-cp311-manylinux_2_28_x86_64.whl",
        "wheel-tags-not-supported",
    ),
    (
        "  Caused by: A URL dependency is incompatible with the current platform: "
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/"
        "flash_attn-2.8.3%2Bcu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl",
        "flash-attn-wheel-not-supported",
    ),
    (
        "ERROR: flash_attn-2.7.4.post1+cu12torch2.5cxx11abiTRUE-cp312-cp312-linux_x86_64.whl "
        "is not a supported wheel on this platform.",
        "flash-attn-wheel-not-supported",
    ),
]

# matplotlib's _check_versions: a floor and the release found (PKG101)
EXAMPLES += [
    ("ImportError: Matplotlib requires numpy>=1.23; you have 1.21.6", "library-version-guard"),
    (
        "ImportError: Keras requires TensorFlow 2.2 or higher. Install TensorFlow via "
        "`pip install tensorflow`",
        "library-version-guard",
    ),
]

# a CUDA call's result by number or NVIDIA's message, in any tool's words (DRV150)
EXAMPLES += [
    ("cuInit returned 999", "cuda-call-result-stated"),
    ("CUDA driver initialization failed, error code 3", "cuda-call-result-stated"),
    ("cuda init failed: error 100", "cuda-call-result-stated"),
    ("failed with error code 999 (unknown error)_", "cuda-call-result-stated"),
    (
        "Run on ubuntu 22.04 with conda, `cudaGetDeviceCount` Error Code 999",
        "cuda-call-result-stated",
    ),
    (
        "/instant-ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/multi_stream.h:44 "
        "cudaStreamCreate(&m_stream) failed with error unknown error",
        "cuda-call-result-stated",
    ),
    (
        "CUDA error = 999 at .../nvblox/nvblox/src/core/cuda_stream.cpp:31 "
        "'cudaStreamCreateWithFlags(&stream_, flags)'. Error string: unknown error.",
        "cuda-call-result-stated",
    ),
    ("ExternalError: CUDA error(999), unknown error.", "cuda-call-result-stated"),
    (
        "CUDA error at /home/u/GpuBTree/src/allocator/pool_allocator.cuh 36: initialization error",
        "cuda-call-result-stated",
    ),
    (
        "CUDA API failed at src/cusz.cu:154 with error: initialization error (3)",
        "cuda-call-result-stated",
    ),
    ("GPU1 CUDA error in CudaProgram.cu:456 : unknown error (999)", "cuda-call-result-stated"),
    ("CUDA error DRIVER: '999' in func 'run_single_stream' line 978", "cuda-call-result-stated"),
    ("CU-INIT failed with driver API error nº 3", "cuda-call-result-stated"),
    ("cuMemAlloc failed: 2", "cuda-call-result-stated"),
]

# the NVIDIA kernel module refused with ENODEV: no GPU it drives (nv.c's nvidia_init_module)
EXAMPLES += [
    (
        "modprobe: ERROR: could not insert 'nvidia': No such device",
        "modprobe-nvidia-no-such-device",
    ),
    (
        "FATAL: Error inserting nvidia_current "
        "(/lib/modules/2.6.38-8-generic/updates/dkms/nvidia-current.ko): No such device",
        "modprobe-nvidia-no-such-device",
    ),
]

# torch's own NVML probe failing, and Xorg's log with the NVIDIA X driver
EXAMPLES += [
    (
        "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:546: "
        "UserWarning: Can't initialize NVML",
        "torch-nvml-init-warning",
    ),
    ("W0101 torch/cuda/__init__.py:716] Can't initialize NVML", "torch-nvml-init-warning"),
    (
        "[   149.400] (EE) NVIDIA(0): Failed to initialize the NVIDIA GPU at PCI:1:0:0.  Please",
        "xorg-nvidia-gpu-init-failed",
    ),
    (
        "(EE) NVIDIA(GPU-0): Failed to initialize the NVIDIA graphics device!",
        "xorg-nvidia-gpu-init-failed",
    ),
    (
        "[  9687.318] (EE) NVIDIA: Failed to load the NVIDIA kernel module. Please check your",
        "xorg-nvidia-kernel-module-not-loaded",
    ),
    ("[   719.532] (EE) No devices detected.", "xorg-no-devices-detected"),
]

# the container runtime and a vGPU library stating CUDA's result (cuda-call-result-stated)
EXAMPLES += [
    (
        "nvidia-container-cli: initialization error: cuda error: unknown error",
        "cuda-call-result-stated",
    ),
    (
        "[HAMI-core ERROR (pid:1 thread=2 libvgpu.c:872)]: cuInit failed:100",
        "cuda-call-result-stated",
    ),
]

# atomicAdd with no overload for its operand type below its architecture floor (TOR193), the
# argument types nvcc lists below it (a fact), and ptxas' static shared memory limit (TOR201)
EXAMPLES += [
    (
        'gridencoder/src/gridencoder.cu(333): error: no instance of overloaded function "atomicAdd"'
        " matches the argument list",
        "atomic-overload-below-target",
    ),
    (
        'dcn_v2_im2col_cuda_double.cu(248): error: no instance of overloaded function "atomicAdd" '
        "matches the argument list argument types are: (double *, double)",
        "atomic-overload-below-target",
    ),
    ("            argument types are: (double *, const double)", "nvcc-overload-argument-types"),
    (
        "ptxas error   : Entry function '_ZN3cub30DeviceRadixSortDownsweepKernelE' uses too much "
        "shared data (0xc300 bytes, 0xc000 max)",
        "ptxas-static-shared-data-over-limit",
    ),
    (
        "ptxas error   : Entry function 'scanExclusive' uses too much shared data (0x4010 bytes + "
        "0x10 bytes system, 0x4000 max)",
        "ptxas-static-shared-data-over-limit",
    ),
]

# a C++17 standard-library name the compiler does not declare, in each compiler's words (SYS131)
EXAMPLES += [
    (
        "sugared_value.h:715:8: error: 'optional' in namespace 'std' does not name a template type",
        "cxx17-library-name-undeclared",
    ),
    ("error: 'std::optional' has not been declared", "cxx17-library-name-undeclared"),
    (
        "sugared_value.h:670:3: note: 'std::optional' is only available from C++17 onwards",
        "cxx17-library-name-undeclared",
    ),
    (
        "expectation.hpp:120:44: error: no template named 'optional' in namespace 'std'; did you "
        "mean simply 'optional'?",
        "cxx17-library-name-undeclared",
    ),
    (
        'csrc/ops.cu(17): error: namespace "std" has no member "string_view"',
        "cxx17-library-name-undeclared",
    ),
    (
        "segment_coo_cpu.h(5,32): error C2039: 'optional': is not a member of 'std'",
        "cxx17-library-name-undeclared",
    ),
]

# a component of nvcc's toolchain crashed on a kernel (CUD193); signal 9 stays SYS160's
EXAMPLES += [
    (
        "nvcc error   : 'ptxas' died due to signal 11 (Invalid memory reference)",
        "cuda-compiler-component-crashed",
    ),
    (
        "nvcc error   : 'cudafe++' died due to signal 11 (Invalid memory reference)",
        "cuda-compiler-component-crashed",
    ),
    ("nvcc error   : 'cicc' died due to signal 6 (Aborted)", "cuda-compiler-component-crashed"),
]

# Triton's compiler failing in an MLIR pass (TOR202) and the Triton release a log states (a fact)
EXAMPLES += [
    ("RuntimeError: PassManager::run failed", "triton-pass-manager-failed"),
    ("> `RuntimeError: PassManager::run failed`", "triton-pass-manager-failed"),
    ("- `triton`: 3.7.0", "triton-version-stated"),
    ("triton==3.1.0", "triton-version-stated"),
    ("triton                    3.3.1", "triton-version-stated"),
]

# ninja's failed build step (noise read for its fact: a .cu object means nvcc was in use)
EXAMPLES += [
    ("FAILED: /tmp/build/temp.linux-x86_64-cpython-310/csrc/ops.o", "ninja-step-failed"),
    (
        "FAILED: vllm-flash-attn/CMakeFiles/_vllm_fa3_C.dir/hopper/instantiations/"
        "flash_fwd_hdimall_fp16_paged_split_sm90.cu.o",
        "ninja-step-failed",
    ),
    ("FAILED: [code=1] csrc/ops.cuda.o", "ninja-step-failed"),
]

# a bfloat16 name of the CUDA toolkit undeclared (CUD110 when nvcc predates CUDA 11.0)
EXAMPLES += [
    (
        'fused_weight_gradient_dense_16bit_prec_cuda.cu(33): error: identifier "CUDA_R_16BF" '
        "is undefined",
        "bf16-name-before-cuda11",
    ),
    ("csrc/ops.h:12:3: error: '__nv_bfloat16' does not name a type", "bf16-name-before-cuda11"),
]

# multiprocessing refusing a child that re-imported an unguarded main module (PY170)
EXAMPLES += [
    (
        "        An attempt has been made to start a new process before the",
        "multiprocessing-main-not-guarded",
    ),
    (
        "RuntimeError: An attempt has been made to start a new process before the current "
        "process has finished its bootstrapping phase.",
        "multiprocessing-main-not-guarded",
    ),
]

# an out-of-memory exception of a `cuda` module (CuPy's) and CuPy's own message without its type
EXAMPLES += [
    (
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 322,122,547,200 bytes "
        "(allocated so far: 0 bytes).",
        "cuda-module-oom-exception",
    ),
    (
        "Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated "
        "so far: 3,635,267,072 bytes).",
        "cuda-module-oom-exception",
    ),
    (
        "Exception in main training loop: out of memory to allocate 163840000 bytes (total "
        "1673061376 bytes)",
        "cuda-module-oom-exception",
    ),
    ("E   mylib.cuda.allocator.OutOfMemoryError: pool exhausted", "cuda-module-oom-exception"),
]

# a Gloo collective that waited past its timeout on a connected pair (NET170)
EXAMPLES += [
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed "
        "out waiting 5000ms for recv operation to complete",
        "gloo-collective-timeout",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136] Timed out "
        "waiting 1800000ms for send operation to complete",
        "gloo-collective-timeout",
    ),
]

# an architecture a build's list names that no GPU has, or spelled for another tool (CUD157);
# CMake's compiler check reducing a keyword to no number (CUD156)
EXAMPLES += [
    ("ValueError: Unknown CUDA arch (12.5) or GPU not supported", "cpp-extension-unknown-arch"),
    ("ValueError: Unknown CUDA arch (8.6；8.9) or GPU not supported", "cpp-extension-unknown-arch"),
    ("ValueError: Unknown CUDA arch () or GPU not supported", "cpp-extension-unknown-arch"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_80+PTX'", "compiler-unknown-arch"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_'", "compiler-unknown-arch"),
    ("nvcc fatal   : Unsupported gpu architecture 'sm_200'", "compiler-unknown-arch"),
    (
        "Id flags: --keep;--keep-dir;tmp;-gencode=arch=compute_,code=sm_ -v",
        "cmake-cuda-arch-keyword-passed-verbatim",
    ),
    ("echo $TORCH_CUDA_ARCH_LIST", "torch-cuda-arch-list-set"),
]

# a server's port already taken on the node (NET162)
EXAMPLES += [
    (
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): "
        "address already in use",
        "server-port-in-use",
    ),
    ("OSError: [Errno 48] Address already in use", "server-port-in-use"),
    (
        "Port 5000 is in use by another program. Either identify and stop that program, or "
        "start the server with a different port.",
        "server-port-in-use",
    ),
]

# Keras' HDF5 loaders decoding a string attribute that h5py 3 returns as str (PY152): the
# traceback's source line, not the bare AttributeError
EXAMPLES += [
    (
        "    original_keras_version = f.attrs['keras_version'].decode('utf8')",
        "h5py-str-attribute-decoded",
    ),
    (
        "    model_config = json.loads(model_config.decode('utf-8'))",
        "h5py-str-attribute-decoded",
    ),
]

# transformers' DynamicCache members a release removed, read by a checkpoint's own model code
EXAMPLES += [
    (
        "AttributeError: 'DynamicCache' object has no attribute 'get_max_length'. Did you mean: "
        "'get_seq_length'?",
        "object-member-removed",
    ),
    (
        "AttributeError: 'DynamicCache' object has no attribute 'seen_tokens'",
        "object-member-removed",
    ),
]

# the frame of a Keras / tf.keras HDF5 loader (PY152 confirms it only with the str-decode error
# under it)
EXAMPLES += [
    (
        '  File "/venv/lib/python3.7/site-packages/tensorflow_core/python/keras/saving/'
        'hdf5_format.py", line 166, in load_model_from_hdf5',
        "h5py-str-attribute-decoded",
    ),
]

# a CUDA device function the build's target or toolkit does not declare (TOR193, CUD110), the
# failing pass's and the compile command's targets (facts), a CUDA header younger than the
# toolkit (CUD110, SYS152)
EXAMPLES += [
    (
        "Model_Hydro/GPU_Hydro/CUFLU_Shared_FullStepUpdate.cu(185): error: identifier "
        '"atomicExch_block" is undefined',
        "device-function-undefined",
    ),
    (
        'logistic_loss.impl(34): error: identifier "atomicAdd" is undefined',
        "device-function-undefined",
    ),
    ('error: identifier "__hmul2_rn" is undefined', "device-function-undefined"),
    ('kernel.cu(12): error: identifier "__shfl_down" is undefined', "device-function-undefined"),
    (
        "8 errors detected in the compilation of "
        '"/tmp/tmpxft_000004bb_00000000-13_all_reduce.compute_52.cpp1.ii".',
        "nvcc-failed-pass-target",
    ),
    (
        "[7/8] /usr/local/cuda/bin/nvcc  -DTORCH_EXTENSION_NAME=lightseq_layers_new "
        "-gencode=arch=compute_52,code=sm_52 -gencode=arch=compute_60,code=sm_60 -c x.cu",
        "nvcc-command-targets",
    ),
    (
        " cpp/tensorrt_llm/kernels/cutlass_kernels/cutlass_type_conversion.h:31:10: fatal error: "
        "cuda_fp4.h: No such file or directory",
        "cuda-header-newer-than-toolkit",
    ),
    (
        "/third_party/cutlass/include/cutlass/float8.h:83:10: fatal error: cuda_fp8.h: No such "
        "file or directory",
        "cuda-header-newer-than-toolkit",
    ),
    (
        "/flashinfer/data/include/flashinfer/utils.cuh:21:10: fatal error: cuda_fp8.h: "
        "没有那个文件或目录",
        "cuda-header-newer-than-toolkit",
    ),
    ("csrc/ops.cu:3:10: fatal error: cuda_runtime.h: 没有那个文件或目录", "cuda-header-missing"),
    ("/usr/include/python3.10/Python.h: 没有那个文件或目录", "python-h-missing"),
    (
        "csrc/aio.cpp:1:10: fatal error: libaio.h: そのようなファイルやディレクトリはありません",
        "system-header-missing",
    ),
]

# a CPU option the compiler does not know: x86's -mavx2 to an ARM compiler, a newer CPU (SYS173)
EXAMPLES += [
    (
        "aarch64-linux-gnu-gcc: 错误: unrecognized command line option '-mavx'",
        "compiler-cpu-option-unknown",
    ),
    ("c++: error: unrecognized command-line option '-mavx2'", "compiler-cpu-option-unknown"),
    (
        "cc: error: unrecognized command line option '-mavxvnni'; did you mean '-mavx512vnni'?",
        "compiler-cpu-option-unknown",
    ),
    ("cc1: error: bad value 'sapphirerapids' for '-march=' switch", "compiler-cpu-option-unknown"),
]

# any other include file the compiler cannot open, the header named (SYS161, open)
EXAMPLES += [
    (
        "csrc/x.cu:3:10: fatal error: infiniband/verbs.h: No such file or directory",
        "include-file-missing",
    ),
    ("csrc/y.cpp:1:10: fatal error: 'omp.h' file not found", "include-file-missing"),
    (
        "a.cpp(2): fatal error C1083: Cannot open include file: 'omp.h': No such file or directory",
        "include-file-missing",
    ),
    (
        'csrc/z.cu(4): catastrophic error: cannot open source file "nvshmem.h"',
        "include-file-missing",
    ),
]

# torch's AT_CHECK macro, removed in torch 1.5 (CUD192)
EXAMPLES += [
    ("error: 'AT_CHECK' was not declared in this scope", "torch-at-check-removed"),
    (
        "pkg/include\\emd.h(32): error C3861: 'AT_CHECK': identifier not found",
        "torch-at-check-removed",
    ),
    ('ops.cu(12): error: identifier "AT_CHECK" is undefined', "torch-at-check-removed"),
]

# nvcc 12's own spelling of a component it ran, its path variable quoted: killed (SYS160),
# crashed (CUD193)
EXAMPLES += [
    (
        "nvcc error   : '\"$CICC_PATH/cicc\"' died due to signal 9 (Kill signal)",
        "compiler-killed-oom",
    ),
    (
        "nvcc error   : '\"$CICC_PATH/cicc\"' died due to signal 11 (Invalid memory reference)",
        "cuda-compiler-component-crashed",
    ),
]

# an nvcc option newer than the toolkit that runs it (CUD110)
EXAMPLES += [
    ("nvcc fatal   : Unknown option '--threads'", "nvcc-option-newer-than-toolkit"),
    (
        "nvcc fatal   : Value 'c++20' is not defined for option 'std'",
        "nvcc-option-newer-than-toolkit",
    ),
]

# a CMake build's own CUDA architectures set in a log (CUD153 reads them at a 'no kernel image')
EXAMPLES += [
    ("set(CMAKE_CUDA_ARCHITECTURES 89)", "cmake-cuda-architectures-set"),
    ('cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;86" ..', "cmake-cuda-architectures-set"),
    ("My torch version is 1.13.1, and pytorch_lightning version is 1.9.5.", "torch-version-listed"),
]

# pybind11's own conversion errors (TOR150 where the signature names a torch C++ type)
EXAMPLES += [
    (
        "TypeError: import_function(): incompatible function arguments. The following argument "
        "types are supported:",
        "pybind11-torch-type-unregistered",
    ),
    (
        "TypeError: Unable to convert function return value to a Python type! The signature was",
        "pybind11-torch-type-unregistered",
    ),
]

# the Unified Memory module not loaded or its device missing (DRV229): nvidia-docker 1.x's line,
# modprobe's refusal of a branch's uvm module, Docker's device it could not find
EXAMPLES += [
    (
        "nvidia-docker | 2016/06/06 22:49:17 Error: Could not load UVM kernel module",
        "uvm-module-not-loaded",
    ),
    (
        "modprobe: ERROR: could not insert 'nvidia_331_uvm': Function not implemented",
        "uvm-module-not-loaded",
    ),
    (
        'error gathering device information while adding custom device "/dev/nvidia-uvm": '
        "lstat /dev/nvidia-uvm: no such file or directory",
        "uvm-module-not-loaded",
    ),
    ("modprobe: FATAL: Module nvidia-uvm not found.", "uvm-module-not-loaded"),
]

# an NGC container's start-up check of CUDA (its entrypoint re-prints deviceQuery's error,
# capitalised, with the number): 802/803/804 by their messages, any other by the number
EXAMPLES += [
    (
        "ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality "
        "will not be available.",
        "ngc-container-cuda-init-failed",
    ),
    ("   [[ Unknown error (error 999) ]]", "ngc-container-cuda-init-failed"),
    (
        "   [[ System has unsupported display driver / cuda driver combination (error 803) ]]",
        "cuda-error-803",
    ),
    ("   [[ System not yet initialized (error 802) ]]", "cuda-error-802"),
    (
        "   [[ Forward compatibility was attempted on non supported HW (error 804) ]]",
        "cuda-error-804",
    ),
]

# PyCUDA's driver-API error: routine, then cuGetErrorString's text (DRV150 from the table)
EXAMPLES += [
    ("pycuda._driver.Error: cuInit failed: unknown error", "pycuda-driver-call-failed"),
    (
        "pycuda._driver.LogicError: cuCtxCreate failed: invalid device ordinal",
        "pycuda-driver-call-failed",
    ),
]

EXAMPLES += [
    (
        "Error response from daemon: linux runtime spec devices: error gathering device information "
        'while adding custom device "/dev/nvidia-uvm-tools": lstat /dev/nvidia-uvm-tools: no such '
        "file or directory",
        "uvm-module-not-loaded",
    ),
]

# CUDA's own start-up out of memory (SYS192 where the node has an address-space limit), as XLA
# printed it under ulimit -v on an H200 and as numba and TensorFlow word cuInit's failure
EXAMPLES += [
    (
        "E1127 22:45:26.876652     906 platform_util.cc:279] Failed to create stream executor for "
        "device CUDA:0: : CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "cuda-init-out-of-memory",
    ),
    (
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results "
        "in CUDA_ERROR_OUT_OF_MEMORY (2)",
        "cuda-init-out-of-memory",
    ),
    (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "cuda-init-out-of-memory",
    ),
]

# a kernel NVRTC compiles at run time that does not compile (CUD158), as CuPy 14.2 printed it on
# an H200 and as numba's NVRTC binding raises it
EXAMPLES += [
    (
        "cupy.cuda.compiler.CompileException: /tmp/tmp4kgc7ptq/ac82dacab99eaa1d5db8d7317d9533170"
        'a34ce46.cubin.cu(1): error: identifier "undefined_x" is undefined',
        "nvrtc-kernel-compile-error",
    ),
    (
        "numba.cuda.cudadrv.driver.NvrtcCompilationError: NVRTC Compilation failure whilst "
        "compiling kernel:",
        "nvrtc-kernel-compile-error",
    ),
]

# CUDA's out-of-memory answer to a pinned host allocation (SYS181, not the GPU's memory), as
# TensorFlow's stream executor logs it (antonilo/unsupervised_detection#15); Ray's refusal of an
# object store larger than /dev/shm (RAY105), Ray 1.2's and Ray 1.3+'s words (ray#14535)
EXAMPLES += [
    (
        "2020-11-24 11:32:25.434730: E tensorflow/stream_executor/cuda/cuda_driver.cc:868] failed "
        "to alloc 4294967296 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "cuda-host-allocation-failed",
    ),
    (
        "Error: cudaMallocHost failed: cudaErrorMemoryAllocation: out of memory",
        "cuda-host-allocation-failed",
    ),
    (
        "ValueError: The configured object store size exceeds the capacity of /dev/shm. This will "
        "harm performance. To proceed regardless of this warning, you can set "
        "RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE=1. Consider deleting files in /dev/shm or increasing "
        "its size with --shm-size in Docker.",
        "ray-object-store-exceeds-shm",
    ),
    (
        "ValueError: The configured object store size (15.032385536 GB) exceeds /dev/shm size "
        "(4.500000768 GB). This will harm performance. Consider deleting files in /dev/shm or "
        "increasing its size with --shm-size in Docker. To ignore this warning, set "
        "RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE=1.",
        "ray-object-store-exceeds-shm",
    ),
]

# llama.cpp's ggml logging a failed cudaMallocHost of its host buffer (SYS181, not the GPU's)
EXAMPLES += [
    (
        "ggml_cuda_host_malloc: failed to allocate 1024.00 MiB of pinned memory: out of memory",
        "cuda-host-allocation-failed",
    ),
]

# an extension's own wheel index page names the torch its wheels were built for, not the
# installed torch (pytorch_geometric#3484: Colab's torch 1.10 under PyG's torch-1.9.0 page;
# OpenMMLab's, detectron2's and DGL's pages the same way)
EXAMPLES += [
    (
        "!pip install -q torch-scatter -f https://data.pyg.org/whl/torch-1.9.0+cu111.html",
        "extension-wheel-index-named",
    ),
    (
        "pip install mmcv-full -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/"
        "index.html",
        "extension-wheel-index-named",
    ),
    (
        "python -m pip install detectron2 -f "
        "https://dl.fbaipublicfiles.com/detectron2/wheels/cu111/torch1.9/index.html",
        "extension-wheel-index-named",
    ),
    (
        "pip install dgl -f https://data.dgl.ai/wheels/torch-2.3/cu121/repo.html",
        "extension-wheel-index-named",
    ),
    (
        "Downloading https://download.pytorch.org/whl/cu111/torch-1.9.0+cu111-cp37-cp37m-"
        "linux_x86_64.whl",
        "torch-wheel-file-named",
    ),
]

# an MPI launch exporting NCCL_SOCKET_IFNAME to every host (Open MPI's -x, MPICH's -genv), as
# NVIDIA/nccl-tests#219 ran it
EXAMPLES += [
    (
        "mpirun -np 2 -pernode --allow-run-as-root -hostfile host.txt -mca btl_tcp_if_include "
        "192.168.0.0/24 -x NCCL_SOCKET_IFNAME=enp6s0 ./nccl-tests/build/all_reduce_perf -b 8",
        "launcher-exported-socket-ifname",
    ),
    (
        "mpiexec -n 16 -ppn 8 -genv NCCL_SOCKET_IFNAME ib0 ./train",
        "launcher-exported-socket-ifname",
    ),
]

# GCC's aarch64 back end's refusals of a CPU option (SYS173): an x86 CPU name for -march and
# -mtune, and an -march feature modifier it does not know (older GCC's wording, no %qs)
EXAMPLES += [
    ("cc1plus: error: unknown value 'core-avx2' for '-march'", "compiler-cpu-option-unknown"),
    ("cc1plus: error: unknown value 'core-avx2' for '-mtune'", "compiler-cpu-option-unknown"),
    (
        "cc1plus: error: invalid feature modifier in '-march=armv8.2-a+dotprod+fp16'",
        "compiler-cpu-option-unknown",
    ),
    (
        "cc1: error: invalid feature modifier 'sve3' in '-march=armv9-a+sve3'",
        "compiler-cpu-option-unknown",
    ),
]

# ninja without its build file (SYS153), and CPython's refusal of extra positional arguments
# (PY160, left open: the line names no argument)
EXAMPLES += [
    ("ninja: error: loading 'build.ninja': No such file or directory", "ninja-no-build-file"),
    (
        "TypeError: forward() takes 2 positional arguments but 3 were given",
        "too-many-positional-arguments",
    ),
    (
        "TypeError: Attention.forward() takes from 2 to 4 positional arguments but 5 were given",
        "too-many-positional-arguments",
    ),
]

# NCCL's own kernels without an image for the GPU (CUD153), nccl-tests' device table in its
# pre-2.11 and Markdown-pasted forms, and a `docker run` command read for its /dev/shm options
EXAMPLES += [
    (
        "gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'",
        "nccl-kernels-no-image",
    ),
    (
        "node1:72:456 [0] enqueue.cc:47 NCCL WARN Cuda failure 'invalid device function'",
        "nccl-kernels-no-image",
    ),
    (
        "#   Rank  0 Pid   1688 on    fastmoe device  0 [0x18] GeForce RTX 2080 Ti",
        "nccl-tests-device-line",
    ),
    (
        " Rank  1 Group  0 Pid 1896106 on noodle-4090-0 device  1 [0x34] NVIDIA GeForce RTX 4090",
        "nccl-tests-device-line",
    ),
    ("docker run --gpus all --rm -it video-diffusion /bin/bash", "container-run-command"),
    (
        "$ sudo nvidia-docker run -it --network=host --ipc=host -v /home:/home img bash",
        "container-run-command",
    ),
]

# pip's conflict check before 20.3 ('has requirement ..., but you'll have'), PKG101
EXAMPLES += [
    (
        "ERROR: torchvision 0.4.2 has requirement torch==1.3.1, but you'll have torch 1.2.0 which "
        "is incompatible.",
        "pip-resolver-conflict",
    ),
]

# pip removing torch while it installs a torch companion (TOR104)
EXAMPLES += [
    ("    Found existing installation: torch 2.4.1", "pip-replaced-torch-for-companion"),
]

# Lines a sweep of RL/LLM trackers found matching nothing: torch_memory_saver's check
# macro with the CUresult by number (DRV150: 2 is out of memory), XLA's pending CUDA error before
# its cuDNN handle (DRV150), Triton with no active backend (TOR110/DRV103), DeepSpeed's CPU op
# built without CUDA (SYS152/CUD110) and CMake finding no cuDNN (SYS152)
EXAMPLES += [
    (
        "[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp "
        "func=cu_mem_create line=103",
        "cuda-check-macro-result",
    ),
    (
        "[torch_memory_saver.cpp] cudaError error: 2 (out of memory)  file=csrc/core.cpp "
        "func=resume line=172",
        "cuda-check-macro-result",
    ),
    (
        "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:407] There was an error before "
        "creating cudnn handle (302): cudaGetErrorName symbol not found. : cudaGetErrorString "
        "symbol not found.",
        "xla-error-before-cudnn-handle",
    ),
    ("RuntimeError: 0 active drivers ([]). There should only be one.", "triton-no-active-driver"),
    (
        " [WARNING]  cpu_adam cuda is missing or is incompatible with installed torch, only cpu "
        "ops can be compiled!",
        "deepspeed-op-cuda-disabled",
    ),
    (
        "      Could not find cudnn_LIBRARY using the following names: cudnn, libcudnn.so.",
        "cmake-cudnn-not-found",
    ),
    (
        "Could NOT find CUDNN (missing: CUDNN_INCLUDE_DIR CUDNN_LIBRARY)",
        "cmake-cudnn-not-found-status",
    ),
]

# a setup.py that found no CUDA toolkit before compiling (vLLM's source build and its copies)
EXAMPLES += [
    (
        "      RuntimeError: Cannot find CUDA_HOME. CUDA must be available to build the package.",
        "setup-cannot-find-cuda-home",
    ),
]

# torch 2.1's out-of-memory report failing at its driver API table (SYS230)
EXAMPLES += [
    (
        'RuntimeError: handle_0 INTERNAL ASSERT FAILED at "../c10/cuda/driver_api.cpp":15, please '
        "report a bug to PyTorch.",
        "torch-oom-report-driver-api-assert",
    ),
]

# Omniverse Kit's renderer losing its Vulkan device (SIM105/SIM104/SIM110, left open)
EXAMPLES += [
    (
        "2025-07-01 13:28:33 [8,091ms] [Error] [carb.graphics-vulkan.plugin] VkResult: "
        "ERROR_DEVICE_LOST",
        "kit-gpu-crash",
    ),
    (
        "2025-07-01 13:28:33 [8,091ms] [Error] [gpu.foundation.plugin] A GPU crash occurred. "
        "Exiting the application...",
        "kit-gpu-crash",
    ),
]

# torch's expandable segments asserting after a growth that failed partway (SYS230)
EXAMPLES += [
    (
        '!handles_.at(i) INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":'
        "430, please report a bug to PyTorch.",
        "torch-expandable-segment-map-assert",
    ),
]

# kmod's modinfo finding no nvidia module for the running kernel, as modprobe does (DRV224)
EXAMPLES += [
    ("modinfo: ERROR: Module nvidia not found.", "modprobe-nvidia-not-found"),
]

# JAX's own release checks: jax, jaxlib and the CUDA plugin from other releases (PKG101)
EXAMPLES += [
    (
        "RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.9.2 is installed, but it is not "
        "compatible with the installed jaxlib version 0.9.0.1, so it will not be used.",
        "jax-plugin-not-jaxlib-release",
    ),
    (
        "RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version "
        "0.4.23. Please update your jax and/or jaxlib packages.",
        "jaxlib-outside-jax-range",
    ),
    (
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51).",
        "pjrt-plugin-api-mismatch",
    ),
    (
        "AttributeError: module 'jaxlib.xla_client' has no attribute "
        "'register_custom_type_id_handler'. Did you mean: 'register_custom_call_handler'?",
        "jax-internal-name-missing",
    ),
    (
        "ImportError: cannot import name 'triton' from 'jax._src.lib' "
        "(/usr/local/lib/python3.11/dist-packages/jax/_src/lib/__init__.py)",
        "jax-internal-name-missing",
    ),
    ("jaxlib: 0.4.35", "jax-environment-info"),
]

# JAX's own AttributeError for a name its release removed, with the release (PY150); an
# instance of importlib-metadata 5.0's EntryPoints read as a dict (PY150)
EXAMPLES += [
    (
        "AttributeError: jax.tree_map was removed in JAX v0.6.0: use jax.tree.map (jax v0.4.25 "
        "or newer) or jax.tree_util.tree_map (any JAX version).",
        "jax-removed-attribute",
    ),
    ("AttributeError: 'EntryPoints' object has no attribute 'get'", "object-member-removed"),
    # the closing quote lost where the line was pasted (huawei-noah/trustworthyAI#87)
    (
        "AttributeError: module 'networkx' has no attribute 'to_numpy_matrix",
        "module-has-no-attribute",
    ),
    # a title copied from rendered Markdown: `__init__` taken for bold, underscores lost
    (
        "TypeError:Accelerator.init got an unexpected keyword argument 'dispatch batches'",
        "unexpected-keyword-argument",
    ),
]

# another build of a library bound in place of the one a binary was linked against (SYS224)
EXAMPLES += [
    (
        "bash: /home/u/miniconda3/envs/x/lib/libtinfo.so.6: no version information available "
        "(required by bash)",
        "shared-object-no-version-information",
    ),
    (
        "samtools: relocation error: /lib/x86_64-linux-gnu/libncurses.so.5: symbol _nc_putchar, "
        "version NCURSES_TINFO_5.9.20150530 not defined in file libtinfo.so.5 with link time "
        "reference",
        "symbol-version-not-defined-other-copy",
    ),
    ("export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH", "ld-library-path-export"),
]

# older PhysX's struct name and wording (PxgDynamicsMemoryConfig), as SAPIEN and Isaac Sim 2023
# print them (SYS231)
EXAMPLES += [
    (
        "[2025-07-31 12:53:49.591] [SAPIEN] [critical] PxgDynamicsMemoryConfig::collisionStackSize"
        " buffer overflow detected, please increase its size to at least 73774744 in the scene"
        " desc!",
        "physx-gpu-buffer-overflow",
    ),
    (
        "PhysX error: the application need to increase the PxgDynamicsMemoryConfig::"
        "foundLostPairsCapacity parameter to 3072, otherwise the simulation will miss interactions",
        "physx-gpu-buffer-overflow",
    ),
    (
        "Particle system contact buffer overflow detected, please increase "
        "PxGpuDynamicsMemoryConfig::maxParticleContacts to at least 1048576",
        "physx-gpu-buffer-overflow",
    ),
]

# Omniverse Kit's renderer out of GPU resource descriptors, and the warning with the table's size
# (SIM125)
EXAMPLES += [
    (
        "2024-11-12 09:29:17 [520,110ms] [Fatal] [gpu.foundation.plugin] Out of resource "
        "descriptors!",
        "kit-out-of-resource-descriptors",
    ),
    (
        "2024-11-12 09:29:17 [520,192ms] [Warning] [gpu.foundation.plugin] Exceeding capacity of "
        "resource descriptors 458753 / 458752",
        "kit-out-of-resource-descriptors",
    ),
]

# SAPIEN's import-time check for the NVIDIA EGL vendor manifest (SIM109)
EXAMPLES += [
    (
        "/home/x/.venv/lib/python3.12/site-packages/sapien/_vulkan_tricks.py:95: UserWarning: "
        "Failed to find glvnd ICD file. This is probably due to an incorrect or partial "
        "installation of the NVIDIA driver. SAPIEN will attempt to provide an ICD file anyway "
        "but it may not work.",
        "sapien-egl-vendor-not-found",
    ),
]

# NVIDIA Warp's allocators refusing a GPU allocation, and Warp 0.x's words (DRV150, DRV104)
EXAMPLES += [
    (
        "Warp error: Failed to allocate 4294967296 bytes on device 'cuda:0' (in function "
        "wp_alloc_device_default)",
        "warp-gpu-allocation-failed",
    ),
    (
        "RuntimeError: Failed to allocate 1073741824 bytes with CudaManagedAllocator on device "
        "'cuda:0'",
        "warp-gpu-allocation-failed",
    ),
    (
        "RuntimeError: Memory allocation failed on device: cuda for 120 bytes",
        "warp-gpu-allocation-failed",
    ),
]

# Taichi's CUDA pool reserved at ti.init, used up (SYS231); renderers' and MindSpore's own words
# for GPU memory running out (SYS230)
EXAMPLES += [
    (
        "Taichi JIT:0: allocate_from_reserved_memory: block: [0,0,0], thread: [0,0,0] Assertion "
        "`Out of CUDA pre-allocated memory.",
        "taichi-preallocated-memory-exhausted",
    ),
    ("Error: System is out of GPU memory", "device-memory-short-other-api"),
    (
        "Out of video memory trying to allocate a rendering resource. Make sure your video card "
        "has the minimum required memory, try lowering the resolution and/or closing other "
        "applications that are running. Exiting...",
        "device-memory-short-other-api",
    ),
    (
        "Device(id:0) memory isn't enough and alloc failed, kernel name: Default/Conv2D-op1, "
        "alloc size: 1073741824B.",
        "device-memory-short-other-api",
    ),
]

# SDL (pygame) finding no video device on a node without a display (SIM173)
EXAMPLES += [
    ("pygame.error: No available video device", "sdl-no-video-device"),
    ("pygame.error: x11 not available", "sdl-no-video-device"),
]

# Omniverse Kit's own Vulkan allocation failures, otherwise read as Kit's noise prefix (SYS230)
EXAMPLES += [
    (
        "2022-09-22 01:17:40 [28,987ms] [Error] [carb.graphics-vulkan.plugin] vkAllocateMemory "
        "failed for flags: 0.",
        "device-memory-short-other-api",
    ),
    (
        "2022-09-22 01:17:40 [28,987ms] [Error] [gpu.foundation.plugin] subAllocate() failed for "
        "AccelStruct size: 113494016",
        "device-memory-short-other-api",
    ),
]

# MLX's Metal allocator refusing one buffer above the device's maximum (SYS230), R's vector
# allocation (SYS190), a GPU's memory in plain words (DRV150)
EXAMPLES += [
    (
        "ValueError: [metal::malloc] Attempting to allocate 134767706112 bytes which is greater "
        "than the maximum allowed buffer size of 86586540032 bytes.",
        "device-memory-short-other-api",
    ),
    ("Error: cannot allocate vector of size 1.2 Gb", "host-allocation-failed-other-wordings"),
    ("RuntimeError: out of GPU memory", "gpu-memory-short-in-words"),
]
# the Fabric Manager refusing the loaded driver (GPU101), NCCL's driver-API 802 (NET122), and
# NCCL's list of the IB devices it uses (noise read for NET150's NCCL_IB_HCA fix)
EXAMPLES += [
    (
        "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver "
        "interface version 550.127.05 don't match with driver version 550.120. Please update "
        "with matching NVIDIA driver package.",
        "fabric-manager-driver-version-mismatch",
    ),
    ("[rank2]: Cuda failure 802 'system not yet initialized'", "nccl-cuda-failure-802"),
    (
        "dgxh100-4:460770:460842 [0] NCCL INFO NET/IB : Using [0]mlx5_10:1/RoCE "
        "[1]mlx5_11:1/RoCE [RO]; OOB enp220s0np0:11.1.128.136<0>",
        "nccl-ib-devices-stated",
    ),
    (
        "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 "
        "'mlx5_0'",
        "nccl-gdr-disabled",
    ),
    (
        "pod-0:46312:46318 [0] transport/net_ib.cc:339 NCCL WARN NET/IB: read failed in "
        "ncclIbRoceGetVersionNum: Invalid argument",
        "nccl-roce-gid-type-unreadable",
    ),
    (
        "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client "
        "(err 0)",
        "peermem-module-refused",
    ),
    (
        "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
        "peermem-module-refused",
    ),
    (
        "ssh: Could not resolve hostname node0: Name or service not known",
        "launcher-ssh-host-unresolvable",
    ),
]

# the proprietary module refusing a Blackwell GPU (DRV228: the open module); TensorFlow's
# CUDA initialisation failure with cudaGetErrorString (DRV150)
EXAMPLES += [
    (
        "               NVRM: installed in this system requires use of the NVIDIA open kernel "
        "modules.",
        "nvrm-open-module-required",
    ),
    (
        "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit "
        "initialization on GPU:0 failed. Status: all CUDA-capable devices are busy or unavailable",
        "cuda-error",
    ),
]

# a Jetson as a log names it (a fact for SYS150: JetPack's CUDA through the nvidia runtime)
EXAMPLES += [
    ("Package: nvidia-jetpack", "jetson-platform-stated"),
    ("dustynv/ros:noetic-pytorch-l4t-r32.5.0", "jetson-platform-stated"),
]

# torch's device-index assert (GPU119 where the log names MIG devices) and MIG as stated
EXAMPLES += [
    (
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "/opt/conda/'
        'conda-bld/pytorch_1682343997789/work/aten/src/ATen/cuda/CUDAContext.cpp":50, please '
        "report a bug to PyTorch.",
        "torch-device-index-assert",
    ),
    (
        "  MIG 1g.5gb      Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)",
        "mig-device-stated",
    ),
    ("nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", "mig-device-stated"),
]

# ldconfig finding a SONAME file that is a copy (SYS225: WSL 2's libcuda.so.1)
EXAMPLES += [
    (
        "ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link",
        "ldconfig-soname-not-a-link",
    ),
]

# Fabric Manager refusing a driver of another release (GPU101: the FM of the driver's version)
EXAMPLES += [
    (
        "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver "
        "interface version 550.127.05 doesn't match with driver version 550.120. Please update "
        "with the matching NVIDIA driver package.",
        "fabric-manager-driver-version-mismatch",
    ),
]

# the NVIDIA module naming the driver that holds the GPU (DRV222: nova_core on kernel 7.0)
EXAMPLES += [
    (
        "[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.",
        "nvrm-gpu-bound-to-another-driver",
    ),
]

# nouveau bound to the GPU, in its own dmesg words and lspci -k's (DRV222)
EXAMPLES += [
    ("[    5.436312] nouveau 0000:01:00.0: NVIDIA GM204 (124020a1)", "nouveau-bound-to-gpu"),
    ("\tKernel driver in use: nouveau", "nouveau-bound-to-gpu"),
]

# HIP's invalid device function (TOR101 on ROCm: HSA_OVERRIDE_GFX_VERSION) and rocminfo's target
EXAMPLES += [
    ("RuntimeError: HIP error: invalid device function", "hip-invalid-device-function"),
    ("  Name:                    gfx1031                            ", "rocm-gfx-stated"),
]

# nvidia-persistenced finding no device files (the kernel module's causes, open)
EXAMPLES += [
    (
        "Jun 03 10:00:01 host nvidia-persistenced[1234]: Failed to query NVIDIA devices. Please "
        "ensure that the NVIDIA device files (/dev/nvidia*) exist, and that user 143 has read "
        "and write permissions for those files.",
        "persistenced-no-devices",
    ),
]

# a vendored header-only library's header missing (GLM, fmt, a third_party/ tree): SYS165
EXAMPLES += [
    (
        '`fatal error C1083: Cannot open include file: "glm/glm.hpp": No such file or directory`',
        "vendored-submodule-header-missing",
    ),
    (
        "        gsplat/cuda_legacy/csrc/helpers.cuh:2:10: fatal error: "
        "third_party/glm/glm/glm.hpp: No such file or directory",
        "vendored-submodule-header-missing",
    ),
    (
        "fatal error: fmt/core.h: No such file or directory",
        "vendored-submodule-header-missing",
    ),
]

# Deformable-DETR's ops setup.py refusing to build where torch sees no GPU (TOR110/DRV103)
EXAMPLES += [
    ("NotImplementedError: Cuda is not availabel", "setup-py-cuda-unavailable-refusal"),
    (
        "        raise NotImplementedError('Cuda is not availabel')",
        "setup-py-cuda-unavailable-refusal",
    ),
]

# MSVC's standard library refusing an nvcc older than it supports (SYS131)
EXAMPLES += [
    (
        "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.42.34433"
        "\\include\\yvals_core.h(902): error STL1002: Unexpected compiler version, expected "
        "CUDA 12.4 or newer.",
        "msvc-stl-expects-newer-cuda",
    ),
]

# Windows' 260-character path limit in git, pip, ninja and cl.exe (SYS251)
EXAMPLES += [
    (
        "  error: unable to create file docs/classcutlass_1_1epilogue_1_1thread_1_1LinearCombina"
        "tionRelu_3_01ElementOutput___00_01Count_00_01int_00_01float_00_01Round_01_4.html: "
        "Filename too long",
        "windows-path-too-long",
    ),
    (
        "HINT: This error might have occurred since this system does not have Windows Long Path "
        "support enabled. You can find information on how to enable this at "
        "https://pip.pypa.io/warnings/enable-long-paths",
        "windows-path-too-long",
    ),
    (
        "      ninja: error: Stat(C:/Users/win11/AppData/Local/Temp/pip-install-cusdawns/xformers_b"
        "32183b030ee4a28bd49e949821d1b53/build/temp.win-amd64-cpython-311/Release/flash_api.obj)"
        ": Filename longer than 260 characters",
        "windows-path-too-long",
    ),
    (
        "C:\\Users\\me\\AppData\\Local\\Temp\\pip-install-cy8q7xfw\\xformers_06605d5ac8334cc2a1d5"
        "005993c148de\\xformers\\components\\attention\\csrc\\attention.cpp : fatal error C1083: "
        "Cannot open compiler generated file: '': Invalid argument",
        "windows-path-too-long",
    ),
    (
        "flash_api.cpp : fatal error C1083: 无法打开编译器生成的文: “”: Invalid argument",
        "windows-path-too-long",
    ),
]

# MSVC's C1083 in zh_CN's words and curly quotes, the header named (SYS165, SYS161)
EXAMPLES += [
    (
        "x.cu(3): fatal error C1083: 无法打开包括文件: “glm/glm.hpp”: No such file or directory",
        "vendored-submodule-header-missing",
    ),
    (
        "x.cu(3): fatal error C1083: Cannot open include file: “foo/bar.h”: No such file or "
        "directory",
        "include-file-missing",
    ),
]

# a container the prose says the job runs in: a fact, noise (DRV103 for a setup.py's refusal)
EXAMPLES += [
    ("inside the container while configuring the environment?", "container-stated-in-prose"),
    ("I run it in a Docker container on the cluster", "container-stated-in-prose"),
]

# torch's extension builder parsing an arch-specific name of torch's own list (TOR192); nvcc's
# line retyped with 'GPU' in capitals (CUD150/CUD157)
EXAMPLES += [
    (
        "ValueError: invalid literal for int() with base 10: '90a'",
        "cpp-extension-arch-suffix-unparsed",
    ),
    (
        "      ValueError: invalid literal for int() with base 10: '120f'",
        "cpp-extension-arch-suffix-unparsed",
    ),
    ("nvcc fatal : Unsupported GPU architecture 'compute_30'", "compiler-unknown-arch"),
]

# Apple's clang refusing OpenMP in a macOS source build (SYS270)
EXAMPLES += [
    ("clang: error: unsupported option '-fopenmp'", "apple-clang-no-openmp"),
    ("      clang++: error: unsupported option '-fopenmp'", "apple-clang-no-openmp"),
]

# a listing's line that is only a library's path (locate, find): a fact for SYS150 / CUD154;
# nvdiffrast's and Open3D's own EGL / GLFW lines keep their signatures (ldr19)
EXAMPLES += [
    (
        "/home/u/.local/lib/python3.8/site-packages/nvidia/cudnn/lib/libcudnn_ops_infer.so.8",
        "library-path-listed",
    ),
    ("[F1216 14:33:13.286945381 glutil.cpp:338] eglInitialize() failed", "egl-not-initialized"),
    ("[Open3D WARNING] Failed to initialize GLFW", "glfw-not-initialised"),
]

# a Vulkan program's own words for no physical device (SIM109, ldr19)
EXAMPLES += [
    ("RuntimeError: Failed to find a Vulkan physical device", "vulkan-no-physical-device"),
]

# drv19: Arch's DKMS hook without a kernel's headers (DRV223), Debian's nvidia-detect on a GPU
# newer than its driver (DRV110), R515's open module on a non-data-center GPU (DRV228), ollama's
# cudart discovery failing with a cudaError_t (DRV150)
EXAMPLES += [
    (
        "==> ERROR: Missing 6.2.1-zen1-1-zen kernel headers for module nvidia/525.89.02.",
        "dkms-hook-missing-headers",
    ),
    (
        "Uh oh. Your card is not supported by any driver version up to 580.119.02.",
        "nvidia-detect-card-unsupported",
    ),
    (
        "Checking card:  NVIDIA Corporation GB207M [GeForce RTX 5050 Max-Q / Mobile] (rev a1)",
        "nvidia-detect-checking-card",
    ),
    (
        "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.",
        "nvrm-open-module-datacenter-only",
    ),
    ("cudaSetDevice err: 999", "ollama-cudart-init-failure"),
    (
        'time=2024-09-05T09:20:35.624+08:00 level=DEBUG source=gpu.go:533 msg="Unable to load '
        'cudart" library=/opt/cuda/lib64/libcudart.so.12.6.37 error="cudart init failure: 999"',
        "ollama-cudart-init-failure",
    ),
]

# drv19: torch's error 804 cut short (an issue title quotes it up to 'on non'): the number and
# the start of its words name it (DRV101, GPU102)
EXAMPLES += [
    (
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 804: forward "
        "compatibility was attempted on non ",
        "cuda-error-804",
    ),
]

# Python 3.11's dataclasses refusing an unhashable default (PY140), with and without the class
# GitHub's rendering drops
EXAMPLES += [
    (
        "ValueError: mutable default <class 'fairseq.dataclass.configs.CommonConfig'> for field "
        "common is not allowed: use default_factory",
        "dataclass-unhashable-default-3-11",
    ),
    (
        "ValueError: mutable default for field common is not allowed: use default_factory",
        "dataclass-unhashable-default-3-11",
    ),
]

# standard-library backports shadowing the interpreter's own module (PY171)
EXAMPLES += [
    (
        "AttributeError: type object 'Callable' has no attribute '_abc_registry'",
        "stdlib-backport-typing",
    ),
    ("AttributeError: module 'enum' has no attribute 'IntFlag'", "stdlib-backport-enum"),
]
# memory in other runtimes' words (round 19): DALI's allocations, Intel GPUs' runtimes,
# ONNX Runtime's arena at its configured limit, CUDA check macros of other frameworks
EXAMPLES += [
    ("CUDA allocation failed", "dali-gpu-allocation-failed"),
    ("Can't allocate 129499136 bytes on device 0.", "dali-gpu-allocation-failed"),
    (
        "RuntimeError: Critical error in pipeline: Error in thread 0: [/opt/dali/dali/pipeline/"
        "operators/decoder/nvjpeg/decoupled_api/nvjpeg_decoder_decoupled_api.h:355] NVJPEG error "
        '"5" : NVJPEG_STATUS_ALLOCATOR_FAILURE n02130308/ILSVRC2012_val_00033687.JPEG',
        "dali-gpu-allocation-failed",
    ),
    (
        "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 "
        "(PI_ERROR_OUT_OF_RESOURCES)",
        "intel-gpu-out-of-resources",
    ),
    (
        "RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
        "intel-gpu-out-of-resources",
    ),
    ("[GPU] clFlush, error code: -5 CL_OUT_OF_RESOURCES", "intel-gpu-out-of-resources"),
    (
        "RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! "
        "Tried to allocate 6.85 GiB (GPU  0; 15.56 GiB total capacity; 0 bytes already allocated; "
        "0 bytes reserved in total by PyTorch)",
        "intel-gpu-out-of-resources",
    ),
    (
        "onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
        "onnxruntime::WaitNotificationFn) Available memory of 0 is smaller than requested bytes "
        "of 135383040",
        "onnxruntime-arena-limit-reached",
    ),
    (
        "F1206 10:15:04.766489   447 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. "
        "0)  out of memory",
        "gpu-out-of-memory-any-library",
    ),
    (
        "MXNetError: [08:45:46] /home/travis/build/dmlc/mxnet-distro/mxnet-build/3rdparty/mshadow/"
        "mshadow/./stream_gpu-inl.h:184: Check failed: e == cudaSuccess: CUDA: out of memory",
        "gpu-out-of-memory-any-library",
    ),
    (
        "[Open3D Error] (void* open3d::core::CUDAMemoryManager::Malloc(size_t, const "
        "open3d::core::Device&)) /root/Open3D/cpp/open3d/core/CUDAUtils.cpp:318: CUDA runtime "
        "error: out of memory",
        "gpu-out-of-memory-any-library",
    ),
    (
        "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total "
        "capacity; 0 bytes already allocated; 0 bytes reserved in total by PyTorch)",
        "torch-device-oom-exception",
    ),
    ("NvMapMemAllocInternalTagged: 1075072515 error 12", "jetson-nvmap-allocation-failed"),
    (
        "llama_init_from_model: failed to allocate compute pp buffers",
        "ggml-compute-buffer-allocation-failed",
    ),
    (
        "ClientError: Please use an instance type with more memory, or reduce the size of job "
        "data processed on an instance.",
        "sagemaker-instance-memory",
    ),
    ("AssertionError: Insufficient space in device allocation", "device-memory-short-other-api"),
    ("Status Message: bad allocation", "host-allocation-errno-enomem"),
    (
        "RuntimeError: Insufficient VRAM in split for model and cache",
        "device-memory-short-other-api",
    ),
    ("Cuda Error in allocate: 2 (out of memory)", "tensorrt-gpu-out-of-memory"),
    (
        "[E] [TRT] C:\\source\\rtSafe\\safeRuntime.cpp (25) - Cuda Error in "
        "nvinfer1::internal::DefaultAllocator::allocate: 2 (out of memory)",
        "tensorrt-gpu-out-of-memory",
    ),
    (
        "llama_new_context_with_model: failed to allocate compute buffers",
        "ggml-compute-buffer-allocation-failed",
    ),
    (
        "ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size =  "
        "4096.00 MiB",
        "device-memory-short-other-api",
    ),
    ("Process finished with exit code -1073741523 (0xC000012D)", "windows-paging-file-code"),
    ("RuntimeError: HIP error: out of memory", "gpu-out-of-memory-any-library"),
    (
        "Error out of memory at line 380 in file /mmfs1/gscratch/zlab/timdettmers/git/"
        "bitsandbytes/csrc/pythonInterface.c",
        "gpu-out-of-memory-any-library",
    ),
    (
        "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, "
        "mMemPool->getPool(), mCudaStream->get()): out of memory (/home/jenkins/agent/workspace/"
        "LLM/cpp/tensorrt_llm/runtime/tllmBuffers.h:123)",
        "gpu-out-of-memory-any-library",
    ),
    (
        "Windows successfully diagnosed a low virtual memory condition. The following programs "
        "consumed the most virtual memory: python.exe (1234) consumed 34359738368 bytes",
        "host-memory-exhausted-os-words",
    ),
    ("Your system has run out of application memory.", "host-memory-exhausted-os-words"),
    (
        "(ResourceExhausted) Fail to alloc memory of 1073741824 size, error code is 12.",
        "host-memory-exhausted-os-words",
    ),
    (
        "cgroup: fork rejected by pids controller in /system.slice/docker-abc.scope",
        "thread-create-refused-limit",
    ),
    ("ptxas fatal   : Memory allocation failure", "ptxas-memory-allocation-failure"),
    (
        "bash: xmalloc: cannot allocate 1073741824 bytes (0 bytes allocated)",
        "host-memory-exhausted-os-words",
    ),
]

EXAMPLES += [
    (
        "ImportError: /root/miniforge/envs/test-env/lib/python3.12/site-packages/sklearn/utils/"
        "../../../../libgomp.so.1: cannot allocate memory in static TLS block",
        "shared-object-static-tls-exhausted",
    ),
]

# round 20, ldr20: other libraries' wordings of a CUDA library they could not open by name
EXAMPLES += [
    (
        "ValueError: libcublas.so.*[0-9] not found in the system path ['/app', "
        "'/usr/local/lib/python3.10/site-packages']",
        "torch-cuda-dependency-not-in-sys-path",
    ),
    ("RuntimeError: CuPy failed to load libcublas.so.12", "cupy-library-not-loaded"),
    ("RuntimeError: Failed to dlopen libcudart.so.12", "library-dlopen-failed-by-name"),
    ("RuntimeError: Library cublasLt is not initialized", "cpm-kernels-library-not-initialized"),
]


# round 20's signatures, each with a line from its battery's or its corpus case's source
EXAMPLES += [
    ("sh: 1: cmake: not found", "cmake-missing"),
    ("worker-1: Host key verification failed.", "launcher-ssh-refused"),
    (
        "AttributeError: cannot access submodule 'utils' of module 'mypkg' (most likely due to "
        "a circular import)",
        "module-still-initialising",
    ),
    (
        "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'",
        "msvc-linker-cannot-open-library",
    ),
    (
        "RuntimeError: invalid value for environment variable MUJOCO_GL: egl",
        "mujoco-gl-linux-only-value",
    ),
    ("error: uninstall-no-record-file", "pip-cannot-uninstall-foreign"),
    ("(Unsupported SM: 0x809)", "tensorrt-unsupported-sm"),
    ("trtSmToCask: 0 (Unsupported SM.)", "tensorrt-unsupported-sm-bare"),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
        "torchrun-rendezvous-timeout",
    ),
    # astral-sh/uv#12771 (tests/corpus/uv-12771), the line as uv wraps it
    (
        "  ╰─▶ Because the requested Python version (>=3.8) does not satisfy",
        "uv-python-version-unsatisfied",
    ),
]
