"""``check --lock`` checks what pip checks: format from content, Requires-Python, wheel tags
against the node's Python, CPU architecture and glibc, and the environments markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.plan.installable import Node, detect_format, lock_problem, node_from, wheel_fits
from tests.conftest import run_cli

PY310_X86 = node_from(
    {
        "python_version": "3.10",
        "python_full_version": "3.10.12",
        "platform_machine": "x86_64",
        "sys_platform": "linux",
    },
    "2.35",
)
GH200 = node_from(
    {
        "python_version": "3.11",
        "python_full_version": "3.11.9",
        "platform_machine": "aarch64",
        "sys_platform": "linux",
    },
    "2.35",
)
OLD_GLIBC = node_from(
    {
        "python_version": "3.11",
        "python_full_version": "3.11.9",
        "platform_machine": "x86_64",
        "sys_platform": "linux",
    },
    "2.17",
)

# the shape uv export writes (trimmed to three packages)
PYLOCK_311_X86 = """\
lock-version = "1.0"
created-by = "uv"
environments = ["python_full_version == '3.11.*' and platform_machine == 'x86_64' and sys_platform == 'linux'"]
requires-python = ">=3.11, <3.12"

[[packages]]
name = "filelock"
version = "3.16.1"
index = "https://index.example/simple"
wheels = [{ url = "https://files.example/filelock-3.16.1-py3-none-any.whl", hashes = { sha256 = "00" } }]

[[packages]]
name = "numpy"
version = "2.1.3"
index = "https://index.example/simple"
wheels = [
    { url = "https://files.example/numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", hashes = { sha256 = "11" } },
    { url = "https://files.example/numpy-2.1.3-cp311-cp311-manylinux_2_28_aarch64.whl", hashes = { sha256 = "22" } },
]

[[packages]]
name = "torch"
version = "2.5.1"
index = "https://index.example/simple"
wheels = [{ url = "https://files.example/torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl", hashes = { sha256 = "33" } }]
"""


def _unpinned(text: str) -> str:
    """The same packages, without the lock's top-level Python and environment claims."""
    claims = ("environments", "requires-python")
    lines = [line for line in text.splitlines() if not line.startswith(claims)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        (PYLOCK_311_X86, "pylock"),
        ("name: x\ndependencies:\n  - 'python=3.11.9'\n", "conda"),
        ("torch==2.5.1 \\\n    --hash=sha256:00\n", "requirements"),
    ],
)
def test_format_from_content(text: str, fmt: str) -> None:
    assert detect_format(text) == fmt


@pytest.mark.parametrize(
    ("filename", "node", "fits"),
    [
        ("numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", OLD_GLIBC, True),
        ("numpy-2.1.3-cp311-cp311-manylinux_2_28_x86_64.whl", OLD_GLIBC, False),
        ("numpy-2.1.3-cp311-cp311-manylinux_2_28_x86_64.whl", PY310_X86, False),
        ("numpy-2.1.3-cp311-cp311-manylinux_2_28_aarch64.whl", GH200, True),
        ("torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl", GH200, False),
        ("cryptography-43.0.0-cp39-abi3-manylinux_2_28_aarch64.whl", GH200, True),
        ("filelock-3.16.1-py3-none-any.whl", PY310_X86, True),
    ],
)
def test_wheel_tags_against_the_node(filename: str, node: Node | None, fits: bool) -> None:
    assert node is not None
    assert wheel_fits(filename, node) is fits


def test_pylock_problems_name_the_first_package() -> None:
    assert PY310_X86 is not None and GH200 is not None and OLD_GLIBC is not None
    assert "requires Python >=3.11, <3.12; this node runs 3.10.12" in str(
        lock_problem(PYLOCK_311_X86, "pylock", PY310_X86)
    )
    assert "this node is Python 3.11.9, aarch64" in str(
        lock_problem(PYLOCK_311_X86, "pylock", GH200)
    )
    # without the lock-level claims, the wheels themselves say it
    assert lock_problem(_unpinned(PYLOCK_311_X86), "pylock", GH200) == (
        "torch==2.5.1 has no wheel for Python 3.11.9, aarch64, glibc 2.35 "
        "(its wheels: cp311-cp311-manylinux1_x86_64)"
    )
    assert lock_problem(_unpinned(PYLOCK_311_X86), "pylock", PY310_X86).startswith("numpy==2.1.3")  # type: ignore[union-attr]
    assert lock_problem(PYLOCK_311_X86, "pylock", OLD_GLIBC) is None


def test_requirements_markers_that_exclude_the_node() -> None:
    assert PY310_X86 is not None and GH200 is not None
    text = (
        "filelock==3.16.1 ; python_full_version == '3.11.*' and platform_machine == 'x86_64' \\\n"
        "    --hash=sha256:00\n"
        "pywin32==306 ; sys_platform == 'win32' \\\n    --hash=sha256:11\n"
    )
    assert lock_problem(text, "requirements", PY310_X86) == (
        "no package of the lock applies to this node (Python 3.10.12, x86_64, glibc 2.35): "
        "every pin is marked for another environment (python_full_version == '3.11.*' and "
        "platform_machine == 'x86_64')"
    )
    forked = text + "filelock==3.16.1 ; python_full_version == '3.10.*' \\\n    --hash=sha256:00\n"
    assert lock_problem(forked, "requirements", PY310_X86) is None  # pywin32's marker is fine


def _spec(tmp_path: Path, python: str, arch: str) -> Path:
    path = tmp_path / f"node-{python}-{arch}.toml"
    path.write_text(
        f'[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA GH200 480GB"]\n'
        f'[python]\nversion = "{python}"\n[system]\narch = "{arch}"\nglibc = "2.35"\n',
        encoding="utf-8",
    )
    return path


def test_check_lock_names_the_package_that_cannot_install(tmp_path: Path) -> None:
    lock = tmp_path / "x.pylock"  # not a .toml name: the format comes from the content
    lock.write_text(_unpinned(PYLOCK_311_X86), encoding="utf-8")
    fits = run_cli(
        "check",
        "--lock-offline",
        "--lock",
        str(lock),
        "--spec",
        str(_spec(tmp_path, "3.11.9", "x86_64")),
    )
    assert "not an exact pin" not in fits.stderr and "cannot install" not in fits.stdout
    gh200 = run_cli(
        "check",
        "--lock-offline",
        "--lock",
        str(lock),
        "--spec",
        str(_spec(tmp_path, "3.11.9", "aarch64")),
    )
    assert gh200.returncode == 1
    assert "PKG170" in gh200.stdout and "torch==2.5.1 has no wheel" in gh200.stdout
    assert "No problems found" not in gh200.stdout and "exit 1" in gh200.stderr
    lock.write_text(PYLOCK_311_X86, encoding="utf-8")
    old = run_cli(
        "check",
        "--lock-offline",
        "--lock",
        str(lock),
        "--spec",
        str(_spec(tmp_path, "3.10.12", "x86_64")),
        "--json",
    )
    assert old.returncode == 1
    data = old.json()
    assert data["exit_code"] == 1 and data["status"] == "findings"
    assert any(
        f["code"] == "PKG170" and "requires Python >=3.11" in f["message"]
        for f in data["data"]["findings"]
    )
