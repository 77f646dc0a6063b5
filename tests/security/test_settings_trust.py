"""Settings you can see and refuse (issue 21): discovery bounded by the repository root and
$HOME, files others could have written passed over, every output naming what it applied,
``--isolated`` ignoring it all, and the command line winning over files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from envcheck.errors import InputError
from envcheck.settings import find_settings
from tests.conftest import REPO, cli_env, run_cli

CUD102_BAD = (REPO / "tests" / "rules" / "cases" / "CUD102" / "bad.toml").read_text()


def _every_prefix() -> str:
    from envcheck.matrix_validate import load
    from envcheck.rules import all_rules

    families = sorted({rule.code[:3] for rule in all_rules(load())})
    return "ignore = [" + ", ".join(f'"{f}"' for f in families) + "]\n"


IGNORE_ALL = _every_prefix()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = cli_env(HOME=str(tmp_path / "home"))
    env.pop("ENVCHECK_MATRIX", None)
    return {**env, **extra}


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A working directory holding a spec with a CUD102 error."""
    work = tmp_path / "job"
    work.mkdir()
    (work / "spec.toml").write_text(CUD102_BAD)
    return work


def test_a_settings_file_in_a_world_writable_directory_is_not_applied(tmp_path: Path) -> None:
    """Another user's /tmp/envcheck.toml: the sticky, world-writable directory is passed over,
    so the CUD102 error stays an error (before: 'No problems found', exit 0)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "envcheck.toml").write_text(IGNORE_ALL)
    shared.chmod(0o1777)
    work = shared / "job"
    work.mkdir(mode=0o755)
    (work / "spec.toml").write_text(CUD102_BAD)
    result = run_cli("check", "--spec", "spec.toml", "--json", cwd=work, env=_env(tmp_path))
    assert result.returncode == 1, result.stderr
    data = result.json()
    assert "CUD102" in {f["code"] for f in data["data"]["findings"]}
    assert data["applied"] == []


def test_a_settings_file_owned_by_another_user_is_not_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "envcheck.toml").write_text(IGNORE_ALL)
    assert find_settings(tmp_path).ignore  # ours: applied
    if os.getuid() == 0:
        os.chown(tmp_path / "envcheck.toml", 65534, 65534)
    else:  # we cannot give a file away: be someone else instead
        real = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real + 1)
    assert find_settings(tmp_path, env={"HOME": str(tmp_path)}).source is None


def test_a_settings_file_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    """A FIFO in the file's place is passed over (never a hang), as is a link."""
    os.mkfifo(tmp_path / "envcheck.toml")
    assert find_settings(tmp_path, env={"HOME": str(tmp_path)}).source is None
    os.unlink(tmp_path / "envcheck.toml")
    (tmp_path / "real.toml").write_text(IGNORE_ALL)
    (tmp_path / "envcheck.toml").symlink_to("real.toml")
    assert find_settings(tmp_path, env={"HOME": str(tmp_path)}).source is None


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "envcheck.toml").write_text(IGNORE_ALL)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert find_settings(repo / "src", env={}).source is None
    (repo / "pyproject.toml").write_text('[tool.envcheck]\nignore = ["CUD"]\n')
    found = find_settings(repo / "src", env={})
    assert (found.source, found.ignore) == (str(repo / "pyproject.toml"), ("CUD",))


def test_discovery_stops_at_home(tmp_path: Path) -> None:
    (tmp_path / "envcheck.toml").write_text(IGNORE_ALL)
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    assert find_settings(home / "project", env={"HOME": str(home)}).source is None
    # a relative HOME is no boundary, and no reason to stop early either
    assert find_settings(home / "project", env={"HOME": "home"}).source is not None


def test_an_8_gb_settings_file_is_refused_not_read(tmp_path: Path) -> None:
    path = tmp_path / "envcheck.toml"
    with open(path, "wb") as handle:
        handle.truncate(8 * 1024**3)  # sparse: no disk used
    with pytest.raises(InputError, match="too big for a settings file"):
        find_settings(tmp_path, env={"HOME": str(tmp_path)})


def test_every_output_names_the_settings_applied(job: Path, tmp_path: Path) -> None:
    (job / "envcheck.toml").write_text(IGNORE_ALL)
    env = _env(tmp_path)
    text = run_cli("check", "--spec", "spec.toml", cwd=job, env=env)
    assert f"envcheck: applied: settings {job / 'envcheck.toml'}" in text.stderr
    result = run_cli("check", "--spec", "spec.toml", "--json", cwd=job, env=env)
    assert result.json()["applied"] == [{"kind": "settings", "path": str(job / "envcheck.toml")}]


def test_isolated_ignores_settings_files_and_overlays(job: Path, tmp_path: Path) -> None:
    (job / "envcheck.toml").write_text(IGNORE_ALL)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    env = _env(tmp_path, ENVCHECK_MATRIX=str(overlay))
    hijacked = run_cli("check", "--spec", "spec.toml", "--json", cwd=job, env=env)
    assert hijacked.returncode == 0, hijacked.stderr  # what the review reproduced, now visible
    assert [e["kind"] for e in hijacked.json()["applied"]] == ["settings", "overlay"]
    assert hijacked.json()["applied"][1] == {
        "kind": "overlay",
        "path": str(overlay),
        "from": "ENVCHECK_MATRIX",
    }
    for line in (
        ["--isolated", "check", "--spec", "spec.toml", "--json"],
        ["check", "--spec", "spec.toml", "--json", "--isolated"],
    ):
        result = run_cli(*line, cwd=job, env=env)
        assert result.returncode == 1, result.stderr
        assert "CUD102" in {f["code"] for f in result.json()["data"]["findings"]}
        assert result.json()["applied"] == []
        assert "applied:" not in result.stderr
    # an overlay that does not exist is not even looked at
    gone = _env(tmp_path, ENVCHECK_MATRIX=str(tmp_path / "nonexistent"))
    assert run_cli("check", "--isolated", "--spec", "spec.toml", cwd=job, env=gone).returncode == 1


def test_isolated_is_accepted_by_every_command(tmp_path: Path) -> None:
    for line in (["rules", "--json"], ["explain", "CUD102", "--json"], ["probe", "--help"]):
        result = run_cli("--isolated", *line, cwd=tmp_path, env=_env(tmp_path))
        assert result.returncode == 0, (line, result.stderr)


def test_a_passed_select_replaces_the_files_lists(job: Path, tmp_path: Path) -> None:
    """The file ignores every prefix; ``--select CUD`` on the command line replaces both of the
    file's lists (before: the file's ignore still removed every rule)."""
    (job / "envcheck.toml").write_text(IGNORE_ALL)
    result = run_cli(
        "check", "--spec", "spec.toml", "--select", "CUD", "--json", cwd=job, env=_env(tmp_path)
    )
    assert result.returncode == 1, result.stderr
    assert "CUD102" in {f["code"] for f in result.json()["data"]["findings"]}


def test_world_writable_means_others_may_write(tmp_path: Path) -> None:
    """The check reads the mode bits: a group-only directory is the owner's business."""
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "envcheck.toml").write_text('ignore = ["CUD"]\n')
    folder.chmod(0o775)
    assert find_settings(folder, env={"HOME": str(folder)}).ignore == ("CUD",)
    folder.chmod(0o777)
    assert not folder.stat().st_mode & stat.S_ISVTX
    assert find_settings(folder, env={"HOME": str(folder)}).source is None
