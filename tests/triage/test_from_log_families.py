"""The driver, arch, NCCL and graphics families: one generic signature per class of line, read
against the matrix's tables (``[[cuda_error]]``, ``[[sm]]``, ``[[arch_floor]]``) by the rule's
``@from_log``, for any library that prints the line. Lines in the libraries' own wording
(libcudart's and NVML's strings, nvidia-smi's, ptxas/nvcc, Triton, FlashInfer, xformers, NCCL's
src/, Mesa)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("line", "name", "fix"),
    [
        # torch (C10_CUDA_CHECK): 'CUDA error: ' + cudaGetErrorString
        (
            "RuntimeError: CUDA error: no CUDA-capable device is detected",
            "cudaErrorNoDevice",
            "--gpus all",
        ),
        # the name alone, as cuda-samples and CuPy print it
        ("CUDA error at main.cu:42 code=34(cudaErrorStubLibrary)", "cudaErrorStubLibrary", "stubs"),
        # old torch: 'cuda runtime error (N) : message'
        (
            "RuntimeError: cuda runtime error (999) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:47",
            "cudaErrorUnknown",
            "Xid",
        ),
        # NCCL's CUDACHECK
        (
            "node1:11:11 [0] NCCL WARN Cuda failure 'initialization error'",
            "cudaErrorInitializationError",
            "spawn",
        ),
        # the driver API's names (CUresult)
        (
            "cuInit failed: CUDA_ERROR_ECC_UNCORRECTABLE",
            "CUDA_ERROR_ECC_UNCORRECTABLE",
            "nvidia-smi -q -d ECC",
        ),
    ],
)
def test_any_cuda_error_is_explained_from_the_table(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, name: str, fix: str
) -> None:
    drv150 = _causes(cli, log_file(tmp_path, line))["DRV150"]
    assert drv150["verdict"] == "confirmed"
    assert drv150["evidence"].startswith("confirmed from line 1")
    (finding,) = drv150["findings"]
    assert name in finding["message"] and finding["severity"] == "error"
    assert fix in _fix(drv150)


def test_a_programs_own_cuda_error_is_a_warning_not_a_node_fault(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    drv150 = _causes(cli, log_file(tmp_path, line))["DRV150"]
    (finding,) = drv150["findings"]
    assert finding["severity"] == "warning"
    assert "cudaErrorIllegalAddress 700" in finding["message"]
    assert "not the node's" in finding["message"]


def test_nccls_unhandled_cuda_error_stays_open_without_the_code(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "torch.distributed.DistBackendError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
    drv150 = _causes(cli, log_file(tmp_path, line))["DRV150"]
    assert drv150["verdict"] == "unknown"
    assert "NCCL_DEBUG=INFO" in drv150["reason"]


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        (
            "Failed to initialize NVML: Unknown Error",
            ["NVML_ERROR_UNKNOWN", "restart the container", "nvidia-ctk"],
        ),
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
            "sure that the latest NVIDIA driver is installed and running.",
            ["kernel driver is not loaded", "modprobe nvidia", "dkms status"],
        ),
        (
            "Failed to initialize NVML: Insufficient Permissions",
            ["NVML_ERROR_NO_PERMISSION", "/dev/nvidia"],
        ),
        ("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost", ["NVML_ERROR_GPU_IS_LOST"]),
        # a paste cut after nvidia-smi's first sentence: the table's message by that sentence
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
            ["kernel driver is not loaded", "modprobe nvidia"],
        ),
    ],
)
def test_nvml_and_nvidia_smi_failures_name_their_cause(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, fragments: list[str]
) -> None:
    drv151 = _causes(cli, log_file(tmp_path, line))["DRV151"]
    assert drv151["verdict"] == "confirmed"
    text = drv151["findings"][0]["message"] + "\n" + _fix(drv151)
    for fragment in fragments:
        assert fragment.lower() in text.lower(), (fragment, text)


def test_nvml_version_mismatch_is_the_kernel_module_against_the_libraries(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "Failed to initialize NVML: Driver/library version mismatch")
    spec = _spec(tmp_path, '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA A100-SXM4-80GB"]\n')
    gpu102 = _causes(cli, log, "--spec", str(spec))["GPU102"]
    assert gpu102["verdict"] == "confirmed"
    (finding,) = gpu102["findings"]
    assert "kernel module" in finding["message"] and "550.54.15" in finding["message"]
    assert "reboot" in _fix(gpu102).lower()


def test_torch_found_no_driver_is_drv103(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
    )
    assert _causes(cli, log_file(tmp_path, line))["DRV103"]["verdict"] == "confirmed"


@pytest.mark.parametrize(
    ("line", "spec", "verdict", "fragments"),
    [
        (
            "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
            None,
            "confirmed",
            [
                "sm_120 is compiled first by CUDA 12.8",
                "export CUDA_HOME=/usr/local/cuda-12.8",
                "TRITON_PTXAS_PATH",
            ],
        ),
        (
            "nvcc fatal   : Unsupported gpu architecture 'compute_90'",
            '[system]\nnvcc = "11.7"\n',
            "confirmed",
            ["CUDA 11.7 predates sm_90 (first compiled by CUDA 11.8)", "TORCH_CUDA_ARCH_LIST"],
        ),
        (
            "nvcc fatal   : Unsupported gpu architecture 'compute_35'",
            '[system]\nnvcc = "12.1"\n',
            "confirmed",
            ["CUDA 12.1 dropped sm_35", "the CUDA 11.8 toolkit (the last that compiles sm_35)"],
        ),
        # a toolkit that compiles the target: not this cause
        (
            "nvcc fatal   : Unsupported gpu architecture 'compute_80'",
            '[system]\nnvcc = "12.4"\n',
            "ruled_out",
            [],
        ),
    ],
)
def test_a_compiler_that_does_not_know_the_arch(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    line: str,
    spec: str | None,
    verdict: str,
    fragments: list[str],
) -> None:
    args = ("--spec", str(_spec(tmp_path, spec))) if spec else ()
    cud150 = _causes(cli, log_file(tmp_path, line), *args)["CUD150"]
    assert cud150["verdict"] == verdict
    if verdict == "confirmed":
        text = cud150["findings"][0]["message"] + "\n" + _fix(cud150)
        for fragment in fragments:
            assert fragment in text, (fragment, text)


@pytest.mark.parametrize(
    ("line", "spec", "verdict", "fragments"),
    [
        (
            "triton.compiler.errors.CompilationError: at 1:0: type fp8e4nv not supported in "
            "this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')",
            '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA A100-SXM4-80GB"]\n',
            "confirmed",
            ["compute capability 8.9", "NVIDIA A100-SXM4-80GB (sm_80", "bf16/fp16"],
        ),
        # the same line on an H100 is not a floor problem
        (
            "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
            "('fp8e4b15', 'fp8e5')",
            '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA H100 80GB HBM3"]\n',
            "ruled_out",
            [],
        ),
        (
            "NotImplementedError: No operator found for `memory_efficient_attention_forward`: "
            "`fa2F@v2.5.7-pt` is not supported because: requires device with capability > (8, 0) "
            "but your GPU has capability (7, 5) (too old)",
            None,
            "confirmed",
            ["compute capability 8.0", "sm_75", "SDPA"],
        ),
        # FlashInfer's check misfires above its floor when it cannot read the arch
        (
            "RuntimeError: FlashInfer requires GPUs with sm75 or higher, but got sm121",
            None,
            "confirmed",
            ["meets its floor 7.5", "FLASHINFER_CUDA_ARCH_LIST"],
        ),
        (
            "ValueError: num_ctas > 1 requires NVIDIA SM90+ (Hopper). Current target is sm_80. "
            "This configuration will fail. Please set num_ctas=1 or target an SM90+ GPU.",
            None,
            "confirmed",
            ["compute capability 9.0", "sm_80", "num_ctas=1"],
        ),
    ],
)
def test_a_library_floor_against_the_gpu(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    line: str,
    spec: str | None,
    verdict: str,
    fragments: list[str],
) -> None:
    args = ("--spec", str(_spec(tmp_path, spec))) if spec else ()
    cud151 = _causes(cli, log_file(tmp_path, line), *args)["CUD151"]
    assert cud151["verdict"] == verdict
    if verdict == "confirmed":
        text = cud151["findings"][0]["message"] + "\n" + _fix(cud151)
        for fragment in fragments:
            assert fragment in text, (fragment, text)


def test_nccl_ib_line_with_the_nodes_hcas(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    # NCCL's WARN (src/transport/net_ib.cc); its INFO `No device found.` alone stays open
    line = "node1:2301:2388 [0] transport/net_ib.cc:193 NCCL WARN NET/IB : Unable to open device mlx5_0"
    net150 = _causes(cli, log_file(tmp_path, line))["NET150"]
    assert net150["verdict"] == "confirmed"
    text = _fix(net150)
    assert "rdma-core" in text and "NCCL_IB_DISABLE=1" in text


def test_nccl_no_socket_interface_points_at_ifname(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "node1:2301:2388 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found"
    found = _causes(cli, log_file(tmp_path, line))
    assert {"NET101", "NET104"} <= set(found)
    assert found["NET101"]["verdict"] == "confirmed"
    assert "NCCL_SOCKET_IFNAME=eth0" in _fix(found["NET101"])


def test_glx_driver_line_names_the_driver(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    sim150 = _causes(cli, log_file(tmp_path, "libGL error: failed to load driver: swrast"))[
        "SIM150"
    ]
    (finding,) = sim150["findings"]
    assert "swrast" in finding["message"]
    assert "NVIDIA_DRIVER_CAPABILITIES=all" in _fix(sim150)


@pytest.mark.parametrize(
    "line",
    ["vkCreateInstance: Found no drivers!", "[EGL] Could not find an EGL device for CUDA device 0"],
)
def test_egl_and_vulkan_lines_confirm_the_missing_userspace(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    sim109 = _causes(cli, log_file(tmp_path, line))["SIM109"]
    assert sim109["verdict"] == "confirmed"
    assert "10_nvidia.json" in _fix(sim109) or "nvidia_icd.json" in _fix(sim109)


def test_out_of_memory_names_the_other_processes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.06 GiB is free. Process 4242 has 61.20 GiB "
        "memory in use. Including non-PyTorch memory, this process has 16.88 GiB memory in use."
    )
    found = _causes(cli, log_file(tmp_path, line))
    assert found["DRV104"]["verdict"] == "confirmed"
    assert "process 4242 holds 61.20 GiB" in found["DRV104"]["findings"][0]["message"]
    assert "kill 4242" in _fix(found["DRV104"])
    assert found["DRV150"]["verdict"] == "confirmed"


def test_out_of_memory_without_other_processes_leaves_them_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "RuntimeError: CUDA error: out of memory"
    found = _causes(cli, log_file(tmp_path, line))
    assert found["DRV104"]["verdict"] == "unknown"
    assert "batch size" in _fix(found["DRV150"])
    # the job's size, not the node: never an error-level finding
    assert found["DRV150"]["findings"][0]["severity"] == "warning"


def test_no_display_is_glx_without_x(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = "glfw.GLFWError: (65544) b'X11: The DISPLAY environment variable is missing'"
    sim150 = _causes(cli, log_file(tmp_path, line))["SIM150"]
    assert "DISPLAY unset" in sim150["findings"][0]["message"]
    assert "xvfb-run" in _fix(sim150)


def test_inductor_on_a_pre_volta_gpu(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton "
        "GPU compiler, which is used as the backend. Triton only supports devices of CUDA "
        "Capability >= 7.0, but your device is of CUDA capability 6.0"
    )
    cud151 = _causes(cli, log_file(tmp_path, line))["CUD151"]
    assert "Tesla P100-PCIE-16GB (sm_60" in cud151["findings"][0]["message"]
    assert "backend='eager'" in _fix(cud151)


def test_duplicate_gpu_names_the_ranks(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "node1:2301:2388 [1] init.cc:871 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 "
        "both on CUDA device 1000"
    )
    cud152 = _causes(cli, log_file(tmp_path, line))["CUD152"]
    assert "ranks 1 and 0 are both on CUDA device 1000" in cud152["findings"][0]["message"]
    assert "set_device" in _fix(cud152)


def test_nccl_nvml_call_reads_nvmls_text(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = "node1:2301:2388 [0] NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found"
    drv151 = _causes(cli, log_file(tmp_path, line))["DRV151"]
    assert "NVML_ERROR_NOT_FOUND" in drv151["findings"][0]["message"]


def test_nvrtc_refusing_the_gpus_arch_is_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "nvrtc: error: invalid value for --gpu-architecture (-arch)")
    spec = _spec(
        tmp_path,
        '[gpu]\ndriver = "570.124.04"\nmodels = ["NVIDIA GeForce RTX 5090"]\n\n'
        '[packages]\ntorch = "2.5.1+cu124"\n',
    )
    cud150 = _causes(cli, log, "--spec", str(spec))["CUD150"]
    assert cud150["verdict"] == "confirmed"
    assert "CUDA 12.4 predates sm_120" in cud150["findings"][0]["message"]
    assert "torch build for CUDA >= 12.8" in _fix(cud150)
