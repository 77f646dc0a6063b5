"""The deep section survives JSON both ways, "not supported" values and unions included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.errors import ReportError
from envcheck.model.deep import NOT_SUPPORTED, Throttle
from envcheck.model.report import NodeReport

CASES = Path(__file__).parent.parent / "rules" / "cases"


@pytest.mark.parametrize(
    "path", sorted(CASES.glob("GPU1*/*.json")), ids=lambda p: f"{p.parent.name}-{p.stem}"
)
def test_deep_fixture_round_trips(path):
    data = json.loads(path.read_text())
    report = NodeReport.from_dict(data)
    written = report.to_dict()
    # sections newer than the fixture are written as "not recorded"; the rest as they were
    assert {k: v for k, v in written.items() if k in data} == data
    assert all(written[k]["status"] == "unavailable" for k in written.keys() - data.keys())
    assert NodeReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


def test_union_values_keep_their_type():
    report = NodeReport.from_dict(json.loads((CASES / "GPU112" / "bad.json").read_text()))
    gpu = report.deep.data.health.gpus[0]
    assert isinstance(gpu.throttle, Throttle) and gpu.throttle.hw_slowdown
    assert gpu.retired_pages_pending == NOT_SUPPORTED and gpu.remap_pending is False


def test_a_bad_deep_value_names_its_key():
    data = json.loads((CASES / "GPU112" / "bad.json").read_text())
    data["deep"]["data"]["health"]["gpus"][0]["pcie_width"] = [16]
    with pytest.raises(ReportError) as err:
        NodeReport.from_dict(data, where="r.json")
    assert "pcie_width" in str(err.value)
