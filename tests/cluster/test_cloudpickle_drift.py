"""CLU140: nodes that differ in cloudpickle (ray#1263), compared on saved reports."""

from __future__ import annotations

import pytest

from envcheck.cluster.diff import compare
from envcheck.matrix.model import Matrix
from envcheck.model.cluster import Member
from envcheck.model.finding import Severity
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


def _clu140(reports: list[NodeReport], matrix: Matrix, rules: list[Rule]) -> list[str]:
    result = compare([Member(r.node) for r in reports], reports, matrix, rules)
    found = [f for f in result.cluster_result.findings if f.code == "CLU140"]
    assert all(f.severity is Severity.WARNING for f in found)
    return [f"{f.message} | {f.fix.summary if f.fix else ''}" for f in found]


def test_one_node_with_another_cloudpickle_is_named_with_the_majoritys(
    matrix: Matrix, rules: list[Rule]
) -> None:
    reports = cluster(3, packages={"cloudpickle": "0.5.2"})
    reports[2] = node("node-002", packages={"cloudpickle": "0.2.2"})
    (text,) = _clu140(reports, matrix, rules)
    assert "0.2.2 on node-002" in text and "2 nodes have 0.5.2" in text
    assert "On node-002: install the cluster's cloudpickle (0.5.2)" in text


def test_the_same_cloudpickle_everywhere_is_no_finding(matrix: Matrix, rules: list[Rule]) -> None:
    assert _clu140(cluster(3, packages={"cloudpickle": "3.1.1"}), matrix, rules) == []
