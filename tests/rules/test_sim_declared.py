"""Simulator rules on a job declared to run a simulator whose release is not stated
(``[workload] runs``): they say what they cannot know instead of passing the node."""

from __future__ import annotations

from pathlib import Path

from envcheck.engine import evaluate
from envcheck.ingest.spec import load_spec
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()
RULES = {r.code: r for r in all_rules(MATRIX) if r.scope == "node"}


def _check(tmp_path: Path, text: str, code: str):
    spec = tmp_path / "stack.toml"
    spec.write_text(text)
    return evaluate(load_spec(str(spec)), MATRIX, [RULES[code]])


def test_sim107_declared_omnigibson_without_release_is_unknown(tmp_path: Path) -> None:
    text = '[packages]\nisaacsim = "4.2.0"\n\n[workload]\nruns = ["omnigibson"]\n'
    result = _check(tmp_path, text, "SIM107")
    assert not result.findings
    assert [s.reason for s in result.skipped] == [
        "the job runs OmniGibson, but its release is not stated"
    ]


def test_sim107_without_omnigibson_passes(tmp_path: Path) -> None:
    result = _check(tmp_path, '[packages]\nisaacsim = "4.2.0"\n', "SIM107")
    assert not result.findings and not result.skipped


def test_sim102_declared_isaacsim_with_unknown_os_is_skipped(tmp_path: Path) -> None:
    text = '[system]\nos = "Ubuntu 19.10"\n\n[workload]\nruns = ["isaacsim"]\n'
    result = _check(tmp_path, text, "SIM102")
    assert not result.findings
    assert [s.reason for s in result.skipped] == ["glibc version unknown"]


def test_sim102_stated_glibc_beats_the_os_table(tmp_path: Path) -> None:
    # a node that upgraded its glibc says so; the OS release's default is only a fallback
    text = '[packages]\nisaacsim = "4.5.0.0"\n\n[system]\nos = "Ubuntu 20.04"\nglibc = "2.35"\n'
    result = _check(tmp_path, text, "SIM102")
    assert not result.findings and not result.skipped
