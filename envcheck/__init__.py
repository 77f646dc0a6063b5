"""envcheck: pre-flight checks for GPU training nodes.

``import envcheck`` is light: the API (:mod:`envcheck.api`) is imported on first use of one of
its names (``envcheck.preflight``, ``envcheck.check``, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

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
