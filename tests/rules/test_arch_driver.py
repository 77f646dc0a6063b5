"""A driver that predates a GPU's architecture (or has dropped it) leaves no torch build to
choose: fixes and `envcheck lock` refuse the target instead of picking a build for it."""

from __future__ import annotations

import pytest
from packaging.version import Version

from envcheck.model.plan import Target
from envcheck.plan.stack import choose_stack
from envcheck.rules.choose import arch_driver_problem, judge_build, torch_choices
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()


@pytest.mark.parametrize(
    ("cc", "driver", "fragment"),
    [
        ("12.0", "550.144.03", "R570"),  # RTX 5090 on 550
        ("10.0", "565.57.01", "R570"),  # B200 before CUDA 12.8's branch
        ("9.0", "470.256.02", "R520"),  # H100 on 470
        ("8.9", "515.105.01", "R520"),  # Ada before CUDA 11.8's branch
        ("7.0", "590.44.01", "after R580"),  # Volta dropped
        ("3.7", "535.104.05", "after R470"),  # K80 dropped
    ],
)
def test_problem(cc: str, driver: str, fragment: str) -> None:
    problem = arch_driver_problem(MATRIX, "GPU", Version(cc), Version(driver))
    assert problem is not None and fragment in problem


@pytest.mark.parametrize(
    ("cc", "driver"),
    [("12.0", "570.124.06"), ("9.0", "520.61.05"), ("9.0", "535.104.05"), ("7.0", "580.65.06")],
)
def test_no_problem(cc: str, driver: str) -> None:
    assert arch_driver_problem(MATRIX, "GPU", Version(cc), Version(driver)) is None


def test_judge_build_names_the_architecture() -> None:
    release = MATRIX.torch_release(Version("2.8.0"))
    assert release is not None
    verdict = judge_build(
        MATRIX,
        release,
        "cu128",
        ccs=[("NVIDIA GeForce RTX 5090", Version("12.0"))],
        driver=Version("550.144.03"),
    )
    assert not verdict.fits
    assert any("R570" in p for p in verdict.problems)


def test_no_torch_choice_on_a_driver_that_cannot_run_the_gpu() -> None:
    assert torch_choices(MATRIX, ccs=[Version("9.0")], driver=Version("470.256.02")) == []
    assert torch_choices(MATRIX, ccs=[Version("9.0")], driver=Version("535.104.05"))


@pytest.mark.parametrize(
    ("gpu", "driver"),
    [("NVIDIA GeForce RTX 5090", "550.144.03"), ("NVIDIA H100 80GB HBM3", "470.256.02")],
)
def test_lock_refuses_the_target(gpu: str, driver: str) -> None:
    stack = choose_stack(MATRIX, Target(python="3.11", driver=driver, gpus=(gpu,)), ["torch"])
    assert stack.torch is None
    assert stack.conflicts and "needs a driver of R" in stack.conflicts[0].message


def test_lock_keeps_vllm_below_the_transformers_it_breaks_on() -> None:
    """vllm 0.8.5.post1's metadata allows transformers 5; the lock constrains it below 5."""
    target = Target(python="3.11", driver="550.54.15", gpus=("NVIDIA H100 80GB HBM3",))
    stack = choose_stack(MATRIX, target, ["vllm==0.8.5.post1"])
    assert stack.constraints == ("transformers<5",)
    assert any(
        c.subject == "bound" and "all_special_tokens_extended" in c.reason for c in stack.choices
    )
    assert stack.to_json()["constraints"] == ["transformers<5"]
    newer = choose_stack(MATRIX, target, ["vllm==0.24.0"])
    assert newer.constraints == ()
