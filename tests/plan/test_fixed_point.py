"""Issue 13's plans, each as it used to fail: a plan that undid itself, a build that lost the
GPU's architecture, a false torch conflict on TinyZero's H20 node, a step that changed nothing."""

from __future__ import annotations

from collections.abc import Sequence

from envcheck.engine import evaluate
from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.model.plan import Plan
from envcheck.model.report import NodeReport
from envcheck.plan.emit.requirements import plan_to_requirements
from envcheck.plan.planner import build_plan
from envcheck.rules.base import Rule


def _report(driver: str, gpu: str, python: str, packages: dict[str, str]) -> NodeReport:
    lines = "\n".join(f'"{k}" = "{v}"' for k, v in packages.items())
    text = (
        f'[gpu]\ndriver = "{driver}"\nmodels = ["{gpu}"]\n[python]\nversion = "{python}"\n'
        f"[packages]\n{lines}\n"
    )
    return spec_to_report(parse_spec(text, "node.toml"), "node.toml")


def _installs(plan: Plan) -> list[tuple[str, ...]]:
    return [s.action.packages for s in plan.steps if s.action.kind == "pip_install"]


def test_h100_vllm_063_torch_251_reaches_a_clean_fixed_point(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    """It used to: downgrade cuBLAS under torch 2.5.1 as a *safe* step (re-checking added
    CUD101), run the cuBLAS step before `pip install torch==2.4.0` (which re-installs 12.1.3.1),
    and write one requirements set that cannot resolve."""
    report = _report(
        "550.54.15",
        "NVIDIA H100 80GB HBM3",
        "3.10.12",
        {"vllm": "0.6.3", "torch": "2.5.1", "nvidia-cublas-cu12": "12.4.5.8"},
    )
    plan, after = build_plan(report, matrix, rules)
    assert plan.converged and not plan.conflicts
    installs = _installs(plan)
    assert installs[0][0] == "torch==2.4.0"  # torch first ...
    assert installs[-1] == ("nvidia-cublas-cu12==12.3.4.1",)  # ... its override after it
    # the override exists only because of the torch change: never runnable without it
    assert {s.applicability for s in plan.steps if s.action.kind == "pip_install"} == {"unsafe"}
    codes = {f.code for f in evaluate(after, matrix, rules).findings}
    assert not codes & {"VLM101", "CUD101", "CUD102", "DRV101", "DRV102"}
    assert plan.remaining == ()
    # the requirements form resolves: the override is a separate, later step
    text = plan_to_requirements(plan, include_unsafe=True)
    pins = [line.split()[0] for line in text.splitlines() if line and not line.startswith("#")]
    assert pins == ["torch==2.4.0", "torchvision==0.19"]
    assert "after installing this file: pip install nvidia-cublas-cu12==12.3.4.1" in text


def test_rtx5090_never_gets_a_build_without_sm120(matrix: Matrix, rules: Sequence[Rule]) -> None:
    """DRV102's fix used to offer torch 2.7.0 from the cu118 index (no sm_120 kernels)."""
    for driver in ("535.104.05", "550.54.15"):
        report = _report(driver, "NVIDIA GeForce RTX 5090", "3.11.9", {"torch": "2.7.0+cu128"})
        plan, _ = build_plan(report, matrix, rules)
        for step in plan.steps:
            assert "cu118" not in (step.action.index_url or "")
            assert "cu126" not in (step.action.index_url or "")
            assert not any(p.startswith("torch") for p in step.action.packages)
        # no CUDA build can use sm_120 on this driver (DRV110, main's refused targets): the plan
        # is the driver upgrade to R570, by hand, and the torch choice waits for it
        assert [s.codes for s in plan.steps] == [("DRV110",)]
        assert plan.steps[0].applicability == "manual" and "R570" in plan.steps[0].reason
        assert {f.code for f in plan.remaining} >= {"DRV110", "DRV102"}


def test_rtx5090_on_a_cu126_build_gets_pypis_cu128_wheel(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    """PyPI's torch 2.8.0 *is* the cu128 build: no variant index, and since `torch==2.8.0` is
    met by the installed 2.8.0+cu126, the old build is uninstalled first."""
    report = _report("570.86.15", "NVIDIA GeForce RTX 5090", "3.11.9", {"torch": "2.8.0+cu126"})
    plan, after = build_plan(report, matrix, rules)
    kinds = [(s.action.kind, s.action.packages, s.action.index_url) for s in plan.steps]
    assert kinds[:2] == [
        ("pip_uninstall", ("torch",), None),
        ("pip_install", ("torch==2.8.0",), None),
    ]
    assert plan.converged and plan.remaining == ()
    assert "TOR101" not in {f.code for f in evaluate(after, matrix, rules).findings}


def test_a_variant_build_of_the_same_release_is_pinned_with_its_label(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    report = _report("535.104.05", "NVIDIA H100 80GB HBM3", "3.11.9", {"torch": "2.5.1"})
    plan, _ = build_plan(report, matrix, rules)
    step = next(s for s in plan.steps if s.action.kind == "pip_install")
    assert step.action.packages == ("torch==2.5.1+cu121",)
    assert (step.action.index_url or "").endswith("/cu121")


def test_tinyzero_h20_driver_535_gets_a_plan(matrix: Matrix, rules: Sequence[Rule]) -> None:
    """It used to report a conflict between torch 2.4.0 (VLM101) and 2.5.1+cu121 (DRV102) and
    emit nothing, although torch 2.4.0 (PyPI: cu121, which driver 535 runs) satisfies both."""
    report = _report(
        "535.104.05",
        "NVIDIA H20",
        "3.10.12",
        {"torch": "2.5.1", "vllm": "0.6.3", "nvidia-cublas-cu12": "12.4.5.8"},
    )
    plan, after = build_plan(report, matrix, rules)
    assert not plan.conflicts and plan.converged
    installs = _installs(plan)
    assert installs[0] == ("torch==2.4.0", "torchvision==0.19")
    torch_step = next(s for s in plan.steps if "torch==2.4.0" in s.action.packages)
    assert torch_step.action.index_url is None  # the PyPI wheel is the cu121 build
    assert {"VLM101", "DRV102"} <= set(torch_step.codes)
    assert ("nvidia-cublas-cu12==12.3.4.1",) in installs
    assert not {f.code for f in evaluate(after, matrix, rules).findings} & {
        "VLM101",
        "DRV102",
        "CUD102",
    }
