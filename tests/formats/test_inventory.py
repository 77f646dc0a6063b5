"""The probe table's torch block: each package torch pins, with the version installed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from envcheck.formats.inventory import inventory
from envcheck.model.report import NodeReport

CASE = Path(__file__).parent.parent / "rules" / "cases" / "CUD101" / "bad-missing.json"


def _pinned_rows(data: dict) -> dict[str, str]:  # type: ignore[type-arg]
    report = NodeReport.from_dict(data, where=str(CASE))
    rows = [row for group in inventory(report) for row in group.rows]
    return {r.label.strip(): r.value for r in rows if r.label.startswith("  ")}


def test_a_pin_on_a_package_other_than_a_cuda_wheel_shows_its_installed_version() -> None:
    # torch 2.11 pins triton==3.6.0 beside its nvidia-* wheels (seen on a real H100 node,
    # docs/gpu.md); triton is installed but is not one of the CUDA wheels torch records
    data = copy.deepcopy(json.loads(CASE.read_text()))
    data["torch"]["data"]["requires_cuda"]["triton"] = "==3.0.0"
    data["packages"]["data"]["distributions"].append(
        {"name": "triton", "version": "3.0.0", "location": "/opt/venv", "requires": []}
    )
    rows = _pinned_rows(data)
    assert rows["triton"] == "3.0.0 (torch pins ==3.0.0)"
    assert rows["nvidia-cudnn-cu12"] == "not installed (torch pins ==9.1.0.70)"
