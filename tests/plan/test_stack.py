"""Choosing a stack for a target: the torch build the driver runs with kernels for every GPU,
vLLM's pairing, known-good overrides, and conflicts that name the driver needed."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Target
from envcheck.plan.stack import add_overrides, choose_stack
from envcheck.rules.base import Rule


def test_rtx5090_driver_570_gets_a_cu128_build_with_its_reason(matrix: Matrix) -> None:
    target = Target(python="3.11", driver="570.86.15", gpus=("NVIDIA GeForce RTX 5090",))
    stack = choose_stack(matrix, target, ["torch"])
    assert stack.ok
    assert stack.torch_variant == "cu128"
    assert stack.torch_index_url == matrix.torch_index_url("cu128")
    assert stack.requirements == (f"torch=={stack.torch}",)
    reason = next(c for c in stack.choices if c.subject == "torch").reason
    assert "sm_120" in reason and "570.86.15" in reason
    # the variants it did not take, and why
    assert "cu126: no kernels for NVIDIA GeForce RTX 5090 (sm_120)" in reason
    assert "cu130: needs driver >= 580.65.06" in reason


def test_driver_535_vllm_064_takes_pypi_torch_through_minor_version_compat(
    matrix: Matrix,
) -> None:
    target = Target(python="3.11", driver="535.104.05", gpus=("NVIDIA H100 80GB HBM3",))
    stack = choose_stack(matrix, target, ["vllm==0.6.4"])
    assert stack.ok
    assert (stack.torch, stack.torch_variant, stack.torch_index_url) == ("2.5.1", "cu124", None)
    assert set(stack.requirements) == {"vllm==0.6.4", "torch==2.5.1"}
    note = next(n for n in stack.notes if "minor-version compatibility" in n)
    assert "525.60.13" in note and "535.104.05" in note
    assert "PTX" in note and "NVIDIA_REQUIRE_CUDA" in note
    assert ">= 550.54.14" in note  # what full support would need


def test_driver_470_vllm_064_is_a_conflict_naming_the_driver(matrix: Matrix) -> None:
    target = Target(python="3.11", driver="470.182.03", gpus=("NVIDIA A100-SXM4-80GB",))
    stack = choose_stack(matrix, target, ["vllm==0.6.4"])
    assert not stack.ok and stack.torch is None
    message = stack.conflicts[0].message
    assert "vllm 0.6.4" in message and "CUDA 12.4" in message
    assert "470.182.03 supports CUDA <= 11.4" in message
    assert ">= 550.54.14" in message and ">= 525.60.13" in message


def test_tinyzero_on_h20_gets_the_cublas_override(matrix: Matrix, rules: Sequence[Rule]) -> None:
    target = Target(python="3.10.12", driver="535.104.05", gpus=("NVIDIA H20",) * 2)
    stack = add_overrides(choose_stack(matrix, target, ["vllm==0.6.3"]), matrix, rules)
    assert stack.torch == "2.4.0" and stack.torch_variant == "cu121"
    assert stack.overrides == ("nvidia-cublas-cu12==12.3.4.1",)
    reason = next(c for c in stack.choices if c.subject == "override").reason
    assert reason.startswith("CUD102") and "H20" in reason


@pytest.mark.parametrize(
    ("gpu", "override"),
    [("NVIDIA H100 80GB HBM3", True), ("NVIDIA L40S", False), ("NVIDIA A100-SXM4-80GB", True)],
)
def test_override_follows_the_evidence_for_the_gpu(
    matrix: Matrix, rules: Sequence[Rule], gpu: str, override: bool
) -> None:
    """Hopper (sm_90, same architecture as H20) and A100 (TinyZero#58) get it; an L40S does not."""
    target = Target(python="3.10", driver="550.54.15", gpus=(gpu,))
    stack = add_overrides(choose_stack(matrix, target, ["torch==2.4.0"]), matrix, rules)
    assert bool(stack.overrides) is override


def test_torch_25_needs_no_cublas_override(matrix: Matrix, rules: Sequence[Rule]) -> None:
    target = Target(python="3.11", driver="550.54.15", gpus=("NVIDIA H20",))
    stack = add_overrides(choose_stack(matrix, target, ["vllm==0.6.4"]), matrix, rules)
    assert stack.overrides == ()


def test_pinned_variant_label_is_kept(matrix: Matrix) -> None:
    target = Target(python="3.10", driver="550.54.15", gpus=("NVIDIA A100-SXM4-80GB",))
    stack = choose_stack(matrix, target, ["torch==2.4.0+cu118"])
    assert stack.torch_variant == "cu118"
    assert stack.torch_index_url == matrix.torch_index_url("cu118")


def test_python_outside_the_release_is_a_conflict(matrix: Matrix) -> None:
    stack = choose_stack(matrix, Target(python="3.13"), ["torch==2.4.0"])
    assert not stack.ok
    assert "Python 3.13" in stack.conflicts[0].message


def test_releases_without_wheels_for_the_python_are_one_note(matrix: Matrix) -> None:
    """A Python no release has wheels for gave one note per torch release of the matrix
    (140 lines at 80 columns); now one, naming the span and what the newest release has."""
    stack = choose_stack(matrix, Target(python="3.99"), ["torch"])
    assert not stack.ok
    skipped = [n for n in stack.notes if "no wheels for Python 3.99" in n]
    assert len(skipped) == 1
    releases = sorted(
        (r for r in matrix.torch_releases if r.verified), key=lambda r: r.version, reverse=True
    )
    newest, oldest = releases[0], releases[-1]
    assert skipped[0] == (
        f"torch {oldest.version} to {newest.version} ({len(releases)} releases) skipped: no"
        f" wheels for Python 3.99 (torch {newest.version} has {', '.join(newest.python)})"
    )
    assert stack.conflicts[0].message.count("no wheels for Python 3.99") == 1


def test_unknown_hardware_is_noted_not_guessed(matrix: Matrix) -> None:
    stack = choose_stack(matrix, Target(python="3.11", gpus=("Some Future GPU",)), ["torch==2.5.1"])
    assert stack.ok and stack.torch_variant == "cu124"
    assert any("Some Future GPU" in n and "not in the matrix" in n for n in stack.notes)
    assert any("driver not declared" in n for n in stack.notes)


def test_vllm_range_takes_the_newest_release_that_fits(matrix: Matrix) -> None:
    """verl's 0.8.x line on Python 3.11 and a Hopper node: the newest verified release."""
    target = Target(python="3.11", driver="550.54.15", gpus=("NVIDIA H100 80GB HBM3",))
    stack = choose_stack(matrix, target, ["vllm>=0.8.5,<0.9"])
    assert stack.ok and stack.torch == "2.6.0"
    # 0.8.5.post1 is verified from its wheel METADATA (matrices/packages/vllm.toml), so it is the newest
    assert "vllm==0.8.5.post1" in stack.requirements
