"""A cause that is a cluster rule (CLU: it compares nodes) stays open on one node's facts: it is
neither confirmed nor ruled out by a single report."""

from __future__ import annotations

from pathlib import Path

from envcheck.ingest.spec import load_spec
from envcheck.rules import all_rules
from envcheck.triage.verdict import check_causes
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()


def test_cluster_cause_is_unknown_on_one_node(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[python]\nversion = "3.10.12"\n[packages]\nray = "2.40.0"\n')
    checks = check_causes(
        ["CLU101", "RAY101"], all_rules(MATRIX), MATRIX, load_spec(str(spec)), "no node"
    )
    assert checks["CLU101"].verdict == "unknown"
    assert "envcheck cluster" in (checks["CLU101"].reason or "")
    assert checks["RAY101"].verdict == "ruled_out"
    assert list(checks) == ["CLU101", "RAY101"]
