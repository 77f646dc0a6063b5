"""'Torch not compiled with CUDA enabled' is torch's own statement that it is a CPU-only build: it
confirms TOR110 from the line; the fix names the CUDA build of the node's release when the node
is known, else how to install one with pip or conda (and mamba where conda keeps the CPU build,
as PMBio/deeprvat#16 established)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult

# PMBio/deeprvat#16 (the traceback as pasted)
LOG = """>>> print('Current cuda device ', torch.cuda.current_device())
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/data/magnus/mambaforge/envs/conda_deeprvat/lib/python3.8/site-packages/torch/cuda/__init__.py", line 221, in _lazy_init
    raise AssertionError("Torch not compiled with CUDA enabled")
AssertionError: Torch not compiled with CUDA enabled
"""


def _tor110(cli: Callable[..., CliResult], tmp_path: Path, *extra: str) -> Any:
    log = tmp_path / "job.log"
    log.write_text(LOG)
    result = cli("triage", str(log), "--json", "--no-probe", *extra)
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    return next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR110")


def test_the_line_confirms_a_cpu_only_torch(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    tor110 = _tor110(cli, tmp_path)
    assert tor110["verdict"] == "confirmed"
    [finding] = tor110["findings"]
    assert finding["severity"] == "error"
    assert "line 6" in finding["message"]  # the line that raised it (line 5 is the source echo)
    summary = " ".join(finding["fix"]["commands"])
    assert "pytorch-cuda" in summary and "mamba" in summary and "cpuonly" in summary


def test_a_known_node_gets_the_cuda_build_of_its_release(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    spec = tmp_path / "stack.toml"
    spec.write_text(
        '[gpu]\nmodels = ["NVIDIA A100-SXM4-80GB"]\ndriver = "535.104.05"\n'
        '[packages]\ntorch = "2.1.2+cpu"\n'
    )
    [finding] = _tor110(cli, tmp_path, "--spec", str(spec))["findings"]
    assert "torch 2.1.2+cpu is a CPU-only build" in finding["message"]
    assert finding["fix"]["summary"].startswith("Replace the CPU-only torch with torch 2.1.2+cu")
    assert any("download.pytorch.org/whl/cu" in c for c in finding["fix"]["commands"])


# pytorch/pytorch#69202 (the request as the reporter wrote it)
CONDA = (
    "I have tried to install cudatoolkit 11.3 with `conda install -c pytorch pytorch=1.9.0 "
    "torchvision cudatoolkit=11.3`. After successful installing pytorch, my GPU is not available "
    "anymore: torch.cuda.is_available=**False**\n"
)


def _conda(cli: Callable[..., CliResult], tmp_path: Path, text: str) -> Any:
    log = tmp_path / "install.log"
    log.write_text(text)
    result = cli("triage", str(log), "--json", "--no-probe")
    return result.json()["data"]["matches"]


def test_a_conda_request_no_channel_build_meets_confirms_the_cpu_build(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    [match] = _conda(cli, tmp_path, CONDA)
    tor110 = next(c for c in match["causes"] if c["code"] == "TOR110")
    assert tor110["verdict"] == "confirmed"
    [finding] = tor110["findings"]
    assert (
        "torch 1.9.0 installed by this request (line 1) is the CPU-only build"
        in (finding["message"])
    )
    assert any(
        "conda install pytorch==1.9.0 cudatoolkit=11.1" in c for c in finding["fix"]["commands"]
    )


def test_a_release_the_channel_builds_for_11_3_is_not_matched(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # pytorch 1.10.0 has cudatoolkit 11.3 builds: nothing to say
    assert _conda(cli, tmp_path, CONDA.replace("pytorch=1.9.0", "pytorch=1.10.0")) == []
