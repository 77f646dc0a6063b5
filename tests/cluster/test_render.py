"""Cluster rules' docs and the table / Markdown rendering of a comparison."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from envcheck.cluster.collective import summarize
from envcheck.cluster.diff import ClusterOutcome, compare
from envcheck.formats.cluster import print_cluster, render_markdown
from envcheck.formats.markdown import render_rule
from envcheck.model.cluster import Member, NodeFailure
from envcheck.model.finding import Severity
from envcheck.rules import all_rules
from envcheck.rules.base import DOC_SECTIONS
from tests.builtin_matrix import builtin_matrix
from tests.cluster.factory import RTX4090, cluster, node

MATRIX = builtin_matrix()
RULES = all_rules(MATRIX)
CLUSTER_RULES = [r for r in RULES if r.scope == "cluster"]


def test_cluster_rules_are_catalogued_with_every_doc_section() -> None:
    assert [r.code for r in CLUSTER_RULES] == [f"CLU1{i:02d}" for i in range(10)] + ["CLU140"]
    for rule in CLUSTER_RULES:
        for title, body in rule.doc.sections():
            assert body.strip(), f"{rule.code}: empty {title}"
        text = render_rule(rule)
        assert all(f"## {t}" in text for t in DOC_SECTIONS)
        assert "cluster rule" in text


@pytest.mark.parametrize("verbose", [False, True])
def test_table_and_markdown_show_nodes_drift_collective_and_grouped_findings(verbose: bool) -> None:
    reports = [*cluster(3), node("sim", gpu=RTX4090, packages={"ray": "2.9.2"})]
    members = [
        Member(r.node, node_id=f"id{i}", address=f"10.0.0.{i}", duration_ms=120.0)
        for i, r in enumerate(reports)
    ]
    failure = NodeFailure(
        "dead-node", "no answer within 30 s (the task was cancelled)", "idx", "10.0.0.9", "timeout"
    )
    collective = summarize(
        "gloo",
        [m.label for m in members],
        [{"ok": True, "stage": "done", "bound": ["10.0.0.1:4000"], "ifname": "eth0"}] * 3
        + [
            {
                "ok": False,
                "stage": "init",
                "error": "Unable to find address for: eth0",
                "ifname": "eth0",
            }
        ],
        multi_host=True,
        store="10.0.0.0:29500",
        timeout=30,
    )
    comparison = compare(members, reports, MATRIX, RULES, failures=[failure], collective=collective)
    outcome = ClusterOutcome(
        "cluster",
        comparison,
        Severity.ERROR,
        context={"ray": {"version": "2.9.3", "address": None}},
    )
    buffer = io.StringIO()
    print_cluster(outcome, Console(file=buffer, width=240), verbose=verbose)
    table = buffer.getvalue()
    for text in (
        "4 answered, 1 unreachable",
        "UNREACHABLE",
        "Drift:",
        "2.9.2",
        "Collective test (gloo)",
        "CLU101",
        "CLU109",
        "CLU100",
    ):
        assert text in table, text
    assert (
        "3 nodes" in table or "node-000, node-001, node-002" in table
    )  # one row for a shared finding
    markdown = render_markdown(outcome)
    assert "| node | address | GPUs | Python | torch | ray | answered |" in markdown
    assert "### Drift" in markdown and "### Collective test (gloo)" in markdown
    assert outcome.status == "partial" and outcome.exit_code == 1
