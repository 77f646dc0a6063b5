"""``python -m envcheck`` does not import modules from the working directory (issue 21):
``-m`` puts the working directory first on sys.path, where a planted ``packaging.py`` or
``rich/`` would run as whoever runs the check."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO, cli_env, run_cli

CUD102_BAD = (REPO / "tests" / "rules" / "cases" / "CUD102" / "bad.toml").read_text()


def _plant(folder: Path, marker: Path) -> None:
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    (folder / "packaging.py").write_text(payload)
    (folder / "rich").mkdir()
    (folder / "rich" / "__init__.py").write_text(payload)


def test_modules_planted_in_the_working_directory_are_not_imported(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "marker"
    _plant(work, marker)
    (work / "spec.toml").write_text(CUD102_BAD)
    env = cli_env(HOME=str(tmp_path))
    for args in (["check", "--spec", "spec.toml"], ["check", "--spec", "spec.toml", "--json"]):
        result = run_cli(*args, cwd=work, env=env)
        assert result.returncode == 1, result.stderr  # the check ran, with the real modules
        assert "CUD102" in result.stdout
    assert not marker.exists(), marker.read_text()


def test_envcheck_run_from_its_own_checkout_still_imports_itself(tmp_path: Path) -> None:
    """The one case the working directory stays: envcheck itself was loaded from it."""
    result = run_cli("--version", cwd=REPO, env=cli_env(HOME=str(tmp_path)))
    assert result.returncode == 0 and result.stdout.startswith("envcheck ")
