"""TOR103's build from source: flash-attn's setup.py downloads the release wheel for torch's
major.minor unless FLASH_ATTENTION_FORCE_BUILD=TRUE, so on a torch no release wheel was built
against (NGC's 2.2.0a0+6a974be, a nightly) the fix compiles it first; on any other torch the
reinstall comes first and the forced build is the next step (Dao-AILab/flash-attention#709)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from envcheck.rules.node.flash_attn_source import FORCE_BUILD_COMMAND, no_release_wheel
from tests.conftest import CliResult

# Dao-AILab/flash-attention#709, as pasted (nvcr.io/nvidia/pytorch:23.11-py3)
LINE = (
    "ImportError: /tmp/.local/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-"
    "linux-gnu.so: undefined symbol: _ZNK3c1017SymbolicShapeMeta18init_is_contiguousEv\n"
)


@pytest.mark.parametrize(
    ("torch", "vendor"),
    [
        ("2.2.0a0+6a974be", True),  # NGC 23.11
        ("2.6.0a0+ecf3bae40a.nv25.01", True),  # NGC 25.01
        ("2.4.0.dev20240501", True),  # a nightly
        ("2.1.0+git1234abc", True),  # a source build
        ("2.3.1+cu121", False),
        ("2.3.1+cpu", False),
        ("2.3.1", False),
    ],
)
def test_which_torch_no_release_wheel_was_built_against(torch: str, vendor: bool) -> None:
    assert (no_release_wheel(Version(torch)) is not None) is vendor
    assert no_release_wheel(None) is None


def _tor103(cli: Callable[..., CliResult], tmp_path: Path, spec_text: str | None) -> dict[str, Any]:
    log = tmp_path / "job.log"
    log.write_text("Traceback (most recent call last):\n" + LINE)
    args = ["triage", "--no-probe", str(log), "--json"]
    if spec_text is not None:
        spec = tmp_path / "stack.toml"
        spec.write_text(spec_text)
        args += ["--spec", str(spec)]
    result = cli(*args)
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    cause: dict[str, Any] = next(
        c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR103"
    )
    assert cause["verdict"] == "confirmed"
    [finding] = cause["findings"]
    fix: dict[str, Any] = finding["fix"]
    return fix


def test_a_vendor_torch_gets_the_forced_build_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # a spec that lists torch alone: the failing extension says flash-attn is there too
    fix = _tor103(cli, tmp_path, '[packages]\ntorch = "2.2.0a0+6a974be"\n')
    assert fix["summary"].startswith("Build flash-attn here against torch 2.2.0a0+6a974be")
    assert "Reinstall" not in fix["summary"]  # no release wheel loads on it
    assert fix["commands"][0] == "pip uninstall -y flash-attn"
    assert FORCE_BUILD_COMMAND in fix["commands"][1]


def test_an_unknown_torch_gets_the_reinstall_then_the_forced_build(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    fix = _tor103(cli, tmp_path, None)
    assert fix["commands"][1] == "pip install --no-build-isolation --no-cache-dir flash-attn"
    assert "if the same undefined symbol comes back" in fix["summary"]
    assert FORCE_BUILD_COMMAND in fix["summary"]
    assert FORCE_BUILD_COMMAND in fix["commands"][2]


def test_a_released_torch_gets_a_release_with_its_wheels_and_the_forced_build_after(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    fix = _tor103(cli, tmp_path, '[python]\nversion = "3.10.14"\n[packages]\ntorch = "2.3.1"\n')
    assert fix["summary"].startswith("Reinstall flash-attn ")
    assert "prebuilt wheels for torch 2.3" in fix["summary"]
    assert (
        f"or build it here against the installed torch: {FORCE_BUILD_COMMAND}" in (fix["summary"])
    )


def test_a_log_naming_nvidias_container_gets_the_forced_build_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = tmp_path / "job.log"
    log.write_text(
        "flash_attn 2.3.6 installed through pip in nvcr.io/nvidia/pytorch:23.11-py3:\n" + LINE
    )
    result = cli("triage", "--no-probe", str(log), "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    cause = next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR103")
    assert cause["verdict"] == "confirmed"
    fix = cause["findings"][0]["fix"]
    assert fix["summary"].startswith("Build flash-attn here against the container's torch")
    assert "nvcr.io/nvidia/pytorch:23.11-py3 runs NVIDIA's own" in fix["summary"]
    assert FORCE_BUILD_COMMAND in fix["commands"][1]
