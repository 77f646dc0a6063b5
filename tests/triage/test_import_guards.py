"""Libraries' import guards in their own words (transformers' FlashAttention 2 check and its
quantizers' guards that name the pip command, pandas' optional dependencies, importlib.metadata's
PackageNotFoundError in its older forms) confirm PY151 with the package the line names; a line
that asks for the latest release prints the upgrade form (matrices/signatures/python_imports.toml,
envcheck/rules/node/imports.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file


@pytest.mark.parametrize(
    ("line", "command"),
    [
        (
            "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the "
            "following error: the package flash_attn seems to be not installed. Please refer to "
            "the documentation of https://huggingface.co/docs/transformers/perf_infer_gpu_one"
            "#flashattention-2 to install Flash Attention 2.",
            "pip install flash-attn",
        ),
        (
            "ImportError: Loading a GPTQ quantized model requires optimum (`pip install optimum`)",
            "pip install optimum",
        ),
        (
            "ImportError: Using `bitsandbytes` 4-bit quantization requires the latest version of "
            "bitsandbytes: `pip install -U bitsandbytes`",
            "pip install --upgrade bitsandbytes",
        ),
        (
            "ImportError: Please install the latest version of peft: `pip install -U peft`",
            "pip install --upgrade peft",
        ),
        (
            "ImportError: Missing optional dependency 'pyarrow'.  Use pip or conda to install "
            "pyarrow.",
            "pip install pyarrow",
        ),
        ("importlib.metadata.PackageNotFoundError: deepspeed", "pip install deepspeed"),
        (
            "importlib.metadata.PackageNotFoundError: No package metadata was found for The "
            "'accelerate' distribution was not found and is required by the application",
            "pip install accelerate",
        ),
    ],
)
def test_the_guards_line_names_the_package_to_install(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, command: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["PY151"]
    assert cause["verdict"] == "confirmed", cause
    commands = cause["findings"][0]["fix"]["commands"]
    assert command in commands, fix_text(cause)
    assert "pip install the" not in fix_text(cause)


def test_a_guard_that_names_no_command_is_not_read_as_one(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # a hint in an INFO line is no import failure: no ImportError, no signature
    log = log_file(
        tmp_path, "INFO: for faster downloads install hf_transfer (`pip install hf_transfer`)"
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 0, result.stdout
