"""Many reports at once: shared sections, labels, and node rules run once per distinct input."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from envcheck.cluster.nodes import NodeRules, ReportReader, assign_labels
from envcheck.engine import evaluate
from envcheck.errors import ReportError
from envcheck.model.report import NodeReport
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix
from tests.cluster.factory import RTX4090, cluster, node

MATRIX = builtin_matrix()
RULES = all_rules(MATRIX)


def roundtrip(report: NodeReport) -> dict:
    return json.loads(json.dumps(report.to_dict()))


def test_reader_shares_equal_sections_and_keeps_per_node_ones() -> None:
    reader = ReportReader()
    a, b = (reader.read(roundtrip(r)) for r in cluster(2))
    assert a.packages is b.packages and a.python is b.python and a.torch is b.torch
    assert a.network is not b.network and a.network != b.network
    assert a == NodeReport.from_dict(roundtrip(cluster(2)[0]))  # same content as a plain load
    odd = reader.read(roundtrip(node("c", packages={"ray": "2.9.2"})))
    assert odd.packages is not a.packages and odd.packages.data.version("ray") == "2.9.2"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"schema": 99, "node": "x"},
        {"schema": 1, "node": 3, "envcheck_version": "1", "created_at": "x"},
    ],
)
def test_reader_rejects_what_a_single_load_rejects(data: object) -> None:
    with pytest.raises(ReportError):
        ReportReader().read(data, where="r.json")


def variants() -> list[NodeReport]:
    base = cluster(3)
    return [
        *base,
        node("odd-torch", packages={"torch": "2.1.2+cu121", "numpy": "2.0.0"}),
        node("rtx", gpu=RTX4090, env={"GLOO_SOCKET_IFNAME": "^lo,docker0"}),
        node("bad-if", env={"GLOO_SOCKET_IFNAME": "eth9", "https_proxy": "http://p:3128"}),
        replace(base[0], node="copy-of-0"),
    ]


def test_memoised_node_rules_give_exactly_what_the_engine_gives() -> None:
    reader = ReportReader()
    reports = [reader.read(roundtrip(r)) for r in variants()]
    memo = NodeRules(MATRIX, RULES)
    node_rules = [r for r in RULES if r.scope == "node"]
    for report in reports:
        assert memo.evaluate(report) == evaluate(report, MATRIX, node_rules)
    assert memo.reused > memo.runs  # identical sections were not checked again


def test_only_rules_reading_what_differs_run_again_for_more_nodes() -> None:
    runs = []
    for count in (3, 30):
        reader = ReportReader()
        memo = NodeRules(MATRIX, RULES)
        for report in cluster(count):
            memo.evaluate(reader.read(roundtrip(report)))
        runs.append(memo.runs)
    per_node = (runs[1] - runs[0]) / 27
    network_rules = 8  # the NET rules and the few others that read addresses
    assert per_node <= network_rules, runs


def test_labels_are_unique_and_readable() -> None:
    assert assign_labels(["a", "b"], [(" (1)",), (" (2)",)]) == ["a", "b"]
    assert assign_labels(["vm", "vm", "x"], [("@1", "#a"), ("@2", "#b"), ("@3", "#c")]) == [
        "vm@1",
        "vm@2",
        "x",
    ]
    assert assign_labels(["vm", "vm"], [("@1", "#a"), ("@1", "#b")]) == ["vm#a", "vm#b"]
    assert assign_labels(["vm", "vm"], [(), ()]) == ["vm", "vm#2"]


@pytest.mark.parametrize("indent", [None, 2])
def test_loads_matches_json_loads_and_skips_sections_seen_before(indent: int | None) -> None:
    reader = ReportReader()
    texts = [json.dumps(roundtrip(r), indent=indent) for r in cluster(3)]
    reports = [reader.read(reader.loads(t)) for t in texts]
    assert reports == [NodeReport.from_dict(json.loads(t)) for t in texts]
    assert reports[0].packages is reports[2].packages
    assert reader.shared >= 2 * len(NodeReport.SECTIONS) - 2  # all but network, from text


@pytest.mark.parametrize(
    "text",
    ['{"a": 1} x', '{"schema": 1, "packages": {"status": "ok",}', "[1, 2]", '{"a": }', ""],
)
def test_loads_leaves_anything_odd_to_json_loads(text: str) -> None:
    try:
        expected: object = json.loads(text)
    except json.JSONDecodeError as exc:
        with pytest.raises(ReportError, match=f"not JSON: {exc.msg}"):
            ReportReader().loads(text)
    else:
        assert ReportReader().loads(text) == expected
