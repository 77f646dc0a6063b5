"""NCCL, Gloo, torch.distributed's rendezvous and the rendering libraries, in the phrasings their
own sources print (NCCL's src/ and include/, torch's c10d, vulkaninfo, Omniverse Kit, GLFW,
MuJoCo, PyOpenGL, Qt): each line names its cause from its own facts, with the fix the threads
established."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def _matches(cli: Callable[..., CliResult], log: Path, *args: str) -> list[dict]:
    result = cli("triage", str(log), "--json", *(args or ("--no-probe",)))
    assert result.returncode == 1, result.stderr
    matches: list[dict] = result.json()["data"]["matches"]
    return matches


def test_nccl_names_the_interface_it_was_given(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nccl#1837: NCCL_SOCKET_IFNAME naming an interface the node lacks leaves an address of no
    family; NCCL's echo of the variable names what to change."""
    log = log_file(
        tmp_path,
        "[trainer3]:host:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2\n"
        "[trainer0|0]:ncclInternalError: Internal check failed.\n"
        "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither "
        "AF_INET(2) nor AF_INET6(10)",
    )
    net101 = _causes(cli, log)["NET101"]
    assert net101["verdict"] == "confirmed"
    (finding,) = net101["findings"]
    assert "NCCL_SOCKET_IFNAME=eth2 matches no interface" in finding["message"]
    assert "(not eth2)" in _fix(net101)


def test_an_af_unix_address_is_not_a_missing_interface(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Family 1 (AF_UNIX) is NCCL routing a same-host peer through its socket transport, not an
    interface NCCL_SOCKET_IFNAME failed to find."""
    log = log_file(
        tmp_path,
        "misc/socket.cc:537 NCCL WARN ncclSocketInit: connecting to address  with family 1 is "
        "neither AF_INET(2) nor AF_INET6(10)\n"
        "internal error - please report this issue to the NCCL developers",
    )
    # open (the log names no interface), never confirmed
    assert _causes(cli, log)["NET101"]["verdict"] in ("unchecked", "unknown")


def test_an_exact_match_prefix_is_dropped_in_the_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """marin#6940: NCCL_SOCKET_IFNAME='=enp90s0np0' matched nothing in that NCCL build."""
    log = log_file(
        tmp_path,
        "node:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to =enp90s0np0\n"
        "node:1:1 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found",
    )
    net101 = _causes(cli, log)["NET101"]
    assert "export NCCL_SOCKET_IFNAME=enp90s0np0 (without the '='" in _fix(net101)


def test_no_ip_interface_in_a_container_asks_for_host_networking(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nccl-tests#14: NCCL's 'Socket creation failed' when a container has no usable IP
    interface; host networking solved it."""
    log = log_file(
        tmp_path,
        "e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address "
        "family not supported by protocol",
    )
    net101 = _causes(cli, log)["NET101"]
    assert net101["verdict"] == "confirmed"
    assert "--network host" in _fix(net101)


def test_a_virtual_interface_chosen_by_nccl_is_net104_across_nodes(
    tmp_path: Path, cli: Callable[..., CliResult], tmp_path_factory: pytest.TempPathFactory
) -> None:
    line = "node1:9:9 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>"
    # NCCL's INFO alone is a fact, harmless on one node: the cause stays open, its fix a condition
    alone = _causes(cli, log_file(tmp_path, line))["NET104"]
    assert alone["verdict"] == "unknown"
    assert "harmless when every rank is on this node" in alone["reason"]
    assert "across nodes, set NCCL_SOCKET_IFNAME" in alone["fix"]["summary"]
    # NCCL's own communicator line states two nodes: docker0 is the cause
    log = line + "\nnode1:9:9 [0] NCCL INFO comm 0x55d5 rank 0 nRanks 16 nNodes 2 localRanks 8\n"
    net104 = _causes(cli, log_file(tmp_path, log))["NET104"]
    assert net104["verdict"] == "confirmed"
    (finding,) = net104["findings"]
    assert finding["severity"] == "warning"
    assert "NCCL chose docker0" in finding["message"]
    # the node's interfaces name the one to use
    spec = tmp_path_factory.mktemp("node") / "node.toml"
    spec.write_text(
        '[network]\ninterfaces = [{ name = "docker0", ipv4 = "172.17.0.1", up = true }, '
        '{ name = "ens5", ipv4 = "10.0.0.5", up = true }]\n'
    )
    with_node = _causes(cli, log_file(tmp_path, log), "--spec", str(spec))["NET104"]
    assert "export NCCL_SOCKET_IFNAME=ens5 GLOO_SOCKET_IFNAME=ens5" in _fix(with_node)


def test_a_virtual_interface_then_a_failed_connection_is_net104(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """docker0 chosen (INFO) and a rank that then cannot connect to the address it published:
    the failure line decides NET104 from the INFO line's fact."""
    log = (
        "node1:9:9 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.2<0>\n"
        "node1:9:30 [0] misc/socket.cc:567 NCCL WARN Net : Connect to 172.17.0.2<43215> "
        "failed : No route to host\n"
    )
    result = cli("triage", str(log_file(tmp_path, log)), "--json", "--no-probe")
    matches = {m["id"]: m for m in result.json()["data"]["matches"]}
    failed = {c["code"]: c for c in matches["nccl-socket-connect-failed"]["causes"]}
    assert failed["NET104"]["verdict"] == "confirmed"
    assert "NCCL_SOCKET_IFNAME" in _fix(failed["NET104"])


def test_a_physical_interface_is_not_flagged(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(tmp_path, "node1:9:9 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 0, result.stdout


def test_rccl_without_iommu_passthrough_is_gpu118(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        'node [0] /app/rccl/build/hipify/src/init.cc:213 NCCL WARN Missing "iommu=pt" from '
        "kernel command line which can lead to system instablity or hang!"
    )
    gpu118 = _causes(cli, log_file(tmp_path, line))["GPU118"]
    assert gpu118["verdict"] == "confirmed"
    assert "iommu=pt" in gpu118["fix"]["summary"]


def test_torchs_nccl_error_line_is_not_the_version_banner(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch appends ', NCCL version X' to NCCL's error: the line is the error, not the banner
    NCCL prints at start-up."""
    log = log_file(
        tmp_path,
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1691, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.19.3\nNCCL version 2.19.3+cuda12.3",
    )
    matches = _matches(cli, log)
    by_id = {m["id"]: m for m in matches}
    assert by_id["nccl-unhandled-cuda-error"]["noise"] is False
    # most likely first: the open causes in the signature's order, then GPU116, which the
    # facts rule out
    assert [c["code"] for c in by_id["nccl-unhandled-cuda-error"]["causes"]] == [
        "NET106",
        "DRV150",
        "GPU116",
    ]
    assert by_id["nccl-version-banner"]["first"]["line"] == 2


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from "
            "[0] via c10d key-value store by key '0', but store->get('0') got error: Connection "
            "reset by peer",
            "NET103",
        ),
        (
            "[W socket.cpp:601] [c10d] The IPv6 network addresses of (node-0, 29500) cannot be "
            "retrieved (gai error: -2 - Name or service not known).",
            "NET103",
        ),
        (
            "gpu-1:2:3 [0] include/socket.h:360 WARN Call to connect failed : No route to host",
            "NET104",
        ),
        # shm_open's 'Permission denied' (EACCES) establishes SYS101 with its chmod fix:
        # tests/triage/test_cause_ranking.py; another errno leaves it open (same file)
    ],
)
def test_store_socket_and_shm_lines_leave_their_causes_open(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str
) -> None:
    cause = _causes(cli, log_file(tmp_path, line))[code]
    # open either way: 'unknown' where the rule's reading of the line says what it lacks (a
    # connect failure that does not say the ranks span nodes, nccl_scope.py)
    assert cause["verdict"] in ("unchecked", "unknown")
    assert cause["fix"]["summary"]


def test_rendezvous_port_in_use_names_a_free_port(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "RuntimeError: The server socket has failed to listen on any local network address. "
        "port: 12341, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"
    )
    net160 = _causes(cli, log_file(tmp_path, line))["NET160"]
    assert net160["verdict"] == "confirmed"
    text = _fix(net160)
    assert "export MASTER_PORT=12342" in text and "ss -ltnp | grep :12341" in text


def test_env_rendezvous_without_master_addr(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
        "variable MASTER_PORT expected, but not set"
    )
    net161 = _causes(cli, log_file(tmp_path, line))["NET161"]
    (finding,) = net161["findings"]
    assert "needs MASTER_PORT, which is not set" in finding["message"]
    assert "torchrun" in _fix(net161)


@pytest.mark.parametrize(
    "line",
    [
        "Cannot create Vulkan instance.",
        "ERROR: [Loader Message] Code 0 : loader_scanned_icd_add: Could not get 'vkCreateInstance' "
        "via 'vk_icdGetInstanceProcAddr' for ICD libGLX_nvidia.so.0",
        "[Error] [gpu.foundation.plugin] carb::graphics::createInstance failed.",
        "vulkaninfo.h:477: failed with ERROR_INITIALIZATION_FAILED",
        "GLFWError: (65542) b'EGL: Failed to initialize EGL: EGL is not or could not be initialized'",
        "eglQueryDevicesEXT(): EGL_BAD_ALLOC error: In eglQueryDevicesEXT: Failed to allocate "
        "device list.",
    ],
)
def test_vulkan_and_egl_phrasings_confirm_the_missing_userspace(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    sim109 = _causes(cli, log_file(tmp_path, line))["SIM109"]
    assert sim109["verdict"] == "confirmed"
    text = _fix(sim109)
    # the most common working fix first: the container's graphics capability
    assert text.index("NVIDIA_DRIVER_CAPABILITIES=all") < text.index("libnvidia-gl-")


@pytest.mark.parametrize(
    "line", ["mujoco.FatalError: gladLoadGL error", "RuntimeError: Failed to initialize OpenGL"]
)
def test_a_missing_gl_context_is_mujoco_without_egl(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    """dm_control#283, Gymnasium#501: MUJOCO_GL=egl on a headless node with NVIDIA GPUs."""
    sim121 = _causes(cli, log_file(tmp_path, line))["SIM121"]
    assert sim121["verdict"] == "confirmed"
    assert "MUJOCO_GL=egl" in _fix(sim121)


def test_glx_missing_on_the_display_is_sim150(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    sim150 = _causes(cli, log_file(tmp_path, 'Xlib:  extension "NV-GLX" missing on display ":0".'))[
        "SIM150"
    ]
    assert sim150["verdict"] == "confirmed"
    assert "PYOPENGL_PLATFORM=egl" in _fix(sim150)


@pytest.mark.parametrize(
    ("line", "first"),
    [
        # nccl#426: error 12 is a retry timeout; on RoCE the GID index fixed it
        (
            "w-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with "
            "error 12, opcode 1, len 0, vendor err 129",
            "NCCL_IB_GID_INDEX=3",
        ),
        (
            "dgx:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error "
            "Connection timed out",
            "NCCL_IB_GID_INDEX=3",
        ),
        ("host:1:2 [0] NCCL WARN Call to ibv_reg_mr failed", "ulimit -l unlimited"),
        # nccl#2013: the RoCE v2 GID already in use; NICs on different rails
        (
            "host-01:1:2 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 "
            "Connection timed out, on dev mlx5_3:1, curr state INIT, next state RTR, local GID "
            "index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.1.1",
            "NCCL_CROSS_NIC=0",
        ),
    ],
)
def test_ib_verbs_failures_name_their_own_fix(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, first: str
) -> None:
    net150 = _causes(cli, log_file(tmp_path, line))["NET150"]
    assert net150["verdict"] == "confirmed"
    assert first in net150["findings"][0]["fix"]["summary"]
    assert "rdma-core" not in _fix(net150)


def test_verbs_enomem_is_the_memlock_limit_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A verbs call refused with ENOMEM is memory registration under the memlock limit: SYS180
    is confirmed with the limit's fix; NET150 (no usable HCA) stays open behind it."""
    line = (
        "host:1:2 [0] misc/ibvwrap.cc:106 NCCL WARN Call to ibv_create_qp failed with error "
        "Cannot allocate memory"
    )
    found = _causes(cli, log_file(tmp_path, line))
    assert found["SYS180"]["verdict"] == "confirmed"
    assert "--ulimit memlock=-1" in found["SYS180"]["findings"][0]["fix"]["summary"]
    assert found["NET150"]["verdict"] != "confirmed"


def test_an_hca_nccl_cannot_open_still_asks_for_rdma_core(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL's INFO `NET/IB : No device found.` is printed on every healthy node without an HCA:
    alone it leaves NET150 open (its fix a condition); a node with HCAs confirms it, a node
    without any rules it out."""
    log = log_file(tmp_path, "node:1:2 [0] NCCL INFO NET/IB : No device found.")
    alone = _causes(cli, log)["NET150"]
    assert alone["verdict"] == "unknown"
    assert not alone["findings"]
    assert "rdma-core" in alone["fix"]["summary"]
    cases = Path(__file__).parent.parent / "rules" / "cases" / "NET150"
    with_hcas = _causes(cli, log, "--report", str(cases / "good.json"))["NET150"]
    assert with_hcas["verdict"] == "confirmed"
    assert "rdma-core" in _fix(with_hcas)
    result = cli("triage", str(log), "--json", "--report", str(cases / "good-no-hca.json"))
    (match,) = result.json()["data"]["matches"]
    (no_hca,) = match["causes"]
    assert no_hca["verdict"] == "ruled_out"


def test_the_containers_capabilities_lead_the_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A log that states NVIDIA_DRIVER_CAPABILITIES without graphics (the docker command line,
    an env dump): the rendering failure is the container's capabilities first."""
    log = log_file(
        tmp_path,
        "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility maniskill\n"
        "RuntimeError: vk::Instance::enumeratePhysicalDevices: ErrorInitializationFailed",
    )
    sim109 = _causes(cli, log)["SIM109"]
    (finding,) = sim109["findings"]
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility lacks graphics" in finding["message"]
    assert finding["fix"]["summary"].startswith(
        "Start the container with NVIDIA_DRIVER_CAPABILITIES=all"
    )
    # with graphics in it, the capabilities are not the cause named first
    log.write_text(log.read_text().replace("compute,utility", "all"))
    again = _causes(cli, log)["SIM109"]["findings"][0]
    assert "lacks graphics" not in again["message"]


def test_kits_no_device_line_leaves_the_renderers_gpu_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Kit's 'No device could be created' lists several causes itself: the line alone confirms
    none; a node with Isaac Lab and a renumbering CUDA_VISIBLE_DEVICES confirms SIM161."""
    log = log_file(
        tmp_path,
        "2025-11-13 10:17:55 [4,939ms] [Error] [gpu.foundation.plugin] No device could be "
        "created. Some known system issues:",
    )
    alone = _causes(cli, log)
    # open: the line says Kit runs (Isaac Sim), but not which GPU or environment
    assert {alone[c]["verdict"] for c in ("SIM109", "SIM161", "SIM106")} <= {"unchecked", "unknown"}
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[packages]\nisaaclab = "2.3.0"\nisaacsim = "5.1.0"\n[env]\nCUDA_VISIBLE_DEVICES = "0,5"\n'
    )
    sim161 = _causes(cli, log, "--spec", str(spec))["SIM161"]
    assert sim161["verdict"] == "confirmed"
    assert "--device cuda:N" in _fix(sim161)


def test_an_egl_device_index_the_process_cannot_see_is_sim120(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """dm_control#415: MUJOCO_EGL_DEVICE_ID=1 in a container, then 'Cannot initialize a headless
    EGL display'; index 0 worked."""
    log = log_file(
        tmp_path,
        'os.environ["MUJOCO_GL"]="egl"',
        'os.environ["MUJOCO_EGL_DEVICE_ID"] = "1"',
        "ImportError: Cannot initialize a headless EGL display.",
    )
    sim120 = _causes(cli, log)["SIM120"]
    assert sim120["verdict"] == "confirmed"
    text = _fix(sim120)
    assert "MUJOCO_EGL_DEVICE_ID=1" in sim120["findings"][0]["message"]
    assert "export MUJOCO_EGL_DEVICE_ID=0" in text
    # index 0 failing is not the index: the software fallback stays the fix
    zero = log_file(
        tmp_path,
        'os.environ["MUJOCO_EGL_DEVICE_ID"] = "0"',
        "ImportError: Cannot initialize a headless EGL display.",
        name="zero.log",
    )
    assert "MUJOCO_GL=osmesa" in _fix(_causes(cli, zero)["SIM120"])


def test_an_x_server_nobody_runs_is_sim150(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(tmp_path, "xdpyinfo: cannot connect to X server :99")
    assert _causes(cli, log)["SIM150"]["verdict"] == "confirmed"


def test_nccl_lines_from_two_hosts_say_the_ranks_span_nodes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL prefixes every line with its host (src/debug.cc): the communicator lines of two
    hosts (NCCL < 2.12 prints no nNodes) put an unhandled system error between nodes."""
    error = (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1"
    )
    one = "gpu-1011:4289:4343 [0] NCCL INFO comm 0x7fc8e824c640 rank 0 nranks 4"
    two = "gpu-1012:4152:4206 [0] NCCL INFO comm 0x7f0dc0269bf0 rank 2 nranks 4"
    net104 = _causes(cli, log_file(tmp_path, one, two, error))["NET104"]
    assert net104["verdict"] == "confirmed"
    assert "2 hosts (gpu-1011, gpu-1012)" in net104["findings"][0]["message"]
    # one host: nothing says where the other ranks ran
    alone = _causes(cli, log_file(tmp_path, one, error, name="one.log"))["NET104"]
    assert alone["verdict"] == "unknown"


def test_an_hca_filter_that_kept_no_device_is_the_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL echoes NCCL_IB_HCA, then finds no device: the job asked for InfiniBand and the
    filter kept no HCA NCCL could open; the node's HCAs, where known, are the value to set."""
    log = log_file(
        tmp_path,
        "node:1:2 [0] NCCL INFO NCCL_IB_HCA set to mlx5_4",
        "node:1:2 [0] NCCL INFO NET/IB : No device found.",
    )
    alone = _causes(cli, log)["NET150"]
    assert alone["verdict"] == "confirmed"
    assert "NCCL_IB_HCA=mlx5_4" in _fix(alone)
    assert "ibv_devices" in _fix(alone)
    cases = Path(__file__).parent.parent / "rules" / "cases" / "NET150"
    with_hcas = _causes(cli, log, "--report", str(cases / "good.json"))["NET150"]
    assert with_hcas["verdict"] == "confirmed"
    assert "export NCCL_IB_HCA=" in _fix(with_hcas)


_NO_RAYTRACING = (
    "2025-03-04 13:07:13 [10,621ms] [Error] [gpu.foundation.plugin] Raytracing is not supported "
    "on GPU: 0. Hardware, driver or Operating system upgrade is required."
)


def test_kits_ray_tracing_refusal_on_a_gpu_without_rt_cores(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Kit's 'Raytracing is not supported on GPU: 0': the GPU the log states decides SIM106
    (an A100 has no RT cores); alone, the GPU and the driver stay open."""
    alone = _causes(cli, log_file(tmp_path, _NO_RAYTRACING))
    assert alone["SIM106"]["verdict"] != "confirmed"
    assert {"SIM103", "SIM104"} <= set(alone)
    stated = log_file(
        tmp_path,
        "|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |",
        _NO_RAYTRACING,
    )
    assert _causes(cli, stated)["SIM106"]["verdict"] == "confirmed"


def test_an_address_that_starts_with_an_egl_code_is_no_egl_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "Error reading memory at 0x300C0000")
    result = cli("triage", str(log), "--json", "--no-probe")
    ids = [m["id"] for m in result.json()["data"]["matches"]]
    assert "egl-call-error-name" not in ids
