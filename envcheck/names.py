"""Distribution names in their canonical form (PEP 503), each name worked out once a process.

``packaging.utils.canonicalize_name`` with a memo: a ``check`` asks for the same few hundred
names thousands of times (each installed distribution's ``key`` for every rule that looks one
up, the matrix's tables scanned per package)."""

from __future__ import annotations

import functools

from packaging.utils import NormalizedName
from packaging.utils import canonicalize_name as _canonicalize_name


@functools.lru_cache(maxsize=8192)
def canonicalize_name(name: str) -> NormalizedName:
    """``packaging.utils.canonicalize_name(name)``."""
    return _canonicalize_name(name)
