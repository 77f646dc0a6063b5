"""ABI and loader fixes in the form threads use: a companion of torch's release with the
other C++ ABI (TOR104 builds it here instead of pinning the release already installed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file


def test_a_paired_companion_of_the_pre_cxx11_abi_is_built_here(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/w/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load "
        "image Python extension: /w/lib/python3.10/site-packages/torchvision/image.so: undefined "
        "symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs",
        "torch==1.12.0",
    )
    cause = causes(cli, log)["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "--no-binary torchvision torchvision==0.13.0" in text
    assert "pip install torchvision==0.13.0\n" not in text + "\n"


def test_a_companion_of_another_torch_still_gets_the_paired_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /w/lib/python3.10/site-packages/torchvision/_C.so: undefined symbol: "
        "_ZN3c106Device8validateEv",
        "torch==1.12.0",
    )
    cause = causes(cli, log)["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    assert "torchvision==0.13.0" in fix_text(cause)
    assert "--no-binary" not in fix_text(cause)
