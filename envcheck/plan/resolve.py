"""Resolve a stack with a real resolver for the target's platform and Python: ``uv pip compile``.

The index is the one pip is configured with (pip's config files, ``PIP_INDEX_URL``,
``PIP_EXTRA_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``) unless the command line names
one; the torch variant's index comes from the matrix. uv's own configuration files are not
read (``--no-config``), so pip's settings are the single source of the index.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from packaging.utils import canonicalize_name

from envcheck.errors import EnvcheckError
from envcheck.model.plan import Stack, Target
from envcheck.probes.run import run

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ResolveFormat = Literal["requirements", "pylock"]
INSTALL_UV = "envcheck lock needs uv: pip install 'envcheck-gpu[lock]' (or put uv on PATH, or set ENVCHECK_UV)"


class UvMissing(EnvcheckError):
    """uv is not installed; the message says how to install it."""


class ResolveFailed(Exception):
    """The resolver found no solution or could not run; ``detail`` is its own explanation."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


@dataclass(frozen=True)
class IndexConfig:
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    source: str = "the resolver's default index"
    dropped: tuple[str, ...] = ()  # file:// indexes that do not exist (pip ignores them too)


def redact_url(url: str) -> str:
    """An index URL without credentials (user:token@host -> ***@host)."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url


def _pip_config_files(env: Mapping[str, str]) -> list[Path]:
    """pip's configuration files, lowest priority first (global, user, site, PIP_CONFIG_FILE)."""
    if env.get("PIP_CONFIG_FILE") == os.devnull:
        return []
    dirs = env.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    files = [Path(d) / "pip" / "pip.conf" for d in reversed([d for d in dirs if d])]
    files.append(Path("/etc/pip.conf"))
    home = Path(env.get("HOME", str(Path.home())))
    files.append(home / ".pip" / "pip.conf")
    files.append(Path(env.get("XDG_CONFIG_HOME", str(home / ".config"))) / "pip" / "pip.conf")
    files.append(Path(sys.prefix) / "pip.conf")
    if env.get("PIP_CONFIG_FILE"):
        files.append(Path(env["PIP_CONFIG_FILE"]))
    return files


def _split(value: str) -> tuple[str, ...]:
    return tuple(v for v in re.split(r"\s+", value.strip()) if v)


def pip_index_config(
    env: Mapping[str, str] | None = None,
    *,
    index_url: str | None = None,
    extra_index_urls: Sequence[str] = (),
    find_links: Sequence[str] = (),
    no_index: bool = False,
) -> IndexConfig:
    """The index pip would use here; command-line values win over pip's configuration."""
    env = os.environ if env is None else env
    values: dict[str, str] = {}
    origin: dict[str, str] = {}
    for path in _pip_config_files(env):
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            if parser.has_section(section):
                for key, value in parser.items(section):
                    values[key] = value
                    origin[key] = f"pip config {path}"
    for key in ("index-url", "extra-index-url", "find-links", "no-index"):
        var = "PIP_" + key.upper().replace("-", "_")
        if env.get(var):
            values[key] = env[var]
            origin[key] = var
    cli = bool(index_url or extra_index_urls or find_links or no_index)
    index = index_url or (None if cli else values.get("index-url"))
    extras = tuple(extra_index_urls) or (() if cli else _split(values.get("extra-index-url", "")))
    links = tuple(find_links) or (() if cli else _split(values.get("find-links", "")))
    off = no_index or (not cli and values.get("no-index", "").lower() in ("1", "true", "yes", "on"))
    kept, dropped = [], []
    for url in extras:
        if url.startswith("file://") and not Path(urlsplit(url).path).exists():
            dropped.append(url)
        else:
            kept.append(url)
    if cli:
        source = "the command line"
    elif any(k in origin for k in ("index-url", "extra-index-url", "find-links", "no-index")):
        source = ", ".join(
            sorted(
                {
                    origin[k]
                    for k in ("index-url", "extra-index-url", "find-links", "no-index")
                    if k in origin
                }
            )
        )
    else:
        source = IndexConfig.source
    return IndexConfig(index, tuple(kept), links, off, source, tuple(dropped))


def find_uv(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    if env.get("ENVCHECK_UV"):
        chosen = env["ENVCHECK_UV"]
        if not os.access(chosen, os.X_OK):
            raise UvMissing(f"ENVCHECK_UV={chosen} is not an executable; {INSTALL_UV}")
        return chosen
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv", path=env.get("PATH", os.defpath))
    if found:
        return found
    raise UvMissing(INSTALL_UV)


def python_platform(target: Target) -> str:
    """uv's --python-platform for the target: manylinux_2_X from its glibc when known."""
    arch = target.arch if target.arch in ("x86_64", "aarch64") else "x86_64"
    glibc = target.glibc
    if glibc:
        match = re.fullmatch(r"2\.(\d+)(?:\.\d+)?", glibc)
        if match and 17 <= int(match.group(1)) <= 40:
            minor = int(match.group(1))
            if minor < 28 and minor != 17:
                minor = 17
            return f"{arch}-manylinux_2_{minor}"
    return f"{arch}-unknown-linux-gnu"


def compile_argv(
    uv: str,
    stack: Stack,
    index: IndexConfig,
    fmt: ResolveFormat,
    requirements: Path,
    overrides: Path | None,
    constraints: Path | None = None,
) -> list[str]:
    argv = [uv, "pip", "compile", str(requirements), "--no-config", "--quiet"]
    argv += ["--python-platform", python_platform(stack.target)]
    argv += ["--python-version", stack.target.python]
    # the interpreter that would build a source distribution's metadata; naming it spares uv a
    # search of PATH for a Python of the target's version (seconds with pyenv shims)
    argv += ["--python", sys.executable]
    argv += ["--no-header", "--generate-hashes"]
    # pip considers every configured index alike; so does this resolution (uv's default would
    # stop at the first index that has a package at all)
    argv += ["--index-strategy", "unsafe-best-match"]
    if fmt == "pylock":
        argv += ["--format", "pylock.toml"]
    if index.no_index:
        argv.append("--no-index")
    elif index.index_url:
        argv += ["--index-url", index.index_url]
    extras = ([stack.torch_index_url] if stack.torch_index_url else []) + list(
        index.extra_index_urls
    )
    for url in extras:
        argv += ["--extra-index-url", url]
    for link in index.find_links:
        argv += ["--find-links", link]
    if overrides is not None:
        argv += ["--overrides", str(overrides)]
    if constraints is not None:
        argv += ["--constraints", str(constraints)]
    return argv


@dataclass(frozen=True)
class Resolution:
    text: str  # uv's output, without its header
    pins: dict[str, str]  # canonical name -> version
    format: ResolveFormat


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def pins_from_requirements(text: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def pins_from_pylock(text: str) -> dict[str, str]:
    data = tomllib.loads(text)
    return {
        canonicalize_name(str(p["name"])): str(p["version"])
        for p in data.get("packages", [])
        if isinstance(p, dict) and "name" in p and "version" in p
    }


def resolve(
    stack: Stack,
    index: IndexConfig,
    *,
    fmt: ResolveFormat = "requirements",
    uv: str,
    timeout: float = 900.0,
    env: Mapping[str, str] | None = None,
) -> Resolution:
    with tempfile.TemporaryDirectory(prefix="envcheck-lock-") as tmp:
        reqs = Path(tmp) / "requirements.in"
        reqs.write_text("\n".join(stack.requirements) + "\n", encoding="utf-8")
        overrides = None
        if stack.overrides:
            overrides = Path(tmp) / "overrides.txt"
            overrides.write_text("\n".join(stack.overrides) + "\n", encoding="utf-8")
        constraints = None
        if stack.constraints:
            constraints = Path(tmp) / "constraints.txt"
            constraints.write_text("\n".join(stack.constraints) + "\n", encoding="utf-8")
        argv = compile_argv(uv, stack, index, fmt, reqs, overrides, constraints)
        result = run(argv, timeout=timeout, env=env)
        names = {str(reqs): "the stack's requirements"}
        if overrides is not None:
            names[str(overrides)] = "envcheck's overrides"
        if constraints is not None:
            names[str(constraints)] = "envcheck's constraints (real upper bounds)"
    if not result.ok:
        detail = (result.stderr or result.stdout).strip()
        for path, name in names.items():
            detail = detail.replace(path, name)
        if result.problem:
            raise ResolveFailed(f"uv could not run: {result.problem}", detail)
        raise ResolveFailed("uv found no resolution for this stack", detail)
    text = result.stdout
    for path, name in names.items():
        text = text.replace(path, name)
    pins = pins_from_pylock(text) if fmt == "pylock" else pins_from_requirements(text)
    return Resolution(text=text, pins=pins, format=fmt)
