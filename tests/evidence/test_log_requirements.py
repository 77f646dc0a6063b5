"""What a log states about the packages and the job: requirements (pip's resolver lines,
LLaMA-Factory's runtime version check) become the requirer's requirements in the log's report,
so PKG101 confirms the conflict from the log's own lines and names the range to install; vLLM's
bf16 refusal states the job's dtype and the GPU, so VLM120 confirms it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envcheck.triage.extract import to_report
from envcheck.triage.run import log_facts, scan_log
from tests.conftest import CliResult
from tests.evidence.shared import matrix, write

# pip's resolver output as IsaacLab#2060 pasted it: two installs, the second the current state
ISAACLAB = """\
ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.
isaaclab 0.36.1 requires torch==2.5.1, but you have torch 2.4.0 which is incompatible.
omni-isaac-lab 0.27.15 requires gymnasium==0.29.0, but you have gymnasium 1.0.0 which is incompatible.

ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.
omni-isaac-lab-tasks 0.10.13 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.
torchvision 0.19.0 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible
"""
# LLaMA-Factory's check_version (hiyouga/LlamaFactory#7428, #10757)
LLAMAFACTORY_VLLM = """\
ImportError: vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found vllm==0.8.1.
To fix: run `pip install vllm>=0.4.3,<=0.7.3` or set `DISABLE_VERSION_CHECK=1` to skip this check.
"""
LLAMAFACTORY_TRL = """\
[rank0]: ImportError: trl>=0.8.6,<=0.9.6 is required for a normal functioning of this module, but found trl==0.24.0.
[rank0]: Incompatible TRL version detected. LLaMA-Factory ppo requires TRL version >=0.8.6,<=0.9.6. Found version 0.24.0. Ple
"""
# transformers' require_version from an unknown module: the requirement belongs to nothing named
BARE = "ImportError: vllm>=0.4.3,<=0.6.2 is required for a normal functioning of this module, but found vllm==0.6.3.\n"


def fix_text(fix: dict) -> str:  # type: ignore[type-arg]
    """A cause's or finding's fix (summary and commands) as one text."""
    return "\n".join([fix["summary"], *fix["commands"]])


def report_of(tmp_path: Path, text: str) -> dict[str, tuple[str, tuple[str, ...], str | None]]:
    log = write(tmp_path, text)
    facts = log_facts(str(log), scan_log(str(log), matrix())[1])
    report = to_report(facts, "job.log")
    assert report is not None and report.packages.data is not None
    return {d.key: (d.version, d.requires, d.location) for d in report.packages.data.distributions}


def test_resolver_lines_give_requirers_and_the_latest_installed_set(tmp_path: Path) -> None:
    dists = report_of(tmp_path, ISAACLAB)
    # the second install's lines (5, 6) are the current state: torch 2.5.1, not 2.4.0
    assert dists["torch"][0] == "2.5.1"
    assert dists["gymnasium"][0] == "1.0.0"
    assert dists["omni-isaac-lab"] == ("0.27.15", ("gymnasium==0.29.0",), "log line 3")
    assert dists["omni-isaac-lab-tasks"] == ("0.10.13", ("torch==2.4.0",), "log line 6")
    assert dists["isaaclab"][1] == ("torch==2.5.1",)


def test_requirement_with_commas_is_read_whole(tmp_path: Path) -> None:
    line = (
        "llamafactory 0.9.4.dev0 requires transformers!=4.52.0,<=4.55.0,>=4.49.0, but you have "
        "transformers 4.56.1 which is incompatible.\n"
    )
    dists = report_of(tmp_path, line)
    assert dists["llamafactory"][:2] == (
        "0.9.4.dev0",
        ("transformers!=4.52.0,<=4.55.0,>=4.49.0",),
    )
    assert dists["transformers"][0] == "4.56.1"


@pytest.mark.parametrize(
    ("text", "requirement", "installed"),
    [
        (LLAMAFACTORY_VLLM, "vllm<=0.7.3,>=0.4.3", ("vllm", "0.8.1")),
        (LLAMAFACTORY_TRL, "TRL<=0.9.6,>=0.8.6", ("trl", "0.24.0")),
    ],
)
def test_llamafactory_check_is_llamafactorys_requirement(
    tmp_path: Path, text: str, requirement: str, installed: tuple[str, str]
) -> None:
    dists = report_of(tmp_path, text)
    assert dists["llamafactory"][:2] == ("unknown", (requirement,))
    assert dists[installed[0]][0] == installed[1]


def test_a_bare_requirement_is_not_given_to_anything(tmp_path: Path) -> None:
    dists = report_of(tmp_path, BARE)
    assert set(dists) == {"vllm"}
    assert dists["vllm"][1] == ()


def causes(cli: Callable[..., CliResult], *argv: str) -> dict[str, dict[str, Any]]:
    result = cli("triage", *argv, "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    return {c["code"]: c for m in data["matches"] for c in m["causes"]}


@pytest.mark.parametrize(
    ("text", "message", "command"),
    [
        (ISAACLAB, "omni-isaac-lab 0.27.15 requires gymnasium==0.29.0", "gymnasium==0.29.0"),
        (LLAMAFACTORY_VLLM, "llamafactory requires vllm", "pip install 'vllm<=0.7.3,>=0.4.3'"),
        (LLAMAFACTORY_TRL, "but 0.24.0 is installed", "pip install 'TRL<=0.9.6,>=0.8.6'"),
    ],
)
def test_log_alone_confirms_pkg101_with_the_range_to_install(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, message: str, command: str
) -> None:
    pkg101 = causes(cli, str(write(tmp_path, text)), "--no-probe")["PKG101"]
    assert pkg101["verdict"] == "confirmed"
    assert message in pkg101["findings"][0]["message"]
    assert command in fix_text(pkg101["fix"])


def test_bare_requirement_decides_pkg101_from_the_line(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # require_version's line states the range and the release it found: 0.6.3 is above <=0.6.2,
    # so the fix pins back to the last release the check accepts (rules/node/version_checks.py)
    pkg101 = causes(cli, str(write(tmp_path, BARE)), "--no-probe")["PKG101"]
    assert pkg101["verdict"] == "confirmed"
    assert fix_text(pkg101["fix"]).splitlines()[1] == "pip install vllm==0.6.2"


def test_the_dump_gives_the_requirer_its_version(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # llamafactory 0.8.3 declares vllm>=0.4.3 only: no bound, the log's requirement decides
    spec = write(tmp_path, '[packages]\nllamafactory = "0.8.3"\nvllm = "0.8.1"\n', "spec.toml")
    pkg101 = causes(cli, str(write(tmp_path, LLAMAFACTORY_VLLM)), "--spec", str(spec))["PKG101"]
    assert pkg101["verdict"] == "confirmed"
    assert "llamafactory 0.8.3 requires vllm" in pkg101["findings"][0]["message"]


def test_a_known_release_is_checked_against_its_bound(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # llamafactory 0.9.2's [vllm] extra (matrices/packages/bounds.toml): PKG110 names the range
    # and the escape hatch the check itself offers; the line alone also confirms PKG101, whose
    # fix pins back to the newest release the check accepts
    spec = write(tmp_path, '[packages]\nllamafactory = "0.9.2"\nvllm = "0.8.1"\n', "spec.toml")
    found = causes(cli, str(write(tmp_path, LLAMAFACTORY_VLLM)), "--spec", str(spec))
    assert found["PKG110"]["verdict"] == "confirmed"
    assert "pip install 'vllm<=0.7.3,>=0.4.3'" in fix_text(found["PKG110"]["fix"])
    assert "DISABLE_VERSION_CHECK=1" in fix_text(found["PKG110"]["fix"])
    assert found["PKG101"]["verdict"] == "confirmed"
    assert 'pip install "vllm==0.7.3"' in fix_text(found["PKG101"]["fix"])


# vllm-project/vllm#946 and #1157, as vLLM prints it
BF16 = (
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
    "Your {gpu} GPU has compute capability {cc}.\n"
)


@pytest.mark.parametrize(("gpu", "cc"), [("Tesla V100-SXM2-32GB", "7.0"), ("Tesla T4", "7.5")])
def test_bf16_refusal_states_dtype_and_gpu(
    tmp_path: Path, cli: Callable[..., CliResult], gpu: str, cc: str
) -> None:
    log = write(tmp_path, BF16.format(gpu=gpu, cc=cc))
    facts = {f.name: f.value for f in log_facts(str(log), scan_log(str(log), matrix())[1])}
    assert facts == {"dtype": "Bfloat16", "gpu_name": gpu, "gpu_cc": cc}
    vlm120 = causes(cli, str(log), "--no-probe")["VLM120"]
    assert vlm120["verdict"] == "confirmed"
    assert f"{gpu} (compute capability {cc})" in vlm120["findings"][0]["message"]
    assert "--dtype half" in fix_text(vlm120["fix"])


def test_spec_declares_the_dtype_and_rejects_an_unknown_one(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = write(tmp_path, '[gpu]\nmodels = ["Tesla T4"]\n[workload]\ndtype = "bf16"\n', "s.toml")
    result = cli("check", "--spec", str(spec), "--json")
    codes = {f["code"] for f in result.json()["data"]["findings"]}
    assert "VLM120" in codes
    bad = write(tmp_path, '[workload]\ndtype = "int8"\n', "bad.toml")
    result = cli("check", "--spec", str(bad))
    assert result.returncode == 2
    assert "workload.dtype" in result.stderr and "Traceback" not in result.stderr


def test_a_requirement_on_a_package_the_log_does_not_show_is_left_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the log names the requirer and the requirement but not what is installed: a partial list
    # says nothing about the required package, so PKG101 neither fires nor rules the cause out
    text = LLAMAFACTORY_VLLM.split("\n", 1)[1]
    result = cli("triage", str(write(tmp_path, text)), "--no-probe", "--json")
    found = {c["code"]: c for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert found["PKG101"]["verdict"] == "unknown"
    assert "vllm is not in the package list" in found["PKG101"]["reason"]


def test_verl_refusing_the_vllm_release_is_checked_against_its_bound(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # verl 0.1's third_party/vllm: the line names the vLLM release, the spec the verl release
    log = write(
        tmp_path,
        "ValueError: vllm version 0.8.5.post1 not supported. Currently supported versions are "
        "0.3.1, 0.4.2, 0.5.4 and 0.6.3.\n",
    )
    spec = write(tmp_path, '[packages]\nverl = "0.1"\ntorch = "2.6.0"\n', "spec.toml")
    pkg110 = causes(cli, str(log), "--spec", str(spec))["PKG110"]
    assert pkg110["verdict"] == "confirmed"
    assert "verl 0.1 with vllm 0.8.5.post1" in pkg110["findings"][0]["message"]
    assert "pip install vllm==0.6.3" in fix_text(pkg110["fix"])


# unitreerobotics/unitree_sim_isaaclab#82: a dependency pulled NumPy 2.2.6 into Isaac Sim 5.0
NUMPY2 = """\
ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.
isaaclab 0.44.9 requires numpy<2, but you have numpy 2.2.6 which is incompatible.
isaacsim-kernel 5.0.0.0 requires numpy==1.26.0, but you have numpy 2.2.6 which is incompatible.
numba 0.59.1 requires numpy<1.27,>=1.22, but you have numpy 2.2.6 which is incompatible.
"""


def test_numpy2_under_numpy1_pins_is_confirmed_with_the_pin_they_all_accept(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    pkg104 = causes(cli, str(write(tmp_path, NUMPY2)), "--no-probe")["PKG104"]
    assert pkg104["verdict"] == "confirmed"
    assert "isaacsim-kernel 5.0.0.0 (numpy==1.26.0)" in pkg104["findings"][0]["message"]
    assert "pip install numpy==1.26.0" in fix_text(pkg104["fix"])
