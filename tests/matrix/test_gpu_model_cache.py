"""A GPU name is looked up once per matrix: the answer is the same however often it is asked
(the rules ask for the node's GPUs hundreds of times in one `lock`), and another matrix (an
overlay) answers for itself."""

from __future__ import annotations

from dataclasses import replace

from tests.builtin_matrix import builtin_matrix


def test_repeated_lookups_give_the_first_answer() -> None:
    matrix = builtin_matrix()
    first = matrix.gpu_model("nvidia-h100-80gb-hbm3")
    assert first is not None and first.architecture == "Hopper"
    assert matrix.gpu_model("nvidia-h100-80gb-hbm3") is first
    assert matrix.gpu_model("NVIDIA GH200 480GB") is not None
    assert matrix.gpu_model("NVIDIA GH200 480GB").host_arch == "aarch64"  # type: ignore[union-attr]
    assert matrix.gpu_model("Voodoo 5 6000") is None
    assert matrix.gpu_model("Voodoo 5 6000") is None
    # a matrix without that model does not answer from the first one's lookups
    other = replace(matrix, gpus=tuple(g for g in matrix.gpus if g.architecture != "Hopper"))
    assert other.gpu_model("nvidia-h100-80gb-hbm3") is None
