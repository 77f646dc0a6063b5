"""Environment text as users paste it into issues: report formats of other tools, markdown
decoration, retyped and cut-off dumps, fragments and mixtures. Samples keep the tools' own
layout (sources next to each)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.errors import EnvcheckError
from envcheck.ingest.common import Source
from envcheck.ingest.detect import detect, parse
from envcheck.model.report import NodeReport
from tests.conftest import CliResult

INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"
COLLECT_ENV = (INGEST / "collect_env_torch2.3_h20.txt").read_text()

# `ds_report`'s environment block, as quoted in deepspeedai/DeepSpeed#6762
DS_REPORT = """\
DeepSpeed general environment info:
torch install path ............... ['/home/deepspeed/test/trans-venv/lib/python3.12/site-packages/torch']
torch version .................... 2.3.0+cu121
deepspeed install path ........... ['/home/deepspeed/test/trans-venv/lib/python3.12/site-packages/deepspeed']
deepspeed info ................... 0.15.5+unknown, unknown, unknown
torch cuda version ............... 12.1
torch hip version ................ None
nvcc version ..................... 12.0
deepspeed wheel compiled w. ...... torch 0.0, cuda 0.0
shared memory (/dev/shm) size .... 125.77 GB
"""
# `transformers env` (transformers/commands/env.py), as pasted in issue templates
TRANSFORMERS_ENV = """\
- `transformers` version: 4.36.2
- Platform: Linux-5.15.0-1041-azure-x86_64-with-glibc2.31
- Python version: 3.10.13
- Huggingface_hub version: 0.20.1
- Safetensors version: 0.4.1
- Accelerate version: 0.25.0
- Accelerate config: \tnot found
- PyTorch version (GPU?): 2.1.2+cu121 (True)
- Tensorflow version (GPU?): not installed (NA)
- Flax version (CPU?/GPU?/TPU?): not installed (NA)
- Jax version: not installed
- JaxLib version: not installed
- Using GPU in script?: <fill in>
- Using distributed or parallel set-up in script?: <fill in>
"""
# `accelerate env` (accelerate/commands/env.py)
ACCELERATE_ENV = """\
- `Accelerate` version: 0.25.0
- Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35
- Python version: 3.10.12
- Numpy version: 1.26.2
- PyTorch version (GPU?): 2.1.1+cu121 (True)
- PyTorch XPU available: False
- PyTorch NPU available: False
- System RAM: 1007.53 GB
- GPU type: NVIDIA A100-SXM4-80GB
- `Accelerate` default config:
\tNot found
"""


def report_of(text: str) -> NodeReport:
    return parse(Source(name="dump.txt", text=text))


def versions(report: NodeReport) -> dict[str, str]:
    assert report.packages.data is not None
    return {d.key: d.version for d in report.packages.data.distributions}


def test_ds_report() -> None:
    report = report_of(DS_REPORT)
    assert report.torch.data is not None
    assert (report.torch.data.version, report.torch.data.cuda) == ("2.3.0+cu121", "12.1")
    assert versions(report)["deepspeed"] == "0.15.5+unknown"
    assert "torch" in versions(report) and versions(report)["torch"] == "2.3.0+cu121"
    assert report.system.data is not None and report.system.data.nvcc is not None
    assert report.system.data.nvcc.version == "12.0"


@pytest.mark.parametrize(
    ("text", "python", "torch", "packages", "glibc", "gpus"),
    [
        (
            TRANSFORMERS_ENV,
            "3.10.13",
            "2.1.2+cu121",
            {"transformers": "4.36.2", "huggingface-hub": "0.20.1", "accelerate": "0.25.0"},
            "2.31",
            None,
        ),
        (
            ACCELERATE_ENV,
            "3.10.12",
            "2.1.1+cu121",
            {"accelerate": "0.25.0", "numpy": "1.26.2"},
            "2.35",
            ["NVIDIA A100-SXM4-80GB"],
        ),
    ],
)
def test_labelled_reports(
    text: str,
    python: str,
    torch: str,
    packages: dict[str, str],
    glibc: str,
    gpus: list[str] | None,
) -> None:
    report = report_of(text)
    assert detect(text) == "env-text"
    assert report.python.data is not None and report.python.data.version == python
    assert report.torch.data is not None and report.torch.data.version == torch
    assert packages.items() <= versions(report).items()
    assert "tensorflow" not in versions(report) and "jax" not in versions(report)
    assert report.system.data is not None and report.system.data.glibc == glibc
    found = [g.name for g in report.gpu.data.gpus or ()] if report.gpu.data else None
    assert (found or None) == gpus


def test_partial_parse_says_what_is_missing() -> None:
    report = report_of(TRANSFORMERS_ENV)
    assert any("does not state GPU, driver version" in n for n in report.packages.notes)


@pytest.mark.parametrize(
    "decorate",
    [
        lambda t: "```\n" + t + "```\n",  # a markdown fence
        lambda t: "```text\n" + t + "\n```",
        lambda t: "".join("> " + line for line in t.splitlines(keepends=True)),  # a quote
        lambda t: t.replace("PyTorch version: ", "PyTorch version：").replace(
            "Nvidia driver version: ", "Nvidia driver version："
        ),  # full-width colons
        lambda t: t.replace("PyTorch version: ", "PyTorch version ").replace(
            "Is debug build: ", "Is debug build "
        ),  # retyped without colons
    ],
    ids=["fence", "fence-lang", "quote", "full-width-colon", "no-colon"],
)
def test_decorated_collect_env_gives_the_same_facts(decorate: Callable[[str], str]) -> None:
    plain = report_of(COLLECT_ENV)
    report = report_of(decorate(COLLECT_ENV))
    assert report.origin.detail == plain.origin.detail
    for name in ("gpu", "python", "torch", "packages"):
        assert getattr(report, name).data == getattr(plain, name).data, name


def test_collect_env_followed_by_pip_list() -> None:
    text = (
        COLLECT_ENV + "\n$ pip list\nPackage    Version\n---------- -------\n"
        "vllm       0.5.0\nray        2.10.0\nxformers   0.0.26\n"
    )
    found = versions(report_of(text))
    assert {"vllm": "0.5.0", "ray": "2.10.0", "torch": "2.3.0"}.items() <= found.items()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # `pip list | grep torch`
        ("torch                    2.4.0\ntorchaudio               2.4.0\n", {"torch": "2.4.0"}),
        # `conda list` rows without the header
        (
            "pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch\n"
            "pytorch-cuda              12.1                 ha16c6d3_5    pytorch\n",
            {"torch": "2.1.0"},
        ),
    ],
    ids=["pip-list-grep", "conda-no-header"],
)
def test_fragments(text: str, expected: dict[str, str]) -> None:
    report = report_of(text)
    assert expected.items() <= versions(report).items()
    assert report.packages.data is not None and report.packages.data.partial


def test_conda_rows_keep_the_build_cuda() -> None:
    report = report_of(
        "pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch\n"
    )
    assert report.torch.data is not None and report.torch.data.cuda == "12.1"


def test_freeze_headed_by_python_line() -> None:
    report = report_of("python=3.10.12\ntorch==2.3.0\nnumpy==1.26.4\nvllm==0.5.0\n")
    assert report.origin.detail == "dump.txt (pip freeze)"
    assert report.python.data is not None and report.python.data.version == "3.10.12"
    assert report.packages.data is not None and report.packages.data.partial is None
    assert "python" not in versions(report)


def test_isaac_sim_issue_template() -> None:
    text = (
        "### Isaac Sim version\n\n4.5.0\n\n### Operating System (OS)\n\nUbuntu 22.04\n\n"
        "### GPU Name\n\nRTX 4090\n\n### GPU Driver and CUDA versions\n\n550.120, CUDA 12.4\n"
    )
    report = report_of(text)
    assert versions(report)["isaacsim"] == "4.5.0"
    assert report.gpu.data is not None and report.gpu.data.driver_version == "550.120"
    assert [g.name for g in report.gpu.data.gpus or ()] == ["RTX 4090"]
    assert report.system.data is not None and report.system.data.os_pretty == "Ubuntu 22.04"


def test_text_without_any_fact_is_refused() -> None:
    with pytest.raises(EnvcheckError, match="format not recognised"):
        report_of("The training hangs after a few steps, any idea?\nThanks!\n")


def test_cli_refuses_a_factless_text_in_one_line(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    path = tmp_path / "dump.txt"
    path.write_text("it crashes, please help\n")
    result = cli("check", "--from", str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_facts_say_which_line_they_came_from() -> None:
    report = report_of(COLLECT_ENV)
    assert "read from dump.txt: torch line 2, torch_cuda line 4" in report.torch.notes
    assert "read from dump.txt: python line 13" in report.python.notes
    labelled = report_of(ACCELERATE_ENV)
    assert "read from dump.txt: gpu line 9" in labelled.gpu.notes
    assert "read from dump.txt: python line 3" in labelled.python.notes
