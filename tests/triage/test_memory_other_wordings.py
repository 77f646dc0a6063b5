"""Memory failures in the words of other runtimes and layers (matrices/signatures/
memory_runtimes.toml, round 7): TensorFlow's GPU calls beside its preallocation and XLA's
compiler (SYS182), SGLang's token pool (SYS185), device memory in other APIs' words (SYS230),
bitsandbytes' CUDA check (DRV150), old torch's cuBLAS status in words, and host memory as Slurm,
IDEs, user-space OOM killers, container platforms and the kernel's OOM report state it
(SYS190)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

TF_LINES = [
    "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
    "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 "
    "in order to run _EagerConst: Dst tensor is not initialized.",
    "tensorflow.python.framework.errors_impl.InternalError: Failed to call ThenRnnForward with "
    "model config: [rnn_mode, rnn_input_mode, rnn_direction_mode]: 2, 0, 0 , [num_layers, "
    "input_size, num_units, dir_count, max_seq_length, batch_size, cell_num_units]: [1, 300, "
    "512, 1, 100, 64, 512]",
    "tensorflow.python.framework.errors_impl.InternalError: Attempting to perform BLAS "
    "operation using StreamExecutor without BLAS support [Op:MatMul]",
    "tensorflow.python.framework.errors_impl.NotFoundError:  No algorithm worked! [Op:Conv2D]",
    "tensorflow.python.framework.errors_impl.InternalError: cuDNN launch failure : input shape "
    "([64,4,4,512]) [Op:FusedBatchNormV3]",
    "tensorflow.python.framework.errors_impl.InternalError: Failed to create cuFFT batched plan "
    "with scratch allocator [Op:RFFT]",
]


@pytest.mark.parametrize("line", TF_LINES)
def test_tensorflow_gpu_calls_are_its_preallocation(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    found = causes(cli, log_file(tmp_path, line))
    cause = found["SYS182"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    # TensorFlow's own switch first, JAX's only as the last alternative
    assert text.index("TF_FORCE_GPU_ALLOW_GROWTH=true") < text.index("set_memory_growth")
    assert "TensorFlow" in cause["findings"][0]["message"]
    assert found["DRV104"]["verdict"] != "confirmed"


def test_xla_rematerialization_is_jax_preallocation(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "2024-03-01 10:00:00.000000: W external/xla/xla/service/hlo_rematerialization.cc:2941] "
        "Can't reduce memory use below 10.50GiB (11268112384 bytes) by rematerialization; only "
        "reduced to 14.36GiB (15418277273 bytes), down from 14.36GiB (15418277273 bytes) "
        "originally"
    )
    cause = causes(cli, log_file(tmp_path, line))["SYS182"]
    assert cause["verdict"] == "confirmed"
    assert fix_text(cause).startswith(
        "Stop the preallocation: export XLA_PYTHON_CLIENT_PREALLOCATE"
    )


def test_sglang_prefill_pool_full_names_its_knobs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "[2025-01-10 08:00:00 TP0] Prefill out of memory. Try to lower your batch size.",
        "Try to allocate 8192 tokens.",
    )
    cause = causes(cli, log)["SYS185"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "--mem-fraction-static 0.9" in text
    assert "--chunked-prefill-size" in text
    assert "--max-model-len" not in text  # vLLM's knob is not SGLang's


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (
            "ggml_vulkan: Device memory allocation of size 4294967296 failed.",
            "--n-gpu-layers",
        ),
        ("  what():  vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "a smaller batch size"),
        ("RuntimeError: No executable batch size found, reached zero.", "gradient_checkpointing"),
        ("RuntimeError: Invalid buffer size: 19.20 GB", "no single tensor is that large"),
        (
            "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/"
            "mr/device/pool_memory_resource.hpp:196: Maximum pool size exceeded",
            "rmm.reinitialize",
        ),
    ],
)
def test_device_memory_in_other_words_is_gpu_memory_short(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, words: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS230"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert words in text
    assert "nvidia-smi --query-compute-apps" in text


def test_bitsandbytes_cuda_check_names_the_cuda_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "Error an illegal memory access was encountered at line 276 in file /src/csrc/ops.cu"
    cause = causes(cli, log_file(tmp_path, line))["DRV150"]
    assert cause["verdict"] == "confirmed"
    assert "cudaErrorIllegalAddress" in cause["findings"][0]["message"]


def test_old_torch_cublas_words_keep_memory_and_build_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    allocation = causes(
        cli,
        log_file(
            tmp_path,
            "RuntimeError: cublas runtime error : resource allocation failed at "
            "/pytorch/aten/src/THC/THCGeneral.cpp:250",
        ),
    )
    assert allocation["DRV104"]["verdict"] != "ruled out"
    assert "TOR101" not in allocation
    execution = causes(
        cli,
        log_file(
            tmp_path,
            "RuntimeError: cublas runtime error : the GPU program failed to execute at "
            "/opt/conda/conda-bld/pytorch_1535491974311/work/aten/src/THC/THCBlas.cu:249",
            name="execution.log",
        ),
    )
    assert list(execution)[:2] == ["TOR101", "CUD104"]


@pytest.mark.parametrize(
    ("line", "words", "severity"),
    [
        ("slurmstepd: error: Exceeded job memory limit", "#SBATCH --mem=", "warning"),
        (
            "slurmstepd: error: Exceeded step memory limit at some point.",
            "#SBATCH --mem=",
            "warning",
        ),
        ("The kernel died, restarting...", "dmesg -T", "warning"),
        (
            "Canceled future for execute_request message before replies were done",
            "dmesg",
            "warning",
        ),
        (
            "Nov 26 10:00:00 host systemd-oomd[812]: Killed /user.slice/user-1000.slice/"
            "user@1000.service/app.slice/app-gnome-python.scope due to memory pressure for "
            "/user.slice/user-1000.slice/user@1000.service being 85.47% > 50.00% for > 20s with "
            "reclaim activity",
            "journalctl -u systemd-oomd",
            "error",
        ),
        (
            "[12345.678901] Task in /docker/3f2a9c killed as a result of limit of /docker/3f2a9c",
            "docker run --memory",
            "error",
        ),
        (
            "[12345.678902] memory: usage 16777216kB, limit 16777216kB, failcnt 4821",
            "docker run --memory",
            "error",
        ),
        ("3f2a9c1b   trainer:latest   Exited (137) 2 minutes ago   train", "--memory", "warning"),
        ("The replica workerpool0-0 exited with a non-zero status of 137.", "--memory", "warning"),
        (
            "RuntimeError: [enforce fail at CPUAllocator.cpp:56] posix_memalign(&data, gAlignment, "
            "nbytes) == 0. 12 vs 0",
            "num_workers=0",
            "warning",
        ),
        (
            "2023-01-01 10:00:00.000000: W tensorflow/core/framework/cpu_allocator_impl.cc:82] "
            "Allocation of 1073741824 exceeds 10% of free system memory.",
            "a smaller batch",
            "warning",
        ),
        (
            "ERROR 11-26 10:00:00 [core_client.py:564] Engine core proc EngineCore_DP0 died "
            "unexpectedly, shutting down client.",
            "--swap-space 0",
            "warning",
        ),
        (
            'ERROR: failed to solve: process "/bin/sh -c pip install -r requirements.txt" did not '
            "complete successfully: signal: killed",
            "num_workers",
            "warning",
        ),
        (
            "  process didn't exit successfully: `rustc --crate-name tokenizers --edition=2018` "
            "(signal: 9, SIGKILL: kill)",
            "num_workers",
            "warning",
        ),
    ],
)
def test_host_memory_in_other_layers_words(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, words: str, severity: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS190"]
    assert cause["verdict"] == "confirmed"
    assert words in fix_text(cause)
    assert cause["findings"][0]["severity"] == severity


@pytest.mark.parametrize(
    "line",
    [
        "3f2a9c1b   trainer:latest   Exited (0) 2 minutes ago   train",
        "ExitCode 1370",
        "Allocation of 1024 bytes succeeded",
        "Exceeded step time limit",
        "The kernel is busy",
    ],
)
def test_near_misses_match_nothing(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    ("line", "code", "words"),
    [
        (
            "INFO 05-30 14:48:29 executor_base.py:110] # CUDA blocks: 0, # CPU blocks: 9362",
            "SYS185",
            "--gpu-memory-utilization 0.95",
        ),
        (
            "INFO 05-30 14:48:28 worker.py:267] model weights take 14.99GiB; non_torch_memory "
            "takes 0.09GiB; PyTorch activation peak memory takes 1.44GiB; the rest of the memory "
            "reserved for KV Cache is -2.53GiB.",
            "SYS185",
            "--gpu-memory-utilization 0.95",
        ),
        (
            "[2025-12-31 17:08:24,236] [WARNING] [stage3.py:2236:step] 1 pytorch allocator cache "
            "flushes since last step. this happens when there is high memory pressure and is "
            "detrimental to performance.",
            "SYS230",
            "train_micro_batch_size_per_gpu",
        ),
        (
            "WARNING:root:Some parameters are on the meta device device because they were "
            "offloaded to the cpu and disk.",
            "SYS230",
            "load_in_4bit=True",
        ),
        ("进程已结束，退出代码为 137 (interrupted by signal 9:SIGKILL)", "SYS190", "num_workers"),
        ("Process finished with exit code 135 (interrupted by signal 7: SIGBUS)", "SYS101", "shm"),
        ("服务似乎挂掉了,但是会立刻重启的.", "SYS190", "dmesg"),
    ],
)
def test_memory_pressure_and_translated_layers(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, words: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))[code]
    assert cause["verdict"] == "confirmed"
    assert words in fix_text(cause)


def test_a_healthy_kv_cache_report_matches_nothing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "INFO 05-30 14:48:28 worker.py:267] the rest of the memory reserved for KV Cache is 6.22GiB.",
        "INFO 05-30 14:48:29 executor_base.py:110] # CUDA blocks: 5519, # CPU blocks: 9362",
    )
    assert cli("triage", str(log), "--json", "--no-probe").returncode == 0


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (
            "ERROR: stack overflow: max = 299869096, available = 97857896, requested = 106218000 "
            "(ne = 0, nf = 0, nefc = 3988, ncon = 668)",
            '<size memory="588M"/>',
        ),
        (
            "mujoco_py.builder.MujocoException: Got MuJoCo Warning: Pre-allocated contact buffer "
            "is full. Increase nconmax above 100. Time = 0.0000.",
            '<size nconmax="200"/>',
        ),
        (
            "PxGpuDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please "
            "increase its size to at least -1280352880 in the scene desc! Contacts have been "
            "dropped.",
            "gpu_collision_stack_size=2**31 - 1",
        ),
        (
            "The application needs to increase PxGpuDynamicsMemoryConfig::tempBufferCapacity to "
            "16777216 , otherwise, the simulation will miss interactions",
            "gpu_temp_buffer_size=2**24",
        ),
    ],
)
def test_simulator_buffer_fix_is_sized_from_the_line(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, words: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS231"]
    assert cause["verdict"] == "confirmed"
    assert words in fix_text(cause)


def test_blas_without_support_through_jax_is_jax_preallocation(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "XlaRuntimeError: INTERNAL: Attempting to perform BLAS operation using StreamExecutor "
        "without BLAS support"
    )
    cause = causes(cli, log_file(tmp_path, line))["SYS182"]
    assert fix_text(cause).startswith(
        "Stop the preallocation: export XLA_PYTHON_CLIENT_PREALLOCATE"
    )
