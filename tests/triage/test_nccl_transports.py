"""NCCL's generic error lines decided by where the log says the ranks ran, P2P refused on GeForce
boards in a launcher's or an engine's words, and a GL platform the OS lacks (the signatures in
matrices/signatures/nccl_transports.toml and the NET104/SYS101/NET106/SIM171 readings)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_SYSTEM_ERROR = (
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
    "unhandled system error, NCCL version 2.14.3"
)
_RAY = "(RayWorkerWrapper pid=67451, ip=10.1.0.7) ERROR 06-25 15:28:30 worker_base.py:148] "


def test_a_system_error_from_a_worker_on_another_node_is_the_interface(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        _RAY + '  File "/x/torch/distributed/c10d_logger.py", line 75, in wrapper',
        _RAY + "RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO "
        "for details)",
    )
    found = causes(cli, log)
    assert found["NET104"]["verdict"] == "confirmed"
    assert "export NCCL_SOCKET_IFNAME=" in fix_text(found["NET104"])
    assert "ip=10.1.0.7" in found["NET104"]["findings"][0]["message"]
    assert found["SYS101"]["verdict"] == "unknown"  # several nodes: not the container's /dev/shm


def test_a_launcher_given_two_nodes_decides_a_remote_error(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "torchrun --nnodes=2 --nproc_per_node=8 --rdzv_endpoint=10.0.0.1:29500 train.py",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1333, remote process exited or there was a network error, NCCL "
        "version 2.18.6",
    )
    found = causes(cli, log)
    assert found["NET104"]["verdict"] == "confirmed"
    assert "NCCL_SOCKET_IFNAME" in fix_text(found["NET104"])


def test_one_node_given_or_nothing_said_leaves_the_causes_open(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    single = causes(cli, log_file(tmp_path, "torchrun --nnodes=1 train.py", _SYSTEM_ERROR))
    bare = causes(cli, log_file(tmp_path, _SYSTEM_ERROR, name="bare.log"))
    for found in (single, bare):
        assert {found[c]["verdict"] for c in ("NET104", "SYS101")} == {"unknown"}


def test_a_named_socket_interface_leaves_it_to_net101(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "node1:88:88 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to net1",
        _RAY + "RuntimeError: NCCL Error 2: unhandled system error",
    )
    assert causes(cli, log)["NET104"]["verdict"] == "unknown"


def test_a_system_error_in_a_docker_container_is_its_dev_shm(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "e66aa18dc444:3171:3171 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>",
        _SYSTEM_ERROR,
    )
    found = causes(cli, log)
    assert found["SYS101"]["verdict"] == "confirmed"
    assert found["SYS101"]["findings"][0]["severity"] == "warning"
    assert "--shm-size" in fix_text(found["SYS101"])
    assert found["NET104"]["verdict"] == "unknown"


def test_accelerates_rtx_4000_refusal_disables_p2p(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication "
        'broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or '
        "use `accelerate launch` which will do this automatically.",
    )
    text = fix_text(causes(cli, log)["NET106"])
    assert text.index("NCCL_P2P_DISABLE=1") < text.index("--disable-custom-all-reduce")


def test_the_custom_all_reduce_without_peer_access_is_turned_off_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer "
        "access is not supported between these two devices'",
    )
    text = fix_text(causes(cli, log)["NET106"])
    assert text.index("--disable-custom-all-reduce") < text.index("NCCL_P2P_DISABLE=1")


def test_an_unhandled_cuda_error_is_p2p_only_where_the_log_names_a_geforce(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    line = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:260, unhandled cuda error"
    geforce = causes(cli, log_file(tmp_path, "GPU 0: NVIDIA GeForce RTX 4090", line))
    bare = causes(cli, log_file(tmp_path, line, name="bare.log"))
    assert geforce["NET106"]["verdict"] == "confirmed"
    assert "NCCL_P2P_DISABLE=1" in fix_text(geforce["NET106"])
    assert bare["NET106"]["verdict"] == "unknown"


def test_egl_asked_of_windows_unsets_pyopengl_platform(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "FileNotFoundError: (\"Could not find module 'EGL' (or one of its dependencies). Try "
        "using the full path with constructor syntax.\", 'EGL', None)",
        "ImportError: ('Unable to load EGL library', \"Could not find module 'EGL' (or one of "
        "its dependencies).\", 'EGL', None)",
    )
    found = causes(cli, log)
    assert "SYS200" not in found  # not a missing Visual C++ runtime
    text = fix_text(found["SIM171"])
    assert "PYOPENGL_PLATFORM" in text and "set PYOPENGL_PLATFORM=" in text


def test_egl_asked_of_macos_unsets_it_the_posix_way(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path, "ImportError: ('Unable to load EGL library', 'dlopen(EGL, 10): image not found')"
    )
    text = fix_text(causes(cli, log)["SIM171"])
    assert "unset PYOPENGL_PLATFORM" in text and "macOS" in text


def test_mesa_trying_nouveau_installs_the_nvidia_gl_libraries_not_libstdcxx(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    nouveau = causes(cli, log_file(tmp_path, "libEGL warning: MESA-LOADER: failed to open nouveau"))
    text = fix_text(nouveau["SIM150"])
    assert "libnvidia-gl-" in text and "--no-opengl-files" in text
    assert "libstdcxx-ng" not in text
    iris = causes(
        cli,
        log_file(
            tmp_path,
            "libGL error: MESA-LOADER: failed to open iris: /usr/lib/dri/iris_dri.so: cannot open "
            "shared object file: No such file or directory (search paths /usr/lib/dri)",
            name="iris.log",
        ),
    )
    assert "libstdcxx-ng" in fix_text(iris["SIM150"])  # a conda env's libstdc++ stays first


def test_a_watchdog_timeout_on_geforce_boards_disables_p2p_unless_one_gpu_or_nodes(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    timeout = (
        "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600049 milliseconds before timing out."
    )
    two = "GPU 0: NVIDIA GeForce RTX 4090\nGPU 1: NVIDIA GeForce RTX 4090"
    found = causes(cli, log_file(tmp_path, two, timeout))
    assert "NCCL_P2P_DISABLE=1" in fix_text(found["NET106"])
    nodes = causes(cli, log_file(tmp_path, two, "torchrun --nnodes 2", timeout, name="n.log"))
    assert nodes["NET106"]["verdict"] == "unknown"
    datacenter = causes(
        cli, log_file(tmp_path, "GPU 0: NVIDIA A100-SXM4-80GB", timeout, name="a.log")
    )
    assert datacenter["NET106"]["verdict"] == "unknown"


def test_a_decided_cause_must_be_one_of_the_signatures_causes() -> None:
    from envcheck.matrix.model import Matrix
    from envcheck.matrix.schema import Signature
    from envcheck.triage.patterns import check_signatures

    sig = Signature(
        id="nccl-made-up",
        pattern="made-up NCCL line",
        meaning="-",
        source="-",
        causes=("NET104",),
        decides=("NET104", "SYS101"),
    )
    problems: list[tuple[str, str]] = []
    check_signatures(Matrix(signatures=(sig,)), lambda _e, f, m: problems.append((f, m)))
    assert problems == [("decides", "SYS101 is not one of the signature's causes")]
