"""Shared libraries found by absolute path, never by a bare name.

``dlopen("libnvidia-ml.so.1")`` searches ``LD_LIBRARY_PATH``, where an empty component (``::``,
a leading or trailing ``:``) or a relative one means the working directory: a ``check`` run in
someone else's directory would load their ``libnvidia-ml.so.1`` and run its constructors.
:func:`find_library` does the search itself, as the dynamic loader would but only through
absolute directories: the absolute components of ``LD_LIBRARY_PATH``, then the paths the
loader's cache (``/etc/ld.so.cache``) names, then the standard library directories. Callers load
the path it returns (``ctypes.CDLL(path)``), or report the library missing. Children get
:func:`safe_library_path` as their ``LD_LIBRARY_PATH``: what the libraries they load pull in is
not looked up in the working directory either. See docs/security.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

LD_CACHE = "/etc/ld.so.cache"
_CACHE_CAP = 32 * 1024 * 1024  # the loader's cache is a few hundred KiB
STANDARD_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
)


def absolute_dirs(value: str) -> list[str]:
    """The components of a search path that name a directory by absolute path."""
    return [part for part in value.split(":") if part and os.path.isabs(part)]


def safe_library_path(env: Mapping[str, str]) -> str:
    """``LD_LIBRARY_PATH`` without its empty and relative components."""
    return ":".join(absolute_dirs(env.get("LD_LIBRARY_PATH", "")))


def _from_cache(soname: str, cache: str) -> list[str]:
    """Paths ending in ``/soname`` among the strings of the loader's cache file."""
    try:
        with open(cache, "rb") as handle:
            data = handle.read(_CACHE_CAP)
    except OSError:
        return []
    pattern = re.compile(rb"(/[^\x00]*/" + re.escape(soname.encode()) + rb")\x00")
    return [m.group(1).decode("utf-8", "replace") for m in pattern.finditer(data)]


def find_library(
    soname: str, env: Mapping[str, str] | None = None, *, cache: str = LD_CACHE
) -> str | None:
    """The absolute path of ``soname`` (a file name such as ``libnvidia-ml.so.1``), or None."""
    if "/" in soname:
        return soname if os.path.isabs(soname) and os.path.isfile(soname) else None
    env = os.environ if env is None else env
    candidates = [os.path.join(d, soname) for d in absolute_dirs(env.get("LD_LIBRARY_PATH", ""))]
    candidates += _from_cache(soname, cache)
    candidates += [os.path.join(d, soname) for d in STANDARD_DIRS]
    for path in candidates:
        if os.path.isabs(path) and os.path.isfile(path):
            return path
    return None
