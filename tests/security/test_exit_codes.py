"""Bad conditions are one clear line and exit 2 (or the documented code), never exit 3 and
never a traceback: a file size limit (`ulimit -f`, the same path as a full disk) for -o and
the snapshot, a deleted working directory, a malformed --index-url, an empty --packages, a
killed or failing uv (an error naming uv's failure, not "no resolution"), a missing
ENVCHECK_MATRIX directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli
from tests.security.helpers import fake_program


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("envcheck: error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def _limited(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m envcheck ARGS` under `ulimit -f 0`: every write to a file fails (EFBIG)."""
    command = " ".join(f"'{a}'" for a in (sys.executable, "-m", "envcheck", *args))
    return subprocess.run(
        ["bash", "-c", f"ulimit -f 0; exec {command}"],
        cwd=tmp_path,
        env=cli_env(PYTHONDONTWRITEBYTECODE="1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("probe", "--json", "-o", "out.txt"),
        ("fix", "--no-resolve", "--format", "sh", "-o", "out.txt"),
    ],
)
def test_file_size_limit_on_output(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = _limited(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert "out.txt: cannot write: File too large" in _one_line(done.stderr)
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary


def test_file_size_limit_on_the_snapshot(tmp_path: Path) -> None:
    python = fake_program(
        tmp_path / "bin" / "python",
        f'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "numpy==2.1.3"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n',
    )
    work = tmp_path / "work"
    work.mkdir()
    done = _limited(work, "fix", "--python", str(python), "--no-resolve", "--apply")
    if "snapshot" not in done.stderr:
        pytest.skip("no plan step on this node, so no snapshot is taken")
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert "cannot write the snapshot" in line and "nothing was changed" in line
    assert list(work.iterdir()) == []


def test_deleted_working_directory(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m envcheck check'
    done = subprocess.run(
        ["bash", "-c", script],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "working directory no longer exists" in _one_line(done.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ("fix", "--index-url", "http://[::1"),
        ("lock", "torch", "--python", "3.11", "--index-url", "http://[::1"),
        ("lock", "torch", "--python", "3.11", "--extra-index-url", "http://h:99999/simple"),
        ("matrix", "refresh", "--dry-run", "--packages", "torch", "--index-url", "http://[::1"),
    ],
)
def test_malformed_index_url(args: tuple[str, ...]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert "index-url" in _one_line(result.stderr)


def test_malformed_pip_index_url_in_the_environment() -> None:
    """PIP_INDEX_URL is read by matrix refresh: a URL that does not parse is skipped with a
    note, and with nothing left it is one usage line."""
    result = run_cli(
        "matrix",
        "refresh",
        "--dry-run",
        "--no-cache",
        "--packages",
        "torch",
        env=cli_env(PIP_INDEX_URL="http://[::1", PIP_EXTRA_INDEX_URL=""),
    )
    assert result.returncode == 2
    assert "no HTTP(S) package index is configured" in _one_line(result.stderr)


def test_empty_packages() -> None:
    result = run_cli("matrix", "refresh", "--dry-run", "--packages", "", "--packages", " , ")
    assert result.returncode == 2
    assert "--packages names no package" in _one_line(result.stderr)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("kill -KILL $$\n", "uv failed: killed by SIGKILL"),
        (
            'echo "error: Failed to parse uv.toml" >&2; exit 2\n',
            "uv failed (exit 2): error: Failed",
        ),
    ],
)
def test_failing_uv_is_an_error_not_no_resolution(tmp_path: Path, body: str, said: str) -> None:
    uv = fake_program(
        tmp_path / "uv", 'if [ "$1" = "--version" ]; then echo "uv 0.5.0"; exit 0; fi\n' + body
    )
    result = run_cli(
        "lock",
        "torch",
        "--python",
        "3.11",
        "--index-url",
        "http://127.0.0.1:9/simple",
        env=cli_env(ENVCHECK_UV=str(uv)),
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    line = _one_line(result.stderr)
    assert said in line and "no resolution" not in line


@pytest.mark.parametrize(
    "args",
    [("check",), ("triage", "-"), ("fix", "--no-resolve"), ("rules",), ("matrix", "validate")],
)
def test_missing_matrix_overlay_from_the_environment(args: tuple[str, ...]) -> None:
    result = run_cli(*args, env=cli_env(ENVCHECK_MATRIX="/nonexistent"), stdin="")
    assert result.returncode == 2
    line = _one_line(result.stderr)
    assert "/nonexistent" in line and "ENVCHECK_MATRIX" in line


def test_no_exit_3_from_sigxfsz(tmp_path: Path) -> None:
    """SIGXFSZ would kill the process (exit 153) before any message; it is ignored so the
    write fails with EFBIG and is reported."""
    done = _limited(tmp_path, "probe", "--json", "-o", "x.json")
    assert done.returncode == 2 and done.returncode != 128 + 25
    assert os.listdir(tmp_path) == []
