"""envcheck: pre-flight checks for GPU training nodes.

``import envcheck`` is light: the API (:mod:`envcheck.api`) is imported on first use of one of
its names (``envcheck.preflight``, ``envcheck.check``, ...).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from envcheck.version import __version__

_API = (
    "CheckOutcome",
    "ClusterOptions",
    "PreflightError",
    "check",
    "check_cluster",
    "preflight",
    "probe",
    "triage",
)

__all__ = [
    "CheckOutcome",
    "ClusterOptions",
    "PreflightError",
    "__version__",
    "check",
    "check_cluster",
    "preflight",
    "probe",
    "triage",
]

if TYPE_CHECKING:
    from envcheck.api import (
        CheckOutcome,
        ClusterOptions,
        PreflightError,
        check,
        check_cluster,
        preflight,
        probe,
        triage,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        from envcheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'envcheck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


class _CallablePackage(types.ModuleType):
    """``envcheck.triage`` once the package is imported: still callable as the API function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from envcheck.api import triage as run_triage

        return run_triage(*args, **kwargs)


class _Package(types.ModuleType):
    """``envcheck`` itself: the import system sets ``envcheck.triage`` to the subpackage when it
    is imported; the subpackage is made callable then, so ``envcheck.triage(text)`` is the API
    function whether or not the package was imported (and nothing is imported here for it)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "triage" and isinstance(value, types.ModuleType):
            value.__class__ = _CallablePackage
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
