"""Locks proven by installing them: ``check --lock --verify`` installs the lock with uv into a
scratch venv (local wheels on a loopback index) and imports what it runs, each import bounded;
a failure is PKG172 with the versions involved."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from envcheck.commands.lock_verify import VerifyOptions, modules_to_import, verify_lock
from envcheck.plan.resolve import UvMissing, find_uv
from tests.conftest import run_cli
from tests.index.wheels import WheelIndexes, serve
from tests.wheelfactory import WheelSpec

try:
    find_uv()
except UvMissing:  # pragma: no cover
    pytest.skip("uv is not installed (pip install 'envcheck-gpu[lock]')", allow_module_level=True)

PYTHON = ".".join(map(str, sys.version_info[:3]))

# the two failures of the issue, in miniature: a kernel compiler that imports a build tool its
# metadata does not declare (triton 3.0-3.2 and setuptools), and a columnar library that
# refuses the array library it was not built for (pyarrow 26 and numpy 1.26.4)
WORLD = [
    WheelSpec("fakevllm", "0.6.3", ("faketriton==3.0.0",), module="import faketriton\n"),
    WheelSpec("faketriton", "3.0.0", module="import fakesetuptools\n"),
    WheelSpec(
        "fakearrow",
        "26.0.0",
        module=(
            "import fakenumpy\n"
            "if int(fakenumpy.__version__.split('.')[0]) < 2:\n"
            "    raise ImportError(\n"
            "        f'fakearrow requires FakeNumPy 2.0 or newer, found {fakenumpy.__version__}'\n"
            "    )\n"
        ),
    ),
    WheelSpec("fakearrow", "25.0.0", module="import fakenumpy\n"),
    WheelSpec("fakenumpy", "1.26.4"),
    WheelSpec("fakesetuptools", "80.0.0"),
]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[WheelIndexes]:
    served = serve(tmp_path / "served", {"main": WORLD})
    yield served
    served.stop()


def _lock(tmp_path: Path, index: WheelIndexes, *pins: str) -> Path:
    path = tmp_path / "requirements.lock"
    path.write_text(f"--index-url {index.url('main')}\n" + "\n".join(pins) + "\n", "utf-8")
    return path


def test_a_lock_that_installs_but_does_not_import(tmp_path: Path, index: WheelIndexes) -> None:
    lock = _lock(
        tmp_path,
        index,
        "fakevllm==0.6.3",
        "faketriton==3.0.0",
        "fakearrow==26.0.0",
        "fakenumpy==1.26.4",
    )
    result = verify_lock(str(lock), VerifyOptions(python=PYTHON))
    assert result.installed == {
        "fakearrow": "26.0.0",
        "fakenumpy": "1.26.4",
        "faketriton": "3.0.0",
        "fakevllm": "0.6.3",
    }
    messages = sorted(f.message for f in result.findings)
    assert [f.code for f in result.findings] == ["PKG172", "PKG172"]
    assert messages == [
        "import fakearrow fails in the installed lock: ImportError: fakearrow requires FakeNumPy "
        "2.0 or newer, found 1.26.4 (fakearrow 26.0.0, fakenumpy 1.26.4)",
        "import fakevllm fails in the installed lock: ModuleNotFoundError: No module named "
        "'fakesetuptools' (fakevllm 0.6.3, faketriton 3.0.0; fakesetuptools is not in the lock)",
    ]
    assert {s.name for s in result.steps} >= {"venv", "install", "import fakevllm"}
    assert "4 distributions installed" in result.summary
    assert "failed: import fakearrow" in result.summary


def test_the_fixed_lock_verifies_through_the_gate(tmp_path: Path, index: WheelIndexes) -> None:
    lock = _lock(
        tmp_path,
        index,
        "fakevllm==0.6.3",
        "faketriton==3.0.0",
        "fakesetuptools==80.0.0",
        "fakearrow==25.0.0",
        "fakenumpy==1.26.4",
    )
    spec = tmp_path / "node.toml"
    spec.write_text(f'[python]\nversion = "{PYTHON}"\n', encoding="utf-8")
    good = run_cli("check", "--lock", str(lock), "--spec", str(spec), "--verify", "--json")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "every import worked" in good.stderr
    lock.write_text(lock.read_text("utf-8").replace("fakesetuptools==80.0.0\n", ""), "utf-8")
    bad = run_cli("check", "--lock", str(lock), "--spec", str(spec), "--verify", "--json")
    assert bad.returncode == 1
    found = {f["code"]: f for f in json.loads(bad.stdout)["data"]["findings"]}
    assert found["PKG172"]["evidence"]["missing"] == "fakesetuptools"
    assert found["PKG172"]["evidence"]["faketriton"] == "3.0.0"


def test_an_import_that_hangs_is_bounded(tmp_path: Path) -> None:
    served = serve(
        tmp_path / "served",
        {"main": [WheelSpec("sleepy", "1.0", module="import time\ntime.sleep(60)\n")]},
    )
    try:
        lock = _lock(tmp_path, served, "sleepy==1.0")
        result = verify_lock(str(lock), VerifyOptions(python=PYTHON, import_timeout=2))
    finally:
        served.stop()
    assert [f.message for f in result.findings] == [
        "import sleepy fails in the installed lock: timed out after 2 s (sleepy 1.0)"
    ]


def test_what_is_imported() -> None:
    inventory = {
        "vllm": {"version": "0.6.3", "requires": ["torch", "numpy"], "top": ["vllm"]},
        "torch": {
            "version": "2.4.0",
            "requires": ["triton", "numpy"],
            "top": ["torch", "functorch"],
        },
        "triton": {"version": "3.0.0", "requires": ["filelock"], "top": ["triton"]},
        "numpy": {"version": "1.26.4", "requires": [], "top": ["numpy"]},
        "filelock": {"version": "3.16.1", "requires": [], "top": ["filelock"]},
        "setuptools": {"version": "80.0", "requires": [], "top": ["setuptools", "_distutils_hack"]},
    }
    # top-level vllm, and the runtime torch, triton and numpy that it pulls in
    assert modules_to_import(inventory, ["omnigibson"]) == [
        ("vllm", "vllm"),
        ("torch", "torch"),
        ("triton", "triton"),
        ("numpy", "numpy"),
        ("omnigibson", "omnigibson"),
    ]


def test_a_lock_for_another_cpu_is_not_verified_here(tmp_path: Path, index: WheelIndexes) -> None:
    import platform

    other = "aarch64" if platform.machine() == "x86_64" else "x86_64"
    lock = _lock(tmp_path, index, "fakenumpy==1.26.4")
    spec = tmp_path / "node.toml"
    spec.write_text(
        f'[python]\nversion = "{PYTHON}"\n[system]\narch = "{other}"\n', encoding="utf-8"
    )
    result = run_cli("check", "--lock", str(lock), "--spec", str(spec), "--verify")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"envcheck: error: a lock for {other} cannot be installed on this "
        f"{platform.machine()} machine: verify it on the node (`envcheck check --lock FILE "
        "--verify`)"
    ]
