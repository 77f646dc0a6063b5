"""The matrices ship inside the wheel and are found with importlib.resources once installed."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO, cli_env

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    return next(out.glob("envcheck_gpu-*.whl"))


def test_wheel_contains_the_matrices(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    toml = {n for n in names if n.startswith("envcheck/matrices/") and n.endswith(".toml")}
    shipped = {p.relative_to(REPO).as_posix() for p in (REPO / "matrices").rglob("*.toml")}
    assert shipped and {f"envcheck/{name}" for name in shipped} <= toml


def test_installed_wheel_finds_its_matrices(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    code = (
        "import json, envcheck; from envcheck.matrix.load import builtin_dir, load;"
        "m = load(env={}); print(json.dumps([envcheck.__file__, str(builtin_dir()), len(m.torch_releases)]))"
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = cli_env(PYTHONPATH=str(target))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=outside,
        check=True,
    )
    module, matrices, count = json.loads(proc.stdout)
    assert module.startswith(str(target))
    assert matrices == str(target / "envcheck" / "matrices")
    assert count >= 30
    validate = subprocess.run(
        [sys.executable, "-m", "envcheck", "matrix", "validate"],
        capture_output=True,
        text=True,
        env=env,
        cwd=outside,
        check=False,
    )
    assert validate.returncode == 0 and validate.stdout.startswith("matrix ok:")
