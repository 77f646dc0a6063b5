from __future__ import annotations

import time

import pytest

from envcheck.model.section import Status
from envcheck.probes.gpu import (
    cuda_version_from_int,
    driver_from_files,
    hash_uuid,
    parse_query_gpu,
    probe_gpu,
)

SMI_CSV_H100 = (
    "0, NVIDIA H100 80GB HBM3, GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1a01, 550.54.15, 81559, 0, Enabled, 9.0\n"
    "1, NVIDIA H100 80GB HBM3, GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1a02, 550.54.15, 81559, 12, Disabled, 9.0\n"
)


@pytest.mark.parametrize(
    ("scenario", "driver", "cuda", "names", "cc", "total_mib"),
    [
        ("h100x2", "550.54.15", "12.4", ["NVIDIA H100 80GB HBM3"] * 2, "9.0", 81559),
        ("a100", "535.104.05", "12.2", ["NVIDIA A100-SXM4-80GB"], "8.0", 81920),
        ("rtx4090", "570.124.06", "12.8", ["NVIDIA GeForce RTX 4090"], "8.9", 24564),
        ("no_gpus", "535.104.05", "12.2", [], None, None),
    ],
)
def test_nvml_gpu_kinds(stage, fake_nvml, scenario, driver, cuda, names, cc, total_mib):
    fake_nvml(scenario)
    section = probe_gpu(stage.ctx())
    assert section.status is Status.OK and section.source == "nvml"
    info = section.data
    assert info.driver_version == driver
    assert info.cuda_driver_version == cuda
    assert [g.name for g in info.gpus] == names
    for gpu in info.gpus:
        assert gpu.compute_capability == cc
        assert gpu.memory_total_mib == total_mib
        assert gpu.uuid_hash and not gpu.uuid_hash.startswith("GPU-") and len(gpu.uuid_hash) == 12


def test_nvml_uuid_is_hashed_not_copied(stage, fake_nvml):
    module = fake_nvml("h100x2")
    section = probe_gpu(stage.ctx())
    raw = module.SCENARIOS["h100x2"]["devices"][0]["uuid"]
    assert section.data.gpus[0].uuid_hash == hash_uuid(raw)
    assert raw not in repr(section)


def test_nvml_processes_holding_memory(stage, fake_nvml):
    fake_nvml("h100_busy")
    gpu = probe_gpu(stage.ctx()).data.gpus[0]
    assert gpu.process_count == 2
    assert gpu.process_memory_mib == 69790
    assert gpu.memory_used_mib == 70321


def test_nvml_graphics_processes_count(stage, fake_nvml):
    fake_nvml("rtx4090")
    gpu = probe_gpu(stage.ctx()).data.gpus[0]
    assert gpu.process_count == 1 and gpu.process_memory_mib == 300
    assert gpu.persistence_mode is False


def test_nvml_per_call_errors_leave_only_that_field_unknown(stage, fake_nvml):
    fake_nvml("h100_partial")
    gpu = probe_gpu(stage.ctx()).data.gpus[0]
    assert gpu.persistence_mode is None
    assert gpu.name == "NVIDIA H100 80GB HBM3" and gpu.compute_capability == "9.0"
    # compute processes failed (no permission) but graphics processes were readable
    assert gpu.process_count == 0


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("none", "NVML library (libnvidia-ml.so.1) not found"),
        ("driver_not_loaded", "NVIDIA driver not loaded"),
        ("rm_mismatch", "NVML: RM has detected an NVML/RM version mismatch."),
    ],
)
def test_nvml_init_errors_become_reasons(stage, fake_nvml, scenario, reason):
    fake_nvml(scenario)
    section = probe_gpu(stage.ctx())
    assert section.status is Status.UNAVAILABLE
    assert reason in section.reason
    assert "nvidia-smi not on PATH" in section.reason


def test_pynvml_not_importable(stage, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)
    section = probe_gpu(stage.ctx())
    assert section.status is Status.UNAVAILABLE
    assert "nvidia-ml-py not importable" in section.reason


@pytest.mark.parametrize(
    ("fixture", "version"),
    [("nvidia-version-proprietary", "535.104.05"), ("nvidia-version-open", "550.54.15")],
)
def test_driver_from_proc(stage, fixture, version):
    stage.copy_fixture(fixture, "/proc/driver/nvidia/version")
    assert driver_from_files(stage.ctx()) == (version, "/proc/driver/nvidia/version")


def test_driver_from_sys_module(stage):
    stage.write("/sys/module/nvidia/version", "570.124.06\n")
    assert driver_from_files(stage.ctx()) == ("570.124.06", "/sys/module/nvidia/version")


def test_fallback_to_nvidia_smi_csv(stage, fake_nvml, tmp_path):
    fake_nvml("none")
    csv = tmp_path / "smi.csv"
    csv.write_text(SMI_CSV_H100)
    stage.executable("nvidia-smi", f"#!/bin/sh\ncat {csv}\n")
    section = probe_gpu(stage.ctx())
    assert section.status is Status.OK and section.source == "nvidia-smi"
    info = section.data
    assert info.driver_version == "550.54.15"
    assert info.cuda_driver_version is None  # not guessed
    assert [g.persistence_mode for g in info.gpus] == [True, False]
    assert [g.memory_used_mib for g in info.gpus] == [0, 12]
    assert info.gpus[0].compute_capability == "9.0"
    assert any("NVML library" in n for n in section.notes)


def test_nvidia_smi_without_compute_cap_field(stage, fake_nvml, tmp_path):
    """Drivers before 510 reject the compute_cap field; the probe retries without it."""
    fake_nvml("none")
    csv = tmp_path / "smi.csv"
    csv.write_text("0, Tesla V100-SXM2-32GB, GPU-1, 470.182.03, 32510, 0, Enabled\n")
    stage.executable(
        "nvidia-smi",
        "#!/bin/sh\n"
        'case "$*" in *compute_cap*) echo \'Field "compute_cap" is not a valid field to query.\'; exit 2;; esac\n'
        f"cat {csv}\n",
    )
    info = probe_gpu(stage.ctx()).data
    assert info.gpus[0].name == "Tesla V100-SXM2-32GB"
    assert info.gpus[0].compute_capability is None
    assert info.driver_version == "470.182.03"


def test_hanging_nvidia_smi_costs_at_most_its_timeout(stage, fake_nvml):
    fake_nvml("none")
    stage.executable("nvidia-smi", "#!/bin/sh\nsleep 30\n")
    start = time.monotonic()
    section = probe_gpu(stage.ctx(timeout=1.0))
    elapsed = time.monotonic() - start
    assert elapsed < 1.0 + 1.5  # the timeout plus the kill grace period
    assert section.status is Status.UNAVAILABLE
    assert section.describe().startswith("unavailable (")
    assert "timed out after 1 s" in section.reason


def test_hanging_nvidia_smi_with_driver_file_keeps_driver(stage, fake_nvml):
    fake_nvml("none")
    stage.copy_fixture("nvidia-version-proprietary", "/proc/driver/nvidia/version")
    stage.executable("nvidia-smi", "#!/bin/sh\nsleep 30\n")
    section = probe_gpu(stage.ctx(timeout=0.5))
    assert section.status is Status.OK
    assert section.data.driver_version == "535.104.05"
    assert section.data.gpus is None
    assert "timed out after 0.5 s" in section.data.gpus_reason


def test_failing_nvidia_smi_reports_its_message(stage, fake_nvml):
    fake_nvml("none")
    stage.executable(
        "nvidia-smi",
        '#!/bin/sh\necho "NVIDIA-SMI has failed because it couldn\x27t communicate with the NVIDIA driver."\nexit 9\n',
    )
    section = probe_gpu(stage.ctx())
    assert section.status is Status.UNAVAILABLE
    assert "exited with 9: NVIDIA-SMI has failed" in section.reason


def test_query_csv_parsing_na_values():
    rows = parse_query_gpu(
        "0, NVIDIA A10G, [N/A], 535.54.03, 23028, [Not Supported], Enabled, 8.6\n",
        (
            "index",
            "name",
            "uuid",
            "driver_version",
            "memory.total",
            "memory.used",
            "persistence_mode",
            "compute_cap",
        ),
    )
    assert rows == [
        {
            "index": "0",
            "name": "NVIDIA A10G",
            "uuid": None,
            "driver_version": "535.54.03",
            "memory.total": "23028",
            "memory.used": None,
            "persistence_mode": "Enabled",
            "compute_cap": "8.6",
        }
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [(12040, "12.4"), (12020, "12.2"), (13000, "13.0"), (11080, "11.8"), (0, None)],
)
def test_cuda_version_encoding(value, text):
    assert cuda_version_from_int(value) == text
