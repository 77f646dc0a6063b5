from __future__ import annotations

import json

import pytest

from envcheck.errors import ReportError
from envcheck.model.report import Distribution, Gpu, GpuInfo, NodeReport, PackagesInfo
from envcheck.model.section import Section, Status
from envcheck.probes import collect


def _json_roundtrip(report: NodeReport) -> NodeReport:
    return NodeReport.from_dict(json.loads(json.dumps(report.to_dict())))


def test_live_probe_round_trips_exactly(stage):
    report = collect(stage.ctx())
    assert _json_roundtrip(report) == report


def test_synthetic_report_round_trips():
    report = NodeReport(
        node="n1",
        envcheck_version="0.1.0",
        created_at="2026-11-22T00:00:00Z",
        gpu=Section.ok(
            GpuInfo(
                driver_version="535.104.05",
                cuda_driver_version="12.2",
                gpus=(Gpu(index=0, name="NVIDIA H20", compute_capability="9.0"),),
            ),
            source="nvml",
        ),
        packages=Section.ok(
            PackagesInfo(distributions=(Distribution("torch", "2.4.0+cu121", requires=("a", "b")),))
        ),
    )
    again = _json_roundtrip(report)
    assert again == report
    assert again.gpu.data.gpus[0].name == "NVIDIA H20"
    assert again.torch.status is Status.UNAVAILABLE


def test_wrong_type_names_the_dotted_key():
    data = NodeReport(node="n", envcheck_version="0", created_at="t").to_dict()
    data["gpu"] = {"status": "ok", "data": {"driver_version": 535, "gpus": []}}
    with pytest.raises(ReportError) as err:
        NodeReport.from_dict(data, where="node.json")
    assert (
        str(err.value)
        == "node.json: key 'gpu.data.driver_version': expected a string, got an integer (535)"
    )


def test_bad_status_value():
    data = NodeReport(node="n", envcheck_version="0", created_at="t").to_dict()
    data["torch"]["status"] = "fine"
    with pytest.raises(
        ReportError, match=r"torch\.status.*expected one of 'ok', 'unavailable', 'error'"
    ):
        NodeReport.from_dict(data)


def test_unsupported_schema():
    with pytest.raises(ReportError, match="unsupported report schema 99"):
        NodeReport.from_dict({"schema": 99, "node": "n"})


def test_not_an_object():
    with pytest.raises(ReportError, match="expected a JSON object"):
        NodeReport.from_dict([1, 2, 3])


def test_unknown_keys_from_newer_envcheck_are_ignored():
    data = NodeReport(node="n", envcheck_version="0", created_at="t").to_dict()
    data["future_section"] = {"x": 1}
    assert NodeReport.from_dict(data).node == "n"


def test_envelope_input_uses_first_report():
    report = NodeReport(node="from-envelope", envcheck_version="0", created_at="t")
    envelope = {
        "schema": 1,
        "command": "check",
        "status": "ok",
        "exit_code": 0,
        "data": {"reports": [report.to_dict()]},
        "errors": [],
    }
    assert NodeReport.from_dict(envelope).node == "from-envelope"


def test_packages_lookup_is_name_normalised():
    info = PackagesInfo(
        distributions=(Distribution("Flash_Attn", "2.6.3"), Distribution("flash-attn", "2.5.8"))
    )
    assert info.version("flash-attn") == "2.6.3"
    assert list(info.duplicates()) == ["flash-attn"]
