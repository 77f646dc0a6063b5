"""A check inside every Ray worker process: ``worker_process_setup_hook``.

A Ray worker does not run in the shell's environment: another Python (the raylet's, a
``runtime_env``'s virtualenv or conda env), another ``LD_LIBRARY_PATH``, packages missing (vLLM
installed on the head node only). The hook checks the worker's own process when Ray starts it and
raises, so Ray fails that worker at once with the findings in the exit detail (an actor's
``ActorDiedError`` says why at creation, not hours later)::

    ray.init(runtime_env=envcheck.ray_hook.runtime_env(require=["vllm"]))
    # or, for `ray job submit --runtime-env-json`:
    {"worker_process_setup_hook": "envcheck.ray_hook.check_worker",
     "env_vars": {"ENVCHECK_REQUIRE": "vllm"}}

Settings are environment variables, so that they travel in ``runtime_env["env_vars"]``:
``ENVCHECK_FAIL_ON`` (error, warning or info; default error), ``ENVCHECK_SELECT`` and
``ENVCHECK_IGNORE`` (rule code prefixes, comma-separated), ``ENVCHECK_REQUIRE`` (distributions the
worker's Python must have), ``ENVCHECK_MATRIX`` (site overlays) and ``ENVCHECK_HOOK=off``.
Ray is not imported here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from envcheck.api import PreflightError, preflight
from envcheck.errors import EnvcheckError

HOOK = "envcheck.ray_hook.check_worker"
# set in the worker's environment once the check passed (tasks can read it)
CHECKED = "ENVCHECK_WORKER_CHECKED"


class WorkerCheckError(RuntimeError):
    """The worker's process fails its pre-flight check: ``findings`` (rule findings at or above
    ENVCHECK_FAIL_ON) and ``missing`` (required distributions not installed)."""

    def __init__(self, message: str, findings: tuple[Any, ...], missing: tuple[str, ...]) -> None:
        super().__init__(message)
        self.findings = findings
        self.missing = missing


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def missing_distributions(names: Iterable[str]) -> tuple[str, ...]:
    """The distributions of ``names`` this interpreter does not have installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    missing = []
    for name in names:
        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(name)
    return tuple(missing)


def _header(env: Mapping[str, str]) -> list[str]:
    import socket

    return [
        f"envcheck: this Ray worker's environment fails its pre-flight check "
        f"(host {socket.gethostname()}, pid {os.getpid()})",
        f"  python: {sys.executable} ({sys.version.split()[0]})",
        f"  LD_LIBRARY_PATH: {env.get('LD_LIBRARY_PATH') or '(unset)'}",
    ]


def check_worker() -> None:
    """The hook: check this process; raise :class:`WorkerCheckError` when it fails."""
    env = os.environ
    if env.get("ENVCHECK_HOOK", "").lower() in ("off", "0", "false"):
        return
    missing = missing_distributions(_split(env.get("ENVCHECK_REQUIRE")))
    findings: tuple[Any, ...] = ()
    detail: list[str] = []
    try:
        preflight(
            env.get("ENVCHECK_FAIL_ON") or "error",  # type: ignore[arg-type]
            _split(env.get("ENVCHECK_SELECT")),
            _split(env.get("ENVCHECK_IGNORE")),
        )
    except PreflightError as exc:
        findings = exc.findings
        detail = str(exc).splitlines()
    except EnvcheckError:
        raise  # bad settings (ENVCHECK_FAIL_ON=fatal, an unreadable ENVCHECK_MATRIX): say so
    except Exception as exc:  # envcheck's own failure never stops a worker that may be fine
        sys.stderr.write(
            f"envcheck: the worker check could not run ({type(exc).__name__}: {exc})\n"
        )
        return
    if not findings and not missing:
        os.environ[CHECKED] = "1"
        return
    lines = _header(env) + [f"  {line}" for line in detail]
    lines += [
        f"  {name} is not installed in this worker's Python (ENVCHECK_REQUIRE); install it "
        f"there: {sys.executable} -m pip install {name}"
        for name in missing
    ]
    lines.append(
        "  (the check ran in the worker's own process; see docs/cluster.md#inside-every-ray-worker)"
    )
    raise WorkerCheckError("\n".join(lines), findings, missing)


def runtime_env(
    base: Mapping[str, Any] | None = None,
    *,
    require: Iterable[str] = (),
    fail_on: str = "error",
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
) -> dict[str, Any]:
    """``base`` (a Ray runtime_env dict) with the hook and its settings added."""
    merged = dict(base or {})
    existing = merged.get("worker_process_setup_hook")
    if existing not in (None, HOOK):
        raise ValueError(
            f"runtime_env already has a worker_process_setup_hook ({existing!r}); call "
            f"{HOOK} from it instead"
        )
    merged["worker_process_setup_hook"] = HOOK
    env_vars = dict(merged.get("env_vars") or {})
    env_vars["ENVCHECK_FAIL_ON"] = fail_on
    for key, values in (
        ("ENVCHECK_REQUIRE", require),
        ("ENVCHECK_SELECT", select),
        ("ENVCHECK_IGNORE", ignore),
    ):
        listed = ",".join(values)
        if listed:
            env_vars[key] = listed
    merged["env_vars"] = env_vars
    return merged
