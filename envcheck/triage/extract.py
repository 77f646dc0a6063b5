"""Facts a log states about the node it ran on, read by the signatures' extractors.

A signature in ``matrices/signatures/*.toml`` may carry ``extract``: Python regexes with named
groups, run only on the lines the signature matched (the first and last occurrence, plus the
``context`` lines after the first), so the scan's speed does not depend on them. Each group name
is a fact from ``FACTS``; ``to_report`` turns the facts into a NodeReport whose sections say
"read from LOG line N", which triage merges with the node it checks (the log first: it is the
more specific witness of the failed run).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envcheck.ingest.common import markers, now
from envcheck.matrix.schema import Signature
from envcheck.model.report import (
    DiskUsage,
    Distribution,
    EnvInfo,
    Gpu,
    GpuInfo,
    GraphicsInfo,
    Interface,
    LibrariesInfo,
    NetworkInfo,
    NodeReport,
    Origin,
    PackagesInfo,
    PythonInfo,
    SharedLibrary,
    StorageInfo,
    SystemInfo,
    Toolkit,
    TorchBuild,
    UnresolvedSymbol,
    WorkloadInfo,
    normal_dtype,
)
from envcheck.model.section import Section

# group name -> what it is (the catalogue `envcheck matrix validate` checks extractors against)
FACTS: dict[str, str] = {
    "gpu_name": "a GPU's name as the log prints it",
    "gpu_sm": "that GPU's architecture, sm_XY digits (120 -> compute capability 12.0)",
    "gpu_cc": "that GPU's compute capability as X.Y (torch's 'which is of cuda capability 5.0')",
    "dtype": "the floating-point type the job asked for (bfloat16, bf16, float16, half ...)",
    "driver_cuda": "the newest CUDA the driver supports, as CUDA prints it (12080 -> 12.8)",
    "driver_version": "the NVIDIA driver version",
    "kernel_module": "the NVIDIA kernel module's flavour as its ID names it ('Open Kernel Module' or 'x86_64 Kernel Module')",
    "uvm_module": "the NVIDIA Unified Memory module as modprobe names it (nvidia_uvm, "
    "nvidia_331_uvm)",
    "secure_boot": "whether Secure Boot is on, as mokutil --sb-state or bootctl states it "
    "(enabled / disabled)",
    "nvrm_init": "RmInitAdapter's stage and NV_STATUS code, '0x62:0x40'",
    "torch_version": "the torch version",
    "index_torch": "the torch release an extension's own wheel index page is for, as a log names the page (data.pyg.org/whl/torch-1.9.0+cu111.html: 1.9.0)",
    "index_cuda": "the CUDA tag of that wheel index page (cu111, cpu)",
    "index_package": "the package a pip line installs from that page ('pip install torch-scatter "
    "-f ...': torch-scatter)",
    "cuda_available": "what torch.cuda.is_available() returned (True/False), read from the line "
    "after the call in a Python REPL",
    "xformers_torch": "the torch build xformers' extensions were compiled for (xformers.info)",
    "torch_arch_list": "the architectures torch says it was built for (sm_50 ... compute_90)",
    "python_version": "the Python version (X.Y or X.Y.Z)",
    "requires_python": "a release's Requires-Python range as pip states it ('>=3.9')",
    "pip_requirement": "the requirement pip could not satisfy ('ray==2.3.1')",
    "pip_offered": "the versions pip found for this interpreter and platform ('2.2.0, 2.3.0' or 'none')",
    "site_python": "X.Y from a pythonX.Y/site-packages path",
    "ray_version": "the Ray version of the process that logged",
    "ray_cluster_version": "the Ray version the cluster was started with",
    "python_cluster_version": "the Python version the cluster was started with",
    "cloudpickle_version": "the cloudpickle version of the process that logged (early Ray)",
    "cloudpickle_cluster_version": "the cloudpickle version the cluster was started with",
    "pip_uninstall_refused": "the distribution pip cannot uninstall (no RECORD file list: the OS, distutils or conda installed it)",
    "pkg_name": "an installed distribution's name (paired with pkg_version)",
    "pkg_version": "its version",
    "pkg2_name": "a second installed distribution's name (paired with pkg2_version)",
    "pkg2_version": "its version",
    "requires": "'NAME [VERSION] requires REQUIREMENT', a requirement an installed distribution "
    "has, as pip's resolver prints it ('isaaclab 0.36.1 requires torch==2.5.1')",
    "requirement": "a requirement (PEP 508) that the signature's `requirer` checks at run time "
    "(LLaMA-Factory's check_version: 'vllm>=0.4.3,<=0.7.3')",
    "depends_on": "a resolver's 'X V depends on REQUIREMENT' (pip; uv's 'X==V depends on ...')",
    "asked_requirement": "the pin a resolver says the user or the project asked for "
    "(pip's 'The user requested torch==2.5.1', uv's 'you require torch==2.5.1')",
    "req_name": "a required distribution's name, joined with req_spec into a requirement",
    "req_spec": "the version range required of it ('>=0.8.6,<=0.9.6')",
    "check_switch": "a setting the line says skips the runtime check that refused a requirement "
    "(LLaMA-Factory's 'or set `DISABLE_VERSION_CHECK=1` to skip this check')",
    "relative_import": "'import' when the line is Python's refusal of a relative import in a "
    "file run as a script (no known parent package)",
    "python_feature": "the words of the error an interpreter raises on a language feature newer "
    "than itself ('object is not subscriptable' for list[int] before 3.9)",
    "python_refusal": "the words of the error a newer interpreter raises on code written for an "
    "older one ('mutable default' for a dataclass's unhashable default from Python 3.11 on)",
    "shadowed_module": "the standard-library module a PyPI backport installed beside it "
    "shadows (typing, enum), as the backport's own failure or a frame's path names it",
    "refused_type": "the type of the default a dataclass field was refused ('mutable default "
    "<class 'X'> for field'): list, dict or set is refused by every Python",
    "wheel_file": "the wheel file pip refused as 'not a supported wheel on this platform' "
    "(flash_attn-2.7.2.post1+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl)",
    "wheel_host_tag": "the platform tag uv's hint says this node has beside a refused wheel "
    "('but you're on Windows (`win_amd64`)')",
    "check_upgrade": "the package a runtime version check's own hint says to upgrade "
    "(transformers' 'Try: `pip install transformers -U`')",
    "checker_file": "the file of the traceback frame that called a runtime version check "
    "(transformers/dependency_versions_check.py, llamafactory/extras/misc.py)",
    "nccl_version": "the NCCL release loaded",
    "nccl_cuda": "the CUDA release that NCCL was built for",
    "mem_used_gb": "memory in use on the node (GB, Ray's memory monitor)",
    "mem_total_gb": "the node's memory (GB, Ray's memory monitor)",
    "mem_threshold": "Ray's memory usage threshold (fraction)",
    "shm_bytes": "bytes available in /dev/shm",
    "pinned_call": "a call that pins host memory (pin_memory, cudaHostAlloc) in the traceback's "
    "last frame above a CUDA out-of-memory: the allocation that failed was pinned host memory",
    "arena_available_bytes": "what ONNX Runtime's BFC arena had left under its configured limit "
    "('Available memory of N is smaller than requested bytes of M')",
    "arena_request_bytes": "the bytes ONNX Runtime's arena was asked for beyond its limit",
    "shm_request_bytes": "bytes of a shared-memory segment that could not be created in /dev/shm",
    "ray_shm_suggest_gib": "the --shm-size (GiB) Ray's object-store warning asks for (1.1x the store)",
    "ray_store_gb": "the object store (GB, 10**9 bytes) Ray refused because /dev/shm is smaller",
    "ray_shm_gb": "/dev/shm's size (GB) as Ray's refusal of a larger object store states it",
    "cuda_required": "the CUDA release a container image or binary requires of the driver",
    "disk_path": "the directory whose disk is reported",
    "disk_free": "free bytes on it",
    "disk_total": "its capacity in bytes",
    "cuda_lib": "a CUDA shared library named on the line (libcudart.so.12)",
    "ext_library": "a compiled extension that failed to load (paired with undefined_symbol)",
    "undefined_symbol": "the symbol it could not resolve (a mangled C++ name)",
    "triton_version": "the Triton release a log states ('triton==3.7.0', a package list's row)",
    "overload_args": "the argument types nvcc's front end lists below a call it found no "
    "overload for ('double *, double' under 'no instance of overloaded function \"atomicAdd\"')",
    "nvcc_version": "the CUDA toolkit release (nvcc) a build or JIT compiler found (10.1, 12.8)",
    "torch_cuda": "the CUDA release torch was built with (torch.version.cuda: 11.8)",
    "cuda_build": "what the line shows compiling CUDA code (an extension build, a JIT compiler)",
    "iface": "a network interface name",
    "address": "an IP address the process used",
    "driver_capabilities": "NVIDIA_DRIVER_CAPABILITIES as a log states it (compute,utility)",
    "rtx_min_driver": "the driver floor an Omniverse RTX app states ('[0.0, 535.129)' -> 535.129)",
    "vulkan_error": "a Vulkan failure the log states (no device, no ICD, ICD library missing)",
    "egl_error": "an EGL failure the log states (no EGL device display)",
    "gl_renderer": "the library whose own line states an EGL or OpenGL failure (nvdiffrast's "
    "'[F glutil.cpp:338] eglInitialize() failed', Open3D's '[Open3D WARNING] Failed to "
    "initialize GLFW')",
    "gl_error": "an OpenGL failure the log states (no platform library / context loaded)",
    "dri_denied": "a /dev/dri node the process was denied (permission)",
    "missing_lib": "a shared library the loader could not open (libGLU.so.1)",
    "library_found": "a shared library's path a listing in the log prints (locate, find, ls, "
    "type -P: /home/u/.local/lib/python3.8/site-packages/nvidia/cudnn/lib/"
    "libcudnn_ops_infer.so.8)",
    "glibc_lacks": "X.Y of a GLIBC_X.Y symbol version the system's glibc lacks",
    "os_name": "the Linux distribution an environment list names (Rocky Linux, Ubuntu)",
    "container_image": "the container image a log names (nvcr.io/nvidia/pytorch:23.11-py3)",
    "ngc_check": "an NGC container's start-up check of CUDA (its entrypoint's 'The NVIDIA Driver "
    "is present, but CUDA failed to initialize'): the process runs in a container",
    "glibc_required_by": "the binary that needs that GLIBC_X.Y ('(required by /path/ext.so)')",
    "gxx_version": "the host g++ version a CUDA extension build found",
    "gxx_needed": "the g++ versions that build's CUDA accepts ('>=6.0.0, <12.0')",
    "missing_header": "a C header the compiler could not find (Python.h)",
    "kernel_release": "the kernel release a kernel module was built for (uname -r: 6.8.0-31-generic)",
    "kernel_gcc": "the GCC major release the running kernel was built with (12)",
    "module_version": "the version of the NVIDIA kernel module DKMS built (/var/lib/dkms/nvidia/X/)",
    "cuda_error": "a CUDA runtime error number (802)",
    "nvml_library_version": "the user-space NVML library's version nvidia-smi prints under a "
    "driver/library mismatch ('NVML library version: 535.183')",
    "legacy_branch": "the legacy driver branch the NVIDIA kernel module names for a GPU it "
    "ignores (470 of 'supported through the NVIDIA 470.xx Legacy drivers')",
    "host_platform": "the platform a log or an issue says the job runs on: WSL 2 or Docker "
    "Desktop ('WSL2', 'microsoft-standard-WSL2', '/usr/lib/wsl', 'Docker Desktop')",
    "container_device": "the GPU a container runtime was asked for (an index, UUID or PCI "
    "address: NVIDIA_VISIBLE_DEVICES, --gpus device=N)",
    "ldconfig_path": "the ldconfig a container runtime's configuration names (/sbin/ldconfig.real)",
    "mig_device": "a MIG device or profile a log names (3g.40gb in a GPU's product name, "
    "nvidia-smi -L's 'MIG 1g.5gb Device 0', a MIG-<UUID>): the GPUs are split by MIG",
    "gpu_bound_driver": "the PCI driver the NVIDIA kernel module finds a GPU bound to "
    "(NovaCore, nouveau, vfio-pci)",
    "amd_gfx": "an AMD GPU's gfx target a ROCm line or rocminfo names (gfx1031, gfx1151)",
    "jetson_platform": "the Jetson platform a log or an issue names: L4T, JetPack, a Jetson "
    "module or board ('nvidia-jetpack', 'l4t-pytorch', 'Jetson Orin', 'R35 (release)')",
    "windows_build": "the Windows build a log or an issue states (19042 for Windows 10 20H2)",
    "cuda_error_name": "a CUDA error's name (cudaErrorNoDevice, CUDA_ERROR_NOT_INITIALIZED)",
    "cuda_call": "the CUDA driver or runtime call a line says failed (cuInit, cudaGetDeviceCount): "
    "a `cu*` call returns the driver API's CUresult, a `cuda*` call the runtime's cudaError_t",
    "nvml_error": "an NVML return code's name (NVML_ERROR_LIB_RM_VERSION_MISMATCH)",
    "ptx_isa": "the PTX ISA version of PTX a compiler was given (.version 8.5)",
    "ptxas_isa": "the newest PTX ISA a ptxas knows (its 'current version', 7.5)",
    "ptx_target": "a GPU architecture a compiler (nvcc, ptxas) refused (sm_120a, compute_90)",
    "min_cc": "the compute capability a library's check requires ('(8, 0)', 8.9)",
    "ext_frame": "the installed package of a traceback's last frame above a CUDA error "
    "('site-packages/mmcv/ops/deform_conv.py' -> mmcv): whose call launched the kernel",
    "pybind_cpp_type": "a torch C++ type pybind11's conversion error names by its C++ name "
    "('torch::jit::StrongFunctionPtr', 'c10d::Backend'): one the failing module's pybind11 "
    "registry does not know",
    "ext_package": "the installed package of the innermost traceback frame above a loader "
    "error that is not torch's own ('site-packages/torch_scatter/__init__.py' -> torch_scatter, "
    "past torch.ops.load_library's frames): whose extension failed to load",
    "ext_frame_path": "the file of a traceback's innermost frame at a CUDA error, the last "
    "above it or, where a debugger prints frames innermost first, the first below it "
    "('/root/mmcv/mmcv/ops/focal_loss.py'): whose call launched the kernel",
    "cmake_cuda_archs": "the CUDA architectures a log sets for a CMake build "
    "('set(CMAKE_CUDA_ARCHITECTURES 89)', '-DCMAKE_CUDA_ARCHITECTURES=\"80;86\"', "
    "'CUDAARCHS=75'): the only architectures the build's kernels are compiled for",
    "min_arch": "the oldest GPU architecture a library's check accepts, by name ('Ampere GPUs "
    "or newer', 'requires Hopper')",
    "build_arch_list": "the TORCH_CUDA_ARCH_LIST a log sets for an extension build "
    "('export TORCH_CUDA_ARCH_LIST=\"7.5\"', '8.0;8.6+PTX')",
    "build_arch": "an architecture torch's extension builder refused, as its line names it "
    "('Unknown CUDA arch (12.5)': 12.5, '9.0+PTX'): a TORCH_CUDA_ARCH_LIST entry, or a visible "
    "GPU's when the list is unset",
    "cpu_option": "a CPU option a compiler refused ('-mavx2', '-march=sapphirerapids')",
    "compile_target": "the target architecture an nvcc pass compiled for: the compute_52 of "
    "older nvcc's failing intermediate file, or the first -gencode / -arch target of a compile "
    "command (the lowest, in the ascending lists torch and CMake write)",
    "device_function": "a CUDA device function nvcc's front end found undeclared "
    "('identifier \"atomicExch_block\" is undefined')",
    "built_archs": "the architectures a build was compiled for, as its own check lists them "
    "('ggml-cuda.cu was compiled for: 520,610,700')",
    "cuda_suggested": "the CUDA release torch's own warning names for the GPU ('Please install "
    "PyTorch with a following CUDA configurations: 12.6')",
    "max_cc": "the newest compute capability a library's kernels or dispatch accept "
    "('requires device with capability <= (9, 0)')",
    "nccl_subsystem": "the NCCL subsystem a line comes from (NET/IB, NET/Socket, Bootstrap, P2P)",
    "nccl_socket_ifname": "the NCCL_SOCKET_IFNAME value NCCL echoes ('set by environment to eth0')",
    "nccl_ib_hca": "the NCCL_IB_HCA value NCCL echoes ('NCCL_IB_HCA set to mlx5_0,mlx5_1')",
    "unresolved_host": "a host name ssh could not resolve for a launcher ('Could not resolve "
    "hostname node-0')",
    "ssh_host": "the host a multi-node launcher could not ssh into ('host=worker-1 was not "
    "reachable via ssh', 'pdsh@node0: worker-1: ssh exited with exit code 255')",
    "nccl_ib_devices": "the InfiniBand/RoCE devices NCCL's IB transport chose, as its INFO "
    "line lists them ('[0]mlx5_3:1/RoCE [1]mlx5_4:1/RoCE')",
    "fm_version": "the driver interface version the NVIDIA Fabric Manager was built for, as its "
    "refusal states it ('interface version 550.90.07')",
    "fm_driver": "the loaded driver's version the Fabric Manager compared itself with ('don't "
    "match with driver version 550.54.15')",
    "nccl_topo_file": "the topology XML NCCL was given (NCCL_TOPO_FILE), as NCCL or the "
    "aws-ofi-nccl plugin that set it echoes it",
    "nccl_net_plugin": "the network plugin NCCL loaded ('AWS Libfabric', 'aws-ofi-nccl 1.11.0-aws')",
    "kit_gpu_index": "the GPU index Omniverse Kit names in a refusal ('on GPU: 0')",
    "xml_attribute": "the attribute and node NCCL did not find in a topology XML ('arch of node "
    "cpu')",
    "nccl_host": "the host an NCCL line came from (its 'host:pid:tid [dev]' prefix); several in "
    "one log: the ranks ran on several nodes",
    "nccl_chosen_iface": "the interface NCCL's bootstrap or socket transport chose (docker0, eth0)",
    "nccl_listed_iface": "a physical interface in NCCL's 'NET/Socket : Using' list beside bridges "
    "(bond0, eth0): the one between the nodes",
    "port": "a TCP port a server could not bind (a rendezvous store's MASTER_PORT or "
    "--master_port, a model server's --port)",
    "qt_plugin_dir": "the directory Qt loaded its platform plugins from (.../cv2/qt/plugins)",
    "rendezvous_var": "the rendezvous variable torch's env:// init needed and did not find",
    "fork_layer": "the layer that forked a process after CUDA was initialised, as the log "
    "names it (vLLM's VllmWorkerProcess or vllm/ paths, torch's DataLoader worker loop)",
    "collective_op": "the collective (OpType=ALLREDUCE in torch's NCCL watchdog) or transfer (Gloo's "
    "recv / send) that timed out",
    "collective_timeout_ms": "the timeout it ran into, in milliseconds",
    "clients_joined": "how many ranks reached torch's rendezvous store before its timeout",
    "clients_expected": "how many ranks the store waited for (the world size)",
    "main_script": "the script a spawned child re-imported as its main module (the first "
    "`<module>` frame of a file after runpy's in the child's traceback)",
    "main_line": "the line of that script that started processes at module level",
    "spawn_layer": "the code that started the child processes, by the frame's path "
    "(torch/multiprocessing/spawn.py, torch's DataLoader, vllm/, a ProcessPoolExecutor, a Pool)",
    "gcs_address": "the head node's GCS address a Ray node or driver could not reach, as "
    "Ray printed it ('10.0.0.1:6379'; ':6379' when the host expanded to nothing)",
    "rendezvous_method": "how torch.distributed found its store: 'tcp' (an init_method "
    "tcp://HOST:PORT URL) or 'env' (MASTER_ADDR / MASTER_PORT), from the URL or the "
    "rendezvous handler's frame",
    "mujoco_gl": "the MuJoCo rendering backend in use (egl, osmesa, glfw)",
    "egl_device_id": "the EGL device MUJOCO_EGL_DEVICE_ID names, as the log sets it ('1')",
    "pyopengl_platform": "the PyOpenGL platform in use (GLXPlatform -> glx)",
    "model_type": "a checkpoint's model type a library refused (transformers' KeyError: 'qwen2')",
    "soname": "a shared library the loader could not find or open, as the line names it "
    "(libcudnn.so.9; ldd's 'libX.so.N => not found')",
    "symbol_version": "a symbol-version label the loaded library lacks (GLIBC_2.32, "
    "GLIBCXX_3.4.30, CXXABI_1.3.15)",
    "library_path": "the library file the line names: the copy that lacks a symbol version "
    "(a conda env's lib/libstdc++.so.6) or an extension with an undefined symbol",
    "required_by": "the binary that needs it ('(required by /path/ext.so)')",
    "linked_program": "a program (not a shared library) glibc names after 'symbol lookup error:' "
    "as the object that misses a symbol ('./example-app: symbol lookup error: ./example-app: "
    "undefined symbol: _ZN2at...': a C++ program linked against another libtorch)",
    "shadowing_library": "the copy of a library the loader bound that lacks the symbol "
    "versions a binary was linked against ('<lib>: no version information available (required "
    "by X)', relocation error's 'not defined in file <lib> with link time reference')",
    "shadowed_for": "the binary or library that was linked against another copy of it",
    "ld_library_path_export": "the LD_LIBRARY_PATH a log's shell or script sets (export "
    "LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH)",
    "ld_library_path": "the LD_LIBRARY_PATH a loader error prints beside the library it could "
    "not open (TensorFlow's dso_loader: '... LD_LIBRARY_PATH: /usr/local/cuda-9.0/lib64')",
    "gl_library": "an OpenGL library PyOpenGL could not load, by the short name it loads it by "
    "(OSMesa, GL, glut: lib<name>.so)",
    "module": "a Python module the import system could not find (No module named 'X')",
    "import_name": "a name an import could not find in a module (cannot import name 'X')",
    "from_module": "the module that import read it from (cannot import name 'X' from 'Y')",
    "object_class": "the class an instance's missing attribute was read from ('DataFrame' "
    "object has no attribute 'X')",
    "call_class": "the class a traceback's last source line calls (`engine_args = "
    "EngineArgs(`) above Python 3.9's bare `__init__() got an unexpected keyword argument`",
    "importer_file": "the file of the innermost traceback frame above a failed import, under "
    "site-packages (the module whose import statement failed)",
    "lib64_site": "a site-packages directory under lib64/ that holds torch, as a traceback path "
    "names it ('venv/lib64/python3.11/site-packages'): pip may have put the nvidia-* wheels "
    "under lib/",
    "preload_lib": "a CUDA library torch looked for in the nvidia/<lib>/lib directories of "
    "sys.path and did not find, by its file-name stem (torch's 'libcublas.so.*[0-9] not found "
    "in the system path': libcublas)",
    "cpm_library": "a CUDA library cpm_kernels could not load, by the short name it loads it "
    "by ('Library cublasLt is not initialized': cublasLt; cuda, cudart, nvrtc)",
    "ops_loader": "the package (top-level import name) whose frame calls torch.ops."
    "load_library right above a loader error: the package whose compiled ops need the library "
    "(torch_scatter)",
    "importer_statement": "the top-level module of the Python import statement printed just "
    "above a loader error ('from vllm import cuda_utils': vllm), where no site-packages frame "
    "is shown",
    "str_decoded": "Python's error that a str was decoded as if it were bytes ('str' object "
    "has no attribute 'decode'), in the lines below a traceback frame that decodes what it read",
    "hdf5_reader_file": "the file of the traceback frame that decodes an HDF5 file's attribute "
    "(keras/engine/saving.py, tensorflow/python/keras/saving/hdf5_format.py)",
    "conda_virtual_have": "the version of a conda virtual package (__cuda, __glibc) this system "
    "has, as conda's UnsatisfiableError states it ('Your installed version is: 10.2')",
    "conda_virtual_need": "a conda package's constraint on a virtual package "
    "(\"-> __cuda[version='>=11.8']\": __cuda>=11.8)",
    "conda_missing": "a package spec conda's channels lack, listed under PackagesNotFoundError or "
    "ResolvePackageNotFound ('  - pytorch-cuda=12.1', '  - libgcc-ng==11.2.0=h1234567_1')",
    "script_file": "the file of the innermost traceback frame above a failed import when it is "
    "outside site-packages (a checkout's own script or module: /content/LLaVA/llava/train.py)",
    "gcc_max": "the newest gcc major the CUDA toolkit's host_config.h accepts",
    "gcc_header": "the gcc major whose own headers nvcc's front end failed in "
    "(/usr/include/c++/13/..., /usr/lib/gcc/x86_64-linux-gnu/14/include/...)",
    "extension": "a C++/CUDA extension a JIT or setup.py build was compiling",
    "killed_compiler": "the compiler of the compile command just above a bare 'Killed' (nvcc, "
    "g++; CUDA or CXX for CMake's 'Building CUDA object')",
    "build_tool": "the build tool whose failed step a compiler error sits in (make, gmake, ninja)",
    "build_killed": "the exit code of a build step the kernel killed (ninja's FAILED: [code=137])",
    "isolated_build": "pip's isolated build environment a traceback ran in (pip-build-env-*): "
    "the installed torch is not visible there",
    "ext_path": "the file of the innermost traceback frame above a compiled op's error (the "
    "package whose op raised: .../detectron2/layers/nms.py)",
    "cuda_arch_detected": "the CUDA architecture list a build's CMake autodetected (torch's "
    "select_compute_arch.cmake: '5.0;8.0;8.6;8.9;9.0;9.0a')",
    "cuda_program": "the source file of a native program's own CUDA error check that reported "
    "a failed kernel (ggml-cuda.cu, VX3_SimulationManager.cu): the kernel is that build's",
    "cxx_exception": "the C++ exception type the terminate handler names above an error "
    "('c10::Error': torch's own; 'thrust::system::system_error': a native program's)",
    "ext_module": "a compiled module or package a line names as lacking its CUDA ops "
    "(mmcv._ext, amp_C, Detectron2)",
    "pip_build": "a distribution pip or uv failed to build from source (Failed building "
    "wheel for X)",
    "cuda_arch_keyword": "the CUDA architecture value CMake could not use: a keyword (native, "
    "all, all-major) or the variable CMAKE_CUDA_ARCHITECTURES itself when it is empty",
    "missing_toolchain": "a compiler toolchain a source build found missing, as its build "
    "backend names it (cargo for maturin, the Rust compiler for setuptools-rust)",
    "sdist": "a source distribution pip took for a requirement, as its file name "
    "(tokenizers-0.15.0.tar.gz): no wheel of that release fit the installer",
    "x_display": "the X display number a server found already taken (Xorg/Xvfb: 'Server is "
    "already active for display 99')",
    "xvfb_missing": "the words of a line saying Xvfb (or xvfb-run) is not installed",
    "remote_node_ip": "the IP of another node that Ray names in a worker's line prefix "
    "('(RayWorkerWrapper pid=N, ip=A)': Ray adds ip= only for a node other than the driver's)",
    "nnodes": "the number of nodes a launcher was given (torchrun --nnodes, DeepSpeed --num_nodes, "
    "Slurm's SLURM_NNODES) or NCCL's communicator spans ('nRanks 16 nNodes 2')",
    "launcher_hosts": "the hosts an mpirun or horovodrun -H, pdsh -w or DeepSpeed's 'Running on "
    "the following workers:' names ('host1:8,host2:8')",
    "launcher_line_host": "the host pdsh names before a line it gathered ('worker-1: ...'); "
    "several in one log: the ranks ran on several nodes",
    "nccl_tests_host": "the host nccl-tests' device table names for a rank ('Rank  2 Group  0 "
    "Pid 3164639 on    fengyun device  0'); several in one log: the ranks ran on several nodes",
    "launcher_world_info": "the hosts and GPUs of DeepSpeed's launcher, its 'WORLD INFO DICT' "
    "(\"'worker-0': [0, 1], 'worker-1': [0, 1]\")",
    "slurm_nodelist": "the nodes Slurm allocated to the job, in its hostlist form "
    "(SLURM_JOB_NODELIST=gpu[01-02])",
    "nccl_hosts_versions": "the NCCL releases the hosts of a multi-node log load, each with its "
    "hosts ('2.18.6=node1;2.20.5=node2'; triage/nccl_hosts.py), where they differ",
    "nccl_hosts_settings": "NCCL_PROTO / NCCL_ALGO as each host's NCCL echoes them ('set by "
    "environment to'), 'unset' where a host's lines state none, where they differ "
    "('NCCL_PROTO:Simple=node1;unset=node2')",
    "nccl_hosts_drivers": "the driver CUDA versions NCCL's cudaDriverVersion states per host "
    "('12020=node1;12040=node2'), where they differ",
    "nccl_hosts_networks": "the network NCCL's 'Using network' names per host "
    "('IB=node1;Socket=node2'), where they differ",
    "nccl_hosts_plugins": "the network plugin per host ('internal' where NCCL found none), where "
    "one host loads a plugin another lacks",
    "nccl_hosts_bootstrap": "bootstrap interface:address pairs that are no node's own (one "
    "address on two hosts, loopback, link-local, Docker's bridge), with their hosts",
    "nccl_hosts_routable": "the interfaces of the hosts whose bootstrap address is their own, "
    "beside nccl_hosts_bootstrap",
    "nccl_own_address": "an address NCCL's bootstrap or socket transport uses on this node "
    "('Bootstrap : Using [0]eth0:10.38.10.4<0>'); all of them in nccl_own_addresses",
    "nccl_peer_address": "the address NCCL's socket tried to reach ('socketStartConnect: Connect "
    "to 127.0.0.1<45069> failed'): a loopback one means a rank advertised its lo interface",
    "nccl_mnnvl_clique": "the size of the multi-node NVLink clique NCCL found ('MNNVL "
    "(cliqueSize 72) is available but not working on this system')",
    "nccl_cuda_failure": "the CUDA error NCCL's own check printed ('Cuda failure 401 'the operation "
    "cannot be performed in the present state'')",
    "node_rank": "this node's index among the job's nodes (--node_rank 1, NODE_RANK=1)",
    "nccl_net_transport": "the network transport NCCL connected a channel through (Socket, IB, "
    "a net plugin: 'via NET/IBext_v8/0'), which it uses between nodes",
    "nccl_shm_disabled": "NCCL echoed NCCL_SHM_DISABLE=1 (on one node it then may use the network "
    "transport)",
    "container_host": "a hostname of Docker's default form (the container's 12-hex-digit ID) "
    "that NCCL prefixes its lines with: the job ran in a Docker container",
    "container_stated": "prose that says the job runs in a container ('inside the container')",
    "container_run": "the engine of a `docker run` (nvidia-docker, podman) command the log "
    "shows: the job ran in a container",
    "container_shm_size": "the /dev/shm size a `docker run` command passes (--shm-size=16g; "
    "bytes without a unit)",
    "container_ipc": "the IPC mode a `docker run` command passes (--ipc=host: the host's /dev/shm)",
    "dll": "a Windows DLL (or extension module) a line says failed to load (c10.dll, "
    "cublas64_12.dll, zlibwapi.dll; for 'DLL load failed while importing X' the module X)",
    "dll_importing": "the extension module whose import failed ('DLL load failed while importing "
    "_C': torch._C; cv2)",
    "win_error": "the Windows system error number of a failed load (126, 127, 193, 1114)",
    "dll_package": "the package whose folder under site-packages holds that DLL (torch for "
    "...\\site-packages\\torch\\lib\\c10.dll)",
    "kit_descriptors": "how many GPU resource descriptors Omniverse Kit's renderer asked for and "
    "its table holds, as its warning states them ('Exceeding capacity of resource descriptors "
    "458753 / 458752')",
    "kit_plugin": "an Omniverse Kit plugin that logged the line (gpu.foundation.plugin): the job "
    "runs a Kit app, Isaac Sim (Isaac Lab and OmniGibson run on it)",
    "build_dependency": "the package a source build imports without declaring it as a build "
    "dependency (uv: 'depends on torch, but doesn't declare it')",
    "msvc_min": "the oldest Visual Studio release nvcc accepts, as its MSVC check prints it",
    "msvc_max": "the newest Visual Studio release nvcc accepts, as its MSVC check prints it",
    "clang_below": "the clang major nvcc's host-compiler check requires clang to be below",
    "stl_cuda_min": "the oldest CUDA release (nvcc) the MSVC standard library's own check "
    "accepts, as its STL1002 error states it",
    "torch_library": "a library torch 1.12 and older shipped that a stale extension build links "
    "(libtorch_cuda_cu, libtorch_cuda_cpp)",
    "sigill_package": "the package a process was running when the CPU refused an instruction: "
    "the command's or the lines above's import (`import polars`, `python -m polars`, "
    "`site-packages/polars/`)",
    "cpu_platform": "where x86-64 code runs emulated or on a Mac, as a log states it: macOS "
    "(its shell's 'Illegal instruction: 4', Python's 'on darwin' banner, an Apple M-series "
    "chip, an arm64 Darwin kernel) or an arm64 host running an amd64 container image "
    "(Docker's 'detected host platform (linux/arm64/v8)', QEMU's own SIGILL line)",
    "exec_host_arch": "the CPU the node runs, as a log beside an exec format error states it "
    "(uname -a's 'aarch64 GNU/Linux', lscpu's or an issue's 'Architecture: Arm64', Docker's "
    "'detected host platform (linux/arm64/v8)')",
    "exec_file_arch": "the CPU a binary or image is built for, as file(1) or Docker states it "
    "('ELF 64-bit LSB executable, ARM aarch64', 'x86-64'; 'requested image's platform "
    "(linux/amd64)')",
    "cpu_features": "the instruction-set extensions a library's own check says this CPU lacks "
    "('avx2, fma, bmi1', 'AVX')",
    "signal": "the number of the signal a process died of, as a launcher states it (torchrun's "
    "'exitcode : -11', Open MPI's 'exited on signal 6', systemd's 'status=11/SEGV')",
    "signal_name": "the signal a process died of by its name or strsignal text (SEGV, "
    "'Segmentation fault', 'Aborted')",
    "exit_status": "a shell's or container's exit status of a process ended by a signal, 128 + "
    "its number ('exited with code 139', 'Exit Code: 134')",
    "crash_library": "the shared library a native crash happened in: the kernel's 'segfault at "
    "... in libcublasLt.so.12[...]' or the first frame of a backtrace",
    "crash_package": "a package the crashed process imported, from the command or the lines "
    "above the crash ('python -c \"import torchsort, torch\"', '>>> import reboundx')",
    "openmp_package": "a package besides torch that brings its own OpenMP runtime, named in "
    "the lines above a crash (an import, a pip freeze row: xgboost, lightgbm, scikit-learn)",
    "crash_frame_package": "the package whose Python code the crashing thread was running, "
    "from the first site-packages frame of faulthandler's 'Current thread' stack",
    "crash_imports": "the import statements of a 'python -c' command that crashed, in their "
    "order ('import chainer;import torch')",
    "torch_replaced": "the torch release pip uninstalled to meet another package's requirement "
    "('Found existing installation: torch 2.4.1')",
    "torch_replacer": "the torch companion whose install made pip replace torch, from the "
    "install command or pip's 'Collecting' line above ('pip3 install -U xformers')",
    "torch_requested": "torch itself asked for in the install that replaced it ('Collecting "
    "torch==2.5.1' without pip's '(from X)', 'pip install torch torchvision')",
    "jax_plugin": "the JAX plugin a traceback's frames name (cuda12 from "
    "jax_plugins/xla_cuda12/__init__.py)",
}
_FAILURES = {
    "vulkan_error": "vulkan",
    "egl_error": "egl",
    "gl_error": "gl",
    "dri_denied": "dri",
}
# the library a `gl_renderer` fact's text names: nvdiffrast logs through its own LOG(FATAL),
# '[F glutil.cpp:338]' (NVlabs/nvdiffrast nvdiffrast/common/glutil.cpp)
_RENDERERS = {
    "glutil.cpp": "nvdiffrast",
    "RasterizeGLContext": "nvdiffrast",
    "Open3D": "open3d",
}
_PAIRS = {"pkg_name": "pkg_version", "pkg2_name": "pkg2_version"}
_REQUIRES = re.compile(
    r"^(?P<by>[A-Za-z0-9][A-Za-z0-9._-]*)(?: [0-9][^ ]*)? requires (?P<req>.+?)"
    r"(?:, but you have (?P<have>[A-Za-z0-9][A-Za-z0-9._-]*) (?P<have_version>[0-9][^ ]*))?$"
)
_LOOPBACK = re.compile(r"^(127\.|::1$|localhost$)")


@dataclass(frozen=True)
class LogFact:
    name: str  # a key of FACTS
    value: str
    line: int
    signature: str

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.name,
            "value": self.value,
            "line": self.line,
            "signature": self.signature,
        }


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def extractor_problem(pattern: str) -> str | None:
    """Why an extractor is unusable, or None."""
    try:
        regex = _compiled(pattern)
    except re.error as exc:
        return f"does not compile: {exc}"
    if not regex.groupindex:
        return "has no named group (?P<fact>...)"
    unknown = sorted(set(regex.groupindex) - FACTS.keys())
    if unknown:
        return f"names unknown facts {unknown} (known: {', '.join(FACTS)})"
    return None


def extract(signature: Signature, line: int, text: str) -> list[LogFact]:
    """The facts ``signature``'s extractors read from one matched line (or its context). A
    requirement read on a line its ``requirer`` prints becomes that distribution's
    ``requires`` fact ("llamafactory requires vllm>=0.4.3,<=0.7.3"); without a requirer it is
    dropped (a bare requirement belongs to nothing the node has)."""
    found: list[LogFact] = []
    for pattern in signature.extract:
        for match in _compiled(pattern).finditer(text):
            groups = {k: v.strip() for k, v in match.groupdict().items() if v and v.strip()}
            name, spec = groups.pop("req_name", None), groups.pop("req_spec", None)
            if name and spec:
                groups.setdefault("requirement", name + spec.replace(" ", ""))
            requirement = groups.pop("requirement", None)
            if requirement and signature.requirer:
                groups["requires"] = f"{signature.requirer} requires {requirement}"
            at = line + text.count("\n", 0, match.start())  # the line in a context block
            found += [LogFact(k, v, at, signature.id) for k, v in groups.items()]
    return found


def dedupe(facts: Iterable[LogFact]) -> tuple[LogFact, ...]:
    seen: dict[tuple[str, str], LogFact] = {}
    for fact in facts:
        seen.setdefault((fact.name, fact.value), fact)
    return tuple(sorted(seen.values(), key=lambda f: (f.line, f.name)))


# --- facts -> report ----------------------------------------------------------------------------


# a name a fixed-width column cut short: nvidia-smi's '...' (or a terminal's '…')
_TRUNCATED = re.compile(r"(?:\.\.\.|…)\s*$")


def _cc(sm: str) -> str | None:
    if re.fullmatch(r"[0-9]+\.[0-9]+", sm.strip()):
        return sm.strip()
    if re.fullmatch(r"0x[0-9a-fA-F]{3,4}", sm.strip()):  # TensorRT's 'Unsupported SM: 0x601'
        value = int(sm.strip(), 16)
        return f"{value >> 8}.{value & 0xFF}"
    digits = re.sub(r"^sm_?", "", sm.strip().lower())  # sm_75, and SageAttention's sm75
    if not digits.isdigit() or len(digits) < 2:
        return None
    return f"{int(digits[:-1])}.{digits[-1]}"


def _cc_text(value: str) -> str:
    """A compute capability as X.Y: xformers writes its tuple '(7, 5)'."""
    pair = re.fullmatch(r"\(?\s*([0-9]+)\s*[.,]\s*([0-9]+)\s*\)?", value.strip())
    return f"{pair.group(1)}.{pair.group(2)}" if pair else value


def _cuda_number(value: str) -> str | None:
    """CUDA's integer version (12080, 11040) as major.minor."""
    if not value.isdigit():
        return value if re.fullmatch(r"\d+\.\d+", value) else None
    number = int(value)
    return f"{number // 1000}.{(number % 1000) // 10}"


def _major_minor(value: str) -> str | None:
    found = re.match(r"(\d+)\.(\d+)", value.strip())
    return f"{found.group(1)}.{found.group(2)}" if found else None


def _engine(run: str) -> str:
    """The container engine a `... run` command names: nvidia-docker's is Docker's."""
    return "podman" if run == "podman" else "docker"


def _bytes_gb(value: str) -> int | None:
    try:
        return int(float(value) * 1024**3)
    except ValueError:
        return None


class _Builder:
    def __init__(self, facts: tuple[LogFact, ...], log: str) -> None:
        self.facts = facts
        self.log = log

    def first(self, name: str) -> LogFact | None:
        return next((f for f in self.facts if f.name == name), None)

    def all(self, name: str) -> list[LogFact]:
        return [f for f in self.facts if f.name == name]

    def where(self, *facts: LogFact | None) -> str:
        lines = sorted({f.line for f in facts if f is not None})
        return f"{self.log} line{'s' if len(lines) > 1 else ''} " + ", ".join(map(str, lines))

    def section(self, data: Any, *facts: LogFact | None) -> Section[Any]:
        return Section.ok(data, source=f"log ({self.where(*facts)})")

    def gpu_name(self) -> LogFact | None:
        """The GPU's name the log states in full, before one a table cut short: nvidia-smi's
        screen prints 'NVIDIA GeForce ...' where the name is wider than its column, while a
        program's own line names the model ('NVIDIA GeForce RTX 4090')."""
        names = self.all("gpu_name")
        whole = [f for f in names if not _TRUNCATED.search(f.value)]
        chosen = whole or names
        return chosen[0] if chosen else None

    def gpu(self) -> Section[GpuInfo] | None:
        name, sm = self.gpu_name(), self.first("gpu_sm") or self.first("gpu_cc")
        cuda, driver = self.first("driver_cuda"), self.first("driver_version")
        errors = self.all("cuda_error")
        if not any((name, sm, cuda, driver, errors)):
            return None
        gpus = None
        if name or sm:
            gpus = (
                Gpu(
                    index=0,
                    name=name.value if name else None,
                    compute_capability=(
                        (_cc_text(sm.value) if sm.name == "gpu_cc" else _cc(sm.value))
                        if sm
                        else None
                    ),
                ),
            )
        info = GpuInfo(
            driver_version=driver.value if driver else None,
            cuda_driver_version=_cuda_number(cuda.value) if cuda else None,
            driver_source=f"the log ({self.where(cuda)})" if cuda else None,
            gpus=gpus,
            gpus_reason=None if gpus else "the log names no GPU",
            cuda_errors=tuple(dict.fromkeys(f.value for f in errors)),
        )
        return self.section(info, name, sm, cuda, driver, *errors)

    def packages(self) -> Section[PackagesInfo] | None:
        dists: list[Distribution] = []
        used: list[LogFact] = []
        # what pip's resolver lines say is installed: the latest line states the current set
        have: dict[str, str] = {}
        for stated in self.facts:
            found = _REQUIRES.match(stated.value) if stated.name == "requires" else None
            if found is not None and found.group("have"):
                have[found.group("have")] = found.group("have_version")
        dists += [Distribution(name=n, version=v) for n, v in have.items()]
        for key, value in (("torch_version", "torch"), ("ray_version", "ray")):
            fact = self.first(key)
            if fact is not None:
                dists.append(Distribution(name=value, version=fact.value))
                used.append(fact)
        for name_key, version_key in _PAIRS.items():
            names = [f for f in self.facts if f.name == name_key]
            versions = [f for f in self.facts if f.name == version_key]
            for name, version in zip(names, versions, strict=False):
                dists.append(Distribution(name=name.value, version=version.value))
                used += [name, version]
        built = self.first("xformers_torch")
        if built is not None:  # xformers is there (its version is not on the line)
            dists.append(
                Distribution(
                    name="xformers", version="unknown", requires=(f"torch=={built.value}",)
                )
            )
            used.append(built)
        required = self.requirements()
        for requirer in required:
            if not any(canonicalize_name(d.name) == requirer for d in dists):
                dists.append(Distribution(name=requirer, version="unknown"))
        used += [f for f in self.facts if f.name == "requires"]
        if not dists:
            return None
        unique: dict[str, Distribution] = {}
        for dist in dists:
            unique.setdefault(dist.key, dist)
        switches = {f.line: f.value for f in self.facts if f.name == "check_switch"}
        for key, (reqs, lines) in required.items():
            where = f"log line{'s' if len(lines) > 1 else ''} " + ", ".join(map(str, lines))
            switch = next((switches[n] for n in lines if n in switches), None)
            unique[key] = dataclasses.replace(
                unique[key], requires=tuple(reqs), location=where, check_switch=switch
            )
        info = PackagesInfo(
            distributions=tuple(unique.values()),
            partial="a log names only the packages its lines mention",
        )
        return self.section(info, *used)

    def torch_archs(self, torch: Section[Any] | None) -> Section[Any] | None:
        """The torch section with the arch list the log quotes (torch's warning or its
        get_arch_list()); without a torch version in the log the build's version stays empty
        (merging with a node fills it in; rules read the version from the package list)."""
        from envcheck.rules.choose import arch_list_from_torch

        fact = self.first("torch_arch_list")
        text = arch_list_from_torch(fact.value) if fact is not None else None
        if fact is None or text is None:
            return None
        if torch is not None and torch.is_ok and torch.data is not None:
            data = replace(torch.data, arch_list=text)
            return Section.ok(data, source=f"{torch.source} + log ({self.where(fact)})")
        return self.section(TorchBuild(version="", arch_list=text), fact)

    def requirements(self) -> dict[str, tuple[list[str], list[int]]]:
        """Requirements the log states, by requirer (canonical name), with the lines stating
        them: pip's resolver lines and runtime checks. Spaces are dropped first (a retyped
        'torch= =2.4.0' reads as torch==2.4.0); what still is not PEP 508 is left out."""
        out: dict[str, tuple[list[str], list[int]]] = {}
        for fact in self.facts:
            if fact.name != "requires":
                continue
            found = _REQUIRES.match(fact.value)
            if found is None:
                continue
            try:
                req = Requirement(found.group("req").replace(" ", ""))
            except InvalidRequirement:
                continue
            reqs, lines = out.setdefault(canonicalize_name(found.group("by")), ([], []))
            if str(req) not in reqs:
                reqs.append(str(req))
            if fact.line not in lines:
                lines.append(fact.line)
        return out

    def workload(self) -> Section[WorkloadInfo] | None:
        fact = self.first("dtype")
        dtype = normal_dtype(fact.value) if fact else None
        model = self.first("model_type")
        kit = self.first("kit_plugin")  # Omniverse Kit logs it: the job runs Isaac Sim
        if dtype is None and model is None and kit is None:
            return None
        info = WorkloadInfo(
            dtype=dtype,
            model_type=model.value if model else None,
            runs=("isaacsim",) if kit is not None else (),
        )
        return self.section(info, fact if dtype else None, model, kit)

    def python(self) -> Section[PythonInfo] | None:
        fact = self.first("python_version") or self.first("site_python")
        if fact is None:
            return None
        header = next((f for f in self.all("missing_header") if f.value == "Python.h"), None)
        info = PythonInfo(
            version=fact.value,
            markers=markers(fact.value, None),
            headers=False if header is not None else None,
        )
        return self.section(info, fact, header)

    def system(self) -> Section[SystemInfo] | None:
        total = self.first("mem_total_gb")
        used = self.first("mem_used_gb")
        lacks, gxx, needed = (
            self.first("glibc_lacks"),
            self.first("gxx_version"),
            self.first("gxx_needed"),
        )
        nvcc, build = self.first("nvcc_version"), self.first("cuda_build")
        host = self.first("container_host")
        run = self.first("container_run")
        os_name = self.first("os_name")
        image = self.first("container_image")
        ngc = self.first("ngc_check")
        if total is None and not any(
            (lacks, gxx, needed, nvcc, build, host, run, os_name, image, ngc)
        ):
            return None
        total_bytes = _bytes_gb(total.value) if total else None
        used_bytes = _bytes_gb(used.value) if used else None
        available = (
            total_bytes - used_bytes if total_bytes is not None and used_bytes is not None else None
        )
        newest_lacking = max(
            (f.value for f in self.all("glibc_lacks")),
            key=lambda v: tuple(int(p) for p in v.split(".") if p.isdigit()),
            default=None,
        )
        needed_by = self.first("glibc_required_by")
        toolkit = None
        if nvcc is not None or build is not None:
            toolkit = Toolkit(
                nvcc_path=f"nvcc (named in {self.where(nvcc or build)})",
                version=_major_minor(nvcc.value) if nvcc else None,
                in_use=f"{build.value} ({self.where(build)})" if build else None,
            )
        info = SystemInfo(
            memory_total_bytes=total_bytes,
            memory_available_bytes=available,
            glibc_lacks=newest_lacking,
            glibc_needed_by=needed_by.value if needed_by else None,
            os_id=_os_id(os_name.value) if os_name else None,
            os_pretty=os_name.value if os_name else None,
            gxx=gxx.value if gxx else None,
            gxx_needed=needed.value if needed else None,
            nvcc=toolkit,
            container=_engine(run.value)
            if run is not None
            else "docker"
            if host is not None or image is not None or ngc
            else None,
            container_evidence=(
                f"a `{run.value} run` command, {self.where(run)}"
                if run is not None
                else f"hostname {host.value} (Docker's default: the container ID), "
                f"{self.where(host)}"
                if host is not None
                else f"the image {image.value}, {self.where(image)}"
                if image is not None
                else f"an NGC container's start-up check, {self.where(ngc)}"
                if ngc is not None
                else None
            ),
            container_image=image.value if image is not None else None,
        )
        return self.section(
            info,
            total,
            used,
            lacks,
            gxx,
            needed,
            nvcc,
            build,
            host,
            run,
            needed_by,
            os_name,
            image,
            ngc,
        )

    def torch_cuda(self) -> LogFact | None:
        return self.first("torch_cuda")

    def storage(self) -> Section[StorageInfo] | None:
        disks: list[DiskUsage] = []
        used: list[LogFact] = []
        shm = self.first("shm_bytes")
        if shm is not None and shm.value.isdigit():
            free = int(shm.value)
            disks.append(
                DiskUsage(role="dev_shm", path="/dev/shm", total_bytes=free, free_bytes=free)
            )
            used.append(shm)
        path, free_f, total_f = (
            self.first("disk_path"),
            self.first("disk_free"),
            self.first("disk_total"),
        )
        if free_f is not None and total_f is not None:
            disks.append(
                DiskUsage(
                    role="ray_tmp",
                    path=path.value if path else "/tmp/ray",
                    total_bytes=int(total_f.value),
                    free_bytes=int(free_f.value),
                )
            )
            used += [f for f in (path, free_f, total_f) if f is not None]
        if not disks:
            return None
        return self.section(StorageInfo(disks=tuple(disks)), *used)

    def libraries(self) -> Section[LibrariesInfo] | None:
        libs = self.all("cuda_lib")
        missing = self.all("missing_lib")
        exts = self.all("ext_library")
        symbols = self.all("undefined_symbol")
        nccl, nccl_cuda = self.first("nccl_version"), self.first("nccl_cuda")
        if not libs and not exts and not missing and nccl is None:
            return None
        found = tuple(
            SharedLibrary(name=f.value.split(".so", 1)[0], path=f.value, via="named in the log")
            for f in libs
        )
        pairs = list(zip(exts, symbols, strict=False))
        unresolved = tuple(
            dict.fromkeys(UnresolvedSymbol(library=e.value, symbol=s.value) for e, s in pairs)
        )
        info = LibrariesInfo(
            cuda_libraries=found,
            unresolved=unresolved,
            missing=tuple(dict.fromkeys(f.value for f in missing)),
            nccl_loaded=nccl.value if nccl else None,
            nccl_loaded_cuda=nccl_cuda.value if nccl and nccl_cuda else None,
        )
        return self.section(
            info, *libs, *missing, *(f for pair in pairs for f in pair), nccl, nccl_cuda
        )

    def graphics(self) -> Section[GraphicsInfo] | None:
        floor = self.first("rtx_min_driver")
        caps = self.first("driver_capabilities")
        failures = [f for f in self.facts if f.name in _FAILURES]
        renderers = self.all("gl_renderer")
        if floor is None and caps is None and not failures:
            return None
        denied = tuple(dict.fromkeys(f.value for f in failures if f.name == "dri_denied"))
        info = GraphicsInfo(
            rtx_min_driver=floor.value if floor else None,
            driver_capabilities=caps.value if caps else None,
            failures=tuple(dict.fromkeys(f"{_FAILURES[f.name]}: {f.value}" for f in failures)),
            render_nodes=denied,
            render_nodes_denied=denied,
            renderers=tuple(dict.fromkeys(_RENDERERS.get(f.value, f.value) for f in renderers)),
        )
        return self.section(info, floor, caps, *failures, *renderers)

    def env(self) -> Section[EnvInfo] | None:
        stated = [
            (var, fact)
            for var, key in (
                ("MUJOCO_GL", "mujoco_gl"),
                ("PYOPENGL_PLATFORM", "pyopengl_platform"),
                ("MUJOCO_EGL_DEVICE_ID", "egl_device_id"),
            )
            if (fact := self.first(key)) is not None
        ]
        if not stated:
            return None
        info = EnvInfo(variables={var: fact.value.lower() for var, fact in stated})
        return self.section(info, *(fact for _, fact in stated))

    def network(self) -> Section[NetworkInfo] | None:
        ifaces = [f for f in self.facts if f.name == "iface"]
        addresses = [f for f in self.facts if f.name == "address"]
        if not ifaces and not addresses:
            return None
        interfaces = tuple(
            Interface(name=f.value, kind="loopback" if f.value == "lo" else None) for f in ifaces
        )
        info = NetworkInfo(
            interfaces=interfaces,
            hostname_addresses=tuple(
                dict.fromkeys(a.value for a in addresses if _LOOPBACK.match(a.value))
            ),
        )
        return self.section(info, *ifaces, *addresses)


def to_report(facts: tuple[LogFact, ...], log: str) -> NodeReport | None:
    """The node as the log describes it; None when the log states no fact."""
    if not facts:
        return None
    from envcheck.version import __version__

    build = _Builder(facts, log)
    sections: dict[str, Section[Any]] = {
        name: section
        for name, section in (
            ("gpu", build.gpu()),
            ("packages", build.packages()),
            ("python", build.python()),
            ("system", build.system()),
            ("storage", build.storage()),
            ("libraries", build.libraries()),
            ("network", build.network()),
            ("workload", build.workload()),
            ("graphics", build.graphics()),
            ("env", build.env()),
        )
        if section is not None
    }
    cuda = build.torch_cuda()
    cuda_version = _major_minor(cuda.value) if cuda else None
    if "packages" in sections:
        from envcheck.ingest.common import torch_section

        torch = torch_section(
            sections["packages"].data,
            sections["packages"].source or log,
            cuda=cuda_version,
            cuda_known=cuda_version is not None,
        )
        if torch.is_ok:
            sections["torch"] = torch
    if "torch" not in sections and cuda_version is not None:
        # the line states torch's CUDA but not its version: a build whose version is unknown
        sections["torch"] = build.section(TorchBuild(version="", cuda=cuda_version), cuda)
    archs = build.torch_archs(sections.get("torch"))
    if archs is not None:
        sections["torch"] = archs
    if not sections:
        return None
    report = NodeReport(
        node=f"the node of {log}",
        envcheck_version=__version__,
        created_at=now(),
        origin=Origin(kind="ingested", detail=f"{log} (facts read from the log)"),
    )
    return report.with_sections(**sections)


# a distribution's name as environment lists write it -> its /etc/os-release ID
_OS_IDS = (
    ("red hat", "rhel"),
    ("rhel", "rhel"),
    ("rocky", "rocky"),
    ("almalinux", "almalinux"),
    ("centos", "centos"),
    ("fedora", "fedora"),
    ("amazon linux", "amzn"),
    ("oracle linux", "ol"),
    ("ubuntu", "ubuntu"),
    ("debian", "debian"),
)


def _os_id(name: str) -> str | None:
    """The os-release ID of the distribution ``name`` names ('Rocky Linux 9.3' -> 'rocky');
    None for one not listed."""
    low = name.lower()
    return next((os_id for word, os_id in _OS_IDS if word in low), None)
