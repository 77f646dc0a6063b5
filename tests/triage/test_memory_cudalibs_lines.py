"""Lines of the memory and CUDA-library families that establish their cause by themselves, in
the tools' own wording (Slurm's slurmstepd, the kubelet, Ray, libibverbs, torch's DataLoader and
caching allocator, glibc's loader, cuDNN, TensorFlow/XLA, JAX, cuFFT), and the concrete fix
each prints: the flag, environment variable, pip pin or command the threads establish."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def _confirmed(cli: Callable[..., CliResult], tmp_path: Path, line: str, code: str) -> str:
    cause = _causes(cli, log_file(tmp_path, line))[code]
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
    found = _causes(cli, log_file(tmp_path, line))
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
    cause = _causes(cli, log_file(tmp_path, _FRAGMENTED))["DRV150"]
    (finding,) = cause["findings"]
    assert finding["fix"]["commands"][0] == (
        "# export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    )
    assert "9.35 GiB is reserved by PyTorch but unallocated (fragmentation)" in finding["message"]


def test_unfragmented_oom_lowers_the_job_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(cli, log_file(tmp_path, _COMPACT))["DRV150"]
    (finding,) = cause["findings"]
    assert finding["fix"]["summary"].startswith("Lower the job's GPU memory")
    # 1002 MiB asked, 0 bytes free and 127 MiB reserved but unallocated: no allocator setting
    # can serve the request, so none is offered
    assert "expandable_segments" not in json.dumps(finding["fix"])
    assert "no PYTORCH_CUDA_ALLOC_CONF setting can serve it" in finding["fix"]["summary"]
    assert "(fragmentation)" not in finding["message"]


def test_old_oom_message_gets_its_own_setting(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = _fix(_causes(cli, log_file(tmp_path, _OLD))["DRV150"])
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
    found = _causes(cli, log_file(tmp_path, line))
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
    log = log_file(tmp_path, "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR")
    cause = _causes(cli, log, "--spec", str(spec))["CUD160"]
    assert cause["verdict"] == "ruled_out"


# --- more wordings of the same causes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  "
            "python3 main.py --prop hform",
            "SYS190",
        ),
        ("zsh: killed     python train.py", "SYS190"),
        ("[1]+  Killed                  python train.py", "SYS190"),
        ("[1234567.890123] Killed process 4242 (python) total-vm:87033376kB", "SYS190"),
        ("./run.sh: line 5: 12345 Bus error               (core dumped) python train.py", "SYS101"),
        (
            "torch.distributed.elastic.multiprocessing.api:[ERROR] failed (exitcode: -7) "
            "local_rank: 0 (pid: 1234) of binary: /usr/bin/python",
            "SYS101",
        ),
    ],
)
def test_shell_and_launcher_wordings_of_a_signal(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str
) -> None:
    assert _causes(cli, log_file(tmp_path, line))[code]["verdict"] == "confirmed"


def test_torchrun_sigfpe_points_at_cublas(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = "torch.distributed.elastic.multiprocessing.api: [WARNING] Signal 8 (SIGFPE) received by PID 4321"
    assert _causes(cli, log_file(tmp_path, line))["CUD102"]["verdict"] == "unchecked"


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        ("RuntimeError: received 0 items of ancdata", "set_sharing_strategy('file_system')"),
        (
            "RuntimeError: unable to open shared memory object </torch_1234_5678_0> in "
            "read-write mode: Too many open files (24)",
            "ulimit -n 65536",
        ),
    ],
)
def test_descriptor_exhaustion_changes_the_sharing_strategy(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, wanted: str
) -> None:
    found = _causes(cli, log_file(tmp_path, line))
    assert "SYS101" not in found  # not a full /dev/shm
    assert wanted in _fix(found["SYS184"])


def test_windows_paging_file_lowers_the_workers(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. "
        'Error loading "D:\\Anaconda\\envs\\swin\\lib\\site-packages\\torch\\lib\\shm.dll" or one '
        "of its dependencies."
    )
    assert "num_workers=0" in _confirmed(cli, tmp_path, line, "SYS183")


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
            "to allocate 7406166528 bytes.",
            "# export XLA_PYTHON_CLIENT_PREALLOCATE=false",
        ),
        (
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to allocate 3.00G "
            "(3221225472 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            "# export TF_FORCE_GPU_ALLOW_GROWTH=true",
        ),
    ],
)
def test_framework_preallocation_is_turned_off_first(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, wanted: str
) -> None:
    cause = _causes(cli, log_file(tmp_path, line))["SYS182"]
    (finding,) = cause["findings"]
    assert finding["fix"]["commands"][0] == wanted


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        (
            "ValueError: The model's max seq len (131072) is larger than the maximum number of "
            "tokens that can be stored in KV cache (43760). Try increasing `gpu_memory_utilization` "
            "or decreasing `max_model_len` when initializing the engine.",
            "--max-model-len 43760",
        ),
        (
            "ValueError: To serve at least one request with the models's max seq len (32768), "
            "(4.00 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(2.50 GiB). Based on the available memory, the estimated maximum model length is "
            "20480. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
            "--max-model-len 20480",
        ),
        (
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
            "--mem-fraction-static 0.9",
        ),
    ],
)
def test_kv_cache_fix_uses_the_numbers_the_engine_states(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, wanted: str
) -> None:
    assert wanted in _confirmed(cli, tmp_path, line, "SYS185")


def test_torch_lacking_an_nccl_symbol_removes_the_other_copy(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: "
        "undefined symbol: ncclCommRegister"
    )
    text = _confirmed(cli, tmp_path, line, "CUD104")
    assert "pip uninstall nvidia-nccl-cu11" in text
    assert (
        "export LD_LIBRARY_PATH=/home/user/.local/lib/python3.10/site-packages/nvidia/nccl/lib"
        in text
    )


def test_pip_conflict_on_a_cuda_wheel_reinstalls_the_pin(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "torch 2.4.0 requires nvidia-cudnn-cu12==9.1.0.70, but you have nvidia-cudnn-cu12 "
        "9.5.1.17 which is incompatible."
    )
    assert "pip install nvidia-cudnn-cu12==9.1.0.70" in _confirmed(cli, tmp_path, line, "CUD101")


def test_pip_conflict_on_an_accepted_cublas_is_not_a_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "torch 2.4.0 requires nvidia-cublas-cu12==12.1.3.1, but you have nvidia-cublas-cu12 "
        "12.3.4.1 which is incompatible."
    )
    assert _causes(cli, log_file(tmp_path, line))["CUD101"]["verdict"] == "ruled_out"


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        (
            "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open "
            "shared object file: No such file or directory",
            "ln -sf $(ls libnvrtc.so.* | head -1) libnvrtc.so",
        ),
        (
            "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open "
            "shared object file: No such file or directory",
            "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH",
        ),
        (
            "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library "
            "path!",
            "nvidia\\cudnn\\bin;%PATH%",
        ),
    ],
)
def test_cudnn_load_names_the_library_it_could_not_open(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, wanted: str
) -> None:
    assert wanted in _confirmed(cli, tmp_path, line, "CUD154")


@pytest.mark.parametrize(
    ("line", "code", "verdict"),
    [
        (
            "RuntimeError: unable to allocate shared memory(shm) for file "
            "</torch_2137_1841337045_0>: Success (0)",
            "SYS101",
            "confirmed",
        ),
        (
            "RuntimeError: Caught RuntimeError in pin memory thread for device 0.",
            "SYS181",
            "confirmed",
        ),
        ("mlx5: ibv_create_cq(cqe=4096) failed: Cannot allocate memory", "SYS180", "confirmed"),
        ("OSError: [Errno 28] No space left on device", "SYS101", "unchecked"),
        (
            "(raylet) A worker died or was killed while executing a task by an unexpected system "
            "error. To troubleshoot the problem, check the logs for the dead worker.",
            "SYS190",
            "unchecked",
        ),
        (
            "ray.exceptions.ObjectStoreFullError: Failed to put object 00ffff in object store "
            "because it is full. Object size is 1000000 bytes.",
            "RAY105",
            "unchecked",
        ),
    ],
)
def test_more_memory_wordings(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, verdict: str
) -> None:
    assert _causes(cli, log_file(tmp_path, line))[code]["verdict"] == verdict


def test_a_cublas_row_in_the_log_confirms_the_sigfpe_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "(WorkerDict pid=129668) Fatal Python error: Floating point exception\n"
        "nvidia-cublas-cu12                12.1.3.1",
    )
    cause = _causes(cli, log)["CUD102"]
    assert cause["verdict"] == "confirmed"
    assert "pip install nvidia-cublas-cu12==12.3.4.1" in _fix(cause)
    fixed = log_file(
        tmp_path,
        "(WorkerDict pid=129668) Fatal Python error: Floating point exception\n"
        "nvidia-cublas-cu12==12.4.5.8",
    )
    assert _causes(cli, fixed)["CUD102"]["verdict"] == "ruled_out"
