"""The wording and logic of drift advice (issue 14): no "upgrade" that is a downgrade, no
"install ... not installed", no majority of one node, a version without its local label is
not drift from the one build the other nodes have."""

from __future__ import annotations

import pytest

from envcheck.cluster.diff import Comparison, compare
from envcheck.matrix.model import Matrix
from envcheck.model.cluster import Member
from envcheck.model.finding import Finding
from envcheck.model.report import NodeReport
from envcheck.rules import all_rules
from envcheck.rules.base import Rule
from tests.builtin_matrix import builtin_matrix
from tests.cluster.factory import cluster, node


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return builtin_matrix()


@pytest.fixture(scope="module")
def rules(matrix: Matrix) -> list[Rule]:
    return all_rules(matrix)


def run(reports: list[NodeReport], matrix: Matrix, rules: list[Rule]) -> Comparison:
    return compare([Member(r.node) for r in reports], reports, matrix, rules)


def only(result: Comparison, code: str) -> Finding:
    found = [f for f in result.cluster_result.findings if f.code == code]
    assert len(found) == 1, [f.code for f in result.cluster_result.findings]
    return found[0]


def advice(finding: Finding) -> str:
    assert finding.fix is not None
    return " | ".join([finding.fix.summary, *finding.fix.commands])


def test_driver_advice_never_downgrades(matrix, rules) -> None:
    # most nodes on R535, gpu-07 already on R570: upgrade the R535 ones, not gpu-07
    nodes = [*cluster(3, driver="535.104.05"), node("gpu-07", driver="570.86.10")]
    text = advice(only(run(nodes, matrix, rules), "CLU104"))
    assert "Upgrade node-000, node-001, node-002 to the R570 driver branch" in text
    assert "gpu-07" not in text and "R535 driver branch" not in text
    assert "a torch CUDA variant that R535 supports" in text


def test_a_wheel_only_some_nodes_have_is_not_installed_everywhere(matrix, rules) -> None:
    nodes = [*cluster(3, packages={"nvidia-nccl-cu12": None}), node("gpu-09")]
    text = advice(only(run(nodes, matrix, rules), "CLU103"))
    assert "not installed on" not in text and "install NCCL wheel not installed" not in text
    assert "NCCL wheel is installed on gpu-09 only: uninstall it there" in text


def test_a_wheel_version_that_differs_is_pinned(matrix, rules) -> None:
    nodes = [*cluster(3), node("gpu-09", packages={"nvidia-nccl-cu12": "2.21.5"})]
    finding = only(run(nodes, matrix, rules), "CLU103")
    assert finding.fix is not None
    assert "pip install nvidia-nccl-cu12==2.20.5" in finding.fix.commands


def test_one_against_one_has_no_majority(matrix, rules) -> None:
    a = node("gpu-01", packages={"ray": "2.9.3"})
    b = node("gpu-02", packages={"ray": "2.10.0"})
    finding = only(run([a, b], matrix, rules), "CLU101")
    assert "majority" not in finding.message and "1 node has" not in finding.message
    assert "2.10.0 on gpu-02; 2.9.3 on gpu-01" in finding.message
    text = advice(finding)
    assert "On gpu-01: install ray==2.10.0 (the newest; no version is on most nodes)" in text
    assert "as on 1 node" not in text


def test_a_majority_is_named_with_its_count(matrix, rules) -> None:
    nodes = [*cluster(3), node("gpu-09", packages={"ray": "2.10.0"})]
    text = advice(only(run(nodes, matrix, rules), "CLU101"))
    assert "On gpu-09: install ray==2.9.3 (as on 3 nodes)" in text


@pytest.mark.parametrize(
    ("versions", "drift"),
    [
        (("2.4.0", "2.4.0+cu121", "2.4.0+cu121"), False),  # the same build, written two ways
        (("2.4.0", "2.4.0+cu121", "2.4.0+cu124"), True),  # which build is 2.4.0? unknown
        (("2.4.0+cu121", "2.4.0+cu124", "2.4.0+cu124"), True),
        (("2.4.1", "2.4.0+cu121", "2.4.0+cu121"), True),
    ],
)
def test_a_version_without_its_local_label_is_not_drift(matrix, rules, versions, drift) -> None:
    nodes = [node(f"gpu-{i}", packages={"torch": v}) for i, v in enumerate(versions)]
    result = run(nodes, matrix, rules)
    rows = {r.fact for r in result.drift}
    assert ("package:torch" in rows) is drift
    torch_findings = [
        f for f in result.cluster_result.findings if f.code == "CLU103" and "torch " in f.message
    ]
    assert bool(torch_findings) is drift
