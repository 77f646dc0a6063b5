"""The driver family's fix forms: a DRV101 torch variant also in the ``+cuXYZ`` spelling threads
pin, torch's driver-too-old line in its retyped wording, and nvidia-smi's per-GPU device-handle
failure with the host-side fix (dmesg's Xid, reboot, reseat) instead of the container one."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.triage.from_log import causes, fix_text, log_file


def test_drv101_prints_the_local_version_spelling_beside_the_index_url(tmp_path: Path) -> None:
    # torch 2.1.0+cu121 on a driver torch found supporting CUDA 11.4 (found version 11040)
    log = log_file(
        tmp_path,
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
    )
    node = tmp_path / "pip.txt"
    node.write_text("torch==2.1.0+cu121\nnumpy==1.26.4\n")
    found = causes(run_cli, log, "--from", str(node))
    text = fix_text(found["DRV101"])
    assert "--index-url https://download.pytorch.org/whl/cu118" in text
    assert "torch==2.1.0+cu118 --extra-index-url https://download.pytorch.org/whl/cu118" in text


def test_the_driver_too_old_line_retyped_without_its_article(tmp_path: Path) -> None:
    # pytorch/pytorch#920: "error info: NVIDIA driver on your system is too old (found version 6000)"
    log = log_file(
        tmp_path, "error info: NVIDIA driver on your system is too old (found version 6000)...."
    )
    found = causes(run_cli, log)
    assert found["DRV101"]["verdict"] == "confirmed"
    assert "it supports CUDA <= 6.0" in found["DRV101"]["findings"][0]["message"]


def test_device_handle_failure_names_the_host_side_fix(tmp_path: Path) -> None:
    # xxd3vin/workspace#19; NVIDIA/open-gpu-kernel-modules#387 was fixed by reseating the GPU
    log = log_file(
        tmp_path, "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error"
    )
    found = causes(run_cli, log)
    text = fix_text(found["DRV151"])
    assert "Xid" in text and "sudo reboot" in text and "reseat the GPU" in text
    assert "recreate the container" not in text
