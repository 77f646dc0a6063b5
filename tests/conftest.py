"""Shared fixtures: staged system trees, the fake pynvml, fake executables, the CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from envcheck.probes.context import ProbeContext

TESTS = Path(__file__).parent
FAKES = TESTS / "fakes"
FIXTURES = TESTS / "fixtures"
REPO = TESTS.parent


def load_fake_pynvml() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pynvml", FAKES / "pynvml.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """Install the fake pynvml describing the named scenario (see fakes/nvml_scenarios.py)."""

    def use(scenario: str) -> ModuleType:
        monkeypatch.setenv("FAKE_PYNVML_SCENARIO", scenario)
        module = load_fake_pynvml()
        monkeypatch.setitem(sys.modules, "pynvml", module)
        return module

    return use


@dataclass
class Stage:
    """A staged filesystem root for probes: /proc, /sys, /etc and /dev under ``root``."""

    root: Path
    bin: Path

    def write(self, path: str, text: str) -> Path:
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def copy_fixture(self, name: str, path: str) -> Path:
        return self.write(path, (FIXTURES / "system" / name).read_text(encoding="utf-8"))

    def mkdir(self, path: str) -> Path:
        target = self.root / path.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        return target

    def executable(self, name: str, script: str) -> Path:
        """A fake program on this stage's PATH (e.g. nvidia-smi)."""
        target = self.bin / name
        target.write_text(script, encoding="utf-8")
        target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return target

    def ctx(self, env: dict[str, str] | None = None, **kwargs: Any) -> ProbeContext:
        full_env = {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(self.root / "home")}
        full_env.update(env or {})
        kwargs.setdefault("timeout", 2.0)
        kwargs.setdefault("addresses", lambda: {})
        kwargs.setdefault("resolver", lambda host: ["10.0.0.5"])
        kwargs.setdefault("hostname", lambda: "node-a")
        return ProbeContext(root=self.root, env=full_env, **kwargs)


@pytest.fixture
def stage(tmp_path: Path) -> Stage:
    root = tmp_path / "root"
    root.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    return Stage(root=root, bin=bin_dir)


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("FAKE_PYNVML_SCENARIO", None)
    env.pop("FAKE_PYNVML_JSON", None)
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def fake_libcuda(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/fakes/libcuda_fake.c built with the system C compiler, installed the way a driver
    installs it: libcuda.so.550.54.15 and the libcuda.so.1 link the loader opens."""
    import shutil

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc) to build the fake libcuda")
    out = tmp_path_factory.mktemp("libcuda")
    real = out / "libcuda.so.550.54.15"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(real), str(FAKES / "libcuda_fake.c")],
        check=True,
        timeout=60,
    )
    (out / "libcuda.so.1").symlink_to(real.name)
    return out / "libcuda.so.1"


_VENV_TEMPLATE: list[Path] = []


def new_venv(folder: Path) -> Path:
    """A venv with pip at ``folder`` (what ``python -m venv FOLDER`` makes), copied from one
    made once per test process: ensurepip's install of pip is most of a venv's ~5 s. The copy's
    scripts and pyvenv.cfg name ``folder``, as a venv made there has them. Its interpreter."""
    import atexit
    import shutil
    import tempfile

    if not _VENV_TEMPLATE:
        made = Path(tempfile.mkdtemp(prefix="envcheck-venv-template-")) / "venv"
        atexit.register(shutil.rmtree, made.parent, True)
        subprocess.run([sys.executable, "-m", "venv", str(made)], check=True, timeout=120)
        _VENV_TEMPLATE.append(made)
    template = _VENV_TEMPLATE[0]
    shutil.copytree(template, folder, symlinks=True)
    for path in [folder / "pyvenv.cfg", *(folder / "bin").iterdir()]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if str(template).encode() in data:
            path.write_bytes(data.replace(str(template).encode(), str(folder).encode()))
    return folder / "bin" / "python"


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> CliResult:
    """Run ``python -m envcheck`` in a subprocess, as a user would. ``triage --no-probe`` of a
    log (no input, environment or working directory of the test's own) runs ``main()`` in this
    process instead: the same command the console script runs, without an interpreter start
    and the imports for each of the suite's many one-line logs (tests/cli runs the console
    script itself)."""
    if env is None and stdin is None and cwd is None and _in_process(args):
        return _run_main(args)
    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", *args],
        capture_output=True,
        text=True,
        env=env if env is not None else cli_env(),
        input=stdin,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


# the environment and working directory the session started with: a test that changed either
# (a setting, a cache or matrix directory) gets a process of its own
_START_ENV = dict(os.environ)
_START_CWD = os.getcwd()


# variables that the suite's own tools set for good in a worker (pytest for the test running,
# `ray.init` for Ray's clients): triage without probing reads none of them
_TOOLS_ENV = ("PYTEST_CURRENT_TEST", "PYTHONBREAKPOINT", "RAY_")


@pytest.fixture(autouse=True)
def _process_state_kept() -> Iterator[None]:
    """Each test leaves the environment and the working directory as it found them (what the
    suite's own tools set for good aside). A variable a test left behind would make every later
    in-process triage in its worker run as a subprocess instead (``_in_process``): the same
    verdicts, twenty times the time."""
    env, cwd = dict(os.environ), _cwd()
    yield
    for name in os.environ.keys() - env.keys():
        if not name.startswith(_TOOLS_ENV):
            del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value and not name.startswith(_TOOLS_ENV):
            os.environ[name] = value
    if cwd is not None and _cwd() != cwd:
        os.chdir(cwd)


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


def _in_process(args: tuple[str, ...]) -> bool:
    """Whether a command can run in this process and behave as in its own: triage of a log
    file without probing (no NVML, no node files: --no-probe, or a saved --report), in the environment and directory the
    session started with, so that nothing a run keeps (the compiled matrix, tables read once)
    came from other settings."""
    probes = "--no-probe" not in args and "--report" not in args
    if args[:1] != ("triage",) or probes or "-" in args:
        return False
    try:
        cwd = os.getcwd()
    except OSError:
        return False
    changed = {k for k, v in os.environ.items() if _START_ENV.get(k) != v}
    changed |= _START_ENV.keys() - os.environ.keys()
    return cwd == _START_CWD and all(k.startswith(_TOOLS_ENV) for k in changed)


def _run_main(args: tuple[str, ...]) -> CliResult:
    import contextlib
    import io

    from envcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli() -> Iterator[Callable[..., CliResult]]:
    yield run_cli


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``online`` need the real package index: run them with ENVCHECK_ONLINE=1."""
    if os.environ.get("ENVCHECK_ONLINE") == "1":
        return
    skip = pytest.mark.skip(reason="needs the real package index (set ENVCHECK_ONLINE=1)")
    for item in items:
        if "online" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def index_server() -> Iterator[Any]:
    """A package index on 127.0.0.1 (tests/index/server.py), stopped after the test."""
    from tests.index.server import IndexServer

    server = IndexServer().start()
    try:
        yield server
    finally:
        server.stop()
