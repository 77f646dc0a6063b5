"""Run the real CLI entry point (``envcheck.cli.main``) in-process on one generated case and
check the contract every command keeps:

- the exit code is 0, 1 or 2 (never 3, never an uncaught exception);
- exit 2 prints exactly one line on standard error, ``envcheck: error: ...``;
- no traceback anywhere;
- no terminal control sequence (ESC, BEL, 8-bit CSI/OSC/DCS) in anything printed or written;
- nothing is written on error (the ``-o`` target does not appear);
- no planted secret appears in standard output, standard error or a written file;
- the case finishes within its time bound (an alarm turns a hang into a recorded failure).

``scripts/fuzz.py`` uses the same harness to count outcomes over many cases.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECRET = "Zq9S3CRETPW"  # planted in secret-shaped places only; must never be printed
TIME_BOUND_S = 20.0
_CONTROLS = ("\x1b", "\x9b", "\x9d", "\x90", "\x07")  # ESC, 8-bit CSI/OSC/DCS, BEL


@dataclass
class Outcome:
    command: str
    code: int | None
    stdout: str
    stderr: str
    elapsed: float
    written: dict[str, str] = field(default_factory=dict)
    crashed: str | None = None  # an exception main() let out
    hung: bool = False
    listing: bool = False  # a command whose exit 2 lists several problems (matrix validate)
    allowed: tuple[int, ...] = (0, 1, 2)  # exit codes the case may end with
    extra: list[str] = field(default_factory=list)  # what a family's own checks found

    def problems(self, secrets: Sequence[str] = (SECRET,)) -> list[str]:
        found: list[str] = []
        if self.hung:
            found.append("hang")
        if self.crashed:
            found.append(f"traceback: {self.crashed}")
        if self.code == 3:
            found.append(f"exit 3: {self.stderr.strip()[-300:]}")
        elif self.code not in self.allowed and not self.hung and not self.crashed:
            found.append(f"exit {self.code}: {self.stderr.strip()[-300:]}")
        if "Traceback" in self.stdout + self.stderr:
            found.append("traceback printed")
        if self.code == 2 and self.listing:
            # `matrix validate` lists every problem it found, one line each
            if not all(line.startswith("envcheck: ") for line in self.stderr.splitlines()):
                found.append(f"validate printed something else: {self.stderr[-300:]}")
        elif self.code == 2:
            lines = self.stderr.splitlines()
            if len(lines) != 1 or not lines[0].startswith("envcheck: error: "):
                found.append(f"exit 2 without exactly one error line: {lines[-3:]}")
            if self.written:
                found.append(f"wrote {sorted(self.written)} although it failed")
        everything = self.stdout + self.stderr + "".join(self.written.values())
        if any(c in everything for c in _CONTROLS):
            at = min(i for i in (everything.find(c) for c in _CONTROLS) if i >= 0)
            found.append(f"control sequence printed: {everything[max(0, at - 40) : at + 20]!r}")
        for secret in secrets:
            if secret in everything:
                found.append(f"leaked {secret!r}")
        return found + self.extra


class _Hang(Exception):
    pass


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise _Hang

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _memoize_builtin_matrix() -> None:
    """Parse the built-in matrix files once per process (their text never changes here);
    overlays a case generates are parsed every time. This keeps a case at milliseconds."""
    from envcheck.matrix import load as load_module

    if getattr(load_module.parse_file, "_fuzz_cached", False):
        return
    builtin = str(load_module.builtin_dir())
    original = load_module.parse_file
    cache: dict[str, Any] = {}

    def parse_file(path: Path, cache_env: Any = None) -> Any:
        key = str(path)
        if not key.startswith(builtin):
            return original(path, cache_env)
        if key not in cache:
            cache[key] = original(path, cache_env)
        return cache[key]

    parse_file._fuzz_cached = True  # type: ignore[attr-defined]
    load_module.parse_file = parse_file


class _Stream(io.TextIOWrapper):
    """A captured standard stream with the encoding and descriptor-free shape of a pipe."""

    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__(io.BytesIO(), encoding=encoding, errors="strict", write_through=True)

    def text(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode(self.encoding, errors="replace")


def run(
    argv: Sequence[str],
    *,
    stdin: bytes = b"",
    outputs: Sequence[Path] = (),
    bound: float = TIME_BOUND_S,
    encoding: str = "utf-8",
    directory: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Outcome:
    """Run ``envcheck ARGV`` in this process; ``outputs`` are the files it may write; ``env``
    is set for the run only."""
    from envcheck.cli import main

    _memoize_builtin_matrix()
    out, err = _Stream(encoding), _Stream(encoding)
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    started = time.monotonic()
    code: int | None = None
    crashed = None
    hung = False
    env_before = dict(os.environ)
    cwd = os.getcwd()
    try:
        os.environ.update(env or {})
        if directory is not None:
            os.chdir(directory)  # a relative -o lands in the case's directory, not the repo
        with _alarm(bound):
            code = main(list(argv))
    except _Hang:
        hung = True
    except SystemExit as exc:  # main() maps every exit itself; this would be a bug
        crashed = f"SystemExit({exc.code})"
    except BaseException as exc:
        crashed = f"{type(exc).__name__}: {exc}"
    finally:
        from envcheck import settings

        settings._ISOLATED.clear()  # --isolated holds for the rest of a process: one run here
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = saved
        os.environ.clear()
        os.environ.update(env_before)
    elapsed = time.monotonic() - started
    written = {}
    for path in outputs:
        if path.exists():
            written[str(path)] = path.read_text(encoding="utf-8", errors="replace")
    command = next((a for a in argv if not a.startswith("-")), "check")
    listing = list(argv[:2]) == ["matrix", "validate"]
    return Outcome(command, code, out.text(), err.text(), elapsed, written, crashed, hung, listing)
