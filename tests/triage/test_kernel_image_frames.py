"""'no kernel image is available' under a traceback whose last frame is a compiled-ops
package's own code (matrices/packages/extensions.toml): the kernel that has no image is that
package's (CUD153); under one whose last frame is torch's own, torch's (TOR101). Read where
the log does not show whether torch covers the GPU."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_FRAMES = (
    "Traceback (most recent call last):",
    '  File "/home/u/train.py", line 10, in <module>',
    "    out = model(x)",
    '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, '
    "in _call_impl",
    "    return forward_call(*args, **kwargs)",
)
_ERROR = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_the_last_frame_in_an_extensions_ops_confirms_that_extensions_build(
    cli: Cli, tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)",
        *_FRAMES,
        '  File "/opt/conda/lib/python3.10/site-packages/mmcv/ops/deform_conv.py", line 80, '
        "in forward",
        "    ext_module.deform_conv_forward(",
        _ERROR,
    )
    cause = causes(cli, log)["CUD153"]
    assert cause["verdict"] == "confirmed"
    assert "mmcv" in cause["findings"][0]["message"]
    text = fix_text(cause)
    assert 'TORCH_CUDA_ARCH_LIST="8.0"' in text  # the A100 the log names
    assert "MMCV_WITH_OPS=1" in text  # the package's own build ([[extension]] build)


def test_a_traceback_that_ends_in_torch_makes_it_torchs_build(cli: Cli, tmp_path: Path) -> None:
    """The kernel without an image was launched from torch's own code: torch's build lacks
    the GPU's architecture (TOR101), not an extension's (CUD153 ruled out), with the build
    that has the named GPU's kernels, though the log states no torch version."""
    log = log_file(
        tmp_path,
        "Using device: NVIDIA GeForce RTX 5090",
        *_FRAMES,
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2450, '
        "in conv2d",
        "    return torch.conv2d(input, weight, bias)",
        _ERROR,
    )
    found = causes(cli, log)
    assert found["CUD153"]["verdict"] == "ruled_out"
    assert found["TOR101"]["verdict"] == "confirmed"
    assert "torch's own code" in found["TOR101"]["findings"][0]["message"]
    assert "cu128" in fix_text(found["TOR101"])  # the first CUDA whose builds have sm_120


def test_a_traceback_of_user_code_only_leaves_both_open(cli: Cli, tmp_path: Path) -> None:
    """The user's own frame called the op directly: torch's kernel or an extension's, the
    log does not say; on a GPU every recent torch build has (an A100), both stay open."""
    log = log_file(
        tmp_path,
        "Using device: NVIDIA A100-SXM4-80GB",
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 10, in <module>',
        "    x = torch.randn(3, device='cuda') * 2",
        _ERROR,
    )
    found = causes(cli, log)
    assert (found["TOR101"]["verdict"], found["CUD153"]["verdict"]) == ("unknown", "unknown")


def test_user_code_on_a_gpu_torch_added_late_reads_as_torchs(cli: Cli, tmp_path: Path) -> None:
    """The same on an RTX 5090: sm_120 is in no default torch build before 2.7, so the kernel
    without an image is most likely torch's (tests/triage/test_kernel_image_new_gpu.py)."""
    log = log_file(
        tmp_path,
        "Using device: NVIDIA GeForce RTX 5090",
        "Traceback (most recent call last):",
        '  File "/home/u/train.py", line 10, in <module>',
        "    x = torch.randn(3, device='cuda') * 2",
        _ERROR,
    )
    found = causes(cli, log)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert "sm_120" in json.dumps(found["TOR101"]["findings"])
