"""Facts are known or unknown one by one: a collect_env dump cut off before its package list still
states torch, its CUDA, the GPUs and the driver, and the rules that need only those run. A wheel
torch pins exactly is implied by the matrix (with provenance) unless the list says otherwise."""

from __future__ import annotations

from pathlib import Path

from envcheck.engine import evaluate
from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.finding import CheckResult
from envcheck.rules import all_rules
from tests.evidence.shared import matrix

INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"
FULL = (INGEST / "collect_env_torch2.3_h20.txt").read_text()
CUT = FULL.split("Versions of relevant libraries")[0]
# vLLM's copy with its package list lost (the "vLLM Version" line after it survived)
_TINY = (INGEST / "collect_env_tinyzero_h20.txt").read_text().splitlines()
VLLM_NO_LIST = "\n".join(_TINY[:59] + _TINY[100:])


def check(text: str) -> CheckResult:
    report = parse(Source(name="dump.txt", text=text))
    return evaluate(report, matrix(), all_rules(matrix()))


def test_cut_off_dump_still_runs_the_rules_that_need_torch_gpu_and_driver() -> None:
    result = check(CUT)
    skipped = {s.code for s in result.skipped}
    for code in ("DRV101", "DRV102", "TOR101", "CUD102"):
        assert code not in skipped, code
    assert "CUD102" in {f.code for f in result.findings}
    assert next(s for s in result.skipped if s.code == "VLM101").fact == "packages.vllm"


def test_vllm_dump_without_its_package_list_runs_vllm_rules() -> None:
    assert "[pip3]" not in VLLM_NO_LIST and "vLLM Version: 0.6.3" in VLLM_NO_LIST
    result = check(VLLM_NO_LIST)
    skipped = {s.code for s in result.skipped}
    for code in ("DRV101", "DRV102", "TOR101", "CUD102", "VLM101"):
        assert code not in skipped, code
    assert "CUD102" in {f.code for f in result.findings}


def test_implied_wheel_is_named_with_how_to_confirm_it() -> None:
    finding = next(f for f in check(CUT).findings if f.code == "CUD102")
    assert "implied by the matrix: torch 2.3.0+cu121 pins nvidia-cublas-cu12==12.1.3.1" in (
        finding.message
    )
    assert "pip show nvidia-cublas-cu12" in finding.message
    assert finding.evidence["nvidia-cublas-cu12"] == "12.1.3.1"
    assert "nvidia-cublas-cu12" in finding.evidence["provenance"]


def test_listed_wheel_beats_the_implied_pin() -> None:
    text = CUT + "Versions of relevant libraries:\n[pip3] nvidia-cublas-cu12==12.3.4.1\n"
    result = check(text)
    assert "CUD102" not in {f.code for f in result.findings}
    assert "CUD102" not in {s.code for s in result.skipped}


def test_a_listed_wheel_needs_no_implication() -> None:
    text = FULL.replace("[pip3] numpy", "[pip3] nvidia-cublas-cu12==12.1.3.1\n[pip3] numpy")
    finding = next(f for f in check(text).findings if f.code == "CUD102")
    assert "implied" not in finding.message
    assert "provenance" not in finding.evidence


def test_a_skip_names_the_unknown_fact() -> None:
    skipped = {s.code: s for s in check(CUT).skipped}
    assert skipped["RAY101"].fact == "packages.ray"
    assert skipped["NET103"].fact == "network"
    assert skipped["NET103"].to_json()["fact"] == "network"


def test_non_default_variant_implies_nothing() -> None:
    text = CUT.replace("2.3.0+cu121", "2.3.0+cu118").replace(
        "CUDA used to build PyTorch: 12.1", "CUDA used to build PyTorch: 11.8"
    )
    result = check(text)
    assert "CUD102" not in {f.code for f in result.findings}
    assert next(s for s in result.skipped if s.code == "CUD102").fact == (
        "packages.nvidia-cublas-cu12"
    )
