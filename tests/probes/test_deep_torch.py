"""--deep=torch against a fake torch package: a GEMM that dies of SIGFPE, cuBLAS errors, NCCL."""

from __future__ import annotations

import os

import pytest

from envcheck.engine import evaluate
from envcheck.model.deep import DeepInfo
from envcheck.model.report import Distribution, Gpu, GpuInfo, NodeReport, PackagesInfo
from envcheck.model.section import Section
from envcheck.probes.deep import probe_torch_smoke
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix
from tests.conftest import FAKES

MATRIX = builtin_matrix()
RULES = [r for r in all_rules(MATRIX) if r.code.startswith("GPU13")]


def _smoke(stage, mode: str, timeout: float = 20.0, **extra: str):
    env = {"PYTHONPATH": str(FAKES / "torchpkg"), "FAKE_TORCH": mode, **extra}
    return probe_torch_smoke(stage.ctx(env=env, torch_timeout=timeout))


def _report(smoke, step, cublas: str = "12.1.3.1") -> NodeReport:
    gpus = (Gpu(index=0, name="NVIDIA H20"), Gpu(index=1, name="NVIDIA H20"))
    dists = (Distribution("torch", "2.1.0+cu121"), Distribution("nvidia-cublas-cu12", cublas))
    return NodeReport(
        node="n1",
        envcheck_version="0",
        created_at="2026-11-23T00:00:00Z",
        gpu=Section.ok(GpuInfo(driver_version="560.35.03", gpus=gpus)),
        packages=Section.ok(PackagesInfo(distributions=dists)),
        deep=Section.ok(DeepInfo(torch=smoke, steps=(step,))),
    )


def test_healthy_torch_runs_every_dtype_and_the_allreduce(stage):
    smoke, step = _smoke(stage, "ok")
    assert smoke.outcome == "ok" and step.status == "ok"
    assert [(g.dtype, g.shape, g.outcome) for g in smoke.gemms] == [
        ("float16", (1024, 1024, 1024), "ok"),
        ("bfloat16", (1024, 1024, 1024), "ok"),
        ("float32", (1024, 1024, 1024), "ok"),
        ("tf32", (1024, 1024, 1024), "ok"),
        ("float16", (64, 14688, 1536), "ok"),
    ]
    assert smoke.gemms[-1].source and "pytorch/issues/152017" in smoke.gemms[-1].source
    assert smoke.allreduce == "ok" and smoke.torch_version == "2.1.0+cu121"
    assert evaluate(_report(smoke, step, "12.4.5.8"), MATRIX, RULES).findings == ()


def test_sigfpe_in_the_known_shape_confirms_cud102(stage):
    smoke, step = _smoke(stage, "sigfpe")
    assert smoke.outcome == "crashed" and smoke.signal == "SIGFPE"
    last = smoke.gemms[-1]
    assert (last.dtype, last.shape, last.outcome, last.detail) == (
        "float16",
        (64, 14688, 1536),
        "signal",
        "SIGFPE",
    )
    result = evaluate(_report(smoke, step), MATRIX, RULES)
    assert [f.code for f in result.findings] == ["GPU130"]
    finding = result.findings[0]
    assert "confirms CUD102 (confirmed by running it)" in finding.message
    assert finding.fix is not None
    assert any("nvidia-cublas-cu12==12.3.4.1" in c for c in finding.fix.commands)


def test_cublas_error_is_a_fact_and_later_steps_still_run(stage):
    smoke, _ = _smoke(stage, "cublas_error")
    outcomes = {g.dtype + str(g.shape[0]): g.outcome for g in smoke.gemms}
    assert outcomes["bfloat161024"] == "error" and outcomes["float1664"] == "ok"
    assert "CUBLAS_STATUS_EXECUTION_FAILED" in (smoke.gemms[1].detail or "")
    assert smoke.outcome == "failed"


def _all_gone(pidfile) -> None:
    pids = [int(p) for p in pidfile.read_text().split()]
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # killed and reaped: nothing left behind
            os.kill(pid, 0)


@pytest.mark.parametrize(("mode", "outcome"), [("nccl_error", "error"), ("nccl_hang", "hung")])
def test_allreduce_failure_is_reported_with_nccl_warnings(stage, tmp_path, mode, outcome):
    pidfile = tmp_path / "pids"
    smoke, step = _smoke(stage, mode, timeout=6.0, FAKE_TORCH_PIDFILE=str(pidfile))
    assert smoke.allreduce == outcome
    if mode == "nccl_hang":
        _all_gone(pidfile)  # both NCCL workers
    if mode == "nccl_error":
        assert any("NCCL WARN Cuda failure" in w for w in smoke.nccl_warnings)
    result = evaluate(_report(smoke, step), MATRIX, RULES)
    assert "GPU131" in {f.code for f in result.findings}


def test_hung_cuda_init_is_killed(stage, tmp_path):
    pidfile = tmp_path / "pids"
    smoke, step = _smoke(stage, "hang_init", timeout=1.5, FAKE_TORCH_PIDFILE=str(pidfile))
    assert smoke.outcome == "hung" and step.status == "hung"
    _all_gone(pidfile)
    assert "cuda init did not finish within 1.5 s" in (smoke.reason or "")
    result = evaluate(_report(smoke, step), MATRIX, RULES)
    assert [f.code for f in result.findings] == ["GPU132"]


def test_unimportable_torch_is_a_reason_not_a_finding(stage, tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        'raise ImportError("libtorch_cuda.so: cannot open shared object file")\n'
    )
    smoke, step = probe_torch_smoke(stage.ctx(env={"PYTHONPATH": str(tmp_path)}))
    assert smoke.outcome == "no_torch" and step.status == "unavailable"
    assert "libtorch_cuda.so" in (smoke.reason or "")
    result = evaluate(_report(smoke, step), MATRIX, RULES)
    assert result.findings == () and len(result.skipped) == 3


def test_redaction_masks_the_hostname_in_nccl_warnings():
    from envcheck.model.deep import TorchSmoke
    from envcheck.model.scrub import anonymize

    smoke = TorchSmoke(
        outcome="failed",
        allreduce="error",
        allreduce_detail="connect to 10.1.2.3<45123> failed on gpu-node-7",
        nccl_warnings=(
            "gpu-node-7:2211:2230 [1] NCCL WARN Net : Connect to 10.1.2.3<45123> failed",
        ),
    )
    report = NodeReport(
        node="gpu-node-7",
        envcheck_version="0",
        created_at="2026-11-23T00:00:00Z",
        deep=Section.ok(DeepInfo(torch=smoke)),
    )
    text = str(anonymize(report).to_dict()["deep"])
    assert "gpu-node-7" not in text and "10.1.2.3" not in text
    assert "NCCL WARN Net : Connect to" in text


@pytest.mark.parametrize(
    ("cublas", "fragment", "fixed_by_cud102"),
    [
        ("12.1.3.1", "confirms CUD102 (confirmed by running it)", True),
        (None, "the crash CUD102 describes", True),
        ("12.4.5.8", "not the cuBLAS version CUD102 names", False),
    ],
)
def test_sigfpe_verdict_follows_the_installed_cublas(stage, cublas, fragment, fixed_by_cud102):
    from envcheck.model.deep import GemmRun, Step, TorchSmoke

    crash = GemmRun("float16", (64, 14688, 1536), "signal", "SIGFPE", "CUD102: pytorch#152017")
    smoke = TorchSmoke(outcome="crashed", gemms=(crash,), signal="SIGFPE")
    report = _report(smoke, Step("torch", "crashed"), cublas or "0")
    if cublas is None:  # torch bundling its own cuBLAS: no nvidia-cublas-cu12 distribution
        dists = (Distribution("torch", "2.1.0"),)
        report = report.with_sections(packages=Section.ok(PackagesInfo(distributions=dists)))
    finding = evaluate(report, MATRIX, RULES).findings[0]
    assert fragment in finding.message
    commands = " ".join(finding.fix.commands)
    assert ("nvidia-cublas-cu12==12.3.4.1" in commands) is fixed_by_cud102
