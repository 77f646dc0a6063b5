"""SYS243: a prebuilt binary using instructions the CPU lacks, the fix worded from the package
the log names (matrices/signatures/cpu_instructions.toml, rules/node/cpu_instructions.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("lines", "package", "wanted"),
    [
        ((">>> import polars", "Illegal instruction (core dumped)"), "polars", "polars-lts-cpu"),
        (('zsh: illegal hardware instruction  python -c "import polars"',), "polars", "lts-cpu"),
        (
            (">>> import tensorflow as tf", "Illegal instruction (core dumped)"),
            "tensorflow",
            "tensorflow==1.5",
        ),
        (
            (
                '  File "/x/site-packages/torch/nn/init.py", line 3',
                "Fatal Python error: Illegal instruction",
            ),
            "torch",
            "ATEN_CPU_CAPABILITY=default",
        ),
        (
            ("$ python -m tiledbsoma", "Illegal instruction (core dumped)"),
            "tiledbsoma",
            "--no-binary tiledbsoma tiledbsoma",
        ),
    ],
)
def test_fix_by_the_package_the_log_names(
    cli: Cli, tmp_path: Path, lines: tuple[str, ...], package: str, wanted: str
) -> None:
    cause = causes(cli, log_file(tmp_path, *lines))["SYS243"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert wanted in text and "/proc/cpuinfo" in text
    assert package in cause["findings"][0]["message"]


def test_a_library_check_names_the_missing_extensions(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "/env/lib/python3.10/site-packages/polars/_cpu_check.py:258: RuntimeWarning: Missing "
        "required CPU features.",
        "",
        "The following required CPU features were not detected:",
        "    avx2, fma, bmi1",
    )
    cause = causes(cli, log)["SYS243"]
    assert "avx2, fma, bmi1" in cause["findings"][0]["message"]
    assert "polars-lts-cpu" in fix_text(cause)


def test_no_package_named_gives_the_generic_fix(cli: Cli, tmp_path: Path) -> None:
    text = fix_text(causes(cli, log_file(tmp_path, "Illegal instruction (core dumped)"))["SYS243"])
    assert "--no-binary PKG PKG" in text and "host-passthrough" in text


def test_cuda_illegal_instruction_is_not_sigill(cli: Cli, tmp_path: Path) -> None:
    line = "RuntimeError: CUDA error: an illegal instruction was encountered"
    assert "SYS243" not in causes(cli, log_file(tmp_path, line))


def test_a_mac_gets_the_native_arm64_python_not_an_old_x86_wheel(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "Python 3.11.7 (main, Dec  4 2023, 18:10:11) [Clang 15.0.0] on darwin",
        ">>> import tensorflow",
        "Illegal instruction: 4",
    )
    text = fix_text(causes(cli, log)["SYS243"])
    assert "arm64" in text and "Rosetta" in text and "pip install tensorflow" in text
    assert "tensorflow==1.5" not in text and "/proc/cpuinfo" not in text


def test_an_amd64_image_on_an_arm64_host_gets_the_arm64_image(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "WARNING: The requested image's platform (linux/amd64) does not match the detected host "
        "platform (linux/arm64/v8) and no specific platform was requested",
        "2022-02-15 12:06:56.739129: F tensorflow/core/platform/cpu_feature_guard.cc:37] The "
        "TensorFlow library was compiled to use AVX instructions, but these aren't available on "
        "your machine.",
    )
    cause = causes(cli, log)["SYS243"]
    assert "AVX" in cause["findings"][0]["message"]
    (first, *_) = cause["findings"][0]["fix"]["commands"]
    assert "--platform linux/arm64" in first
