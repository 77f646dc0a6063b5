"""Reading locks for `check --lock`: requirements, pylock.toml and environment.yml."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.plan.lockfile import LockError, read_lock

REQS = """\
# a comment
--extra-index-url https://idx.example/whl/cu128
torch==2.11.0 \\
    --hash=sha256:aaaa \\
    --hash=sha256:bbbb
    # via -r requirements.in
nvidia-cublas-cu12==12.8.4.1 ; platform_machine == "x86_64"
pywin32==306 ; sys_platform == "win32"
Ray[default]==2.40.0
"""
PYLOCK = """\
# header
lock-version = "1.0"
created-by = "uv"

[[packages]]
name = "torch"
version = "2.11.0"
wheels = [{ url = "https://idx.example/whl/cu128/torch-2.11.0-cp311-cp311-linux_x86_64.whl", hashes = { sha256 = "aa" } }]

[[packages]]
name = "numpy"
version = "1.26.4"
marker = "python_version >= '3.9'"
wheels = [{ url = "https://idx.example/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl", hashes = { sha256 = "bb" } }]
"""
CONDA = """\
# generated
name: 'x'
dependencies:
  - 'python=3.11'
  - 'pip'
  - pip:
      - '--extra-index-url https://idx.example/whl/cu128'
      - 'torch==2.11.0'
      - 'numpy==1.26.4'
"""
MARKERS = {"sys_platform": "linux", "platform_machine": "x86_64", "python_version": "3.11"}


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "requirements.lock",
            REQS,
            {"torch": "2.11.0+cu128", "nvidia-cublas-cu12": "12.8.4.1", "ray": "2.40.0"},
        ),
        ("pylock.toml", PYLOCK, {"torch": "2.11.0+cu128", "numpy": "1.26.4"}),
        ("environment.yml", CONDA, {"torch": "2.11.0+cu128", "numpy": "1.26.4"}),
    ],
)
def test_read_lock(tmp_path: Path, name: str, text: str, expected: dict[str, str]) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert read_lock(str(path), MARKERS) == expected


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("r.txt", "numpy==1.26.4\nrequests>=2\n", "r.txt:2"),
        ("r.txt", "numpy==not-a-version\n", "r.txt:1"),
        ("r.txt", "# nothing\n", "r.txt"),
        ("pylock.toml", "lock-version = \n", "pylock.toml"),
        ("pylock.toml", 'lock-version = "1.0"\n[[packages]]\nname = "x"\n', "pylock.toml"),
    ],
)
def test_bad_locks_name_the_place(tmp_path: Path, name: str, text: str, where: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LockError) as info:
        read_lock(str(path))
    assert str(info.value).startswith(str(tmp_path / where))


def test_missing_lock(tmp_path: Path) -> None:
    with pytest.raises(LockError, match="no such file"):
        read_lock(str(tmp_path / "nope.txt"))


def test_a_pylock_that_pep751_refuses_is_bad_input(tmp_path: Path) -> None:
    """packaging.pylock's own validation: a package needs wheels, an sdist or a source."""
    path = tmp_path / "pylock.toml"
    path.write_text(PYLOCK.rsplit("wheels = ", 1)[0], encoding="utf-8")
    with pytest.raises(LockError, match=r"not a valid PEP 751 lock: Exactly one of vcs"):
        read_lock(str(path))
