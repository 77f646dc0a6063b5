"""Driver and NCCL failures as other layers word them (matrices/signatures/driver_nccl_layers.toml):
a library that dlopens libcuda itself, CUDA's 802 by its message only, NCCL's echo of an injected
graph file, NCCL's interface list with bridges beside the interface between the nodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text


def _cause_of(cli: Callable[..., CliResult], log: Path, signature: str, code: str) -> dict:
    """The cause ``code`` as the line of ``signature`` names it (other lines name it too)."""
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 1, result.stderr
    for match in result.json()["data"]["matches"]:
        if match["id"] == signature:
            return next(c for c in match["causes"] if c["code"] == code)
    raise AssertionError(f"no line matched {signature}")


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.log"
    path.write_text(text + "\n")
    return path


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: Failed to dlopen libcuda.so",
        'Unable to find cuda lib under the names ["cuda", "nvcuda"]. Please open GitHub issue.',
        'Unable to dynamically load the "cuda" shared library - searched for library names: '
        '["cuda", "nvcuda"]',
    ],
)
def test_a_library_that_dlopens_libcuda_gets_the_wsl_path(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    """cuda-python#17, cudarc#255: the library asks dlopen for libcuda.so; on WSL it is only in
    /usr/lib/wsl/lib (what the threads set on LD_LIBRARY_PATH)."""
    drv210 = causes(cli, _log(tmp_path, line))["DRV210"]
    assert drv210["verdict"] == "confirmed"
    text = fix_text(drv210)
    assert "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH" in text
    assert "docker run --gpus all" in text


def test_on_a_linux_node_the_linux_step_comes_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A report whose kernel is not WSL's puts the ld.so cache check before WSL's path."""
    spec = tmp_path / "spec.toml"
    spec.write_text('[system]\nkernel = "5.15.0-91-generic"\n')
    log = _log(tmp_path, "RuntimeError: Failed to dlopen libcuda.so")
    text = fix_text(causes(cli, log, "--spec", str(spec))["DRV210"])
    assert text.index("ldconfig -p | grep libcuda") < text.index("/usr/lib/wsl/lib")


@pytest.mark.parametrize(
    "line",
    [
        "ggml_cuda_init: failed to initialize CUDA: system not yet initialized",
        "terminate called after throwing an instance of 'std::runtime_error'  what():  Error "
        "(gpu_burn-drv.cpp:298): system not yet initialized",
    ],
)
def test_802_by_its_message_names_the_fabric_manager(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    """ollama#12136, gpu-burn#92: NVIDIA's text for 802 without the number."""
    gpu101 = causes(cli, _log(tmp_path, line))["GPU101"]
    assert gpu101["verdict"] == "confirmed"
    assert "nvidia-fabricmanager" in fix_text(gpu101)


def test_another_ggml_failure_is_not_the_fabric_manager(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path, "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected"
    )
    found = causes(cli, log)
    assert found["GPU101"]["verdict"] == "ruled_out"
    assert found["DRV150"]["verdict"] == "confirmed"


def test_an_injected_nccl_graph_file_is_named_for_the_system_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nccl#1240: the graph file from the VM image, then ncclSystemError; unset it."""
    log = _log(
        tmp_path,
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
        "device error.\n"
        "Spotllm:73025:73112 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to "
        "/opt/microsoft/ncv4/graph.xml",
    )
    net120 = causes(cli, log)["NET120"]
    assert net120["verdict"] == "confirmed"
    (finding,) = net120["findings"]
    assert "/opt/microsoft/ncv4/graph.xml" in finding["message"]
    text = fix_text(net120)
    assert "unset NCCL_GRAPH_FILE" in text and "/etc/nccl.conf" in text


def test_the_graph_import_failure_names_the_graph_file(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "vm:16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.",
    )
    net120 = causes(cli, log)["NET120"]
    assert net120["verdict"] == "confirmed"
    assert "NCCL_GRAPH_FILE" in fix_text(net120)


def test_a_wrapped_interface_list_names_the_physical_interface(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nccl#697: bond0 and docker bridges and veth pairs, one a line; the fix names bond0."""
    log = _log(
        tmp_path,
        "INFO NET/Socket : Using\n[0]bond0:192.168.1.161<0>\n[1]br-05ab815fa14e:172.19.0.1<0>\n"
        "[2]veth6163fba:fe80::b878:6cff:fe52:abe2%veth6163fba<0>\n\n"
        "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1229, unhandled system error, NCCL version 2.12.10",
    )
    net104 = _cause_of(cli, log, "nccl-socket-interface-list", "NET104")
    assert net104["verdict"] == "confirmed"
    text = fix_text(net104)
    assert "NCCL_SOCKET_IFNAME=bond0" in text
    assert "not br-05ab815fa14e" in text


def test_a_one_line_list_names_its_first_physical_interface(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "llm207:149:157 [1] NCCL INFO NET/Socket : Using [0]eno1:172.17.120.207<0> "
        "[1]br-30d1aa8d4e26:172.31.0.1<0> [2]br-55beb62cf491:172.25.0.1<0>",
    )
    assert "NCCL_SOCKET_IFNAME=eno1" in fix_text(causes(cli, log)["NET104"])


def test_a_wrapped_list_of_physical_interfaces_only_is_not_the_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "INFO NET/Socket : Using\n[0]eth0:10.0.0.5<0>\n[1]ib0:10.1.0.5<0>\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1229, unhandled system error",
    )
    net104 = _cause_of(cli, log, "nccl-socket-interface-list", "NET104")
    assert net104["verdict"] == "ruled_out"


def test_a_driver_too_old_for_an_unknown_torch_lists_the_newer_branches(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """'found version 11040' alone: the packages of the branches that run a newer CUDA, as
    threads install them (sudo apt install nvidia-driver-535)."""
    log = _log(
        tmp_path,
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
    )
    text = fix_text(causes(cli, log)["DRV101"])
    assert "nvidia-driver-470" not in text  # this driver's own branch (CUDA 11.4)
    assert "nvidia-driver-495 (CUDA 11.5)" in text
    assert "nvidia-driver-535 (CUDA 12.2)" in text


def test_a_known_torch_cuda_names_its_first_branch_and_the_newer_ones(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
    )
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.1.2+cu121\nnumpy==1.26.0\n")
    text = fix_text(causes(cli, log, "--from", str(freeze))["DRV101"])
    assert "sudo apt install nvidia-driver-530" in text
    assert "nvidia-driver-535, nvidia-driver-545" in text
    assert "NVIDIA-Linux-x86_64-<version>.run" in text


_ATTRIBUTE = "node:281:2275 [1] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found"


def test_a_topology_xml_without_the_cpus_attributes_from_the_plugin_names_the_plugin(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """aws-ofi-nccl loaded (its registered name), then NCCL refusing the topology XML: the
    plugin's static file for the instance type; the fix updates the plugin."""
    log = _log(
        tmp_path,
        "node:281:281 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v7)\n"
        + _ATTRIBUTE,
    )
    cause = _cause_of(cli, log, "nccl-topology-xml-rejected", "NET120")
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "Update the aws-ofi-nccl plugin" in text
    assert "arch of node cpu" in cause["findings"][0]["message"]


def test_a_topology_file_set_by_hand_is_unset_or_dumped_again(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = _log(
        tmp_path,
        "node:1:1 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /etc/topo/dgx.xml\n"
        "node:1:1 [0] graph/xml.cc:394 NCCL WARN XML Topology has wrong version 1, 2 needed",
    )
    cause = _cause_of(cli, log, "nccl-topology-xml-rejected", "NET120")
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "unset NCCL_TOPO_FILE" in text
    assert "NCCL_TOPO_DUMP_FILE" in text
    assert "/etc/topo/dgx.xml" in cause["findings"][0]["message"]


def test_a_graph_file_of_another_format_is_the_graph_files(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = _log(tmp_path, "node:1:1 [0] NCCL WARN XML Graph has wrong version 0, 1 needed")
    cause = _cause_of(cli, log, "nccl-topology-xml-rejected", "NET120")
    assert "unset NCCL_GRAPH_FILE" in fix_text(cause)


def test_a_cpu_node_without_attributes_asks_for_nccl_2_8_unless_the_log_states_a_newer(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """NCCL before 2.8 did not read the cpu nodes of GPUs a job does not use (NVIDIA/nccl#379):
    with no NCCL release stated, the fix names 2.8; a log stating a newer one leaves it out."""
    alone = _cause_of(cli, _log(tmp_path, _ATTRIBUTE), "nccl-topology-xml-rejected", "NET120")
    assert "NCCL 2.8 or newer" in fix_text(alone)
    newer = _log(tmp_path, "NCCL version 2.21.5+cuda12.4\n" + _ATTRIBUTE)
    cause = _cause_of(cli, newer, "nccl-topology-xml-rejected", "NET120")
    assert "2.8" not in fix_text(cause)
