"""NCCL failures whose cause the log's own facts decide: NCCL's kernels without an image for
the GPU (enqueue.cc's `Cuda failure 'named symbol not found'`, CUD153, the GPU from nccl-tests'
device table in its older and Markdown-pasted forms) and NCCL's bare `unhandled system error`
in a container a `docker run` command started (SYS101 by its --shm-size / --ipc=host). Lines
as the tools print them (sources in matrices/signatures/arch_floors.toml, nccl_transports.toml
and device_torch_stated.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_NO_SYMBOL = (
    "gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'"
)
_SYSTEM_ERROR = (
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, "
    "unhandled system error, NCCL version 2.12.10"
)


def test_nccl_kernels_without_an_image_confirm_cud153(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = _causes(cli, log_file(tmp_path, _NO_SYMBOL))["CUD153"]
    assert cause["verdict"] == "confirmed"
    text = _fix(cause)
    assert "NVCC_GENCODE" in text and "compute_XY" in text


def test_nccl_kernels_fix_names_the_gencode_of_the_gpu_in_the_device_table(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # nccl-tests' table as a Markdown paste shows it: the leading '#' lost
    log = log_file(
        tmp_path,
        " Rank  0 Group  0 Pid 1896106 on noodle-4090-0 device  0 [0x16] NVIDIA GeForce RTX 4090",
        "NCCL version 2.21.5+cuda11.8",
        "noodle-4090-0:1896106:1896121 [1] enqueue.cc:47 NCCL WARN Cuda failure "
        "'named symbol not found'",
    )
    cause = _causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    assert "-gencode=arch=compute_89,code=sm_89" in _fix(cause)
    assert "2.21.5+cuda11.8" in cause["findings"][0]["message"]


def test_older_nccl_tests_table_states_the_gpu(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # before the Group column, and a driver that names the GPU without 'NVIDIA '
    log = log_file(
        tmp_path,
        "#   Rank  0 Pid   1688 on    fastmoe device  0 [0x18] GeForce RTX 2080 Ti",
        "fastmoe:1688:1700 [0] enqueue.cc:58 NCCL WARN Cuda failure 'invalid device function'",
    )
    cause = _causes(cli, log)["CUD153"]
    assert "-gencode=arch=compute_75,code=sm_75" in _fix(cause)


def test_docker_run_without_shm_options_confirms_sys101(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "$ docker run --gpus all -it --rm -v /data:/data myimage:latest bash",
        _SYSTEM_ERROR,
    )
    cause = _causes(cli, log)["SYS101"]
    assert cause["verdict"] == "confirmed"
    assert "without --shm-size or --ipc=host" in cause["findings"][0]["message"]
    assert "--ipc=host" in _fix(cause)


def test_docker_run_with_ipc_host_rules_sys101_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "$ docker run --gpus all --ipc=host -it --rm myimage:latest bash",
        _SYSTEM_ERROR,
    )
    assert _causes(cli, log)["SYS101"]["verdict"] not in ("confirmed", "unknown", "unchecked")


def test_docker_run_shm_size_on_a_continuation_line_is_the_size(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    small = log_file(
        tmp_path,
        "sudo docker run --gpus all \\",
        "  --shm-size=256m -it myimage:latest bash",
        _SYSTEM_ERROR,
    )
    cause = _causes(cli, small)["SYS101"]
    assert cause["verdict"] == "confirmed"
    assert "256 MiB" in cause["findings"][0]["message"]
    large = log_file(
        tmp_path,
        "docker run --gpus all --shm-size 16g -it myimage:latest bash",
        _SYSTEM_ERROR,
        name="large.log",
    )
    assert _causes(cli, large)["SYS101"]["verdict"] not in ("confirmed", "unknown", "unchecked")


def test_without_a_container_fact_sys101_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    assert _causes(cli, log_file(tmp_path, _SYSTEM_ERROR))["SYS101"]["verdict"] == "unknown"


def test_nvidia_smi_query_csv_in_a_log_states_the_gpu(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # nvidia-smi --query-gpu=name,compute_cap --format=csv pasted above the failure: the GPU
    # (sm_61) against the torch release the log prints (2.7.1+cu128 is built from sm_75)
    log = log_file(
        tmp_path,
        "$ nvidia-smi --query-gpu=name,compute_cap --format=csv",
        "name, compute_cap",
        "Tesla P40, 6.1",
        '$ python -c "import torch; print(torch.__version__)"',
        "2.7.1+cu128",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    )
    cause = _causes(cli, log)["TOR101"]
    assert cause["verdict"] == "confirmed"
    assert "sm_61" in cause["findings"][0]["message"]
