"""What a job runs before it is installed (``workload.runs``): from a declared spec's
``[workload] runs`` and from the "Isaac Sim Version" field of Isaac Sim / Isaac Lab issue
templates; and the glibc a node that states only its OS release has (``[[os_release]]``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.errors import SpecError
from envcheck.ingest.common import Source
from envcheck.ingest.loose import parse
from envcheck.ingest.spec import load_spec
from tests.builtin_matrix import builtin_matrix

# the System Info block of IsaacLab#3081, as the issue template has it
TEMPLATE = """### System Info
Describe the characteristic of your environment:

- Commit: [N/A]
- Isaac Sim Version: {isaacsim}
- OS: Ubuntu 20.04
- GPU: Tesla V100-SXM2-32GB
- CUDA: 12.0
- GPU Driver: 525.125.06
"""


@pytest.mark.parametrize(
    ("value", "runs", "installed"),
    [
        ("Unable to install", ("isaacsim",), None),
        ("4.5.0", ("isaacsim",), "4.5.0"),
        ("N/A", None, None),
        ("[N/A]", None, None),
        ("none", None, None),
    ],
)
def test_issue_template_isaac_sim_field(value: str, runs: tuple[str, ...] | None, installed):
    report = parse(Source("dump.txt", TEMPLATE.format(isaacsim=value)))
    if runs is None:
        assert not report.workload.is_ok
    else:
        assert report.workload.is_ok and report.workload.data.runs == runs
        assert "line 5" in " ".join(report.workload.notes)
    listed = report.packages.data.distributions if report.packages.is_ok else ()
    dists = {d.key: d.version for d in listed}
    assert dists.get("isaacsim") == installed
    assert (report.system.data.os_id, report.system.data.os_version) == ("ubuntu", "20.04")


def test_spec_workload_runs_canonical_names(tmp_path: Path) -> None:
    spec = tmp_path / "stack.toml"
    spec.write_text('[gpu]\nmodels = ["A100"]\n\n[workload]\nruns = ["IsaacSim", "omnigibson"]\n')
    report = load_spec(str(spec))
    assert report.workload.data.runs == ("isaacsim", "omnigibson")
    assert report.workload.data.dtype is None


def test_spec_workload_runs_rejects_a_non_name(tmp_path: Path) -> None:
    spec = tmp_path / "stack.toml"
    spec.write_text('[workload]\nruns = ["isaac sim 4.5"]\n')
    with pytest.raises(SpecError) as caught:
        load_spec(str(spec))
    assert caught.value.key == "workload.runs[0]"
    assert "not a distribution name" in str(caught.value)


@pytest.mark.parametrize(
    ("os_id", "version", "glibc"),
    [
        ("ubuntu", "18.04", "2.27"),
        ("ubuntu", "20.04", "2.31"),
        ("ubuntu", "22.04", "2.35"),
        ("centos", "7", "2.17"),
        ("Ubuntu", "24.04", "2.39"),
    ],
)
def test_os_release_glibc(os_id: str, version: str, glibc: str) -> None:
    release = builtin_matrix().os_glibc(os_id, version)
    assert release is not None and str(release.glibc) == glibc and release.source


@pytest.mark.parametrize(
    ("os_id", "version"), [("ubuntu", "19.10"), (None, "20.04"), ("ubuntu", None)]
)
def test_os_release_unknown(os_id: str | None, version: str | None) -> None:
    assert builtin_matrix().os_glibc(os_id, version) is None
