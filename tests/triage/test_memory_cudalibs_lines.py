"""Lines of the memory and CUDA-library families that establish their cause by themselves, in
the tools' own wording (Slurm's slurmstepd, the kubelet, Ray, libibverbs, torch's DataLoader and
caching allocator, glibc's loader, cuDNN, TensorFlow/XLA, JAX, cuFFT), and the concrete fix
each prints: the flag, environment variable, pip pin or command the threads establish."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.log"
    path.write_text(text + "\n")
    return path


def _confirmed(cli: Callable[..., CliResult], tmp_path: Path, line: str, code: str) -> str:
    cause = _causes(cli, _log(tmp_path, line))[code]
    assert cause["verdict"] == "confirmed", cause
    return _fix(cause)


# --- host memory: schedulers' own OOM lines --------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step "
        "tasks have been OOM Killed.",
        "slurmstepd-gpu20-15: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of "
        "your processes may have been killed by the cgroup out-of-memory handler.",
        "srun: error: sdumont6156: task 0: Out Of Memory",
    ],
)
def test_slurm_oom_kill_asks_for_more_memory(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    text = _confirmed(cli, tmp_path, line, "SYS190")
    assert text.startswith("Ask Slurm for more memory")
    assert "#SBATCH --mem=<more>" in text


def test_kubelet_eviction_names_the_pod_requests(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "The node was low on resource: memory. Container trainer was using 61234567Ki, which "
        "exceeds its request of 0."
    )
    assert "resources.requests.memory" in _confirmed(cli, tmp_path, line, "SYS190")


@pytest.mark.parametrize(
    "line",
    ["MemoryError", "terminate called after throwing an instance of 'std::bad_alloc'"],
)
def test_failed_host_allocations_are_host_memory(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    assert "num_workers=0" in _confirmed(cli, tmp_path, line, "SYS190")


def test_rays_k8s_memory_exit_is_the_oom_killer(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
        "Worker exit detail: Worker exits unexpectedly. Worker exits with an exit code None. The "
        "worker may have exceeded K8s pod memory limits."
    )
    assert "--memory" in _confirmed(cli, tmp_path, line, "SYS190")


def test_actor_died_keeps_the_oom_killer_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task. "
        "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a "
        "connection error code 2. End of file."
    )
    found = _causes(cli, _log(tmp_path, line))
    assert found["SYS190"]["verdict"] == "unchecked"
    assert found["CUD102"]["verdict"] == "unchecked"


# --- GPU memory: the caching allocator's numbers pick the fix ----------------------------------

_FRAGMENTED = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total "
    "capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this "
    "process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by "
    "PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated. If reserved but unallocated "
    "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
    "fragmentation."
)
_COMPACT = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1002.00 MiB. GPU 0 has a "
    "total capacity of 8.00 GiB of which 0 bytes is free. Of the allocated memory 7.13 GiB is "
    "allocated by PyTorch, and 127.09 MiB is reserved by PyTorch but unallocated."
)
_OLD = (
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total "
    "capacity; 18.90 GiB already allocated; 5.69 MiB free; 22.36 GiB reserved in total by "
    "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
    "fragmentation."
)


def test_fragmented_oom_sets_expandable_segments_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(cli, _log(tmp_path, _FRAGMENTED))["DRV150"]
    (finding,) = cause["findings"]
    assert finding["fix"]["commands"][0] == (
        "# export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    )
    assert "9.35 GiB is reserved by PyTorch but unallocated (fragmentation)" in finding["message"]


def test_unfragmented_oom_lowers_the_job_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(cli, _log(tmp_path, _COMPACT))["DRV150"]
    (finding,) = cause["findings"]
    assert finding["fix"]["summary"].startswith("Lower the job's GPU memory")
    assert "expandable_segments:True" in finding["fix"]["summary"]
    assert "(fragmentation)" not in finding["message"]


def test_old_oom_message_gets_its_own_setting(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = _fix(_causes(cli, _log(tmp_path, _OLD))["DRV150"])
    assert text.startswith("Let the allocator reuse what it reserved")
    assert "max_split_size_mb:128" in text


# --- locked memory ---------------------------------------------------------------------------


def test_nccl_registration_refused_raises_memlock(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "node1:2201:2287 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with "
        "error Cannot allocate memory"
    )
    text = _confirmed(cli, tmp_path, line, "SYS180")
    assert "ulimit -l unlimited" in text and "--ulimit memlock=-1:-1" in text


def test_paddle_pinned_allocation_turns_pinning_off(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "cudaHostAlloc failed.\ncudaHostAlloc Cannot allocate 32 bytes in CUDAPinnedPlace"
    assert "pin_memory=False" in _confirmed(cli, tmp_path, line, "SYS181")


# --- two copies of a CUDA library ------------------------------------------------------------


def test_wheel_cublas_with_a_foreign_cublaslt_puts_the_wheel_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "OSError: /home/u/anaconda3/envs/avt/lib/python3.7/site-packages/nvidia/cublas/lib/"
        "libcublas.so.11: undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11"
    )
    text = _confirmed(cli, tmp_path, line, "CUD104")
    assert (
        "export LD_LIBRARY_PATH=/home/u/anaconda3/envs/avt/lib/python3.7/site-packages/nvidia/"
        "cublas/lib:$LD_LIBRARY_PATH" in text
    )
    assert "nvidia-cublas-cu11" in text


def test_symbol_version_wording_reads_the_same(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "OSError: /opt/venv/lib/python3.10/site-packages/nvidia/cublas/lib/libcublas.so.11: "
        "symbol cublasLtGetStatusString, version libcublasLt.so.11 not defined in file "
        "libcublasLt.so.11 with link time reference"
    )
    assert "site-packages/nvidia/cublas/lib:$LD_LIBRARY_PATH" in _confirmed(
        cli, tmp_path, line, "CUD104"
    )


def test_system_copy_is_taken_off_the_path(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "Could not load library libcudnn_cnn_infer.so.8. Error: /usr/local/Cluster-Apps/cuda/8.0/"
        "lib64/libnvrtc.so: undefined symbol: nvrtcGetCUBIN"
    )
    found = _causes(cli, _log(tmp_path, line))
    assert "CUD154" not in found  # not a missing cuDNN: two CUDA releases mixed
    text = _fix(found["CUD104"])
    assert "Take /usr/local/Cluster-Apps/cuda/8.0/lib64 off the loader's path" in text
    assert "site-packages/nvidia/cuda_nvrtc/lib" in text


def test_cudnn_sublibrary_mismatch_reinstalls_one_cudnn(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = _confirmed(
        cli, tmp_path, "cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "CUD104"
    )
    assert "pip install --upgrade nvidia-cudnn-cu12" in text
    assert "unset LD_LIBRARY_PATH" in text


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        (
            "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN "
            "library: 8.5.0 but source was compiled with: 8.6.0.  CuDNN library needs to have "
            "matching major version and equal or higher minor version.",
            "pip install --upgrade 'nvidia-cudnn-cu11>=8.6,<9'",
        ),
        (
            "CUDA backend failed to initialize: Found cuDNN version 90100, but JAX was built "
            "against version 90300, which is newer.",
            "pip install --upgrade 'nvidia-cudnn-cu12>=9.3,<10'",
        ),
        (
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: "
            "7301 (compatibility version 7300) but source was compiled with 7003 (compatibility "
            "version 7000).",
            "install cuDNN ==7.0.*",
        ),
    ],
)
def test_framework_cudnn_checks_name_the_cudnn_to_load(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, wanted: str
) -> None:
    assert wanted in _confirmed(cli, tmp_path, line, "CUD104")


# --- cuFFT on a GPU newer than its CUDA ------------------------------------------------------


def test_cufft_internal_error_installs_a_cuda_11_8_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = _confirmed(cli, tmp_path, "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "CUD160")
    assert "download.pytorch.org/whl/cu118" in text and "pytorch-cuda=11.8" in text


def test_cufft_internal_error_with_a_new_torch_is_not_this_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA GeForce RTX 4090"]\n\n'
        '[packages]\ntorch = "2.4.1+cu121"\n'
    )
    log = _log(tmp_path, "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR")
    cause = _causes(cli, log, "--spec", str(spec))["CUD160"]
    assert cause["verdict"] == "ruled_out"
