"""A build's architecture list naming an architecture no GPU here has (CUD157), on the H200's
own logs (tests/triage/gpu_node/README.md) and on real-format lines.

How the three logs were made (scripts/gpu_failures.py): TORCH_CUDA_ARCH_LIST=12.5 for a torch
extension, `nvcc -arch=sm_200`, `ptxas -arch=sm_99`, on an H200 (compute capability 9.0). No
NVIDIA GPU has 12.5, sm_200 or sm_99: the list or the flags are the fix, never another torch
(TOR101) or toolkit (CUD150).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.triage.test_gpu_node_logs import REPORT, _causes, _top, _triage

MADE = [
    ("torch_ext_unknown_arch", "cpp-extension-unknown-arch", "TOR101"),
    ("nvcc_unknown_arch", "compiler-unknown-arch", "CUD150"),
    ("ptxas_unknown_arch", "compiler-unknown-arch", "CUD150"),
]


@pytest.mark.parametrize(("name", "signature", "wrong"), MADE)
@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_an_arch_no_gpu_has_is_the_lists(name: str, signature: str, wrong: str, node: bool) -> None:
    exit_code, data = _triage(name, node)
    assert exit_code == 1
    assert (signature, "CUD157") in _top(data), _top(data)
    verdicts = {(s, c): v for s, c, v in _causes(data)}
    assert verdicts[(signature, "CUD157")] == "confirmed"
    assert verdicts[(signature, wrong)] == "ruled_out"


def _first_fix(data: dict[str, Any]) -> str:
    first = next(m for m in data["matches"] if not m["noise"])
    return json.dumps(first["causes"][0].get("fix"))


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("torch_ext_unknown_arch", 'TORCH_CUDA_ARCH_LIST=\\"9.0\\"'),
        ("nvcc_unknown_arch", "-arch=sm_90"),
        ("ptxas_unknown_arch", "-gencode arch=compute_90,code=sm_90"),
    ],
)
def test_the_fix_is_the_nodes_own_architecture(name: str, words: str) -> None:
    _, data = _triage(name, node=True)
    fix = _first_fix(data)
    assert words in fix, fix
    assert "sm_125" not in fix and "install torch" not in fix.lower()


def test_the_log_alone_says_how_to_read_the_gpus_architecture() -> None:
    _, data = _triage("torch_ext_unknown_arch", node=False)
    assert "compute_cap" in _first_fix(data)


def test_the_arch_the_line_names_is_not_the_gpus() -> None:
    """'Unknown CUDA arch (12.5)' names the list's entry: the node's H200 stays 9.0."""
    _, data = _triage("torch_ext_unknown_arch", node=True)
    facts = {f["fact"]: f["value"] for f in data["facts"]}
    assert facts.get("build_arch") == "12.5"
    assert "gpu_cc" not in facts and "gpu_sm" not in facts


# --- real-format lines -------------------------------------------------------------------------


def _run(tmp_path: Path, text: str, node: bool = False) -> dict[str, dict[str, Any]]:
    log = tmp_path / "job.log"
    log.write_text(text)
    where = ["--report", str(REPORT)] if node else ["--no-probe"]
    data = run_cli("triage", *where, "--json", str(log)).json()["data"]
    return {c["code"]: c for m in data["matches"] if not m["noise"] for c in m["causes"]}


def test_a_real_arch_no_gpu_here_has_is_the_lists(tmp_path: Path) -> None:
    """12.0 is a real GPU's, but the node's GPU is 9.0: the list names more than it needs."""
    causes = _run(tmp_path, "ValueError: Unknown CUDA arch (12.0) or GPU not supported\n", True)
    assert causes["CUD157"]["verdict"] == "confirmed"
    assert causes["TOR101"]["verdict"] == "ruled_out"
    fix = json.dumps(causes["CUD157"]["fix"])
    assert 'TORCH_CUDA_ARCH_LIST=\\"9.0\\"' in fix and "drop 12.0" in fix


def test_the_nodes_own_arch_stays_torchs(tmp_path: Path) -> None:
    """9.0 is the H200's own: torch predates the GPU (TOR101), the list is right."""
    causes = _run(tmp_path, "ValueError: Unknown CUDA arch (9.0) or GPU not supported\n", True)
    assert causes["TOR101"]["verdict"] == "confirmed"
    assert causes["CUD157"]["verdict"] == "ruled_out"


def test_a_list_of_several_drops_the_unknown_one(tmp_path: Path) -> None:
    text = (
        "ValueError: Unknown CUDA arch (9.0+PTX) or GPU not supported\n"
        "echo $TORCH_CUDA_ARCH_LIST\n5.2 6.0 6.1 7.0 7.5 8.0 8.6 9.0+PTX\n"
    )
    causes = _run(tmp_path, text)
    assert causes["CUD157"]["verdict"] == "confirmed"
    assert "7.0 7.5 8.0 8.6+PTX" in json.dumps(causes["CUD157"]["fix"])


def test_an_entry_not_spelled_as_an_arch_is_the_lists(tmp_path: Path) -> None:
    causes = _run(tmp_path, "ValueError: Unknown CUDA arch (sm_86) or GPU not supported\n")
    assert causes["CUD157"]["verdict"] == "confirmed"
    assert causes["TOR101"]["verdict"] == "ruled_out"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("nvcc fatal   : Unsupported gpu architecture 'compute_80+PTX'", "80-virtual"),
        ("nvcc fatal   : Value 'sm_8.6' is not defined for option 'gpu-architecture'", "dot"),
        ("nvcc fatal   : Unsupported gpu architecture 'compute_'", "no architecture number"),
        ("ptxas fatal   : Value 'sm_99' is not defined for option 'gpu-name'", "no NVIDIA GPU"),
    ],
)
def test_a_compiler_target_no_gpu_has_is_the_flags(tmp_path: Path, line: str, words: str) -> None:
    causes = _run(tmp_path, line + "\n")
    assert causes["CUD157"]["verdict"] == "confirmed", causes
    assert causes["CUD150"]["verdict"] == "ruled_out"
    assert words in json.dumps(causes["CUD157"])


def test_a_real_target_the_toolkit_predates_stays_cud150(tmp_path: Path) -> None:
    text = (
        "Cuda compilation tools, release 11.5, V11.5.119\n"
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
    )
    causes = _run(tmp_path, text)
    assert causes["CUD150"]["verdict"] == "confirmed"
    assert causes["CUD157"]["verdict"] == "ruled_out"
    assert "CMAKE_CUDA_ARCHITECTURES without 89" in json.dumps(causes["CUD150"]["fix"])


def test_an_arch_older_than_the_table_is_not_called_no_gpus(tmp_path: Path) -> None:
    """compute_30 (Kepler GK104) predates the [[sm]] table: a real GPU's, left to CUD150."""
    causes = _run(tmp_path, "nvcc fatal   : Unsupported gpu architecture 'compute_30'\n")
    assert causes["CUD157"]["verdict"] == "ruled_out"
    assert causes["CUD150"]["verdict"] != "ruled_out"


def test_cmakes_keyword_reduced_to_no_number_is_cud156(tmp_path: Path) -> None:
    causes = _run(tmp_path, "Id flags: --keep;--keep-dir;tmp;-gencode=arch=compute_,code=sm_ -v\n")
    assert causes["CUD156"]["verdict"] == "confirmed"
    assert "3.24" in json.dumps(causes["CUD156"])


def test_cmakes_keyword_verbatim_stays_cud156(tmp_path: Path) -> None:
    causes = _run(tmp_path, "nvcc fatal   : Unsupported gpu architecture 'compute_native'\n")
    assert set(causes) == {"CUD156"}
