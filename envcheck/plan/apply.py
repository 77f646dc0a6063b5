"""Run a plan's steps in a Python environment, safely.

Only ``safe`` steps run (``unsafe`` ones with ``include_unsafe``); environment variables and
manual steps are printed, never run. Before anything changes, the environment's ``pip freeze``
is written to a snapshot file (mode 0600, a new file made with ``O_EXCL`` under a name no other
run has, index credentials redacted, control sequences taken out); each command is shown before
it runs; the first failure stops the run and the environment's state (what changed against the
snapshot) is reported with the commands that roll it back. A signal (SIGINT, SIGTERM) ends the
running pip's process group and is reported through ``echo`` (the snapshot, the steps that had
run, the one that was stopped, how to roll back) before it propagates. Every pip command is
``<target python> -m pip``.
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
import shlex
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from envcheck.errors import EnvcheckError, InputError
from envcheck.fileio import create_exclusive
from envcheck.model.plan import Plan, Step
from envcheck.plan.emit.pip import pip_argv
from envcheck.probes.run import Terminated, run, signal_name
from envcheck.redact import redact_urls
from envcheck.terminal import strip_controls

PIP_TIMEOUT_S = 3600.0


class ApplyError(EnvcheckError):
    """The plan could not be started (no snapshot): nothing was changed."""


@dataclass(frozen=True)
class StepRun:
    step: Step
    argv: tuple[str, ...]
    ok: bool
    detail: str = ""  # the end of pip's output when it failed

    def to_json(self) -> dict[str, object]:
        return {
            "command": shlex.join(self.argv),
            "codes": list(self.step.codes),
            "ok": self.ok,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class ApplyOutcome:
    python: str
    snapshot: str
    ran: tuple[StepRun, ...] = ()
    not_run: tuple[tuple[Step, str], ...] = ()
    changes: tuple[str, ...] = ()  # "numpy 2.1.3 -> 1.26.4", "+ nvidia-cublas-cu12 12.3.4.1"
    rollback: tuple[str, ...] = ()
    state_error: str | None = None  # pip freeze after the run failed
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> StepRun | None:
        return next((r for r in self.ran if not r.ok), None)

    def to_json(self) -> dict[str, object]:
        return {
            "python": self.python,
            "snapshot": self.snapshot,
            "ran": [r.to_json() for r in self.ran],
            "not_run": [
                {"command": s.command(), "codes": list(s.codes), "why": why}
                for s, why in self.not_run
            ],
            "failed": self.failed.to_json() if self.failed else None,
            "changes": list(self.changes),
            "rollback": list(self.rollback),
            "state_error": self.state_error,
        }


def freeze(python: str, env: Mapping[str, str] | None = None) -> str:
    result = run([python, "-m", "pip", "freeze"], timeout=300, env=env)
    if not result.ok:
        raise ApplyError(
            f"could not take the `pip freeze` snapshot with {python}: "
            f"{result.describe_failure()}; nothing was changed"
        )
    return result.stdout


def _versions(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "==" in line:
            name, _, version = line.partition("==")
        elif " @ " in line:
            name, _, version = line.partition(" @ ")
        else:
            name, version = line, "?"
        out[canonicalize_name(name.strip())] = version.strip()
    return out


def diff(before: str, after: str) -> tuple[list[str], list[str]]:
    """(changes in words, names added) between two pip freeze outputs."""
    old, new = _versions(before), _versions(after)
    changes, added = [], []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            changes.append(f"- {name} {old[name]} (removed)")
        elif name not in old:
            changes.append(f"+ {name} {new[name]} (added)")
            added.append(name)
        elif old[name] != new[name]:
            changes.append(f"~ {name} {old[name]} -> {new[name]}")
    return changes, added


def with_indexes(freeze_text: str, index_for: Callable[[str], str | None]) -> str:
    """The snapshot as a requirements file that restores it: a build only a variant index
    serves (torch==2.4.0+cu121) gets that index as an ``--extra-index-url`` line."""
    from envcheck.plan.simulate import parse_requirement

    urls: list[str] = []
    for line in freeze_text.splitlines():
        req = parse_requirement(line.strip()) if "==" in line else None
        if req is None:
            continue
        for item in req.specifier:
            label = item.version.partition("+")[2]
            url = index_for(label) if label else None
            if url and url not in urls:
                urls.append(url)
    if not urls:
        return freeze_text
    head = "".join(
        f"# restores builds only this index serves\n--extra-index-url {u}\n" for u in urls
    )
    return head + freeze_text


def rollback_commands(python: str, snapshot: str, added: list[str]) -> list[str]:
    commands = []
    if added:
        commands.append(shlex.join([python, "-m", "pip", "uninstall", "-y", *added]))
    commands.append(shlex.join([python, "-m", "pip", "install", "--no-deps", "-r", snapshot]))
    return commands


def default_snapshot_name(now: _dt.datetime | None = None) -> str:
    """envcheck-freeze-<date>-<time>-<microseconds>.txt (made unique on creation)."""
    return f"envcheck-freeze-{(now or _dt.datetime.now()).strftime('%Y%m%d-%H%M%S-%f')}.txt"


def write_snapshot(snapshot: str | Path | None, text: str, *, overwrite: bool = False) -> Path:
    """The snapshot written as a new 0600 file, redacted; ``None``: a fresh default name in the
    working directory. Raises ApplyError (nothing was changed) when it cannot be written."""
    text = redact_urls(strip_controls(text))
    try:
        if snapshot is None:
            base = default_snapshot_name()
            for n in range(100):
                name = base if n == 0 else base.replace(".txt", f"-{n}.txt")
                try:
                    return create_exclusive(name, text)
                except FileExistsError:
                    continue
            raise FileExistsError(base)
        target = Path(snapshot)
        if not overwrite:
            return create_exclusive(target, text)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        create_exclusive(tmp, text)
        try:
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        return target
    except FileExistsError:
        raise InputError(
            "the snapshot file exists (use --force to overwrite); nothing was changed",
            where=str(snapshot),
        ) from None
    except OSError as exc:
        where = snapshot if snapshot is not None else "in the working directory"
        raise ApplyError(
            f"cannot write the snapshot {where}: {exc.strerror or exc}; nothing was changed"
        ) from None


def _report_stop(
    exc: BaseException,
    echo: Callable[[str], None],
    path: Path,
    python: str,
    ran: list[StepRun],
    running: tuple[str, ...] | None,
) -> None:
    done = "; ".join(shlex.join(r.argv) + ("" if r.ok else " (failed)") for r in ran)
    echo(
        f"stopped by {signal_name(exc)}"
        + (
            f" while running `{shlex.join(running)}` (its process group was ended)"
            if running
            else ""
        )
        + f"; {len(ran)} step(s) had run before it"
        + (f": {done}" if done else "")
    )
    echo(
        f"snapshot of the environment before any change: {path}; to roll back: "
        + shlex.join([python, "-m", "pip", "install", "--no-deps", "-r", str(path)])
        + " (and uninstall what the stopped step added: compare `pip freeze` with the snapshot)"
    )


def apply_plan(
    plan: Plan,
    python: str,
    *,
    snapshot: str | Path | None,
    include_unsafe: bool = False,
    overwrite: bool = False,
    echo: Callable[[str], None] = lambda _text: None,
    env: Mapping[str, str] | None = None,
    timeout: float = PIP_TIMEOUT_S,
    index_for: Callable[[str], str | None] | None = None,
) -> ApplyOutcome:
    """Run the runnable steps in order; stop at the first failure. ``index_for`` maps a local
    version label (cu121) to the index that serves it, recorded in the snapshot."""
    before = freeze(python, env)
    recorded = with_indexes(before, index_for) if index_for else before
    path = write_snapshot(snapshot, recorded, overwrite=overwrite)
    echo(f"snapshot of the environment before any change: {path}")
    ran: list[StepRun] = []
    not_run: list[tuple[Step, str]] = []
    running: list[tuple[str, ...]] = []
    try:
        _run_steps(plan, python, ran, not_run, running, include_unsafe, echo, env, timeout)
    except (KeyboardInterrupt, Terminated) as exc:
        _report_stop(exc, echo, path, python, ran, running[-1] if running else None)
        raise
    try:
        after = freeze(python, env)
    except ApplyError as exc:
        return ApplyOutcome(python, str(path), tuple(ran), tuple(not_run), state_error=str(exc))
    changes, added = diff(before, after)
    rollback = rollback_commands(python, str(path), added) if changes else []
    return ApplyOutcome(
        python, str(path), tuple(ran), tuple(not_run), tuple(changes), tuple(rollback)
    )


def _run_steps(
    plan: Plan,
    python: str,
    ran: list[StepRun],
    not_run: list[tuple[Step, str]],
    running: list[tuple[str, ...]],
    include_unsafe: bool,
    echo: Callable[[str], None],
    env: Mapping[str, str] | None,
    timeout: float,
) -> bool:
    """Run the steps, appending to ``ran``/``not_run``; ``running`` gets each command as it
    starts (a signal is reported with it). Whether a step failed."""
    failed = False
    for step in plan.steps:
        action = step.action
        if failed:
            not_run.append((step, "not run: an earlier step failed"))
            continue
        if action.kind == "manual":
            not_run.append((step, "manual: do it by hand"))
            continue
        if action.kind == "env":
            not_run.append((step, "set it in the job's environment (a child process cannot)"))
            continue
        if step.applicability == "unsafe" and not include_unsafe:
            not_run.append((step, "unsafe: runs only with --unsafe"))
            continue
        if step.applicability == "manual":
            not_run.append((step, "manual: do it by hand"))
            continue
        with tempfile.TemporaryDirectory(prefix="envcheck-constraints-") as folder:
            constraints = None
            if action.constraints:
                # pip reads the constraints from a file; it is removed once the step has run
                constraints = str(Path(folder) / "constraints.txt")
                Path(constraints).write_text("\n".join(action.constraints) + "\n", "utf-8")
            argv = tuple(pip_argv(action, python, constraints))
            echo(f"$ {shlex.join(argv)}")
            running.append(argv)
            result = run(argv, timeout=timeout, env=env)
            running.clear()
        if result.ok:
            ran.append(StepRun(step, argv, True))
            continue
        tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
        detail = result.problem or "\n".join(tail)
        ran.append(StepRun(step, argv, False, detail))
        failed = True
    return failed
