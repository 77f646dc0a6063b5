"""Interpreters inspected without running them (issue 21): ``probe --python X`` ran X's .pth
files and sitecustomize with envcheck's whole environment, secrets included. X is now run
isolated (``-I -S``, a minimal environment) only to learn its paths; its distributions are read
from them as data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli

SECRET = "s3cr3t-token-value-1234"


@pytest.fixture
def target(tmp_path: Path) -> tuple[Path, Path]:
    """A venv whose .pth file and sitecustomize write a marker and print an env secret, with
    one distribution installed (its dist-info only) and a path a .pth file adds."""
    venv = tmp_path / "target"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    (site,) = (venv / "lib").glob("python*/site-packages")
    marker = tmp_path / "marker"
    payload = (
        f"import os; open({str(marker)!r}, 'a').write('ran\\n'); "
        "print(os.environ.get('MY_API_TOKEN'))"
    )
    (site / "evil.pth").write_text(payload + "\n")
    (site / "sitecustomize.py").write_text(payload.replace("; ", "\n") + "\n")
    extra = tmp_path / "extra"
    (extra / "plantedpkg-1.2.3.dist-info").mkdir(parents=True)
    (extra / "plantedpkg-1.2.3.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: plantedpkg\nVersion: 1.2.3\n"
    )
    (site / "paths.pth").write_text(f"{extra}\n")
    info = site / "realpkg-4.5.6.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: realpkg\nVersion: 4.5.6\n")
    return venv / "bin" / "python", marker


def test_the_target_runs_no_pth_file_or_sitecustomize_and_sees_no_secret(
    target: tuple[Path, Path], tmp_path: Path
) -> None:
    python, marker = target
    env = cli_env(HOME=str(tmp_path), MY_API_TOKEN=SECRET, PYTHONSTARTUP=str(tmp_path / "x"))
    result = run_cli("probe", "--python", str(python), "--json", cwd=tmp_path, env=env)
    assert not marker.exists()
    assert SECRET not in result.stdout + result.stderr
    assert result.returncode == 0, result.stderr
    report = result.json()
    packages = {d["name"]: d["version"] for d in report["packages"]["data"]["distributions"]}
    # read from the target's site-packages and from a path its .pth file adds, as data
    assert packages.get("realpkg") == "4.5.6"
    assert packages.get("plantedpkg") == "1.2.3"
    assert report["python"]["data"]["prefix"] == str(python.parent.parent)
