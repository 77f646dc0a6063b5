"""A CPU-only torch on a GPU node, read from the texts users paste: TOR110 names it with a CUDA
build that keeps the GPUs' architecture, and CUD102 (a cuBLAS wheel torch does not load) stays
quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.engine import evaluate
from envcheck.ingest.sources import load_sources
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix

FIXTURES = Path(__file__).parents[1] / "fixtures" / "ingest"
MATRIX = builtin_matrix()
RULES = all_rules(MATRIX)


def _collect_env_cpu(tmp_path: Path) -> list[str]:
    text = (FIXTURES / "collect_env_tinyzero_h20.txt").read_text()
    text = text.replace("PyTorch version: 2.4.0+cu121", "PyTorch version: 2.4.0")
    text = text.replace("CUDA used to build PyTorch: 12.1", "CUDA used to build PyTorch: None")
    assert "CUDA used to build PyTorch: None" in text
    path = tmp_path / "collect_env.txt"
    path.write_text(text)
    return [str(path)]


def _collect_env_could_not_collect(tmp_path: Path) -> list[str]:
    # collect_env replaces every None with "Could not collect" and writes "None" only on a node
    # without GPUs: a CPU torch on a GPU node reads like this (pytorch/pytorch#106565)
    text = (FIXTURES / "collect_env_tinyzero_h20.txt").read_text()
    text = text.replace("PyTorch version: 2.4.0+cu121", "PyTorch version: 2.4.0")
    text = text.replace(
        "CUDA used to build PyTorch: 12.1", "CUDA used to build PyTorch: Could not collect"
    )
    assert "CUDA used to build PyTorch: Could not collect" in text
    path = tmp_path / "collect_env.txt"
    path.write_text(text)
    return [str(path)]


def _conda_cpu(tmp_path: Path) -> list[str]:
    text = (FIXTURES / "conda_list.txt").read_text()
    text = text.replace("py3.9_cuda12.1_cudnn9.1.0_0", "py3.9_cpu_0")
    text = "".join(line for line in text.splitlines(True) if not line.startswith("pytorch-cuda"))
    conda = tmp_path / "conda.txt"
    conda.write_text(text)
    return [str(conda), str(FIXTURES / "nvidia_smi_535_h20.txt")]


@pytest.mark.parametrize("texts", [_collect_env_cpu, _collect_env_could_not_collect, _conda_cpu])
def test_cpu_torch_on_gpu_node(tmp_path: Path, texts) -> None:
    report = load_sources(texts(tmp_path), [], None)
    result = evaluate(report, MATRIX, RULES)
    codes = {f.code: f for f in result.findings}
    assert "TOR110" in codes and codes["TOR110"].severity.value == "error"
    assert "CUD102" not in codes  # nvidia-cublas-cu12 12.1.3.1 is there, but torch never loads it
    fix = codes["TOR110"].fix
    assert fix is not None
    assert any("torch==2.4.0" in c and "/cu12" in c for c in fix.commands)


def test_cuda_torch_is_not_flagged() -> None:
    report = load_sources([str(FIXTURES / "collect_env_tinyzero_h20.txt")], [], None)
    result = evaluate(report, MATRIX, RULES)
    codes = {f.code for f in result.findings}
    assert "TOR110" not in codes and "CUD102" in codes


def test_could_not_collect_on_a_rocm_build_is_not_a_cpu_torch(tmp_path: Path) -> None:
    text = (FIXTURES / "collect_env_tinyzero_h20.txt").read_text()
    text = text.replace(
        "CUDA used to build PyTorch: 12.1", "CUDA used to build PyTorch: Could not collect"
    )
    text = text.replace("ROCM used to build PyTorch: N/A", "ROCM used to build PyTorch: 6.2.41133")
    assert "ROCM used to build PyTorch: 6.2.41133" in text
    path = tmp_path / "collect_env.txt"
    path.write_text(text)
    report = load_sources([str(path)], [], None)
    assert report.torch.data is not None and report.torch.data.variant != "cpu"
    codes = {f.code for f in evaluate(report, MATRIX, RULES).findings}
    assert "TOR110" not in codes


def test_a_conda_list_excerpt_without_gpus_warns(tmp_path: Path) -> None:
    # pytorch/torchdata#315: `conda list | grep pytorch` of the broken env, nothing else
    conda = tmp_path / "conda.txt"
    conda.write_text(
        "cpuonly                   2.0                           0    pytorch\n"
        "pytorch                   1.11.0              py3.8_cpu_0    pytorch\n"
        "pytorch-mutex             1.0                         cpu    pytorch\n"
    )
    report = load_sources([str(conda)], [], None)
    [finding] = [f for f in evaluate(report, MATRIX, RULES).findings if f.code == "TOR110"]
    assert finding.severity.value == "warning"
    assert "torch 1.11.0 is a CPU-only build" in finding.message
