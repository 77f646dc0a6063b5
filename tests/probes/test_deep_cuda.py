"""--deep's CUDA driver check against a fake libcuda (a C shim built with the system compiler)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from envcheck.engine import evaluate
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import Section
from envcheck.probes.deep import probe_cuda
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()
RULES = [r for r in all_rules(MATRIX) if r.code.startswith("GPU10")]


def _cuda(stage, libcuda: Path, **env: str):
    return probe_cuda(stage.ctx(env={"ENVCHECK_LIBCUDA": str(libcuda), **env}, timeout=2.0))


def test_healthy_driver_answers_every_call(stage, fake_libcuda):
    check, step = _cuda(stage, fake_libcuda, FAKE_CUDA_DEVICES="2")
    assert check.outcome == "ok" and step.status == "ok"
    assert [(c.call, c.device, c.result) for c in check.calls] == [
        ("cuInit", None, 0),
        ("cuDriverGetVersion", None, 0),
        ("cuDeviceGetCount", None, 0),
        ("cuDeviceGet", 0, 0),
        ("cuDevicePrimaryCtxRetain", 0, 0),
        ("cuDeviceGet", 1, 0),
        ("cuDevicePrimaryCtxRetain", 1, 0),
    ]
    assert check.driver_api_version == 12040 and check.device_count == 2
    assert check.device_names == ("NVIDIA H100 80GB HBM3",) * 2
    # the file the loader mapped, read from the child's /proc/<pid>/maps, not the link name
    assert check.library == str(fake_libcuda.resolve())
    assert check.library_version == "550.54.15" and check.compat is False
    assert step.duration_ms is not None and step.duration_ms > 0


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (802, "CUDA_ERROR_SYSTEM_NOT_READY"),
        (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
        (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
        (100, "CUDA_ERROR_NO_DEVICE"),
        (101, "CUDA_ERROR_INVALID_DEVICE"),
        (999, "CUDA_ERROR_UNKNOWN"),
        (34, "CUDA_ERROR_STUB_LIBRARY"),
    ],
)
def test_cuinit_result_is_a_fact(stage, fake_libcuda, code, name):
    check, step = _cuda(stage, fake_libcuda, FAKE_CUDA_INIT=str(code))
    assert check.outcome == "failed" and step.status == "failed"
    assert [(c.call, c.result, c.name) for c in check.calls] == [("cuInit", code, name)]
    assert check.device_count is None  # never asked after cuInit failed
    assert step.reason == f"cuInit returned {code} ({name})"


def test_context_failure_names_the_gpu(stage, fake_libcuda):
    check, _ = _cuda(stage, fake_libcuda, FAKE_CUDA_CTX="2", FAKE_CUDA_CTX_DEVICE="1")
    failed = check.first_failure()
    assert failed is not None and (failed.call, failed.device, failed.result) == (
        "cuDevicePrimaryCtxRetain",
        1,
        2,
    )
    assert failed.name == "CUDA_ERROR_OUT_OF_MEMORY"


def test_hung_cuinit_is_killed_and_reported(stage, fake_libcuda, tmp_path):
    pidfile = tmp_path / "pid"
    start = time.monotonic()
    check, step = probe_cuda(
        stage.ctx(
            env={
                "ENVCHECK_LIBCUDA": str(fake_libcuda),
                "FAKE_CUDA_INIT": "hang",
                "FAKE_CUDA_PIDFILE": str(pidfile),
            },
            timeout=0.8,
        )
    )
    elapsed = time.monotonic() - start
    assert check.outcome == "hung" and step.status == "hung"
    assert check.calls[-1].call == "cuInit" and check.calls[-1].result is None
    assert "cuInit did not return within 0.8 s" in (check.reason or "")
    assert elapsed < 0.8 + 2.5  # the deadline plus interpreter start and the kill's grace
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped: nothing left behind
        os.kill(pid, 0)


def test_no_libcuda_is_no_driver_not_an_error(stage, tmp_path):
    check, step = probe_cuda(stage.ctx(env={"ENVCHECK_LIBCUDA": str(tmp_path / "libcuda.so.1")}))
    assert check.outcome == "no_driver" and step.status == "unavailable"
    assert check.reason and check.reason.startswith("no NVIDIA driver:")
    assert check.calls == ()


def test_compat_library_is_recognised(stage, fake_libcuda, tmp_path):
    compat = tmp_path / "cuda-12.4" / "compat"
    compat.mkdir(parents=True)
    (compat / "libcuda.so.550.54.15").write_bytes(fake_libcuda.resolve().read_bytes())
    (compat / "libcuda.so.1").symlink_to("libcuda.so.550.54.15")
    check, _ = _cuda(stage, compat / "libcuda.so.1", FAKE_CUDA_INIT="803")
    assert check.compat is True and check.library == str(compat / "libcuda.so.550.54.15")


def _report(check_env: dict[str, str], stage, fake_libcuda, gpus: tuple[str, ...], driver: str):
    from envcheck.model.deep import DeepInfo

    check, step = _cuda(stage, fake_libcuda, **check_env)
    info = GpuInfo(
        driver_version=driver,
        driver_source="nvml",
        gpus=tuple(Gpu(index=i, name=n) for i, n in enumerate(gpus)),
    )
    return NodeReport(
        node="n1",
        envcheck_version="0",
        created_at="2026-11-23T00:00:00Z",
        gpu=Section.ok(info),
        deep=Section.ok(DeepInfo(cuda=check, steps=(step,))),
    )


@pytest.mark.parametrize(
    ("env", "gpus", "driver", "code", "fragments"),
    [
        (
            {"FAKE_CUDA_INIT": "802"},
            ("NVIDIA H100 80GB HBM3",),
            "550.54.15",
            "GPU101",
            ["nvidia-fabricmanager-550", "550.54.15"],
        ),
        (
            {"FAKE_CUDA_INIT": "803"},
            ("NVIDIA H100 80GB HBM3",),
            "535.104.05",
            "GPU102",
            ["libcuda 550.54.15", "kernel driver 535.104.05", "reboot"],
        ),
        (
            {"FAKE_CUDA_INIT": "804"},
            ("NVIDIA GeForce RTX 3090",),
            "470.182.03",
            "GPU103",
            ["not a data-center GPU", "LD_LIBRARY_PATH"],
        ),
        ({"FAKE_CUDA_INIT": "100"}, ("NVIDIA H100 80GB HBM3",), "550.54.15", "GPU104", ["100"]),
        ({"FAKE_CUDA_INIT": "101"}, ("NVIDIA H100 80GB HBM3",), "550.54.15", "GPU104", ["101"]),
        ({"FAKE_CUDA_INIT": "999"}, ("NVIDIA H100 80GB HBM3",), "550.54.15", "GPU104", ["Xid"]),
        ({"FAKE_CUDA_INIT": "hang"}, ("NVIDIA H100 80GB HBM3",), "550.54.15", "GPU105", ["hung"]),
    ],
)
def test_each_curesult_produces_its_finding_with_a_fix(
    stage, fake_libcuda, env, gpus, driver, code, fragments
):
    report = _report(env, stage, fake_libcuda, gpus, driver)
    result = evaluate(report, MATRIX, RULES)
    assert not result.errors
    codes = {f.code for f in result.findings}
    assert codes == {code}, [f.message for f in result.findings]
    finding = result.findings[0]
    assert finding.fix is not None and finding.fix.actions
    text = finding.message + " " + " ".join(finding.fix.commands) + " " + finding.fix.summary
    for fragment in fragments:
        assert fragment in text


def test_healthy_driver_produces_no_gpu10x_finding(stage, fake_libcuda):
    report = _report({}, stage, fake_libcuda, ("NVIDIA H100 80GB HBM3",), "550.54.15")
    result = evaluate(report, MATRIX, RULES)
    assert result.findings == () and not result.errors


# --- ulimit -v: cuInit's out-of-memory is the driver's reservation (docs/gpu.md, last section) --


def _limited_report(stage, fake_libcuda, soft: int):
    from dataclasses import replace

    from envcheck.model.report import Limit, SystemInfo

    report = _report({"FAKE_CUDA_INIT": "2"}, stage, fake_libcuda, ("NVIDIA H200",), "580.159.04")
    system = SystemInfo(ulimits={"as": Limit(soft=soft, hard=-1)})
    return replace(report, system=Section.ok(system))


def test_cuinit_out_of_memory_under_ulimit_v_confirms_sys192(stage, fake_libcuda):
    check, _ = _cuda(stage, fake_libcuda, FAKE_CUDA_INIT="2")
    assert [(c.call, c.result, c.name) for c in check.calls][:1] == [
        ("cuInit", 2, "CUDA_ERROR_OUT_OF_MEMORY")
    ]
    report = _limited_report(stage, fake_libcuda, 16 * 1024**3)
    rules = [r for r in all_rules(MATRIX) if r.code in ("SYS192", "GPU104")]
    result = evaluate(report, MATRIX, rules)
    assert not result.errors
    (finding,) = result.findings
    assert finding.code == "SYS192" and finding.severity.value == "error"
    assert "cuInit returned 2 (CUDA_ERROR_OUT_OF_MEMORY)" in finding.message
    assert "16.0 GiB" in finding.message and "confirmed" in finding.message
    assert "ulimit -v unlimited" in " ".join(finding.fix.commands) + finding.fix.summary


def test_cuinit_out_of_memory_without_a_limit_stays_gpu104(stage, fake_libcuda):
    report = _limited_report(stage, fake_libcuda, -1)  # unlimited
    rules = [r for r in all_rules(MATRIX) if r.code in ("SYS192", "GPU104")]
    result = evaluate(report, MATRIX, rules)
    assert not result.errors
    assert [f.code for f in result.findings] == ["GPU104"]
    assert "CUDA_ERROR_OUT_OF_MEMORY" in result.findings[0].message
