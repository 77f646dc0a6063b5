"""One planner path, two resolvers: without uv every round of a plan still goes through the
resolver step, answered by the offline resolver (the simulator's versions, unverified), so
`fix --no-resolve`, `check` and `triage` plan exactly as the resolved path does up to the
answer."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.model.plan import Step
from envcheck.model.report import NodeReport
from envcheck.plan.offline import OfflineResolver
from envcheck.plan.planner import build_plan
from envcheck.plan.resolver_answer import Resolved
from envcheck.rules.base import Rule

H100 = (
    '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA H100 80GB HBM3"]\n'
    '[python]\nversion = "3.10.12"\n'
    '[packages]\nvllm = "0.6.3"\ntorch = "2.5.1"\n"nvidia-cublas-cu12" = "12.4.5.8"\n'
)


def _report() -> NodeReport:
    return spec_to_report(parse_spec(H100, "node.toml"), "node.toml")


def test_every_round_is_answered_by_the_offline_resolver(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    calls: list[Resolved] = []
    offline = OfflineResolver(matrix, "not verified by the resolver (test)")

    def spy(node: NodeReport, steps: Sequence[Step]) -> Resolved:
        got = offline(node, steps)
        calls.append(got)
        return got

    plan, after = build_plan(_report(), matrix, rules, resolve=spy)
    default, _ = build_plan(_report(), matrix, rules)  # no resolver given: the offline one
    assert [s.command() for s in plan.steps] == [s.command() for s in default.steps]
    assert plan.resolved is False and plan.resolver == "not verified by the resolver (test)"
    # one answer per round that installs something, in the simulator's versions
    assert calls and all(not c.verified for c in calls)
    assert calls[0].pins["torch"] == "2.4.0" and calls[0].pins["nvidia-cublas-cu12"] == "12.1.3.1"
    assert calls[-1].pins["nvidia-cublas-cu12"] == "12.3.4.1"
    assert after.packages.data.get("nvidia-cublas-cu12").version == "12.3.4.1"  # type: ignore[union-attr]


def test_check_plans_without_loading_uv(tmp_path: Path) -> None:
    """`check` prints the planner's step beside each finding, through the offline resolver:
    nothing of uv's (the project writer, the lock reader) is imported for it."""
    spec = tmp_path / "node.toml"
    spec.write_text(H100, encoding="utf-8")
    listed = tmp_path / "modules.txt"
    script = (
        "import atexit, sys\n"
        "def _list():\n"
        f"    open({str(listed)!r}, 'w').write('\\n'.join(sorted(sys.modules)))\n"
        "atexit.register(_list)\n"
        "from envcheck.cli import main\n"
        f"sys.exit(main(['check', '--spec', {str(spec)!r}, '--json', '-o', '/dev/null']))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert ran.returncode == 1, ran.stderr  # VLM101 and CUD102: findings with planned steps
    loaded = set(listed.read_text(encoding="utf-8").splitlines())
    assert {"envcheck.plan.planner", "envcheck.plan.offline"} <= loaded
    uv_side = {"uvlock", "uvproject", "resolved", "resolved_result"}
    assert not {f"envcheck.plan.{m}" for m in uv_side} & loaded
