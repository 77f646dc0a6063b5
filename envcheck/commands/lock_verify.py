"""``lock --verify`` / ``check --lock --verify``: a lock proven by installing it.

The lock is installed with uv into a scratch virtual environment (``uv venv`` + ``uv pip sync``;
uv's own cache makes the second run fast), then what a training job imports is imported there
on CPU, each import in its own bounded subprocess: every top-level distribution of the lock
(nothing else in it requires it), the runtime a GPU training stack loads even when it is only a
dependency (``RUNTIME``), the caller's extra modules (a simulator), and, when Ray is in the lock,
one Ray task. A failure is a finding (PKG172) naming the import, its last error line and the
versions of the distributions involved (the imported one, those in the traceback, and a
missing module that is not in the lock). Nothing of the caller's environment is touched; the
scratch venv is removed afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from envcheck.errors import EnvcheckError
from envcheck.model.finding import Finding

# what a GPU training job imports even where the lock holds it only as a dependency (torch's
# triton, vLLM's xformers): an import that fails here fails the job, whatever pulled it in
RUNTIME = (
    "torch",
    "triton",
    "transformers",
    "vllm",
    "flash_attn",
    "xformers",
    "ray",
    "pyarrow",
    "numpy",
    "datasets",
    "deepspeed",
)
IMPORT_TIMEOUT_S = 240.0
INSTALL_TIMEOUT_S = 1800.0
VENV_TIMEOUT_S = 120.0
RAY_TIMEOUT_S = 240.0

# run inside the scratch venv's interpreter (standard library only): each distribution's
# version, what it requires (names only) and its top-level import names
_INVENTORY = r"""
import json, re
from importlib import metadata
out = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if not name:
        continue
    top = (dist.read_text("top_level.txt") or "").split()
    if not top:
        for f in dist.files or ():
            part = str(f).split("/", 1)
            if len(part) == 2 and not part[0].endswith((".dist-info", ".data")) and part[0] != "__pycache__":
                top.append(part[0])
            elif len(part) == 1 and part[0].endswith(".py"):
                top.append(part[0][:-3])
    requires = []
    for req in dist.requires or ():
        if "extra ==" in req:
            continue
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m:
            requires.append(m.group(1))
    out[name] = {"version": dist.version, "requires": requires, "top": sorted(set(top))}
print(json.dumps(out))
"""

# run by the scratch venv's Python, never imported by envcheck (indented here, dedented there)
_RAY_TASK = textwrap.dedent(
    r"""
    import ray
    # address="local": a cluster of its own, never one already running on this machine
    ray.init(address="local", num_cpus=1, include_dashboard=False, configure_logging=False)
    @ray.remote
    def task(modules):
        import importlib
        for name in modules:
            importlib.import_module(name)
        return len(modules)
    print("ray task ok:", ray.get(task.remote(%r), timeout=%d))
    ray.shutdown()
    """
)


class VerifyUnavailable(EnvcheckError):
    """The lock cannot be verified on this machine (no uv, no such Python, another CPU)."""


@dataclass(frozen=True)
class VerifyOptions:
    python: str | None = None  # X.Y[.Z] of the target, or an interpreter's path; None: this one
    arch: str | None = None  # the target's CPU (platform_machine); None: this machine's
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    modules: tuple[str, ...] = ()  # imported too (the profile's simulator module)
    import_timeout: float = IMPORT_TIMEOUT_S
    install_timeout: float = INSTALL_TIMEOUT_S
    env: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class VerifyResult:
    findings: tuple[Finding, ...]
    steps: tuple[Step, ...]
    installed: dict[str, str] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    @property
    def summary(self) -> str:
        install = sum(s.seconds for s in self.steps if s.name in ("venv", "install"))
        imports = [s for s in self.steps if s.name.startswith(("import ", "ray task"))]
        failed = [s.name for s in self.steps if not s.ok]
        verdict = "failed: " + ", ".join(failed) if failed else "every import worked"
        return (
            f"lock --verify: {len(self.installed)} distributions installed in {install:.1f} s, "
            f"{len(imports)} import(s) in {sum(s.seconds for s in imports):.1f} s; {verdict}"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "seconds": round(self.seconds, 1),
            "steps": [
                {"name": s.name, "seconds": round(s.seconds, 2), "ok": s.ok, "detail": s.detail}
                for s in self.steps
            ],
            "installed": self.installed,
            "findings": [f.to_json() for f in self.findings],
        }


def _finding(code: str, message: str, evidence: dict[str, str], fix_text: str) -> Finding:
    from envcheck.rules.lock import lock_finding

    return lock_finding(code, message, "lock --verify", evidence, fix_text)


def _uv_env(scratch: Path, env: Mapping[str, str] | None) -> dict[str, str]:
    from envcheck.plan.uvproject import uv_env

    out = uv_env(scratch, env)
    out.pop("VIRTUAL_ENV", None)
    return out


def _child_env(env: Mapping[str, str] | None, home: Path) -> dict[str, str]:
    """The environment imports run in: CPU only, no user site, nothing of the caller's paths."""
    base = dict(os.environ if env is None else env)
    keep = {k: v for k, v in base.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "HOME")}
    keep.update(
        CUDA_VISIBLE_DEVICES="",
        PYTHONNOUSERSITE="1",
        PYTHONDONTWRITEBYTECODE="1",
        RAY_USAGE_STATS_ENABLED="0",
        RAY_DISABLE_DOCKER_CPU_WARNING="1",
        # a smoke test, not a memory test: Ray's monitor must not kill the one task because
        # something else fills this machine's memory
        RAY_memory_monitor_refresh_ms="0",
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    keep.setdefault("HOME", str(home))
    return keep


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _last_error(text: str, limit: int = 300) -> str:
    lines = text.strip().splitlines()
    found = next(
        (
            line.strip()
            for line in reversed(lines)
            if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", line.strip())
        ),
        lines[-1].strip() if lines else "no output",
    )
    return found if len(found) <= limit else found[: limit - 3] + "..."


def _interpreter(python: str | None) -> str:
    if python is None:
        return sys.executable
    if os.sep in python:
        return python
    wanted = python.split(".")
    here = [str(sys.version_info.major), str(sys.version_info.minor), str(sys.version_info.micro)]
    return sys.executable if here[: len(wanted)] == wanted else python


def verify_lock(lock: str, options: VerifyOptions | None = None) -> VerifyResult:
    """Install ``lock`` (a requirements or pylock file) into a scratch venv and import it."""
    from envcheck.plan.installable import detect_format
    from envcheck.plan.resolve import UvMissing, find_uv
    from envcheck.probes.run import run

    options = options or VerifyOptions()
    from envcheck.inputs import read_text

    if detect_format(read_text(lock)) == "conda":
        raise VerifyUnavailable(
            f"{lock}: --verify installs requirements or pylock.toml locks (an environment.yml "
            "needs conda): lock with --format requirements to verify"
        )
    import platform

    if options.arch and options.arch != platform.machine():
        raise VerifyUnavailable(
            f"a lock for {options.arch} cannot be installed on this {platform.machine()} "
            "machine: verify it on the node (`envcheck check --lock FILE --verify`)"
        )
    try:
        uv = find_uv(options.env)
    except UvMissing as exc:
        raise VerifyUnavailable(str(exc)) from None
    scratch = Path(tempfile.mkdtemp(prefix="envcheck-verify-"))
    steps: list[Step] = []
    try:
        env = _uv_env(scratch, options.env)
        venv = scratch / "venv"
        started = time.monotonic()
        made = run(
            [uv, "venv", "--no-config", "--no-python-downloads", "--python",
             _interpreter(options.python), str(venv)],
            timeout=VENV_TIMEOUT_S,
            env=env,
        )  # fmt: skip
        steps.append(Step("venv", time.monotonic() - started, made.ok, _tail(made.stderr, 3)))
        if not made.ok:
            raise VerifyUnavailable(
                f"cannot make a scratch venv for Python {options.python or sys.version.split()[0]}"
                f" on this machine: {made.problem or _last_error(made.stderr)} (verify on a "
                "machine that has it, or lock for this one with --python)"
            )
        python = str(venv / "bin" / "python")
        argv = [uv, "pip", "sync", "--no-config", "--python", python]
        if options.index_url:
            argv += ["--index-url", options.index_url]
        for url in options.extra_index_urls:
            argv += ["--extra-index-url", url]
        for url in options.find_links:
            argv += ["--find-links", url]
        if options.no_index:
            argv.append("--no-index")
        started = time.monotonic()
        synced = run([*argv, lock], timeout=options.install_timeout, env=env)
        steps.append(Step("install", time.monotonic() - started, synced.ok, _tail(synced.stderr)))
        if not synced.ok:
            why = synced.problem or _last_error(synced.stderr)
            return VerifyResult(
                (
                    _finding(
                        "PKG170",
                        f"{lock}: uv could not install the lock into a scratch venv: {why}",
                        {"uv": _tail(synced.stderr, 12)},
                        "Read uv's message: lock for this node, or fix the pin it names",
                    ),
                ),
                tuple(steps),
            )
        child_env = _child_env(options.env, scratch)
        listed = run([python, "-I", "-c", _INVENTORY], timeout=60.0, env=child_env)
        try:
            inventory: dict[str, dict[str, object]] = json.loads(listed.stdout) if listed.ok else {}
        except ValueError:
            inventory = {}
        findings, more = _imports(python, inventory, options, child_env)
        steps += more
        installed = {name: str(info["version"]) for name, info in sorted(inventory.items())}
        return VerifyResult(tuple(findings), tuple(steps), installed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def modules_to_import(
    inventory: Mapping[str, Mapping[str, object]], extra: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(module, distribution) pairs to import: the lock's top-level distributions, the
    ``RUNTIME`` modules it holds, and ``extra``."""
    required = {
        _key(str(r))
        for info in inventory.values()
        for r in info.get("requires", []) or []  # type: ignore[attr-defined]
    }
    owner: dict[str, str] = {}
    for name, info in inventory.items():
        for module in info.get("top", []) or []:  # type: ignore[attr-defined]
            owner.setdefault(str(module), name)
    out: dict[str, str] = {}
    for name, info in sorted(inventory.items()):
        if _key(name) in required or _key(name) in ("pip", "setuptools", "wheel"):
            continue
        for top in info.get("top", []) or []:  # type: ignore[attr-defined]
            module = str(top)
            if module.isidentifier() and not module.startswith("_"):
                out.setdefault(module, name)
    for module in (*RUNTIME, *extra):
        if module in owner or module in extra:
            out.setdefault(module, owner.get(module, module))
    return list(out.items())


def _involved(
    text: str, module: str, dist: str, inventory: Mapping[str, Mapping[str, object]]
) -> tuple[dict[str, str], str | None]:
    """The distributions an import failure involves (name -> version), and a missing module
    that no distribution of the lock provides."""
    owner = {
        str(m): name
        for name, info in inventory.items()
        for m in info.get("top", []) or []  # type: ignore[attr-defined]
    }
    names = [dist]
    for top in re.findall(r"site-packages/([A-Za-z0-9_]+)", text):
        if top in owner:
            names.append(owner[top])
    missing = None
    found = re.search(r"No module named '([A-Za-z0-9_]+)", text)
    if found:
        if found.group(1) in owner:
            names.append(owner[found.group(1)])
        else:
            missing = found.group(1)
    last = _key(_last_error(text))
    for name in inventory:  # distributions the error line names (pyarrow ... NumPy 2.0)
        if re.search(rf"(?<![\w-]){re.escape(_key(name))}(?![\w-])", last):
            names.append(name)
    versions = {n: str(inventory[n]["version"]) for n in dict.fromkeys(names) if n in inventory}
    return versions, missing


def _imports(
    python: str,
    inventory: Mapping[str, Mapping[str, object]],
    options: VerifyOptions,
    env: Mapping[str, str],
) -> tuple[list[Finding], list[Step]]:
    from envcheck.probes.run import run

    findings: list[Finding] = []
    steps: list[Step] = []
    worked: list[str] = []
    for module, dist in modules_to_import(inventory, options.modules):
        started = time.monotonic()
        got = run([python, "-c", f"import {module}"], timeout=options.import_timeout, env=env)
        seconds = time.monotonic() - started
        text = got.stderr + "\n" + got.stdout
        steps.append(Step(f"import {module}", seconds, got.ok, "" if got.ok else _tail(text, 12)))
        if got.ok:
            worked.append(module)
            continue
        error = got.problem or _last_error(text)
        versions, missing = _involved(text, module, dist, inventory)
        shown = ", ".join(f"{n} {v}" for n, v in versions.items())
        absent = f"; {missing} is not in the lock" if missing else ""
        findings.append(
            _finding(
                "PKG172",
                f"import {module} fails in the installed lock: {error} ({shown}{absent})",
                {
                    "module": module,
                    "error": error,
                    **versions,
                    **({"missing": missing} if missing else {}),
                },
                f"Add {missing} to the lock (a dependency its metadata does not declare), or "
                "move the package named to a release that works with the others"
                if missing
                else "Move one of the packages named to a release that works with the others "
                "(the error names which), and record the pair as a [[bound]] in the matrix",
            )
        )
    if any(_key(n) == "ray" for n in inventory) and "ray" in worked:
        # the runtime a training job's workers load (a worker deserialises with pyarrow)
        task_modules = [m for m in worked if m in RUNTIME and m != "ray"]
        started = time.monotonic()
        got = run(
            [python, "-c", _RAY_TASK % (task_modules, int(RAY_TIMEOUT_S) - 30)],
            timeout=RAY_TIMEOUT_S,
            env=env,
        )
        text = got.stderr + "\n" + got.stdout
        steps.append(Step("ray task", time.monotonic() - started, got.ok, _tail(text, 12)))
        if not got.ok:
            error = got.problem or _last_error(text)
            versions, missing = _involved(text, "ray", "ray", inventory)
            findings.append(
                _finding(
                    "PKG172",
                    f"a Ray task importing {', '.join(task_modules) or 'nothing'} fails in the "
                    f"installed lock: {error} ({', '.join(f'{n} {v}' for n, v in versions.items())})",
                    {"module": "ray task", "error": error, **versions},
                    "Move one of the packages named to a release that works with the others",
                )
            )
    return findings, steps
