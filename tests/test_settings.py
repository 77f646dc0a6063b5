"""Settings from envcheck.toml or pyproject.toml's [tool.envcheck], nearest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.errors import InputError
from envcheck.settings import Settings, find_settings


def test_a_project_pyproject_without_envcheck_is_not_parsed(tmp_path: Path) -> None:
    """Most pyproject.toml files are not envcheck's: one that cannot name a tool.envcheck
    table is passed over without parsing, even when it is not valid TOML, and the search goes
    on to the parent directories."""
    (tmp_path / "envcheck.toml").write_text('ignore = ["DRV103"]\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff\n')
    settings = find_settings(project)
    assert settings.ignore == ("DRV103",)
    assert settings.source == str((tmp_path / "envcheck.toml").resolve())


@pytest.mark.parametrize(
    "text",
    [
        '[tool.envcheck]\nignore = ["PKG101"]\n',
        '[tool]\nenvcheck = { ignore = ["PKG101"] }\n',
        'tool.envcheck.ignore = ["PKG101"]\n',
        '[tool."\\u0065nvcheck"]\nignore = ["PKG101"]\n',  # an escaped letter in a quoted key
    ],
)
def test_every_spelling_of_the_table_is_read(tmp_path: Path, text: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    assert find_settings(tmp_path).ignore == ("PKG101",)


def test_a_broken_pyproject_that_may_configure_envcheck_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.envcheck\nignore = 1\n")
    with pytest.raises(InputError, match="invalid TOML"):
        find_settings(tmp_path)


def test_no_settings_anywhere(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_settings(tmp_path).ignore == Settings().ignore
