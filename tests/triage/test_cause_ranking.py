"""Which cause a log names when it holds several lines: the facts stated anywhere in the log (an
environment pasted above the traceback, NCCL's WARN line naming its subsystem) decide between a
generic line's causes, and the root-cause line's cause leads over a downstream line's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import log_file

# torch's collect_env as users paste it under the error (pytorch/pytorch issue template)
_COLLECT_ENV = """\
Collecting environment information...
PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
Python version: 3.10.12 (main, Nov  6 2024, 20:22:13) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 12.4.131
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090
Nvidia driver version: 570.124.04
"""

_NO_KERNEL = """\
Traceback (most recent call last):
  File "/home/u/run.py", line 12, in <module>
    x = torch.randn(3, device="cuda") @ w
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""


def test_an_environment_pasted_in_the_log_decides_the_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The error line alone leaves TOR101 open (which GPU, which torch?); the collect_env block
    pasted below it states both, and the cause is confirmed with the build to install."""
    alone = _causes(cli, log_file(tmp_path, _NO_KERNEL))
    assert alone["TOR101"]["verdict"] in ("unknown", "unchecked")
    pasted = _causes(cli, log_file(tmp_path, _NO_KERNEL + "\n" + _COLLECT_ENV))
    tor101 = pasted["TOR101"]
    assert tor101["verdict"] == "confirmed"
    (finding,) = tor101["findings"]
    assert "RTX 5090" in finding["message"] and "sm_120" in finding["message"]
    assert "cu12" in finding["fix"]["summary"] + " ".join(finding["fix"]["commands"])


def test_the_pasted_environment_is_named_as_a_source(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _NO_KERNEL + _COLLECT_ENV)
    result = cli("triage", str(log), "--json", "--no-probe")
    assert "collect_env pasted in" in result.json()["data"]["node_source"]


def test_a_log_without_a_failure_is_read_for_what_its_pasted_environment_shows(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """No failure line: the collect_env pasted alone still shows torch 2.6.0+cu124 (no sm_120
    kernels) on an RTX 5090, as its own match (triage/environment.py)."""
    result = cli("triage", str(log_file(tmp_path, _COLLECT_ENV)), "--json", "--no-probe")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    assert "collect_env pasted in" in data["node_source"]
    (shown,) = [m for m in data["matches"] if not m["noise"]]
    assert shown["id"] == "environment-shows"
    verdicts = {c["code"]: c["verdict"] for c in shown["causes"]}
    assert verdicts.get("TOR101") == "confirmed"
    assert data["summary"]["signatures"] == 0 and data["summary"]["environment"] >= 1


def test_pasted_text_in_memory_is_read_too() -> None:
    """The API's triage_text reads the block from the text it was given (no file to re-read)."""
    from envcheck.commands.triage import triage_text

    result = triage_text(_NO_KERNEL + _COLLECT_ENV)
    verdicts = {c.code: c.verdict for m in result.matches for c in m.causes}
    assert verdicts["TOR101"] == "confirmed"


def test_nccl_p2p_warn_names_the_cuda_error_behind_the_generic_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """ray_lightning#24: 'unhandled cuda error' says only that a CUDA call failed; NCCL's WARN
    from transport/p2p.cc a few lines on names it (217, peer access), and its fix leads."""
    log = log_file(
        tmp_path,
        "(pid=909597) RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1603729062494/"
        "work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8\n"
        "(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via "
        "P2P/IPC\n"
        "(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA "
        "IPC handle : 217 peer access is not supported between these two devices\n"
        "(pid=909608) z-pc:909608:910337 [0] NCCL INFO transport.cc:68 -> 1\n",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    generic = {c["code"]: c for c in matches["nccl-unhandled-cuda-error"]["causes"]}
    assert generic["DRV150"]["verdict"] == "confirmed"
    assert generic["GPU116"]["verdict"] != "ruled_out"  # no fact the log states rules it out
    fix = generic["DRV150"]["fix"]
    assert "NCCL_P2P_DISABLE=1" in fix["summary"] + " ".join(fix["commands"])
    assert matches["nccl-warn-p2p"]["first"]["line"] == 3


def test_nccl_shm_warn_confirms_the_shm_cause_of_a_system_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A WARN of NCCL's shm transport that states ENOSPC confirms SYS101 for the 'unhandled
    system error' after it, which then names no socket cause beside it."""
    log = log_file(
        tmp_path,
        "node1:88:120 [0] transport/shm.cc:114 NCCL WARN Unable to map /dev/shm/nccl-Xk2 : No "
        "space left on device\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.18.1\n",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    assert matches["nccl-warn-shm"]["first"]["line"] == 1
    verdicts = {c["code"]: c["verdict"] for c in matches["nccl-unhandled-system-error"]["causes"]}
    assert verdicts["SYS101"] == "confirmed"
    shm = next(c for c in matches["nccl-warn-shm"]["causes"] if c["code"] == "SYS101")
    assert "--shm-size" in shm["fix"]["summary"] + " ".join(shm["fix"]["commands"])


def test_an_nccl_shm_warn_without_a_reason_leaves_the_cause_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Without ENOSPC on the line and nothing known of /dev/shm, SYS101 stays open."""
    log = log_file(
        tmp_path,
        "node1:88:120 [0] include/shm.h:48 NCCL WARN Unable to allocate shared memory (4194304 "
        "bytes) : Interrupted system call\n",
    )
    assert _causes(cli, log)["SYS101"]["verdict"] == "unknown"


def test_a_socket_warn_names_the_interface_causes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A WARN of NCCL's socket layer before 'unhandled system error' (as in nccl-tests#15):
    the interface causes, not /dev/shm, are the ones to look at."""
    log = log_file(
        tmp_path,
        "server1:6601:6625 [0] misc/socket.cc:54 NCCL WARN Net : Call to recv from "
        "10.0.0.2<46012> failed : Connection timed out\n"
        "NCCL failure common.cu:921 'unhandled system error'\n",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    assert [c["code"] for c in matches["nccl-warn-socket"]["causes"]][:2] == ["NET104", "NET101"]


def test_pyopengls_multi_line_egl_error_is_named(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """libglvnd#174: PyOpenGL's GLError spreads over lines; the line naming the EGL call is the
    one that says which layer failed (EGL, not the program)."""
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):\n"
        '  File "egl_context.py", line 12, in <module>\n'
        "    egl.eglInitialize(egl_display, pointer(major), pointer(minor))\n"
        "OpenGL.error.GLError: GLError(\n"
        "\terr = 12289,\n"
        "\tbaseOperation = eglInitialize,\n"
        "\tresult = 0\n"
        ")\n",
    )
    sim109 = _causes(cli, log)["SIM109"]
    assert sim109["verdict"] == "confirmed"
    assert "EGL" in sim109["findings"][0]["message"]


def test_the_gpu_is_read_from_lines_with_a_launchers_prefix_and_other_tools_forms(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A GPU named anywhere in the log (collect_env's line behind a Ray prefix, nvidia-smi -L,
    Kit's GPU table, TensorFlow's and llama.cpp's device lines) is a fact the causes use."""
    lines = {
        "(RayWorker pid=77) GPU 0: NVIDIA GeForce RTX 5090": ("NVIDIA GeForce RTX 5090", None),
        "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090": (
            "NVIDIA GeForce RTX 3090",
            None,
        ),
        "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1234)": ("NVIDIA A100-SXM4-80GB", None),
        "| 0   | NVIDIA GeForce RTX 3070          | Yes: 0 |     | 8192    MB | 10de      | 0 |": (
            "NVIDIA GeForce RTX 3070",
            None,
        ),
        "-> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute "
        "capability: 8.6": ("NVIDIA GeForce RTX 3090", "8.6"),
        "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes": (
            "NVIDIA GeForce RTX 4090",
            "8.9",
        ),
        '     "cuda:0"   : "NVIDIA GeForce RTX 5090" (32 GiB, sm_120, mempool enabled)': (
            "NVIDIA GeForce RTX 5090",
            None,
        ),
    }
    for line, (name, cc) in lines.items():
        log = log_file(tmp_path, line + "\n" + _NO_KERNEL)
        result = cli("triage", str(log), "--json", "--no-probe")
        facts = {f["fact"]: f["value"] for f in result.json()["data"]["facts"]}
        assert facts.get("gpu_name") == name, line
        assert facts.get("gpu_cc") == cc, line


def test_a_gpu_line_decides_an_arch_cause_with_the_torch_line(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The GPU from a Ray worker's collect_env line and torch's version from setup.py's print:
    together they confirm that the torch build lacks the GPU's architecture."""
    log = log_file(
        tmp_path,
        "(RayWorker pid=77) GPU 0: NVIDIA GeForce RTX 5090\n"
        "torch.__version__  = 2.6.0+cu124\n" + _NO_KERNEL,
    )
    assert _causes(cli, log)["TOR101"]["verdict"] == "confirmed"


_LOOPBACK_THEN_SYSTEM_ERROR = """\
worker-0:120:120 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
NCCL version 2.18.1+cuda12.1
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1
"""


def test_an_info_line_does_not_displace_a_failures_other_causes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL's INFO that it bootstraps over lo is a fact, harmless on one node: it confirms
    NET104 neither for itself nor for the 'unhandled system error' after it (an error that
    names no connection, in a log that does not say the ranks span nodes), whose other causes
    (/dev/shm among them) stay open beside it."""
    result = cli(
        "triage", str(log_file(tmp_path, _LOOPBACK_THEN_SYSTEM_ERROR)), "--json", "--no-probe"
    )
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    own = {c["code"]: c["verdict"] for c in matches["nccl-socket-virtual-interface"]["causes"]}
    assert own["NET104"] == "unknown"
    error = {c["code"]: c for c in matches["nccl-unhandled-system-error"]["causes"]}
    assert {code: c["verdict"] for code, c in error.items()} == {
        "SYS101": "unknown",
        "NET101": "unknown",
        "NET104": "unknown",
        "NET120": "unknown",  # a graph file the VM image injected (NCCL_GRAPH_FILE)
    }
    assert "does not say whether the ranks ran on several nodes" in error["NET104"]["reason"]
    assert "--shm-size" in error["SYS101"]["fix"]["summary"]


def test_a_failure_line_still_decides_a_generic_errors_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The same error after a WARN line (a failure, not information): its cause is confirmed
    for the error line too, and displaces the undecided ones."""
    log = log_file(
        tmp_path,
        "worker-0:120:130 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend "
        "/dev/shm/nccl-ab12 to 9637892 bytes, error: No space left on device (28)\n"
        + _LOOPBACK_THEN_SYSTEM_ERROR,
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    error = {c["code"]: c["verdict"] for c in matches["nccl-unhandled-system-error"]["causes"]}
    assert error["SYS101"] == "confirmed"


def test_informational_lines() -> None:
    from envcheck.triage.run import informational

    assert informational("host:1:1 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>")
    assert informational("2024-05-01 10:00:00 INFO worker.py:12 -- started")
    assert informational("[INFO] loading model")
    assert not informational("host:1:1 [0] misc/socket.cc:54 NCCL WARN Net : Call to recv")
    assert not informational("RuntimeError: unhandled system error (run with NCCL_DEBUG=INFO)")


def test_the_driver_is_read_from_nvidia_smis_header_and_collect_env(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for line, cuda in (
        ("| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2     |", "12.2"),
        ("[rank0]: Nvidia driver version: 535.54.03", None),
    ):
        result = cli(
            "triage", str(log_file(tmp_path, line + "\n" + _NO_KERNEL)), "--json", "--no-probe"
        )
        facts = {f["fact"]: f["value"] for f in result.json()["data"]["facts"]}
        assert facts.get("driver_version") == "535.54.03", line
        assert facts.get("driver_cuda") == cuda, line


def test_the_line_that_raised_decides_over_an_earlier_warning_of_the_same_kind(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL's WARN that it cannot open libcuda.so and the ImportError on libcudnn.so.9 that
    stopped the program match the same signature: the exception names the library to install."""
    log = log_file(
        tmp_path,
        "host:88:88 [0] misc/cudawrap.cc:179 NCCL WARN Failed to find CUDA library libcuda.so "
        "(NCCL_CUDA_PATH='') : libcuda.so: cannot open shared object file: No such file or "
        "directory\n"
        "Traceback (most recent call last):\n"
        '  File "run.py", line 1, in <module>\n'
        "    import torch\n"
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n",
    )
    sys150 = _causes(cli, log)["SYS150"]
    assert sys150["verdict"] == "confirmed"
    assert sys150["evidence"] == "confirmed from line 5"
    (finding,) = sys150["findings"]
    assert "libcudnn.so.9" in finding["message"]
    assert any("nvidia-cudnn-cu12" in c for c in finding["fix"]["commands"])


def test_the_first_line_decides_when_both_raised(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n"
        "During handling of the above exception, another exception occurred:\n"
        "OSError: libcublas.so.12: cannot open shared object file: No such file or directory\n",
    )
    assert _causes(cli, log)["SYS150"]["evidence"] == "confirmed from line 1"


def test_witness() -> None:
    from envcheck.triage.run import witness
    from envcheck.triage.scan import Occurrence, Tally

    warn = Occurrence(1, "host:1:1 [0] NCCL WARN libcuda.so: cannot open shared object file")
    raised = Occurrence(9, "(pid=3) ray.exceptions.RayTaskError(ImportError): libx.so.1: cannot")
    tally = Tally(signature=None, count=2, first=warn)  # type: ignore[arg-type]
    tally.last = raised
    assert witness(tally) is raised
    tally.last = Occurrence(12, "host:1:1 [0] NCCL WARN libcuda.so: cannot open shared object")
    assert witness(tally) is warn


_KIT_A100 = """\
2024-05-02 10:11:12 [2,100ms] [Info] [gpu.foundation.plugin] GPU table
| Driver Version: 535.129.03    | Graphics API: Vulkan
| GPU | Name                             | Active | LDA | GPU Memory | Vendor-ID | LUID       |
| 0   | NVIDIA A100-SXM4-80GB            | No     |     | 81920   MB | 10de      | 0          |
2024-05-02 10:11:13 [2,110ms] [Error] [gpu.foundation.plugin] Failed to create any GPU devices, including an attempt with compatibility mode.
"""


def test_kits_gpu_table_decides_its_no_device_line(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Kit's generic 'Failed to create any GPU devices' lists several causes; Kit's own GPU
    table above it names an A100 (no RT cores), and Kit's lines say the job runs Isaac Sim:
    the RT-core cause is confirmed and leads."""
    result = cli("triage", str(log_file(tmp_path, _KIT_A100)), "--json", "--no-probe")
    data = result.json()["data"]
    facts = {f["fact"]: f["value"] for f in data["facts"]}
    assert facts["gpu_name"] == "NVIDIA A100-SXM4-80GB"
    assert facts["kit_plugin"] == "gpu.foundation.plugin"
    (match,) = [m for m in data["matches"] if m["id"] == "kit-no-gpu-device"]
    verdicts = {c["code"]: c["verdict"] for c in match["causes"]}
    assert verdicts["SIM106"] == "confirmed"
    assert verdicts["SIM109"] != "confirmed"


def test_nccl_shm_open_permission_denied_names_chmod_for_the_system_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nccl#328: 'unhandled system error' first, the WARN that shm_open was denied after it:
    the error's cause is /dev/shm's permissions, and no size helps."""
    log = log_file(
        tmp_path,
        "RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, unhandled system error\n"
        "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission "
        "denied\n"
        "node08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2\n",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    causes = {c["code"]: c for c in matches["nccl-unhandled-system-error"]["causes"]}
    assert causes["SYS101"]["verdict"] == "confirmed"
    assert "sudo chmod 1777 /dev/shm" in " ".join(causes["SYS101"]["fix"]["commands"])
    assert "Permission denied" in causes["SYS101"]["findings"][0]["message"]


def test_nccl_shm_open_with_another_errno_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : No such "
        "file or directory\n",
    )
    assert _causes(cli, log)["SYS101"]["verdict"] == "unknown"


_SHM_UNSTATED = (
    "{host}:55933:55950 [1] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory "
    "segment /dev/shm/nccl-abcd (size 9637888)\n"
    "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
)


def test_a_docker_hostname_on_nccls_lines_decides_an_unstated_shm_failure(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL's bare 'Error while creating shared memory segment' says no errno; the host prefix
    of its lines is Docker's default hostname (the container ID), and a container's /dev/shm
    is 64 MiB unless raised: SYS101 is confirmed, for the system error after it too. On a host
    not known to be a container, the line itself (the segment NCCL creates in /dev/shm)
    confirms it, without calling the node a container."""
    docker = log_file(tmp_path, _SHM_UNSTATED.format(host="ae05277d311f"))
    result = cli("triage", str(docker), "--json", "--no-probe")
    data = result.json()["data"]
    assert {f["fact"]: f["value"] for f in data["facts"]}["container_host"] == "ae05277d311f"
    error = next(m for m in data["matches"] if m["id"] == "nccl-unhandled-system-error")
    verdicts = {c["code"]: c["verdict"] for c in error["causes"]}
    assert verdicts["SYS101"] == "confirmed"
    host = log_file(tmp_path, _SHM_UNSTATED.format(host="gpu-node-17"))
    sys101 = _causes(cli, host)["SYS101"]
    assert sys101["verdict"] == "confirmed"
    (finding,) = sys101["findings"]
    assert "names the segment NCCL creates in /dev/shm" in finding["message"]
    assert "the node is a container" not in finding["message"]


# a verl rollout's worker crashing in cuBLAS on a Hopper GPU, the stack listed above the crash
_CUBLAS_CRASH = """\
(main_task pid=1234) GPU: NVIDIA H100 80GB HBM3
nvidia-cublas-cu12==12.1.3.1
torch==2.4.0
(WorkerDict pid=5678) *** SIGSEGV received at time=1732700000 on cpu 12 ***
"""


def test_a_confirmed_cause_is_listed_before_the_open_ones(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Most likely first: the native crash's generic causes stay open, the cuBLAS build the
    listed stack confirms leads them, and the causes the facts rule out come last."""
    result = cli("triage", str(log_file(tmp_path, _CUBLAS_CRASH)), "--json", "--no-probe")
    (crash,) = [m for m in result.json()["data"]["matches"] if m["id"] == "native-crash"]
    verdicts = [c["verdict"] for c in crash["causes"]]
    assert crash["causes"][0]["code"] == "CUD102"
    assert verdicts[0] == "confirmed" and "unknown" in verdicts[1:]
    rank = {"confirmed": 0, "unknown": 1, "unchecked": 1, "ruled_out": 2}
    assert [rank[v] for v in verdicts] == sorted(rank[v] for v in verdicts)
