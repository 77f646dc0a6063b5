"""``--output-format github|junit|sarif`` as a CI system reads them, validated against the
published schemas vendored in tests/fixtures/schemas (SOURCES.md names where each comes from),
and the JSON envelope on every ``--json`` run, errors and ``--strict`` included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema

from tests.conftest import run_cli

FIXTURES = Path(__file__).parent.parent / "fixtures"
SCHEMAS = FIXTURES / "schemas"
H20 = str(FIXTURES / "ingest" / "collect_env_torch2.3_h20.txt")  # cuBLAS 12.1.3.1 on H20: CUD102
LOG = str(FIXTURES / "triage" / "tinyzero_h20.log")


@pytest.fixture(scope="module")
def sarif_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    return schema


@pytest.fixture(scope="module")
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))


def _valid_sarif(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(text)
    jsonschema.Draft4Validator(schema).validate(log)
    return log


def test_check_sarif_is_valid_and_locates_findings_in_the_checked_file(
    sarif_schema: dict[str, Any],
) -> None:
    res = run_cli("check", "--from", H20, "--output-format", "sarif")
    assert res.returncode == 1, res.stderr
    log = _valid_sarif(res.stdout, sarif_schema)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert len(rules) > 100  # the catalogue's node rules
    cud102 = rules["CUD102"]
    assert cud102["defaultConfiguration"]["level"] == "warning"  # the rule's default
    assert "12.3.4.1" in cud102["help"]["text"]  # the rule's documented fix
    (result,) = [r for r in run["results"] if r["ruleId"] == "CUD102"]
    assert result["level"] == "error"  # raised on Hopper
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "CUD102"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file://" + H20
    assert "pip install nvidia-cublas-cu12==12.3.4.1" in result["message"]["text"]
    assert run["invocations"][0]["exitCode"] == 1


def test_sarif_gives_a_node_without_a_file_a_logical_location(
    sarif_schema: dict[str, Any],
) -> None:
    from envcheck.formats.ci import CiResult, CiRun
    from envcheck.formats.sarif import render_sarif
    from envcheck.model.finding import Severity

    result = CiResult("NET103", Severity.ERROR, "t", "m", "gpu-01", failing=True)
    log = _valid_sarif(render_sarif(CiRun("check", (), (result,), exit_code=1)), sarif_schema)
    location = log["runs"][0]["results"][0]["locations"][0]
    assert location == {"logicalLocations": [{"name": "gpu-01", "kind": "node"}]}


def test_check_junit_is_valid_one_case_per_rule(junit_schema: xmlschema.XMLSchema) -> None:
    res = run_cli("check", "--from", H20, "--output-format", "junit")
    assert res.returncode == 1, res.stderr
    junit_schema.validate(res.stdout)
    tree = junit_schema.to_dict(res.stdout)
    suite = tree["testsuite"][0]
    cases = {c["@name"].split()[0]: c for c in suite["testcase"]}
    assert len(cases) == int(suite["@tests"]) > 100
    assert "failure" in cases["CUD102"]
    assert cases["CUD102"]["failure"][0]["@type"] == "error"
    # skipped rules are skipped, with the reason
    skipped = [c for c in cases.values() if "skipped" in c]
    assert len(skipped) == int(suite["@skipped"]) > 0
    assert "vllm is not in the package list" in cases["COV103"]["skipped"][0]["@message"]
    assert int(suite["@failures"]) == sum(1 for c in cases.values() if "failure" in c) == 1


def test_github_annotations_are_workflow_commands_escaped_per_the_runner() -> None:
    res = run_cli("check", "--from", H20, "--output-format", "github")
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    (cud102,) = [line for line in lines if "title=CUD102" in line]
    assert cud102.startswith(f"::error file={H20},title=CUD102::")
    assert "%0A$ pip install nvidia-cublas-cu12==12.3.4.1" in cud102  # newlines escaped
    from envcheck.formats.github import escape_data, escape_property

    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_triage_in_ci_formats_points_at_the_log_line(
    sarif_schema: dict[str, Any], junit_schema: xmlschema.XMLSchema
) -> None:
    sarif = run_cli("triage", LOG, "--no-probe", "--output-format", "sarif")
    assert sarif.returncode == 1, sarif.stderr
    run = _valid_sarif(sarif.stdout, sarif_schema)["runs"][0]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    physical = by_rule["ray-actor-died"]["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "file://" + LOG}, "region": {"startLine": 11}}
    junit = run_cli("triage", LOG, "--no-probe", "--output-format", "junit")
    junit_schema.validate(junit.stdout)
    github = run_cli("triage", LOG, "--no-probe", "--output-format", "github")
    assert f"::error file={LOG},line=11,title=ray-actor-died::" in github.stdout


def test_json_is_an_alias_and_formats_exclude_each_other() -> None:
    alias = run_cli("check", "--from", H20, "--json").json()
    named = run_cli("check", "--from", H20, "--output-format", "json").json()
    assert (alias["status"], alias["exit_code"]) == (named["status"], named["exit_code"])
    assert [f["code"] for f in alias["data"]["findings"]] == [
        f["code"] for f in named["data"]["findings"]
    ]
    both = run_cli("check", "--json", "--output-format", "github")
    assert both.returncode == 2
    assert "not allowed with" in both.stderr


def test_o_writes_the_chosen_ci_format(tmp_path: Path, junit_schema: xmlschema.XMLSchema) -> None:
    out = tmp_path / "envcheck.xml"
    res = run_cli("check", "--from", H20, "--output-format", "junit", "-o", str(out))
    assert res.returncode == 1
    junit_schema.validate(out.read_text())


# --- one honest envelope ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "command", "message"),
    [
        (["check", "--spec", "/nonexistent/spec.toml", "--json"], "check", "no such file"),
        (["check", "--json", "--severity", "bogus"], "check", "--severity"),
        (["probe", "--json", "--python", "/nonexistent/python"], "probe", "/nonexistent"),
    ],
)
def test_every_json_run_emits_an_envelope_errors_included(
    args: list[str], command: str, message: str
) -> None:
    res = run_cli(*args)
    assert res.returncode == 2
    env = res.json()
    assert (env["command"], env["status"], env["exit_code"]) == (command, "error", 2)
    assert message in env["errors"][0]["message"]
    assert len(res.stderr.strip().splitlines()) == 1  # the one stderr line stays


def test_matrix_validate_json_lists_a_file_that_does_not_load_as_a_problem(
    tmp_path: Path,
) -> None:
    (tmp_path / "torch.toml").write_text('[[torch]]\nversion = "2.99.0"\nbogus = 1\n')
    res = run_cli("matrix", "validate", str(tmp_path), "--json")
    assert res.returncode == 2
    env = res.json()
    assert (env["command"], env["status"]) == ("matrix validate", "error")
    (problem,) = env["data"]["problems"]
    assert problem["where"] == f"{tmp_path / 'torch.toml'}:3"
    assert problem["key"] == "torch[0].bogus"  # a key path, not a secret to redact
    assert "unknown key" in problem["message"]


SPEC_NO_GPU_FACTS = '[python]\nversion = "3.11.9"\n'


def test_strict_says_why_it_fails(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(SPEC_NO_GPU_FACTS)
    res = run_cli("check", "--spec", str(spec), "--strict", "--json")
    assert res.returncode == 1
    env = res.json()
    assert env["status"] == "strict"
    assert env["data"]["findings"] == []
    gaps = env["data"]["gaps"]
    assert gaps and all(g["fact"] for g in gaps)
    assert env["data"]["strict"].startswith(f"--strict: exit 1 because {len(gaps)} rule(s)")
    text = run_cli("check", "--spec", str(spec), "--strict")
    assert text.returncode == 1
    assert "--strict: exit 1 because" in " ".join(text.stdout.split())


def test_no_problems_says_what_was_checked(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(SPEC_NO_GPU_FACTS)
    res = run_cli("check", "--spec", str(spec))
    env = run_cli("check", "--spec", str(spec), "--json").json()
    summary = env["data"]["summary"]
    ran = summary["rules_run"] - summary["skipped"]
    assert res.returncode == 0, res.stderr
    assert "No problems found." not in res.stdout
    assert f"No problems found: {ran} of {summary['rules_run']} rules ran; " in " ".join(
        res.stdout.split()
    )


def test_diff_in_ci_formats_is_valid(
    tmp_path: Path, sarif_schema: dict[str, Any], junit_schema: xmlschema.XMLSchema
) -> None:
    saved = tmp_path / "reports"
    saved.mkdir()
    assert run_cli("probe", "-o", str(saved / "a.json")).returncode == 0
    other = json.loads((saved / "a.json").read_text())
    other["node"] = "node-b"
    other["python"]["data"]["version"] = "3.12.1"  # CLU102: Python differs across nodes
    (saved / "b.json").write_text(json.dumps(other))
    sarif = run_cli("diff", str(saved), "--output-format", "sarif")
    run = _valid_sarif(sarif.stdout, sarif_schema)["runs"][0]
    assert "CLU102" in {r["ruleId"] for r in run["results"]}
    assert "CLU102" in {r["id"] for r in run["tool"]["driver"]["rules"]}
    junit = run_cli("diff", str(saved), "--output-format", "junit")
    junit_schema.validate(junit.stdout)
    assert junit.returncode == sarif.returncode


def test_an_internal_error_with_json_is_an_envelope_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from envcheck.cli import check as check_cli
    from envcheck.cli import main

    def broken(args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(check_cli, "run", broken)
    assert main(["check", "--json"]) == 3
    out = capsys.readouterr()
    env = json.loads(out.out)
    assert (env["status"], env["exit_code"]) == ("error", 3)
    assert env["errors"] == [{"message": "internal error: RuntimeError: a bug"}]
    assert "internal error" in out.err


def test_lock_diff_errors_name_their_command(tmp_path: Path) -> None:
    res = run_cli("lock", "diff", str(tmp_path / "old.lock"), str(tmp_path / "new.lock"), "--json")
    assert res.returncode == 2
    assert res.json()["command"] == "lock diff"
