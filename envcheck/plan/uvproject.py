"""Resolve a stack with uv's project resolver: a throwaway project, ``uv lock``, ``uv export``.

The project declares the default index and the torch variant's index; the variant index is
*explicit* (``[[tool.uv.index]] explicit = true``) and only torch, torchvision, torchaudio,
triton and ``nvidia-*`` requirements are pinned to it through ``[tool.uv.sources]``: every
other name comes from the default index only (no best match across indexes, the pattern
behind dependency confusion). ``[tool.uv] environments`` lists the targets (Python versions,
CPU architectures), so one lock covers several; ``--exclude-newer`` and kept pins (for
``--upgrade-package``) make re-locks reproducible.

uv reads no user or system configuration here (XDG config dirs point into the throwaway
project, ``UV_*`` index variables are dropped): the project file is the single source.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envcheck.model.plan import Stack
from envcheck.plan.resolve import (
    IndexConfig,
    Resolution,
    ResolveFailed,
    ResolveFormat,
    UvFailed,
    redact_url,
)
from envcheck.probes.run import RunResult, run

VARIANT_PACKAGES = ("torch", "torchvision", "torchaudio", "triton")
KEEP_UV_VARS = (
    "UV_CACHE_DIR",
    "UV_HTTP_TIMEOUT",
    "UV_HTTP_RETRIES",
    "UV_NATIVE_TLS",
    "UV_CONCURRENT_DOWNLOADS",
)
_NETWORK = re.compile(
    r"error sending request|tcp connect error|connection refused|dns error|failed to lookup "
    r"address|timed out|request failed after|http status server error|network is unreachable|"
    r"certificate|connection reset|failed to fetch",
    re.IGNORECASE,
)
_URL = re.compile(r"(?:https?|file)://[^\s`'\")]+")


class IndexUnreachable(Exception):
    """An index could not be reached (network, DNS, TLS, a 5xx): not a verdict on the stack."""

    def __init__(self, index: str, cause: str) -> None:
        super().__init__(f"could not reach {index}: {cause}")
        self.index = index
        self.cause = cause


class LocalIndexRefused(Exception):
    """A lock meant to travel would name a local path or ``file://`` URL."""


def on_variant_index(name: str) -> bool:
    key = canonicalize_name(name)
    return key in VARIANT_PACKAGES or key.startswith("nvidia-")


def is_local(url: str) -> bool:
    """A ``file://`` URL or a filesystem path: it names this machine, not an index."""
    scheme = urlsplit(url).scheme.lower()
    return scheme in {"file", ""} or len(scheme) == 1  # "C:" on Windows


@dataclass(frozen=True)
class LockTargets:
    """The environments one lock covers: Python versions x CPU architectures (Linux)."""

    pythons: tuple[str, ...]
    arches: tuple[str, ...] = ("x86_64",)

    def markers(self) -> list[str]:
        out = []
        for python in self.pythons:
            parts = python.split(".")
            key = "python_full_version" if len(parts) >= 3 else "python_version"
            for arch in self.arches:
                out.append(
                    f"sys_platform == 'linux' and platform_machine == '{arch}' and {key} == '{python}'"
                )
        return out

    def requires_python(self) -> str:
        """The targets' range (what the exported lock declares)."""
        minors = sorted({tuple(int(x) for x in p.split(".")[:2]) for p in self.pythons})
        low, high = minors[0], minors[-1]
        return f">={low[0]}.{low[1]}, <{high[0]}.{high[1] + 1}"

    def project_requires_python(self) -> str:
        """The throwaway project's bound: low enough for the interpreter running uv (uv lock
        refuses an interpreter outside it); ``environments`` narrows the lock to the targets."""
        low = min(
            [tuple(int(x) for x in p.split(".")[:2]) for p in self.pythons] + [sys.version_info[:2]]
        )
        return f">={low[0]}.{low[1]}"

    def environments(self) -> list[dict[str, str]]:
        """Marker environments, one per target, to evaluate the lock's markers with."""
        out = []
        for python in self.pythons:
            full = python if python.count(".") >= 2 else python + ".0"
            for arch in self.arches:
                out.append(
                    {
                        "python_version": ".".join(python.split(".")[:2]),
                        "python_full_version": full,
                        "platform_machine": arch,
                        "sys_platform": "linux",
                        "platform_system": "Linux",
                        "os_name": "posix",
                        "implementation_name": "cpython",
                        "platform_python_implementation": "CPython",
                        "extra": "",
                    }
                )
        return out


@dataclass(frozen=True)
class LockRequest:
    stack: Stack
    index: IndexConfig
    targets: LockTargets
    fmt: ResolveFormat = "requirements"
    exclude_newer: str | None = None
    keep_pins: Mapping[str, str] | None = None  # previous lock's pins (--upgrade-package)
    upgrade: tuple[str, ...] = ()
    allow_local: bool = False
    # names pinned to the torch index (None: torch, torchvision, torchaudio, triton, nvidia-*)
    variant_names: tuple[str, ...] | None = None
    # "unsafe-best-match" models pip across several indexes (fix checks what pip will do);
    # None is uv's first-index (a lock's choice)
    index_strategy: str | None = None


def _toml_str(text: str) -> str:
    return json.dumps(text)


def _toml_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_str(i) for i in items) + "]"


def _names(requirements: Sequence[str]) -> list[str]:
    out: list[str] = []
    for text in requirements:
        try:
            out.append(canonicalize_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    return out


def project_text(request: LockRequest) -> str:
    """The throwaway project's pyproject.toml."""
    stack, index = request.stack, request.index
    # the stack's real upper bounds (matrix [[bound]]) and the kept pins of a re-lock both reach
    # uv as constraints: they narrow what may be chosen, never add a requirement
    constraints = list(stack.constraints) + [
        f"{name}=={version}"
        for name, version in sorted((request.keep_pins or {}).items())
        if canonicalize_name(name) not in {canonicalize_name(u) for u in request.upgrade}
    ]
    lines = [
        "[project]",
        'name = "envcheck-lock"',
        'version = "0"',
        f"requires-python = {_toml_str(request.targets.project_requires_python())}",
        f"dependencies = {_toml_list(stack.requirements)}",
        "",
        "[tool.uv]",
        "package = false",
        f"environments = {_toml_list(request.targets.markers())}",
    ]
    if stack.overrides:
        lines.append(f"override-dependencies = {_toml_list(stack.overrides)}")
    if constraints:
        lines.append(f"constraint-dependencies = {_toml_list(constraints)}")
    if request.index_strategy:
        lines.append(f"index-strategy = {_toml_str(request.index_strategy)}")
    if index.no_index:
        lines.append("no-index = true")
    if index.find_links:
        lines.append(f"find-links = {_toml_list(index.find_links)}")
    if index.index_url and not index.no_index:
        lines += [
            "",
            "[[tool.uv.index]]",
            'name = "default"',
            f"url = {_toml_str(index.index_url)}",
        ]
        lines.append("default = true")
    for number, url in enumerate(index.extra_index_urls, 1):
        lines += ["", "[[tool.uv.index]]", f'name = "extra-{number}"', f"url = {_toml_str(url)}"]
    if stack.torch_index_url:
        lines += [
            "",
            "[[tool.uv.index]]",
            'name = "pytorch"',
            f"url = {_toml_str(stack.torch_index_url)}",
            "explicit = true",
        ]
        chosen = request.variant_names
        pinned = sorted(
            {
                n
                for n in _names([*stack.requirements, *stack.overrides])
                if (on_variant_index(n) if chosen is None else n in chosen)
            }
        )
        if pinned:
            lines += ["", "[tool.uv.sources]"]
            lines += [f'{name} = {{ index = "pytorch" }}' for name in pinned]
    return "\n".join(lines) + "\n"


def refuse_local(request: LockRequest) -> None:
    """Refuse indexes that name this machine, unless the lock is allowed to stay local."""
    if request.allow_local:
        return
    local = [
        u
        for u in [
            *([request.index.index_url] if request.index.index_url else []),
            *request.index.extra_index_urls,
            *request.index.find_links,
            *([request.stack.torch_index_url] if request.stack.torch_index_url else []),
        ]
        if is_local(u)
    ]
    if local:
        raise LocalIndexRefused(
            f"{local[0]} is a local path: a lock meant to travel names no local path or file:// "
            "URL (pass --index-url with a public index, or --allow-local to keep it)"
        )


def uv_env(project: Path, env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment uv runs in for a throwaway project: ``env`` (default: this process's)
    without uv's index variables, and no user or system ``uv.toml``."""
    base = os.environ if env is None else env
    out = {k: v for k, v in base.items() if not k.startswith("UV_") or k in KEEP_UV_VARS}
    # no user or system uv.toml: the throwaway project is the only configuration
    out["XDG_CONFIG_HOME"] = str(project / "config")
    out["XDG_CONFIG_DIRS"] = str(project / "config")
    return out


def index_unreachable(detail: str, request: LockRequest) -> IndexUnreachable | None:
    """uv's failure ``detail`` as the index it could not reach, or None when it is something
    else (no resolution, a build failure)."""
    if not _NETWORK.search(detail) or "no solution found" in detail.lower():
        return None
    urls = _URL.findall(detail)
    known = [
        u
        for u in [
            request.stack.torch_index_url,
            request.index.index_url,
            *request.index.extra_index_urls,
        ]
        if u
    ]
    where = next(
        (k for u in urls for k in known if u.startswith(k.rstrip("/").rsplit("/simple", 1)[0])),
        urls[0] if urls else (known[0] if known else "the default index"),
    )
    cause = next(
        (
            line.strip().removeprefix("cause:").strip()
            for line in reversed(detail.splitlines())
            if line.strip().startswith("cause:")
        ),
        detail.strip().splitlines()[-1] if detail.strip() else "no answer",
    )
    return IndexUnreachable(redact_url(where), cause)


def uv_lock(
    request: LockRequest,
    project: Path,
    *,
    uv: str,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Write the throwaway project for ``request`` into the directory ``project`` and run
    ``uv lock`` there (``uv.lock`` lands beside it). The interpreter running envcheck builds
    any sdist's metadata: no search of PATH (seconds with pyenv shims), never a download."""
    (project / "pyproject.toml").write_text(project_text(request), encoding="utf-8")
    argv = [uv, "lock", "--quiet", "--directory", str(project), "--no-progress"]
    argv += ["--python", sys.executable, "--no-python-downloads"]
    if request.exclude_newer:
        argv += ["--exclude-newer", request.exclude_newer]
    return run(argv, timeout=timeout, env=uv_env(project, env))


def _check_travels(text: str, request: LockRequest) -> None:
    if request.allow_local:
        return
    found = re.search(r"file://\S+|^\s*path\s*=\s*\"(?:/|\.)[^\"]*\"|^/\S+", text, re.MULTILINE)
    if found:
        raise LocalIndexRefused(
            f"the lock would name a local path ({found.group(0).strip()[:80]}): nothing was "
            "written (--allow-local keeps it)"
        )


def lock_project(
    request: LockRequest,
    *,
    uv: str,
    timeout: float = 900.0,
    env: Mapping[str, str] | None = None,
) -> Resolution:
    """``uv lock`` then ``uv export`` in a throwaway project; raises ResolveFailed,
    IndexUnreachable or LocalIndexRefused."""
    refuse_local(request)
    with tempfile.TemporaryDirectory(prefix="envcheck-lock-") as tmp:
        project = Path(tmp)
        locked = uv_lock(request, project, uv=uv, timeout=timeout, env=env)
        if not locked.ok:
            detail = (locked.stderr or locked.stdout).strip().replace(tmp, "the stack")
            if locked.problem:
                raise UvFailed(f"uv could not run: {locked.problem}")
            unreachable = index_unreachable(detail, request)
            if unreachable is not None:
                raise unreachable
            if locked.returncode is None or locked.returncode < 0:
                # killed (a signal, the OOM killer): not a verdict on the stack
                raise UvFailed(f"uv failed: {locked.describe_failure()}")
            if "no solution found" not in detail.lower():
                last = detail.splitlines()[-1][:300] if detail else "no message"
                raise UvFailed(f"uv failed (exit {locked.returncode}): {last}")
            raise ResolveFailed("uv found no resolution for this stack", detail)
        fmt = "pylock.toml" if request.fmt == "pylock" else "requirements.txt"
        export = [uv, "export", "--frozen", "--quiet", "--directory", tmp, "--no-header"]
        export += ["--format", fmt, "--no-emit-project"]
        exported = run(export, timeout=timeout, env=uv_env(project, env))
        if not exported.ok:
            detail = (exported.stderr or exported.stdout).strip().replace(tmp, "the stack")
            raise ResolveFailed("uv could not export the lock", detail)
        text = exported.stdout.replace(tmp, "the stack")
    text = re.sub(
        r"^requires-python = .*$",
        f"requires-python = {_toml_str(request.targets.requires_python())}",
        text,
        count=1,
        flags=re.MULTILINE,
    )
    _check_travels(text, request)
    from envcheck.plan.lockfile import parse_pylock, parse_requirements_lock

    first = request.targets.environments()[0]
    parse = parse_pylock if request.fmt == "pylock" else parse_requirements_lock
    pins, _ = parse(text, "uv export", first)
    return Resolution(text=text, pins=pins, format=request.fmt)


def pins_per_target(resolution: Resolution, targets: LockTargets) -> list[dict[str, str]]:
    """The packages the lock installs on each target."""
    from envcheck.plan.lockfile import parse_pylock, parse_requirements_lock

    parse = parse_pylock if resolution.format == "pylock" else parse_requirements_lock
    return [parse(resolution.text, "uv export", env)[0] for env in targets.environments()]
