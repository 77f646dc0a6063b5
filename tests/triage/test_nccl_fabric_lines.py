"""NCCL lines whose facts decide the fix: the Fabric Manager's refusal of the loaded driver
(GPU101), NCCL's driver-API 802 (NET122), an address of no family beside per-node listings of
two NCCL releases (NET121), and the IB transport without GPUDirect RDMA or with a RoCE GID it
cannot read (NET150)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_FAMILY = (
    "node1:52:98 [0] misc/socket.cc:717 NCCL WARN ncclSocketInit: connecting to address  with "
    "family 0 is neither AF_INET(2) nor AF_INET6(10)"
)


def test_fabric_manager_refusal_names_the_build_of_the_loaded_driver(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "nv-fabricmanager[444114]: fabric manager NVIDIA GPU driver interface version "
        "550.90.07 don't match with driver version 550.54.15. Please update with matching "
        "NVIDIA driver package.",
    )
    cause = causes(cli, log)["GPU101"]
    assert cause["verdict"] == "confirmed"
    assert "nvidia-fabricmanager-550=550.54.15-1" in fix_text(cause)


def test_nccl_802_is_nvls_with_its_switch(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(tmp_path, "[rank2]: Cuda failure 802 'system not yet initialized'")
    cause = causes(cli, log)["NET122"]
    assert cause["verdict"] == "confirmed"
    assert "NCCL_NVLS_ENABLE=0" in fix_text(cause)


def test_address_of_no_family_with_two_listed_nccl_releases_is_version_skew(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, _FAMILY)
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(
        "node 1:\n```\nnvidia-nccl-cu11==2.14.3\nnvidia-nccl-cu12==2.20.5\n```\n\n"
        "nodes 2, 3:\n```\nnvidia-nccl-cu11==2.14.3\nnvidia-nccl-cu12==2.19.3\n```\n"
    )
    cause = causes(cli, log, "--from", str(freeze))["NET121"]
    assert cause["verdict"] == "confirmed"
    assert "nvidia-nccl-cu12==2.20.5" in fix_text(cause)


def test_address_of_no_family_alone_leaves_the_nccl_releases_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = causes(cli, log_file(tmp_path, _FAMILY))
    assert found["NET101"]["verdict"] == "confirmed"
    assert found["NET121"]["verdict"] == "unknown"
