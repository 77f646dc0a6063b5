"""This node, probed: the facts every other command checks."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from envcheck.errors import UsageError
from envcheck.model.report import NodeReport


@dataclass(frozen=True)
class ProbeOptions:
    python: str | None = None  # another interpreter whose packages to inspect
    timeout: float = 5.0  # seconds per external command and name lookup
    redact: bool = False  # hostnames and addresses replaced by pseudonyms


def validate(options: ProbeOptions) -> None:
    if not (options.timeout > 0 and math.isfinite(options.timeout)):
        raise UsageError("--timeout must be positive")
    python = options.python
    if python is not None and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageError(f"--python: {python} is not an executable file")


def probe(options: ProbeOptions | None = None) -> NodeReport:
    from envcheck.probes import collect
    from envcheck.probes.context import ProbeContext

    options = options or ProbeOptions()
    validate(options)
    return collect(
        ProbeContext(python=options.python, timeout=options.timeout, redact=options.redact)
    )
