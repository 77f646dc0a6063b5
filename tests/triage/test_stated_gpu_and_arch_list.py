"""A 'no kernel image' decided by facts a log states in prose: the GPU a sentence names by its
model alone (gpu-model-in-prose) and the TORCH_CUDA_ARCH_LIST an extension build was given
(torch-cuda-arch-list-set, read by CUD153's ``_built_without_gpu``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


@pytest.mark.parametrize(
    "gpu",
    [
        "I'm using an RTX 3090",
        "My GPU is a GeForce RTX 3090",
        "My experimental environment is cuda11.0 RTX3080 pytorch1.7.1",
        "Training on 8x A100 fails",
    ],
)
def test_an_arch_list_without_the_gpu_is_the_extensions(
    cli: Callable[..., CliResult], tmp_path: Path, gpu: str
) -> None:
    found = causes(cli, log_file(tmp_path, 'export TORCH_CUDA_ARCH_LIST="7.5"', gpu, _NO_IMAGE))
    assert found["CUD153"]["verdict"] == "confirmed"
    assert 'TORCH_CUDA_ARCH_LIST="8.' in fix_text(found["CUD153"])


@pytest.mark.parametrize(
    ("arch_list", "gpu"),
    [
        ("8.0;8.6+PTX", "I'm using an RTX 3090"),  # sm_80 SASS runs on 8.6
        ("7.0 7.5+PTX", "GPU: NVIDIA GeForce RTX 4090"),  # PTX of 7.5 JIT-compiles on 8.9
        ("Ampere", "I'm using an RTX 3090"),  # a name, not read
    ],
)
def test_a_list_the_gpu_runs_decides_nothing(
    cli: Callable[..., CliResult], tmp_path: Path, arch_list: str, gpu: str
) -> None:
    found = causes(
        cli, log_file(tmp_path, f'export TORCH_CUDA_ARCH_LIST="{arch_list}"', gpu, _NO_IMAGE)
    )
    assert found["CUD153"]["verdict"] == "unknown"


def test_no_gpu_named_leaves_it_open(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    found = causes(cli, log_file(tmp_path, "TORCH_CUDA_ARCH_LIST=7.5 pip install .", _NO_IMAGE))
    assert found["CUD153"]["verdict"] == "unknown"


def test_the_prose_gpu_and_torch_build_decide_the_extension(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """torch 2.0.1+cu117 has sm_86: the kernel without an image is an extension's."""
    line = "I'm using an NVIDIA GeForce RTX 3090 with torch==2.0.1+cu117"
    found = causes(cli, log_file(tmp_path, line, _NO_IMAGE))
    assert found["CUD153"]["verdict"] == "confirmed"
    assert found["TOR101"]["verdict"] == "ruled_out"


@pytest.mark.parametrize(
    "line",
    [
        "Built with pytorch 1.7, cuda 10.2, TITAN X, got this error.",  # two architectures
        "The RTX 4090 is faster than the A100 in this benchmark",  # no word that it is the GPU
    ],
)
def test_a_model_in_passing_is_no_fact(
    cli: Callable[..., CliResult], tmp_path: Path, line: str
) -> None:
    found = causes(cli, log_file(tmp_path, line, _NO_IMAGE))
    assert found["CUD153"]["verdict"] == "unknown"
