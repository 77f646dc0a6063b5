"""The built-in matrix (no overlay, no cache directory), loaded once per test process.

Parsing the 86 TOML files takes about half a second of CPU; some forty test modules read the
built-in matrix, most of them at import, and each pytest-xdist worker imports every one of
them. A `Matrix` is frozen (its tables decoded on first use), so one shared copy answers every
test the same as its own would; a test that needs overlays or settings calls `load` itself.
"""

from __future__ import annotations

from functools import cache

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load


@cache
def builtin_matrix() -> Matrix:
    return load(env={})
