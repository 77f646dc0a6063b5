"""Without Ray, `envcheck cluster` says how to install it (exit 2); every other command works.
A `ray` package that fails to import stands in for a node without Ray."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli


@pytest.fixture
def no_ray(tmp_path: Path) -> dict[str, str]:
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'ray\'", name="ray")\n', encoding="utf-8"
    )
    return cli_env(PYTHONPATH=str(shadow.parent))


def test_cluster_without_ray_says_how_to_install_it(no_ray: dict[str, str]) -> None:
    result = run_cli("cluster", env=no_ray)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("envcheck: error: `envcheck cluster` needs Ray")
    assert "pip install 'envcheck[cluster]'" in line and "envcheck diff" in line


def test_other_commands_work_without_ray(no_ray: dict[str, str], tmp_path: Path) -> None:
    rules = run_cli("rules", "--json", env=no_ray)
    assert rules.returncode == 0
    codes = {r["code"]: r for r in rules.json()["data"]}
    assert codes["CLU105"]["scope"] == "cluster" and codes["NET101"]["scope"] == "node"
    assert run_cli("explain", "CLU101", env=no_ray).returncode == 0
    report = tmp_path / "me.json"
    assert run_cli("probe", "-o", str(report), env=no_ray).returncode == 0
    check = run_cli("check", "--report", str(report), "--json", env=no_ray)
    assert check.returncode in (0, 1)
    assert not any(f["code"].startswith("CLU") for f in check.json()["data"]["findings"])
    diff = run_cli("diff", str(report), str(report), "--json", env=no_ray)
    assert diff.returncode in (0, 1) and diff.json()["command"] == "diff"


def test_check_runs_no_cluster_rule_and_counts_only_node_rules(tmp_path: Path) -> None:
    report = tmp_path / "me.json"
    assert run_cli("probe", "-o", str(report)).returncode == 0
    check = run_cli("check", "--report", str(report), "--json").json()
    rules = run_cli("rules", "--json").json()["data"]
    node_rules = [r for r in rules if r["scope"] == "node"]
    assert check["data"]["summary"]["rules_run"] == len(node_rules)
    assert all(s["code"][:3] != "CLU" for s in check["data"]["skipped"])
    assert json.loads(json.dumps(check))  # a plain envelope


def test_cluster_usage_errors_are_one_line() -> None:
    for args, words in (
        (("--timeout", "0"), "argument --timeout: must be > 0"),
        (("--ifname", "eth0"), "--ifname applies to the collective test"),
        (("--address", "127.0.0.1:1"), "cannot reach the Ray cluster at 127.0.0.1:1"),
    ):
        env = cli_env()
        env.pop("RAY_ADDRESS", None)
        result = run_cli("cluster", *args, env=env)
        assert result.returncode == 2 and words in result.stderr
