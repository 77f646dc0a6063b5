"""The memory family (matrices/signatures/memory.toml, rules/node/memory.py): torch's shared-memory
lines, the kernel's OOM killer and the SIGKILL it leaves, and GPU memory that torch's
out-of-memory numbers show other processes held. Lines in the tools' own wording (torch's
DataLoader.cpp and MapAllocator.cpp, CUDACachingAllocator.cpp, Linux's mm/oom_kill.c)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.memory import GIB, held_by_others, listed_processes, oom_share
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

# torch <= 2.0: a process that holds nothing while the GPU is full (others hold it)
_OLD_OTHERS = (
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total "
    "capacity; 0 bytes already allocated; 19.75 MiB free; 0 bytes reserved in total by PyTorch)"
)
# torch <= 2.0: the job itself holds the GPU
_OLD_SELF = (
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 23.69 GiB total "
    "capacity; 21.10 GiB already allocated; 301.06 MiB free; 22.61 GiB reserved in total by "
    "PyTorch)"
)
# torch >= 2.1 in a container: other processes not named, this process small
_NEW_OTHERS = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 3 has a total "
    "capacity of 79.15 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this "
    "process has 2.10 GiB memory in use. Of the allocated memory 1.20 GiB is allocated by "
    "PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated."
)
_NEW_SELF = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this "
    "process has 78.60 GiB memory in use."
)


def test_oom_share_reads_both_formats() -> None:
    old = oom_share(_OLD_OTHERS)
    assert old is not None and old.gpu == 0 and held_by_others(old)
    assert old.others == pytest.approx(7.79 * GIB - 19.75 * 1024**2 - 1.5 * GIB)
    new = oom_share(_NEW_OTHERS)
    assert new is not None and new.gpu == 3 and held_by_others(new)
    assert new.others == pytest.approx((79.15 - 0.5 - 2.10) * GIB)
    for own in (_OLD_SELF, _NEW_SELF):
        share = oom_share(own)
        assert share is not None and not held_by_others(share)
    assert oom_share("RuntimeError: CUDA error: out of memory") is None


@pytest.mark.parametrize(("line", "gpu"), [(_OLD_OTHERS, 0), (_NEW_OTHERS, 3)])
def test_oom_numbers_establish_memory_held_by_others(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, gpu: int
) -> None:
    drv104 = _causes(cli, log_file(tmp_path, line))["DRV104"]
    assert drv104["verdict"] == "confirmed"
    text = _fix(drv104)
    assert "fuser -v /dev/nvidia*" in text and f"nvidia-smi --gpu-reset -i {gpu}" in text


@pytest.mark.parametrize("line", [_OLD_SELF, _NEW_SELF])
def test_oom_of_the_job_itself_does_not_blame_others(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    found = _causes(cli, log_file(tmp_path, line))
    assert found["DRV104"]["verdict"] != "confirmed"
    assert found["DRV150"]["verdict"] == "confirmed"


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
        "shared memory (shm).",
        "RuntimeError: unable to write to file </torch_31911_952036340_6686>: No space left on "
        "device (28)",
        "RuntimeError: DataLoader worker (pid(s) 2081, 2082) exited unexpectedly",
        "Bus error (core dumped)",
    ],
)
def test_torch_shared_memory_lines_are_a_full_dev_shm(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    sys101 = _causes(cli, log_file(tmp_path, line))["SYS101"]
    assert sys101["verdict"] == "confirmed"
    text = _fix(sys101)
    assert "--shm-size=16g" in text and "--ipc=host" in text and "num_workers=0" in text


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("[  123.456] Out of memory: Killed process 1440763 (python) total-vm:87033376kB", "error"),
        ("Killed", "warning"),
        ("  traceback : Signal 9 (SIGKILL) received by PID 2187", "warning"),
        ("RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.", "warning"),
    ],
)
def test_host_memory_kills_are_sys190(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, severity: str
) -> None:
    sys190 = _causes(cli, log_file(tmp_path, line))["SYS190"]
    assert sys190["verdict"] == "confirmed"
    assert sys190["findings"][0]["severity"] == severity
    assert "num_workers=0" in _fix(sys190) and "--memory" in _fix(sys190)
    assert "not the GPU's memory" in sys190["findings"][0]["message"]


@pytest.mark.parametrize(
    ("line", "codes"),
    [
        (
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
            "or device error.",
            {"SYS101", "NET101"},
        ),
        (
            "node1:2301:2390 [0] proxy.cc:1523 NCCL WARN [Proxy Service 3] Failed to execute "
            "operation Connect from rank 3, retcode 3",
            {"SYS101", "NET101"},
        ),
        (
            "[rank0]:[E ProcessGroupNCCL.cpp:1182] [Rank 0] ProcessGroupNCCL's watchdog got stuck "
            "for 480 seconds without making progress in monitoring enqueued collectives.",
            {"NET106", "NET101"},
        ),
        (
            "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. "
            "1/2 clients joined.",
            {"NET103", "NET105"},
        ),
    ],
)
def test_nccl_error_classes_name_the_node_causes(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, codes: set[str]
) -> None:
    assert codes <= set(_causes(cli, log_file(tmp_path, line)))


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Free memory on device (10.95/79.15 GiB) on startup is less than desired GPU "
        "memory utilization (0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU "
        "memory used by other processes.",
        "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other "
        "processes. min_per_gpu_memory=20.1, local_gpu_memory=78.5, local_gpu_memory * 0.9=70.6",
    ],
)
def test_serving_engines_name_memory_held_by_others(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    drv104 = _causes(cli, log_file(tmp_path, line))["DRV104"]
    assert drv104["verdict"] == "confirmed"
    assert "fuser -v /dev/nvidia*" in _fix(drv104)


def test_vllm_startup_with_the_gpu_free_is_not_others(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "ValueError: Free memory on device (78.50/79.15 GiB) on startup is less than desired GPU "
        "memory utilization (0.995, 78.75 GiB). Decrease GPU memory utilization or reduce GPU "
        "memory used by other processes."
    )
    assert _causes(cli, log_file(tmp_path, line))["DRV104"]["verdict"] != "confirmed"


def test_too_many_open_files_is_not_a_full_dev_shm(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "RuntimeError: unable to open shared memory object </torch_1411_3415625446_2> in "
        "read-write mode: Too many open files (24)"
    )
    found = _causes(cli, log_file(tmp_path, line))
    assert "SYS101" not in found or found["SYS101"]["verdict"] != "confirmed"
    assert found["SYS184"]["verdict"] == "confirmed"  # the open-files limit (ulimit -n)


# torch >= 2.1 in a container: NVML reports the host's pids, so torch lists the job itself as
# 'Process N' (no 'this process' entry): kaito-project/kaito#976
_LISTED_SELF = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 546.00 MiB. GPU 0 has a total "
    "capacity of 15.77 GiB of which 514.19 MiB is free. Process 562167 has 15.25 GiB memory in "
    "use. Of the allocated memory 13.73 GiB is allocated by PyTorch, with 46.00 MiB allocated in "
    "private pools (e.g., CUDA Graphs), and 736.86 MiB is reserved by PyTorch but unallocated."
)


def test_listed_process_holding_pytorchs_own_memory_is_the_job_itself() -> None:
    listed = listed_processes(_LISTED_SELF)
    assert listed.itself == "562167" and listed.others == ()
    # a second, small process beside it is another holder
    two = _LISTED_SELF.replace(
        "Process 562167 has 15.25 GiB memory in use.",
        "Process 4242 has 300.00 MiB memory in use. Process 562167 has 15.25 GiB memory in use.",
    )
    assert listed_processes(two).others == (("4242", 300 * 1024**2),)
    # with torch's own 'this process' entry, every 'Process N' is another process
    assert listed_processes(_NEW_OTHERS).itself is None


def test_job_listed_under_the_hosts_pid_is_not_memory_held_by_others(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    causes = _causes(cli, log_file(tmp_path, _LISTED_SELF))
    assert causes["DRV104"]["verdict"] not in ("confirmed", "unchecked", "unknown")
    assert causes["DRV150"]["verdict"] == "confirmed"
    assert "expandable_segments:True" in _fix(causes["DRV150"])


def test_memlock_value_ucx_states_is_read(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "[1668693503.473099] [ampere:1188443:0]          ib_log.c:246  UCX  ERROR mlx5_0: "
        "ibv_create_cq() failed: Cannot allocate memory. Please set max locked memory (ulimit "
        "-l) to 'unlimited' (current: 64 kbytes)"
    )
    sys180 = _causes(cli, log_file(tmp_path, line))["SYS180"]
    assert sys180["verdict"] == "confirmed"
    text = _fix(sys180)
    assert "ulimit -l unlimited" in text and "--cap-add=IPC_LOCK" in text
    message = " ".join(str(f.get("message")) for f in sys180.get("findings") or [])
    assert "64 KiB" in message


def test_nccl_verbs_enomem_is_the_memlock_limit_before_the_fabric(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "msm-h200-2:4016:4653 [7] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed "
        "with error Cannot allocate memory"
    )
    causes = _causes(cli, log_file(tmp_path, line))
    assert next(iter(causes)) == "SYS180" and causes["SYS180"]["verdict"] == "confirmed"


def test_cuda_oom_raised_by_pinning_host_memory_gets_the_pinned_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # FMInference/FlexLLMGen#47: torch's pinned allocator reports a failed cudaHostAlloc as
    # 'CUDA error: out of memory'; the traceback's last frame pins host memory
    log = log_file(
        tmp_path,
        '  File "/home/user/Developer/FlexGen/flexgen/pytorch_backend.py", line 881, in '
        "copy_worker_func",
        "    cpu_buf = torch.empty((1 * GB,), dtype=torch.float16, pin_memory=True)",
        "RuntimeError: CUDA error: out of memory",
    )
    causes = _causes(cli, log)
    assert causes["DRV104"]["verdict"] not in ("confirmed", "unchecked", "unknown")
    assert causes["DRV150"]["verdict"] == "confirmed"
    assert "pin_memory=False" in _fix(causes["DRV150"])
    # the same error under a frame that pins nothing keeps the GPU's fix
    plain = log_file(
        tmp_path,
        '  File "train.py", line 12, in step',
        "    out = model(batch)",
        "RuntimeError: CUDA error: out of memory",
        name="plain.log",
    )
    assert "pin_memory=False" not in _fix(_causes(cli, plain)["DRV150"])


def test_htcondor_hold_states_the_request_and_the_usage(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "Job has gone over cgroup memory limit of 6144 megabytes. Last measured usage: 6150 "
        "megabytes.  Consider resubmitting with a higher request_memory."
    )
    sys190 = _causes(cli, log_file(tmp_path, line))["SYS190"]
    assert sys190["verdict"] == "confirmed"
    assert "request_memory = 9225" in _fix(sys190)
