"""Coverage is visible and can gate: GPU names as people and tools write them, unknown models
and releases as findings, `--strict`, the summary line's account of skipped rules, and `--python`
that is not a Python."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.matrix.model import gpu_name_forms
from envcheck.model.finding import Skipped, skip_kinds, skip_matters
from tests.conftest import CliResult
from tests.evidence.shared import matrix


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("RTX5090", "RTX 5090"),  # as people type it
        ("NVIDIA GeForce RTX 5090", "RTX 5090"),  # nvidia-smi / NVML
        ("nvidia-h100-80gb-hbm3", "H100"),  # a cloud console's accelerator type
        ("NVIDIA_A100", "A100"),
        ("Tesla V100-SXM2-32GB", "V100"),
        ("NVIDIA RTX 6000 Ada Gene...", "RTX 6000 Ada"),  # nvidia-smi's cut
    ],
)
def test_gpu_names_normalised(name: str, model: str) -> None:
    found = matrix().gpu_model(name)
    assert found is not None and model in found.match


def test_normal_forms() -> None:
    assert gpu_name_forms("RTX5070TI") == ("RTX5070TI", "RTX 5070 Ti")
    assert gpu_name_forms("A100") == ("A100",)


@pytest.mark.parametrize("name", ["GeForce MX450", "GeForce GT 1030", "Radeon 7900"])
def test_unlisted_models_stay_unknown(name: str) -> None:
    assert matrix().gpu_model(name) is None


def spec(tmp_path: Path, text: str) -> str:
    path = tmp_path / "node.toml"
    path.write_text(text)
    return str(path)


KNOWN = '[gpu]\ndriver = "570.124.06"\nmodels = ["NVIDIA GeForce RTX 4090"]\n\n[python]\nversion = "3.11.9"\n\n[packages]\n"torch" = "2.5.1+cu124"\n'
NO_GPU_LIST = '[gpu]\ndriver = "570.124.06"\n\n[packages]\n"torch" = "2.5.1+cu124"\n'


def test_strict_gates_on_skipped_rules_that_matter(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    node = spec(tmp_path, NO_GPU_LIST)
    assert cli("check", "--spec", node).returncode == 0
    strict = cli("check", "--spec", node, "--strict", "--json")
    assert strict.returncode == 1
    summary = strict.json()["data"]["summary"]
    assert summary["skipped_that_matter"] >= 1
    assert summary["skipped_by_fact"]["gpu"] >= 1
    assert "matter for the node); exit 1" in strict.stderr


def test_strict_passes_a_node_whose_core_facts_are_known(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    result = cli("check", "--spec", spec(tmp_path, KNOWN), "--strict")
    assert result.returncode == 0, result.stderr
    # a declared stack states no environment variables: the rules that read them are skipped,
    # named by the fact they lack (how many follows the catalogue)
    said = " ".join(result.stderr.split())  # the summary wraps at the terminal's width
    assert re.search(r"skipped \(unknown: [^)]*\benv [1-9][0-9]*", said), result.stderr
    assert "0 matter for the node); exit 0" in result.stderr


@pytest.mark.parametrize("columns", [60, 80, 400])
def test_the_summary_fits_the_terminal_and_keeps_its_phrases_whole(
    tmp_path: Path, columns: int
) -> None:
    from tests.conftest import cli_env, run_cli

    result = run_cli("check", "--spec", spec(tmp_path, KNOWN), env=cli_env(COLUMNS=str(columns)))
    lines = result.stderr.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("envcheck: "))
    block = lines[start:]
    assert all(len(line) <= columns for line in block), block
    assert all(line.startswith("  ") for line in block[1:]), block
    assert (len(block) == 1) == (columns == 400), block
    # no count is parted from what it counts, and the exit code closes the last line
    assert re.fullmatch(r"  .*\d+ matter for the node\); exit 0|envcheck: .*; exit 0", block[-1])
    said = " ".join(" ".join(block).split())
    assert re.match(
        r"envcheck: 0 error\(s\), \d+ warning\(s\), \d+ info; \d+ rules, \d+ skipped ", said
    )


def test_unknown_gpu_and_release_are_findings(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    node = spec(
        tmp_path,
        '[gpu]\ndriver = "560.94"\nmodels = ["NVIDIA GeForce MX450"]\n\n'
        '[packages]\n"torch" = "2.9.0.dev20250722+cu128"\n',
    )
    result = cli("check", "--spec", node, "--json", "--severity", "warning")
    assert result.returncode == 1
    codes = {f["code"] for f in result.json()["data"]["findings"]}
    assert {"COV101", "COV102"} <= codes


def test_skip_accounting() -> None:
    skipped = (
        Skipped("NET101", "env unknown", "n", "env"),
        Skipped("NET102", "env unknown", "n", "env"),
        Skipped("TOR101", "gpus unknown", "n", "gpu.gpus"),
        Skipped("VLM101", "vllm unknown", "n", "packages.vllm"),
        Skipped("RAY101", "ray unknown", "n", "packages.ray"),
    )
    assert skip_kinds(skipped) == {"env": 2, "packages": 2, "gpu": 1}
    assert [s.code for s in skipped if skip_matters(s)] == ["TOR101", "VLM101"]


@pytest.mark.parametrize("program", ["/bin/false", "/bin/ls"])
def test_python_that_is_not_python(program: str, cli: Callable[..., CliResult]) -> None:
    result = cli("check", "--python", program, "--json")
    assert result.returncode == 2
    assert result.json()["status"] == "error"  # --json: the error is an envelope too
    assert (
        result.stderr.strip().splitlines() == [result.stderr.strip().splitlines()[0]]
        and "is not a Python interpreter" in result.stderr
    )
