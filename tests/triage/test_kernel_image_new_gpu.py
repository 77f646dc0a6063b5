"""A bare 'no kernel image is available' (no traceback frame of a compiled-ops package, no
check site in one) on a GPU whose architecture torch's default builds added late (Blackwell's
sm_120: in none before 2.7): torch's own build is the likely one without it (TOR101, the fix a
torch build with the GPU's kernels: cu128 for sm_120), as lllyasviel/FramePack#267 established.
Where every recent default build has the architecture (an A100), or the newest builds dropped
it (a GTX 1080), or a native program's own check site reports the error (ggml-cuda.cu), the
GPU alone decides nothing (envcheck/rules/node/torch_stated.py _default_builds_lack)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_BARE = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
)


def test_a_blackwell_gpu_reads_a_bare_error_as_torchs(cli: Cli, tmp_path: Path) -> None:
    log = log_file(tmp_path, "GPU 0: NVIDIA GeForce RTX 5070 Ti (UUID: GPU-1)", *_BARE)
    found = causes(cli, log)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert "most likely torch's" in found["TOR101"]["findings"][0]["message"]
    assert "whl/cu128" in fix_text(found["TOR101"])
    assert found["CUD153"]["verdict"] != "confirmed"


@pytest.mark.parametrize(
    "gpu",
    [
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)",
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)",
        "GPU 0: NVIDIA GeForce GTX 1080 (UUID: GPU-1)",
    ],
)
def test_a_gpu_every_recent_build_has_or_the_newest_dropped_leaves_it_open(
    cli: Cli, tmp_path: Path, gpu: str
) -> None:
    found = causes(cli, log_file(tmp_path, gpu, *_BARE))
    assert found["TOR101"]["verdict"] == "unknown"


def test_an_extensions_frame_keeps_it_the_extensions(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-1)",
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.11/site-packages/flash_attn/flash_attn_interface.py", '
        "line 91, in _flash_attn_forward",
        "    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.fwd(",
        *_BARE,
    )
    assert causes(cli, log)["TOR101"]["verdict"] != "confirmed"


def test_a_native_programs_check_site_is_not_torchs(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "Device 0: NVIDIA GeForce RTX 5060, compute capability 12.0, VMM: yes, VRAM: 8150 MiB",
        "ggml_cuda_compute_forward: IM2COL failed",
        "CUDA error: no kernel image is available for execution on the device",
        "current device: 0, in function ggml_cuda_compute_forward at "
        "D:\\a\\CrispASR\\CrispASR\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:2824",
    )
    found = causes(cli, log)
    assert found["TOR101"]["verdict"] != "confirmed"
    assert found["CUD153"]["verdict"] == "confirmed"
