"""A driver too old for torch's CUDA, torch not installed: besides the newest torch build the
driver runs, the fix lists the newest torch of every other CUDA build it runs (threads pin an
older torch their project needs: kronos#71, torch==1.13.1 on a CUDA 11.4 driver), each a
build the driver runs, the newest CUDA first. A found version other than the corpus's."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from packaging.version import Version

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_PIN = re.compile(
    r"older torch of another build it runs: pip install torch==(?P<torch>[0-9.]+) "
    r"--index-url \S+/cu(?P<cuda>[0-9]+)"
)


def test_other_builds_the_driver_runs_are_pinned_newest_cuda_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11020). "
        "Please update your GPU driver by downloading and installing a new version from the "
        "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
        "https://pytorch.org to install a PyTorch version that has been compiled with your "
        "version of the CUDA driver.",
    )
    cause = _causes(cli, log)["DRV101"]
    assert cause["verdict"] == "confirmed", cause
    text = _fix(cause)
    pins = [(m.group("torch"), int(m.group("cuda"))) for m in _PIN.finditer(text)]
    assert pins, text
    first = re.search(r"pip install torch==([0-9.]+) --index-url \S+/cu([0-9]+)", text)
    assert first is not None
    cudas = [cuda for _, cuda in pins]
    assert cudas == sorted(cudas, reverse=True)
    assert all(cuda < int(first.group(2)) for cuda in cudas)  # other, older CUDA builds
    assert all(str(cuda).startswith("11") for cuda in cudas)  # the driver's CUDA 11 line
    assert all(Version(torch) <= Version(first.group(1)) for torch, _ in pins)
