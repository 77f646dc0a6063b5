"""Which package index to read: the one pip is configured with, or ``--index-url``.

Order (pip's own): ``--index-url``; else ``PIP_INDEX_URL``; else ``index-url`` from
``python -m pip config list``; else pip's built-in default, read from pip itself at run time.
Extra indexes come from ``PIP_EXTRA_INDEX_URL`` or ``extra-index-url``. Only HTTP(S) indexes
can be read; others (``file://`` mirrors, local directories) are skipped with a reason.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from envcheck.errors import UsageError
from envcheck.probes.run import run

# sections of pip's configuration that apply to `pip download` / `pip install`, lowest first
_SECTIONS = ("global", "download", "install", ":env:")
_DEFAULT_SNIPPET = "from pip._internal.models.index import PyPI; print(PyPI.simple_url)"


@dataclass(frozen=True)
class IndexChoice:
    urls: tuple[str, ...]  # HTTP(S) simple-repository base URLs, in the order they are tried
    origin: str  # where the first one came from
    skipped: tuple[tuple[str, str], ...] = ()  # (url, why it is not used)


def _split(value: str) -> list[str]:
    return [part for part in value.split() if part]


def parse_pip_config(text: str) -> dict[str, str]:
    """``pip config list`` output (``section.key='value'``) -> {key: value}, later sections win."""
    found: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        name, sep, raw = line.partition("=")
        if not sep or "." not in name:
            continue
        section, _, key = name.rpartition(".")
        if section not in _SECTIONS:
            continue
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            value = raw.strip().strip("'\"")
        if not isinstance(value, str):
            continue
        rank = _SECTIONS.index(section)
        if key not in found or rank >= found[key][0]:
            found[key] = (rank, value)
    return {key: value for key, (_, value) in found.items()}


def pip_config(python: str, timeout: float, env: Mapping[str, str]) -> dict[str, str]:
    result = run([python, "-m", "pip", "config", "list"], timeout=timeout, env=env)
    return parse_pip_config(result.stdout) if result.ok else {}


def pip_default_index(python: str, timeout: float, env: Mapping[str, str]) -> str | None:
    result = run([python, "-c", _DEFAULT_SNIPPET], timeout=timeout, env=env)
    url = result.stdout.strip() if result.ok else ""
    return url or None


def is_http(url: str) -> bool:
    """An http(s) URL with a host that parses (``http://[::1`` or a port out of range: no)."""
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def choose_index(
    cli_url: str | None,
    env: Mapping[str, str],
    *,
    python: str = sys.executable,
    timeout: float = 30.0,
) -> IndexChoice:
    if cli_url:
        if not is_http(cli_url):
            raise UsageError(f"--index-url {cli_url}: envcheck reads HTTP(S) indexes only")
        return IndexChoice((cli_url,), "--index-url")
    config: dict[str, str] | None = None
    if env.get("PIP_INDEX_URL"):
        primary, origin = _split(env["PIP_INDEX_URL"]), "PIP_INDEX_URL"
    else:
        config = pip_config(python, timeout, env)
        if config.get("index-url"):
            primary, origin = _split(config["index-url"]), "pip config (index-url)"
        else:
            default = pip_default_index(python, timeout, env)
            if default is None:
                raise UsageError(
                    "no package index configured and pip's default could not be read "
                    f"(is pip installed for {python}?); give --index-url URL"
                )
            primary, origin = [default], "pip's default index"
    if env.get("PIP_EXTRA_INDEX_URL"):
        extra = _split(env["PIP_EXTRA_INDEX_URL"])
    else:
        config = pip_config(python, timeout, env) if config is None else config
        extra = _split(config.get("extra-index-url", ""))
    urls, skipped = [], []
    for url in [*primary, *extra]:
        if url in urls:
            continue
        if is_http(url):
            urls.append(url)
        else:
            skipped.append((url, "not an HTTP(S) index; envcheck reads indexes over HTTP only"))
    if not urls:
        raise UsageError(
            "no HTTP(S) package index is configured "
            f"({', '.join(u for u, _ in skipped)} skipped); give --index-url URL"
        )
    return IndexChoice(tuple(urls), origin, tuple(skipped))
