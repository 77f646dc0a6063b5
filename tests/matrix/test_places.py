"""matrices/ by domain: every built-in entry is in the folder its kind belongs in, the README
maps every folder, and `matrix validate` names the folder for an entry filed elsewhere."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from envcheck.matrix.load import builtin_dir, matrix_files
from envcheck.matrix.places import FOLDERS, PLACES
from envcheck.matrix_validate import load, validate
from tests.conftest import CliResult

REPO = Path(__file__).resolve().parents[2]

SIGNATURE = """\
[[signature]]
id = "site-example"
pattern = "example failure line"
meaning = "test data"
source = "test overlay"
"""


def test_builtin_files_are_in_domain_folders_named_by_what_they_hold() -> None:
    files = matrix_files(builtin_dir())
    assert files
    for path in files:
        folder = path.relative_to(builtin_dir()).parts[0]
        assert folder in FOLDERS, path
        # named by content, never by a branch or a round of work (signatures_pyv3, known_bad_more)
        assert not re.search(
            r"_(pyv|tor|sim|cud|pkg)\d|_(trifix|pkgfix|torchfix|more)\.toml|[a-z]\d\.toml$",
            path.name,
        ), path


def test_every_builtin_entry_is_where_its_kind_belongs() -> None:
    problems = [p for p in validate(load()) if "belongs in" in p.message]
    assert problems == []


def test_every_folder_and_kind_is_in_the_readme() -> None:
    readme = (REPO / "matrices" / "README.md").read_text(encoding="utf-8")
    for folder in FOLDERS:
        assert f"`{folder}/`" in readme
    assert set(PLACES) >= {"gpu", "toolkit", "torch", "vllm", "known_bad", "signature"}


def test_validate_names_the_folder_for_a_misfiled_entry(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    site = tmp_path / "site"
    (site / "cuda").mkdir(parents=True)
    (site / "cuda" / "lines.toml").write_text(SIGNATURE)
    result = cli("matrix", "validate", str(site))
    assert result.returncode == 2
    assert "cuda/lines.toml:1" in result.stderr
    assert "belongs in signatures/" in result.stderr
    (site / "cuda" / "lines.toml").unlink()
    (site / "signatures").mkdir()
    (site / "signatures" / "lines.toml").write_text(SIGNATURE)
    assert cli("matrix", "validate", str(site)).returncode == 0


def test_a_flat_site_overlay_is_not_held_to_the_folders(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "lines.toml").write_text(SIGNATURE)
    assert cli("matrix", "validate", str(site)).returncode == 0
