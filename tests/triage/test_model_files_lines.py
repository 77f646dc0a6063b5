"""SYS244: a model file that is not the model, the fix by the form the loader's words show
(matrices/signatures/model_files.toml, rules/node/model_files.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("line", "form", "wanted"),
    [
        ("_pickle.UnpicklingError: invalid load key, 'v'.", "Git LFS pointer", "git lfs pull"),
        (
            "_pickle.UnpicklingError: Weights only load failed. Unsupported operand 118",
            "Git LFS pointer",
            "git lfs install",
        ),
        (
            "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
            "Git LFS pointer",
            "git lfs pull",
        ),
        ("_pickle.UnpicklingError: invalid load key, '<'.", "HTML page", "direct link"),
        (
            "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding "
            "central directory",
            "cut short",
            "download it again",
        ),
        (
            "safetensors_rust.SafetensorError: Error while deserializing header: "
            "MetadataIncompleteBuffer",
            "cut short",
            "sha256sum",
        ),
        (
            "OSError: Unable to open file (file signature not found)",
            "loader's format",
            "git lfs pull",
        ),
    ],
)
def test_the_form_the_loader_states_decides_the_fix(
    cli: Cli, tmp_path: Path, line: str, form: str, wanted: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS244"]
    assert cause["verdict"] == "confirmed"
    assert form in cause["findings"][0]["message"]
    text = fix_text(cause)
    assert wanted in text and "head -c 200" in text


def test_unsupported_operand_of_another_byte_is_not_a_pointer(cli: Cli, tmp_path: Path) -> None:
    line = "_pickle.UnpicklingError: Weights only load failed. Unsupported operand 1180"
    assert "SYS244" not in causes_or_none(cli, tmp_path, line)


def causes_or_none(cli: Cli, tmp_path: Path, line: str) -> dict[str, object]:
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    data = result.json()["data"]
    return {c["code"]: c for m in data["matches"] for c in m["causes"]}
