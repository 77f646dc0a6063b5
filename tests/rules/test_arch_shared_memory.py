"""TOR200's tables: the per-block shared memory limit per compute capability (not monotonic:
the A100's 163 KB is above the RTX 4090's and RTX 5090's 99 KB) and the GPUs named for a need."""

from __future__ import annotations

from envcheck.rules.node.arch_shared_memory import gpus_with_room
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()


def test_every_gpu_of_the_table_has_a_limit() -> None:
    limits = {n for n in MATRIX.constants if n.startswith("smem.per_block_optin.")}
    for gpu in MATRIX.gpus:
        cc = gpu.compute_capability
        assert f"smem.per_block_optin.{cc.major}.{cc.minor}" in limits, gpu.name


def test_gpus_named_by_their_own_limit_not_by_a_floor() -> None:
    room = gpus_with_room(MATRIX, 120_000)  # above 99 KB, below 163 KB
    assert "Ampere (A100" in room and "Hopper (H100" in room
    assert "RTX 4090" not in room and "L40S" not in room and "RTX 5090" not in room
    assert gpus_with_room(MATRIX, 300_000) == ""


def test_the_driver_list_s_data_centre_parts_are_known() -> None:
    for name, cc in (("NVIDIA L20", "8.9"), ("NVIDIA L2", "8.9"), ("NVIDIA A10M", "8.6")):
        model = MATRIX.gpu_model(name)
        assert model is not None and str(model.compute_capability) == cc, name
    model = MATRIX.gpu_model("NVIDIA RTX 6000D")
    assert model is not None and str(model.compute_capability) == "12.0"
