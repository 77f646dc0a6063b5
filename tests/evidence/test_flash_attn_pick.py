"""TOR103's reinstall advice: a log alone (no torch version) whose flash-attn extension misses the
C++11-ABI form of a torch symbol is confirmed and names the newest release whose old-ABI wheels
load (2.8.x's do not: flash-attention#1783); a known-bad pairing's own replacement wins
(R1-V#127, flash-attention#1509); releases the index does not carry are never named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envcheck.facts.node import Facts
from envcheck.ingest.spec import load_spec
from envcheck.rules.node.flash_attn_pick import newest_loading, torch_old_abi
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult

# PrimeIntellect-ai/verifiers#96 (the line as pasted)
CXX11 = (
    "ImportError: /root/qwen3-battleship-grpo/.venv/lib/python3.12/site-packages/flash_attn_2_cuda"
    ".cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7"
    "__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\n"
)
# StarsfieldAI/R1-V#127
STORAGE = (
    "ImportError: /root/miniconda3/envs/r1v/lib/python3.11/site-packages/flash_attn_2_cuda.cpython"
    "-311-x86_64-linux-gnu.so: undefined symbol: _ZNK3c1011StorageImpl27throw_data_ptr_access_errorEv\n"
)


def _tor103(cli: Callable[..., CliResult], tmp_path: Path, line: str, *extra: str) -> Any:
    log = tmp_path / "job.log"
    log.write_text(line)
    result = cli("triage", str(log), "--json", "--no-probe", *extra)
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    return next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR103")


def test_a_cxx11_symbol_alone_confirms_tor103_and_names_the_last_release_before_2_8(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    tor103 = _tor103(cli, tmp_path, CXX11)
    assert tor103["verdict"] == "confirmed"
    [finding] = tor103["findings"]
    assert "the installed torch" in finding["message"]
    assert (
        "pip install --no-build-isolation --no-cache-dir flash-attn==2.7.4.post1"
        in (finding["fix"]["commands"])
    )
    assert "2.8.0 to 2.8.3.post1" in finding["fix"]["summary"]


def test_a_known_bad_pairing_supplies_the_replacement(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.5.1\nflash_attn==2.7.4.post1\n")
    tor103 = _tor103(cli, tmp_path, STORAGE, "--from", str(freeze))
    [finding] = tor103["findings"]
    assert "flash-attn==2.7.3" in " ".join(finding["fix"]["commands"])
    assert "2.8.3" not in finding["fix"]["summary"]


def test_the_pick_skips_broken_old_abi_wheels_and_releases_not_on_the_index(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "stack.toml"
    spec.write_text('[python]\nversion = "3.10"\n')
    facts = Facts(load_spec(str(spec)), builtin_matrix())
    old = newest_loading(facts, "2.5", old_abi=True)
    new = newest_loading(facts, "2.5", old_abi=False)
    assert old is not None and str(old.version) == "2.7.4.post1"
    assert new is not None and new.version > old.version
    # 2.7.4 has a GitHub tag in the curated table but no upload on the index
    for_21 = newest_loading(facts, "2.1", old_abi=True)
    assert for_21 is not None and str(for_21.version) == "2.7.3"


@pytest.mark.parametrize(
    ("torch", "old"),
    [
        ("2.5.1+cu124", True),  # pip wheels before 2.6 use the old ABI
        ("2.6.0+cu124", True),
        ("2.6.0+cu126", False),  # 2.6's CUDA 12.6 builds switched (flash-attention#1644)
        ("2.7.1+cu118", False),  # every 2.7 build uses the C++11 ABI
        ("2.3.0a0+40ec155e58.nv24.3", None),  # NGC's source build: not judged
    ],
)
def test_torch_s_abi_from_its_release_and_variant(
    tmp_path: Path, torch: str, old: bool | None
) -> None:
    spec = tmp_path / "stack.toml"
    spec.write_text(f'[packages]\ntorch = "{torch}"\n')
    facts = Facts(load_spec(str(spec)), builtin_matrix())
    assert torch_old_abi(facts, facts.torch_version()) is old


def test_a_bare_2_7_in_a_package_list_keeps_the_2_8_releases(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.7.1\nflash_attn==2.7.4.post1\n")
    line = CXX11.replace(
        "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "_ZN3c104cuda9SetDeviceEi",
    )
    [finding] = _tor103(cli, tmp_path, line, "--from", str(freeze))["findings"]
    assert "prebuilt wheels for torch 2.7" in finding["fix"]["summary"]
    assert any("flash-attn==2.8." in c for c in finding["fix"]["commands"])
