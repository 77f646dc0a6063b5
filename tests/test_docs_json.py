"""docs/json.md stays true: every field of every report record is documented."""

from __future__ import annotations

import dataclasses

from envcheck.model import deep, report
from envcheck.model.finding import Action, Finding
from envcheck.model.section import Section
from tests.conftest import REPO

DOC = (REPO / "docs" / "json.md").read_text()
RECORDS = [
    report.NodeReport, report.GpuInfo, report.Gpu, report.PythonInfo, report.PackagesInfo, report.Distribution,
    report.BrokenDistribution, report.TorchBuild, report.SystemInfo, report.CgroupInfo, report.ContainerEngine, report.Limit, report.Toolkit,
    report.StorageInfo, report.DiskUsage, report.LibrariesInfo, report.SharedLibrary, report.NetworkInfo,
    report.Interface, report.IbDevice, report.IbPort, report.EnvInfo, report.GraphicsInfo, report.Origin,
    Section, Finding, Action, deep.DeepInfo, deep.Step, deep.CudaDriverCheck, deep.CudaCall,
    deep.NvmlHealth, deep.GpuHealth, deep.Throttle, deep.P2PLink, deep.PcieTopology, deep.Bridge,
    deep.TorchSmoke, deep.GemmRun,
]  # fmt: skip


def test_every_field_is_documented():
    missing = [
        f"{cls.__name__}.{f.name}"
        for cls in RECORDS
        for f in dataclasses.fields(cls)
        if f"`{f.name}`" not in DOC
    ]
    assert missing == []


def test_every_section_is_documented():
    for name in report.NodeReport.SECTIONS:
        assert f"**{name}**" in DOC
