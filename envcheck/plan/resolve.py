"""What a resolution needs around uv: finding uv, the index pip is configured with, the
target's platform, and reading pins out of uv's output (the resolver itself: uvproject.py).

The index is the one pip is configured with (pip's config files, ``PIP_INDEX_URL``,
``PIP_EXTRA_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``) unless the command line names
one; the torch variant's index comes from the matrix.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from packaging.utils import canonicalize_name

from envcheck.errors import EnvcheckError
from envcheck.model.plan import Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ResolveFormat = Literal["requirements", "pylock"]
INSTALL_UV = "envcheck lock needs uv: pip install 'envcheck-gpu[lock]' (or put uv on PATH, or set ENVCHECK_UV)"


class UvMissing(EnvcheckError):
    """uv is not installed; the message says how to install it."""


class UvFailed(EnvcheckError):
    """uv itself failed (killed, timed out, an error that is not a resolver's verdict): an
    error naming uv's failure, exit 2, never "no resolution"."""


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


def _check_location(option: str, value: str) -> None:
    """An index given on the command line is a URL (http, https, file) or an existing path:
    anything else is a usage error, not an index that 'has no torch'."""
    if urlsplit(value).scheme.lower() in ("http", "https", "file") or Path(value).exists():
        return
    from envcheck.errors import UsageError

    raise UsageError(
        f"{option}: {redact_url(value)!r} is neither a URL (http://, https://, file://) "
        "nor an existing path"
    )


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
    for option, values_given in (
        ("--index-url", [index_url] if index_url else []),
        ("--extra-index-url", list(extra_index_urls)),
        ("--find-links", list(find_links)),
    ):
        for given in values_given:
            _check_location(option, given)
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
