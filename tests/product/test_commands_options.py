"""The commands layer carries every option the CLI has: --deep and --deep-timeout (probe, check,
cluster), --strict (check), redaction as a view, --python naming an interpreter, and triage's
facts read from the log. Each is asserted through the typed function and, where the CLI has the
same option, against what the CLI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.commands.check import RuleOptions, check, redacted_view
from envcheck.commands.cluster import ClusterOptions, validate
from envcheck.commands.probe import ProbeOptions, probe_context
from envcheck.commands.source import SourceOptions, obtain
from envcheck.commands.triage import TriageOptions, triage_log, triage_text
from envcheck.errors import UsageError
from tests.conftest import run_cli

NO_GPU_LIST = '[gpu]\ndriver = "570.124.06"\n\n[packages]\n"torch" = "2.5.1+cu124"\n'
SM_LINE = (
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
    "PyTorch installation.\n"
)


@pytest.fixture
def node(tmp_path: Path) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(NO_GPU_LIST, encoding="utf-8")
    return path


def test_strict_in_rule_options_gates_as_the_cli_does(node: Path) -> None:
    report = obtain(SourceOptions(spec=str(node)))
    lenient = check([report], RuleOptions())
    strict = check([report], RuleOptions(strict=True))
    assert strict.gaps and strict.gaps == lenient.gaps  # the same skipped rules matter
    assert (lenient.exit_code, strict.exit_code) == (0, 1)
    assert (lenient.status, strict.status) == ("ok", "strict")  # no finding: the skips fail it
    cli = run_cli("check", "--spec", str(node), "--strict", "--json")
    assert cli.returncode == strict.exit_code
    assert cli.json()["data"]["summary"] == strict.envelope()["data"]["summary"]


def test_probe_options_carry_deep_into_the_probe_context() -> None:
    ctx = probe_context(ProbeOptions(timeout=3.0, deep=("gpu", "torch"), deep_timeout=45.0))
    assert (ctx.deep, ctx.torch_timeout, ctx.timeout) == (("gpu", "torch"), 45.0, 3.0)
    assert probe_context(ProbeOptions()).deep == ()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (ProbeOptions(deep=("gpu", "cuda")), "--deep: unknown step 'cuda'"),
        (ProbeOptions(deep=("gpu",), deep_timeout=float("nan")), "--deep-timeout must be"),
        (ProbeOptions(timeout=0.0), "--timeout must be positive"),
    ],
)
def test_bad_probe_options_are_refused(options: ProbeOptions, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        probe_context(options)


def test_deep_with_a_declared_node_is_refused_as_on_the_command_line(node: Path) -> None:
    with pytest.raises(UsageError, match="--deep probes this node"):
        obtain(SourceOptions(spec=str(node), deep=("gpu",)))
    cli = run_cli("check", "--spec", str(node), "--deep")
    assert cli.returncode == 2 and "--deep probes this node" in cli.stderr


@pytest.mark.parametrize("program", ["/bin/false", "/bin/ls"])
def test_python_must_be_an_interpreter(program: str) -> None:
    with pytest.raises(UsageError, match="is not a Python interpreter"):
        obtain(SourceOptions(python=program, timeout=5.0))


def test_cluster_refuses_a_smoke_test_longer_than_its_timeout() -> None:
    with pytest.raises(UsageError, match="--deep=torch needs --timeout above --deep-timeout"):
        validate(ClusterOptions(timeout=30.0, deep=("gpu", "torch"), deep_timeout=120.0))
    validate(ClusterOptions(timeout=200.0, deep=("gpu", "torch"), deep_timeout=120.0))
    validate(ClusterOptions(timeout=30.0, deep=("gpu",)))  # no smoke test: no constraint


def test_redaction_is_a_view_the_verdicts_come_from_the_real_node(tmp_path: Path) -> None:
    spec = tmp_path / "host.toml"
    spec.write_text('node = "gpu-node-7"\n' + NO_GPU_LIST, encoding="utf-8")
    real = obtain(SourceOptions(spec=str(spec), redact=True), anonymized=False)
    assert real.node == "gpu-node-7" and not real.redacted
    hidden = obtain(SourceOptions(spec=str(spec), redact=True))
    assert hidden.node != "gpu-node-7" and hidden.redacted
    outcome = check([real], RuleOptions(severity=None))
    view = redacted_view(outcome)
    assert view.exit_code == outcome.exit_code
    assert [f.code for f in view.findings] == [f.code for f in outcome.findings]
    assert "gpu-node-7" not in str(view.envelope())


def test_triage_judges_with_the_logs_own_facts(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("UserWarning:\n" + SM_LINE, encoding="utf-8")
    options = TriageOptions(engine="re")
    for result in (triage_log(str(log), options), triage_text(log.read_text(), options)):
        tor101 = {c.code: c for m in result.matches for c in m.causes}["TOR101"]
        assert tor101.verdict == "confirmed"
        assert result.to_json()["facts"]
    cli = run_cli("triage", str(log), "--no-probe", "--json", "--engine", "re")
    ours = triage_log(str(log), options).to_json()
    assert ours["facts"] == cli.json()["data"]["facts"]
