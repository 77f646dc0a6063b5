"""This node, probed: the facts every other command checks."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from envcheck.errors import UsageError
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.probes.context import ProbeContext


@dataclass(frozen=True)
class ProbeOptions:
    """How to probe this node: the interpreter, timeouts, redaction, --deep."""

    python: str | None = None  # another interpreter whose packages to inspect
    timeout: float = 5.0  # seconds per external command and name lookup
    redact: bool = False  # hostnames and addresses replaced by pseudonyms
    # --deep: ("gpu",) asks the CUDA driver and NVML, each in a child bounded by ``timeout``;
    # ("gpu", "torch") adds the GEMM and NCCL smoke test in the node's own Python
    deep: tuple[str, ...] = ()
    deep_timeout: float = 120.0  # seconds the --deep=torch smoke test may take


DEEP_STEPS = ("gpu", "torch")


def validate(options: ProbeOptions) -> None:
    if not (options.timeout > 0 and math.isfinite(options.timeout)):
        raise UsageError("--timeout must be positive")
    unknown = [d for d in options.deep if d not in DEEP_STEPS]
    if unknown:
        raise UsageError(f"--deep: unknown step {unknown[0]!r} (must be --deep or --deep=torch)")
    if not (options.deep_timeout > 0 and math.isfinite(options.deep_timeout)):
        raise UsageError("--deep-timeout must be positive")
    python = options.python
    if python is not None and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageError(f"--python: {python} is not an executable file")


def probe_context(options: ProbeOptions) -> ProbeContext:
    """The ProbeContext for probing this node with these options (checked first)."""
    from envcheck.probes.context import ProbeContext

    validate(options)
    return ProbeContext(
        python=options.python,
        timeout=options.timeout,
        redact=options.redact,
        deep=tuple(options.deep),
        torch_timeout=options.deep_timeout,
    )


_PYTHON_MARK = "envcheck-python-check"


def require_python(path: str, timeout: float) -> None:
    """--python must name a Python interpreter: one bounded run of a stdlib one-liner."""
    from envcheck.probes.python_env import target_env
    from envcheck.probes.run import run

    # isolated (no environment variables, no user or site packages: nothing of the target's
    # runs), in words Python 2 reads too (-I and print(*...) are not), so that Python 2.7 is
    # named as what it is: an interpreter envcheck does not support
    done = run(
        [
            path,
            "-E",
            "-s",
            "-S",
            "-c",
            f"import sys; sys.stdout.write('{_PYTHON_MARK} %d %d\\n' % sys.version_info[:2])",
        ],
        timeout=timeout,
        env=target_env(os.environ),
    )
    words = done.stdout.split()
    if not (done.ok and words[:1] == [_PYTHON_MARK]):
        why = done.problem or (
            f"exited with {done.returncode}" if done.returncode else "it printed something else"
        )
        raise UsageError(f"--python: {path} is not a Python interpreter ({why})")
    if len(words) >= 3 and words[1].isdigit() and int(words[1]) < 3:
        raise UsageError(
            f"--python: {path} is Python {words[1]}.{words[2]}, a Python interpreter envcheck "
            "does not support (it inspects Python 3 environments)"
        )


def probe(options: ProbeOptions | None = None) -> NodeReport:
    """This node's report; ``--python`` must name an executable file that is a Python
    interpreter (UsageError otherwise: exit 2, as for ``check``)."""
    from envcheck.probes import collect

    options = options or ProbeOptions()
    context = probe_context(options)  # an executable file first, then a Python interpreter
    if options.python:
        require_python(options.python, options.timeout)
    return collect(context)
