"""torch states its own arch list (its start-up warning, get_arch_list()): triage reads it from
the log, TOR101 judges the GPU against it (whatever the matrix knows of the release), and the fix
names the oldest build with the GPU's kernels (torch 2.7.0+cu128 for an RTX 50xx)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envcheck.engine import evaluate
from envcheck.ingest.merge import merge
from envcheck.ingest.spec import load_spec
from envcheck.model.section import Section
from envcheck.rules import all_rules
from envcheck.rules.choose import arch_list_from_torch
from envcheck.triage.extract import to_report
from envcheck.triage.run import log_facts, scan_log
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult


def fix_text(fix: dict) -> str:  # type: ignore[type-arg]
    """A cause's or finding's fix (summary and commands) as one text."""
    return "\n".join([fix["summary"], *fix["commands"]])


MATRIX = builtin_matrix()
TOR101 = [r for r in all_rules(MATRIX) if r.code == "TOR101"]

# as pasted in Hellod035/LeggedLab#26 (two lines) and remsky/Kokoro-FastAPI#306 (one line)
WARNING = (
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
    "PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
    "sm_90.\n"
    "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the "
    "instructions at https://pytorch.org/get-started/locally/\n"
)
ONE_LINE = (
    "NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current "
    "PyTorch installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 "
    "sm_70 sm_75 sm_80 sm_86 sm_90\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.", "5.0;6.0;7.0;7.5;8.0;8.6;9.0"),
        (
            "['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120', 'compute_120']",
            "7.5;8.0;8.6;9.0;10.0;12.0+PTX",
        ),
        (  # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2636
            "sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90 compute_37.",
            "3.7+PTX;5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0",
        ),
        ("['sm_120a', 'sm_90a']", "9.0;12.0"),
        ("no architectures here", None),
    ],
)
def test_torch_names_become_the_matrix_form(text: str, expected: str | None) -> None:
    assert arch_list_from_torch(text) == expected


def _triage(cli: Callable[..., CliResult], log: Path) -> dict[str, Any]:
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 1, result.stderr
    data: dict[str, Any] = result.json()["data"]
    return data


@pytest.mark.parametrize("text", [WARNING, ONE_LINE], ids=["two-lines", "one-line"])
def test_the_warning_alone_gives_tor101_a_finding_with_the_cu128_build(
    tmp_path: Path, cli: Callable[..., CliResult], text: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text("UserWarning:\n" + text)
    data = _triage(cli, log)
    facts = {f["fact"]: f["value"] for f in data["facts"]}
    assert facts["torch_arch_list"].startswith("sm_50 sm_60 sm_70")
    tor101 = next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR101")
    assert tor101["verdict"] == "confirmed"
    assert tor101["evidence"].startswith("confirmed from line 2")
    [finding] = tor101["findings"]
    assert finding["severity"] == "error"
    assert "sm_120" in finding["message"] and "as torch states it" in finding["message"]
    assert "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90" in finding["message"]
    # the oldest release whose (verified) cu128 list has sm_120
    assert finding["fix"]["summary"].startswith("Install torch 2.7.0+cu128")
    install, *others = finding["fix"]["commands"]
    assert install == "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128"
    # then, as comments, the other CUDA variants with sm_120 kernels and cu128's nightly
    assert others[0].startswith("# other torch builds with sm_120 kernels, by CUDA variant: ")
    assert others[-1].endswith("--index-url https://download.pytorch.org/whl/nightly/cu128")


def test_the_log_arch_list_joins_the_dump_torch_release(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(WARNING)
    _name, scan = scan_log(str(log), MATRIX)
    from_log = to_report(log_facts(str(log), scan), str(log))
    assert from_log is not None and from_log.torch.data is not None
    assert (from_log.torch.data.version, from_log.torch.data.arch_list) == (
        "",
        "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
    )
    spec = tmp_path / "stack.toml"
    spec.write_text(
        '[gpu]\nmodels = ["NVIDIA GeForce RTX 5090"]\n[packages]\ntorch = "2.6.0+cu124"\n'
    )
    merged = merge([from_log, load_spec(str(spec))])
    build = merged.torch.data
    assert build is not None
    assert (build.version, build.variant, build.arch_list) == (
        "2.6.0+cu124",
        "cu124",
        "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
    )
    [finding] = evaluate(merged, MATRIX, TOR101).findings
    assert "torch 2.6.0+cu124's arch list" in finding.message
    assert finding.fix is not None and "2.7.0+cu128" in finding.fix.summary


def _spec_with_archs(tmp_path: Path, gpu: str, archs: str) -> Any:
    spec = tmp_path / "stack.toml"
    spec.write_text(f'[gpu]\nmodels = ["{gpu}"]\n[packages]\ntorch = "2.7.0+cu128"\n')
    report = load_spec(str(spec))
    assert report.torch.data is not None
    build = dataclasses.replace(report.torch.data, arch_list=archs)
    return report.with_sections(torch=Section.ok(build, source="a quoted get_arch_list()"))


def test_a_stated_list_with_the_gpu_passes(tmp_path: Path) -> None:
    report = _spec_with_archs(tmp_path, "NVIDIA GeForce RTX 5090", "7.5;8.0;8.6;9.0;10.0;12.0+PTX")
    result = evaluate(report, MATRIX, TOR101)
    assert not result.findings and not result.skipped


def test_ptx_of_an_older_major_does_not_cover_as_torch_itself_judges(tmp_path: Path) -> None:
    # torch 1.x cu11x lists end in compute_37: torch still warns for an sm_120 GPU, and the
    # threads that quote such a list (RVC#2636) report the failure
    report = _spec_with_archs(
        tmp_path, "NVIDIA GeForce RTX 5090", "3.7+PTX;5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0"
    )
    [finding] = evaluate(report, MATRIX, TOR101).findings
    assert "sm_120" in finding.message and "a quoted get_arch_list()" in finding.message


def test_the_too_old_warning_confirms_tor101_with_the_gpu_it_names(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # as pasted in peterjc123/pytorch-scripts#13 (torch 0.3.1 on Windows)
    log = tmp_path / "job.log"
    log.write_text(
        "UserWarning:\n"
        "    Found GPU0 GeForce GTX 960M which is of cuda capability 5.0.\n"
        "    PyTorch no longer supports this GPU because it is too old.\n"
    )
    data = _triage(cli, log)
    assert {f["fact"]: f["value"] for f in data["facts"]} == {
        "gpu_name": "GeForce GTX 960M",
        "gpu_cc": "5.0",
    }
    tor101 = next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR101")
    assert (tor101["verdict"], tor101["evidence"]) == ("confirmed", "confirmed from line 2")
    assert "sm_50 kernels" in fix_text(tor101["fix"])
