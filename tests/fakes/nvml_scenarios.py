"""GPU kinds the fake pynvml can describe. Names and capabilities as NVML reports them."""

from __future__ import annotations

from typing import Any

GIB = 1024**3
MIB = 1024**2


def _device(
    name: str, uuid: str, cc: tuple[int, int], total_mib: int, used_mib: int = 0, **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "uuid": uuid,
        "cc": list(cc),
        "memory_total": total_mib * MIB,
        "memory_used": used_mib * MIB,
        "persistence": 1,
        "processes": [],
        **extra,
    }


SCENARIOS: dict[str, dict[str, Any]] = {
    "none": {"init_error": 12},
    "driver_not_loaded": {"init_error": 9},
    "rm_mismatch": {"init_error": 18},
    "h100x2": {
        "driver": "550.54.15",
        "cuda": 12040,
        "devices": [
            _device(
                "NVIDIA H100 80GB HBM3",
                "GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1a01",
                (9, 0),
                81559,
                531,
            ),
            _device(
                "NVIDIA H100 80GB HBM3",
                "GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1a02",
                (9, 0),
                81559,
                531,
            ),
        ],
    },
    "h100_busy": {
        "driver": "550.54.15",
        "cuda": 12040,
        "devices": [
            _device(
                "NVIDIA H100 80GB HBM3",
                "GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1a03",
                (9, 0),
                81559,
                70321,
                processes=[
                    {"pid": 4242, "memory": 60000 * MIB},
                    {"pid": 4243, "memory": 9790 * MIB},
                ],
            )
        ],
    },
    "a100": {
        "driver": "535.104.05",
        "cuda": 12020,
        "devices": [
            _device(
                "NVIDIA A100-SXM4-80GB",
                "GPU-aa7c3b5e-1111-2222-3333-444455556666",
                (8, 0),
                81920,
                4,
            )
        ],
    },
    "rtx4090": {
        "driver": "570.124.06",
        "cuda": 12080,
        "devices": [
            _device(
                "NVIDIA GeForce RTX 4090",
                "GPU-0e1f2a3b-4c5d-6e7f-8091-a2b3c4d5e6f7",
                (8, 9),
                24564,
                310,
                persistence=0,
                graphics=[{"pid": 1712, "memory": 300 * MIB}],
            )
        ],
    },
    "no_gpus": {"driver": "535.104.05", "cuda": 12020, "devices": []},
    "h100_partial": {
        "driver": "550.54.15",
        "cuda": 12040,
        "devices": [
            _device(
                "NVIDIA H100 80GB HBM3",
                "GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1a04",
                (9, 0),
                81559,
                errors={
                    "nvmlDeviceGetPersistenceMode": 3,
                    "nvmlDeviceGetComputeRunningProcesses": 4,
                },
            )
        ],
    },
}


# --- health (--deep) -------------------------------------------------------------------------
HEALTHY = {
    "ecc_volatile": [0, 0],
    "ecc_aggregate": [3, 0],
    "remapped_rows": [0, 0, 0, 0],
    "clocks_event_reasons": 0x1,  # GPU idle
    "mig": [0, 0],
    "pcie": [5, 5, 16, 16],
    "nvlinks": [1] * 18,
    "fabric": [3, 0],  # completed, NVML_SUCCESS
}


def _hgx(health: dict[str, Any], n: int, **extra: Any) -> dict[str, Any]:
    return _device(
        "NVIDIA H100 80GB HBM3",
        f"GPU-5f0ad1a7-9d6c-4c5e-8e8d-2f2b8f3b1b{n:02d}",
        (9, 0),
        81559,
        531,
        health=health,
        bus_id=f"00000000:{0x18 + 0x10 * n:02X}:00.0",
        **extra,
    )


SCENARIOS.update(
    {
        "hgx_healthy": {
            "driver": "535.104.05",
            "cuda": 12020,
            "devices": [_hgx(HEALTHY, 0), _hgx(HEALTHY, 1)],
            "p2p": [[0, 0], [0, 0]],
        },
        "hgx_sick": {
            "driver": "535.104.05",
            "cuda": 12020,
            "devices": [
                _hgx(
                    {
                        **HEALTHY,
                        "ecc_volatile": [1, 2],
                        "ecc_aggregate": [9, 2],
                        "remapped_rows": [1, 512, 0, 1],  # failure
                        "clocks_event_reasons": 0x8 | 0x40,  # HW slowdown + HW thermal
                        "mig": [1, 1],
                        "fabric": [1, 0],  # not started
                        "nvlinks": [1, 1, 1, 1, 0, 1, 1, 0] + [1] * 10,
                    },
                    0,
                ),
                _hgx(
                    {
                        **HEALTHY,
                        "remapped_rows": [0, 0, 1, 0],  # pending
                        "clocks_event_reasons": 0x80,  # power brake
                        "pcie": [4, 5, 4, 16],
                        "fabric": [2, 0],  # in progress
                    },
                    1,
                    persistence=0,
                ),
            ],
            "p2p": [[0, 1], [1, 0]],  # chipset not supported
        },
        "hgx_errors": {
            "driver": "535.104.05",
            "cuda": 12020,
            "devices": [
                _hgx(
                    HEALTHY,
                    0,
                    errors={
                        "nvmlDeviceGetTotalEccErrors": 4,  # no permission
                        "nvmlDeviceGetRemappedRows": 15,  # GPU is lost
                    },
                )
            ],
        },
        "nvml_hang": {
            "driver": "535.104.05",
            "cuda": 12020,
            "devices": [_hgx(HEALTHY, 0)],
            "hang_in": "nvmlDeviceGetTotalEccErrors",
        },
    }
)
