from __future__ import annotations

import pytest

from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix
from tests.conftest import cli_env, run_cli

RULES = all_rules(builtin_matrix())


def test_rules_json_lists_the_catalogue(cli):
    result = cli("rules", "--json")
    assert result.returncode == 0
    data = result.json()["data"]
    assert [r["code"] for r in data] == [r.code for r in RULES]
    assert {"code", "name", "family", "severity", "title", "origin", "verified", "docs"} <= set(
        data[0]
    )


def test_rules_table(cli):
    result = run_cli("rules", env=cli_env(COLUMNS="160"))
    assert (
        result.returncode == 0
        and f"{len(RULES)} rules" in result.stdout
        and "CUD102" in result.stdout
    )


@pytest.mark.parametrize("code", ["CUD102", "DRV101", "cud102", "driver-too-old-for-torch"])
def test_explain(cli, code):
    result = run_cli("explain", code, env=cli_env(COLUMNS="120"))
    assert result.returncode == 0
    for section in ("What it checks", "Why it matters", "Example", "Fix", "References"):
        assert section in result.stdout


def test_explain_json(cli):
    data = cli("explain", "TOR101", "--json").json()["data"]
    assert data["code"] == "TOR101" and data["docs"]["references"]


def test_explain_unknown(cli):
    result = cli("explain", "XYZ999")
    assert (
        result.returncode == 2
        and result.stderr.strip() == "envcheck: error: unknown rule 'XYZ999' (see `envcheck rules`)"
    )


def test_matrix_show_torch(cli):
    data = cli("matrix", "show", "torch", "2.4.0", "--json").json()["data"]
    record = data["record"]
    assert record["pins"]["nvidia-cublas-cu12"] == "==12.1.3.1"
    assert record["pypi_default"] == "cu121" and "cu124" in record["variants"]
    assert "0.6.3" in data["related"]["vllm_releases_pinning_it"]
    assert data["related"]["index_urls"]["cu121"].endswith("/whl/cu121")
    assert data["file"].endswith("torch.toml")


@pytest.mark.parametrize(
    ("subject", "version", "field", "value"),
    [
        ("gpu", "NVIDIA H20", "compute_capability", "9.0"),
        ("cuda", "12.4", "min_driver", "550.54.14"),
        ("driver", "535.104.05", "max_cuda", "12.2"),
        ("vllm", "0.6.3", "torch", "==2.4.0"),
        ("ray", "2.40.0", "python", ["3.9", "3.10", "3.11", "3.12"]),
        ("isaacsim", "5.1.0.0", "validated_driver", "580.65.06"),
        ("omnigibson", "3.8.0", "isaacsim", "==5.1.0"),
        ("flash-attn", "2.6.3", "prebuilt_torch", ["2.0", "2.1", "2.2", "2.3", "2.4"]),
    ],
)
def test_matrix_show_subjects(cli, subject, version, field, value):
    result = cli("matrix", "show", subject, version, "--json")
    assert result.returncode == 0, result.stderr
    assert result.json()["data"]["record"][field] == value


def test_matrix_show_cuda_lists_the_archs_it_compiles(cli):
    related = cli("matrix", "show", "cuda", "13.0", "--json").json()["data"]["related"]
    assert "sm_75" in related["compiles_for"] and "sm_70" not in related["compiles_for"]


def test_matrix_show_unknown(cli):
    result = cli("matrix", "show", "torch", "9.9.9")
    assert result.returncode == 2 and "knows nothing about torch 9.9.9" in result.stderr
