"""pip's uninstall of torch while it installed a torch companion (TOR104 from
`Found existing installation: torch X` below the companion's install): the companion built
for the torch pip removed (envcheck/rules/node/torch_stated.py, _replaced_torch_hit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file


def test_the_companion_of_the_removed_torch_is_pinned(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "pip3 install -U xformers --index-url https://download.pytorch.org/whl/cu121",
        "Installing collected packages: torch, xformers",
        "  Attempting uninstall: torch",
        "    Found existing installation: torch 2.4.1",
        "    Uninstalling torch-2.4.1:",
        "      Successfully uninstalled torch-2.4.1",
    )
    cause = causes(cli, log)["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    assert "pip install xformers==0.0.28" in fix_text(cause)


def test_a_cuda_variant_of_the_removed_torch_names_its_index(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Collecting torchvision",
        "Collecting torch==2.4.0 (from torchvision)",
        "  Attempting uninstall: torch",
        "    Found existing installation: torch 2.3.0+cu121",
    )
    cause = causes(cli, log)["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "torchvision==0.18.0" in text
    assert "whl/cu121" in text


def test_torch_removed_without_a_companion_named_leaves_the_cause_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "  Attempting uninstall: torch",
        "    Found existing installation: torch 2.4.1",
    )
    assert causes(cli, log)["TOR104"]["verdict"] != "confirmed"


def test_torch_asked_for_in_the_install_is_not_a_companion_replacing_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "pip install -U torch torchvision",
        "Collecting torch",
        "Collecting torchvision",
        "  Attempting uninstall: torch",
        "    Found existing installation: torch 2.4.1",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    assert "pip removed torch" not in result.stdout
