"""envcheck.output and the guarded standard streams: -o checked before any work, atomic
redacted writes, full disks, closed descriptors, broken pipes and hostile locales."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.errors import InputError, UsageError
from envcheck.formats.stdout import GuardedStream, degrade
from envcheck.output import check_target, write
from tests.conftest import REPO, cli_env

SPEC = REPO / "tests" / "fixtures"


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("", UsageError, "empty file name"),
        ("   ", UsageError, "empty file name"),
        ("/proc/self/x.json", InputError, "kernel file system"),
        ("/sys/x.json", InputError, "kernel file system"),
        ("/no/such/dir/x.json", InputError, "does not exist"),
        ("/tmp/" + "a" * 300, InputError, "longer than 255 bytes"),
        ("/tmp", InputError, "is a directory"),
        ("/dev/zero", InputError, "not a regular file"),  # streams (/dev/null) are targets
        ("/dev/new.json", InputError, "kernel file system"),
    ],
)
def test_bad_targets_are_refused(path: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        check_target(path)


def test_unwritable_directory_and_existing_file(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(InputError, match="not writable"):
            check_target(str(locked / "x.json"))
    existing = tmp_path / "x.json"
    existing.write_text("old")
    with pytest.raises(InputError, match="file exists"):
        check_target(str(existing), overwrite=False)
    assert check_target(str(existing)) == existing


def test_write_redacts_and_is_atomic(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write(target, '{"HF_TOKEN": "hf_abcdef", "url": "http://u:S3CRET@h/x"}\n')
    text = target.read_text()
    assert "hf_abcdef" not in text and "S3CRET" not in text
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


class _Failing:
    encoding = "utf-8"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def write(self, text: str) -> int:
        raise self.exc

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        raise OSError("no descriptor")


@pytest.mark.parametrize(
    ("exc", "gone", "failure"),
    [
        (BrokenPipeError(32, "Broken pipe"), True, None),
        (OSError(28, "No space left on device"), False, "No space left on device"),
    ],
)
def test_stream_failures_are_recorded_not_raised(
    exc: BaseException, gone: bool, failure: str | None
) -> None:
    stream = GuardedStream(_Failing(exc), "standard output")  # type: ignore[arg-type]
    stream.write("line\n")
    stream.write("more\n")
    assert (stream.gone, stream.failure) == (gone, failure)


def test_closed_stream_is_a_failure() -> None:
    stream = GuardedStream(None, "standard output")
    stream.write("x\n")
    assert stream.failure == "it is closed"


def test_secret_split_across_writes_is_still_redacted() -> None:
    import io

    raw = io.StringIO()
    stream = GuardedStream(raw, "standard output")  # type: ignore[arg-type]
    for part in ("export HF_TO", "KEN=hf_sec", "ret123 done\n", "http://bob:p@S3", "CRET@proxy\n"):
        stream.write(part)
    stream.flush()
    assert "hf_secret123" not in raw.getvalue() and "S3CRET" not in raw.getvalue()
    assert raw.getvalue().endswith("@proxy\n")


def test_degrade_for_ascii() -> None:
    assert degrade("a · b — c … ✓ é", "ascii") == "a . b - c ... ok ?"


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "envcheck", *args],
        capture_output=kwargs.pop("capture_output", True),
        timeout=120,
        check=False,
        **kwargs,
    )


SPEC_TEXT = '[gpu]\nmodels = ["NVIDIA H100 80GB HBM3"]\ndriver = "535.104.05"\n'


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(SPEC_TEXT)
    return path


def test_stdout_on_dev_full_is_one_line_exit_2(spec: Path) -> None:
    with open("/dev/full", "w") as full:
        proc = _run(
            ["check", "--spec", str(spec)],
            stdout=full,
            stderr=subprocess.PIPE,
            capture_output=False,
            env=cli_env(),
        )
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2, lines
    # the usual summary line, then one error line; no traceback, no exit 120
    assert lines[-1] == "envcheck: error: cannot write to standard output: No space left on device"
    messages = [line for line in lines if not line.startswith("  ")]  # the summary may wrap
    assert len(messages) <= 2 and "Traceback" not in proc.stderr.decode()


def test_closed_stdout_is_one_line_exit_2(spec: Path) -> None:
    proc = subprocess.run(
        f'"{sys.executable}" -m envcheck check --spec "{spec}" >&-',
        shell=True,  # the only way to start a process with a closed descriptor 1
        capture_output=False,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
        env=cli_env(),
    )
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2, lines
    assert lines[-1] == "envcheck: error: cannot write to standard output: it is closed"
    messages = [line for line in lines if not line.startswith("  ")]  # the summary may wrap
    assert len(messages) <= 2 and "Traceback" not in proc.stderr.decode()


def test_broken_pipe_keeps_the_exit_code(spec: Path) -> None:
    proc = subprocess.run(
        f'"{sys.executable}" -m envcheck check --spec "{spec}" | head -c 10 >/dev/null; '
        'echo "${PIPESTATUS[0]}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        timeout=120,
        check=False,
        env=cli_env(),
    )
    direct = _run(["check", "--spec", str(spec)], env=cli_env())
    assert proc.stdout.decode().strip() == str(direct.returncode)
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "extra",
    [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}],
)
def test_hostile_locales_never_raise(spec: Path, extra: dict[str, str]) -> None:
    env = cli_env(**extra)
    for args in (
        ["check", "--spec", str(spec)],
        ["explain", "DRV101"],
        ["check", "--spec", str(spec), "--markdown"],
    ):
        proc = _run(args, env=env)
        assert proc.returncode in (0, 1), proc.stderr
        assert b"UnicodeEncodeError" not in proc.stderr and b"Traceback" not in proc.stderr
        proc.stdout.decode("ascii")  # nothing the locale cannot show


def test_output_checked_before_any_work(tmp_path: Path) -> None:
    # a probe takes seconds; a bad -o must fail before it starts (nothing written either)
    proc = _run(["probe", "-o", str(tmp_path / "missing" / "x.json")], env=cli_env())
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        f"envcheck: error: {tmp_path}/missing/x.json: directory {tmp_path}/missing does not exist"
    ]
    assert list(tmp_path.iterdir()) == []
