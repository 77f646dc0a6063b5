"""``python -m envcheck``.

``-m`` puts the working directory first on ``sys.path``: a ``packaging.py`` or ``rich/`` there
would shadow the real one when envcheck imports it (lazily, after this point). That entry is
dropped unless envcheck itself was loaded from it (a source checkout run in place).
"""

from __future__ import annotations

import os
import sys


def _drop_working_directory() -> None:
    if not sys.path:
        return
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # a deleted working directory: nothing of it can be imported anyway
        cwd = None
    first = sys.path[0]
    if first and os.path.realpath(first) != cwd:
        return  # -P / PYTHONSAFEPATH, or not the working directory
    home = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if cwd is None or home != cwd:
        del sys.path[0]


_drop_working_directory()

from envcheck.cli import entry  # noqa: E402  (after the path is made safe)

if __name__ == "__main__":
    entry()
