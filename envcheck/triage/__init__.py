"""Log triage: known error signatures in a log, and their causes checked on a node.

The package is also callable: ``envcheck.triage(text)`` is :func:`envcheck.api.triage` whether
or not this package has been imported (importing it makes it the ``envcheck.triage``
attribute). Nothing is imported here.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from envcheck.api import triage

        return triage(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
