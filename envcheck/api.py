"""The Python API: the layer the CLI itself calls, for the top of a training script and for
job launchers.

    import envcheck

    envcheck.preflight()                        # raises envcheck.PreflightError on an error
    outcome = envcheck.check(envcheck.probe())  # findings, skipped rules, exit code, JSON
    result = envcheck.triage(open("job.log").read())

Every function returns the typed result the CLI renders (``outcome.envelope()`` is the JSON of
``--json``); bad input raises :class:`envcheck.errors.EnvcheckError` with one clear line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from envcheck.commands.check import CheckOutcome, RuleOptions
from envcheck.commands.cluster import ClusterOptions
from envcheck.commands.probe import ProbeOptions
from envcheck.commands.triage import TriageOptions
from envcheck.model.finding import Finding, Severity
from envcheck.model.report import NodeReport

if TYPE_CHECKING:
    from envcheck.cluster.diff import ClusterOutcome
    from envcheck.triage.run import TriageResult

Level = Literal["error", "warning", "info"]

__all__ = [
    "CheckOutcome",
    "ClusterOptions",
    "PreflightError",
    "check",
    "check_cluster",
    "preflight",
    "probe",
    "triage",
]


class PreflightError(RuntimeError):
    """This node (or process) has findings at or above ``fail_on``. ``findings`` holds them,
    ``outcome`` the whole check (``outcome.envelope()`` for the JSON)."""

    def __init__(self, outcome: CheckOutcome) -> None:
        self.outcome = outcome
        self.findings: tuple[Finding, ...] = outcome.failing
        super().__init__(describe(self.findings, outcome))


def describe(findings: Iterable[Finding], outcome: CheckOutcome) -> str:
    """One line per finding: code, severity, node and message, then its first fix step."""
    shown = list(findings)
    node = outcome.reports[0].node if outcome.reports else "?"
    lines = [f"envcheck: {len(shown)} finding(s) at or above {outcome.threshold.value} on {node}"]
    for f in shown:
        lines.append(f"  {f.code} {f.severity.value}: {f.message}")
        commands = f.fix.commands if f.fix is not None else ()
        if commands:
            lines.append(f"    fix: {commands[0]}")
    return "\n".join(lines)


def _codes(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(v.strip().upper() for v in items if v.strip())


def _rules(
    fail_on: Level | Severity | None,
    select: str | Iterable[str] | None,
    ignore: str | Iterable[str] | None,
    matrix: Iterable[str | os.PathLike[str]],
    strict: bool = False,
    *,
    name: str = "fail_on",
) -> RuleOptions:
    """``name``: the caller's argument the level came in (``severity`` for check, ``fail_on``
    for preflight), so that an error names what the caller wrote."""
    severity = None
    if fail_on is not None:
        try:
            severity = Severity(str(getattr(fail_on, "value", fail_on)).lower())
        except ValueError:
            from envcheck.errors import UsageError

            raise UsageError(
                f"{name} must be one of: error, warning, info (got {fail_on!r})"
            ) from None
    return RuleOptions(
        _codes(select), _codes(ignore), severity, tuple(map(str, matrix)), strict=strict
    )


def probe(
    *,
    python: str | None = None,
    timeout: float = 5.0,
    redact: bool = False,
    deep: Iterable[str] = (),
    deep_timeout: float = 120.0,
) -> NodeReport:
    """This node's facts (``envcheck probe``); ``python`` inspects another interpreter's
    packages; ``deep=("gpu",)`` asks the CUDA driver and NVML (``envcheck probe --deep``), and
    ``("gpu", "torch")`` adds the torch smoke test bounded by ``deep_timeout``."""
    from envcheck.commands.probe import probe as run

    options = ProbeOptions(
        python=python, timeout=timeout, redact=redact, deep=tuple(deep), deep_timeout=deep_timeout
    )
    return run(options)


def _node(node: NodeReport | dict[str, Any] | str | os.PathLike[str] | None) -> NodeReport:
    if isinstance(node, NodeReport):
        return node
    if node is None:
        return probe()
    if isinstance(node, dict):
        return NodeReport.from_dict(node, where="<report>")
    from envcheck.commands.source import SourceOptions, obtain

    path = str(node)
    if Path(path).suffix == ".toml":
        return obtain(SourceOptions(spec=path))
    return obtain(SourceOptions(report=path))


def check(
    node: NodeReport | dict[str, Any] | str | os.PathLike[str] | None = None,
    *,
    severity: Level | Severity | None = None,
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    matrix: Iterable[str | os.PathLike[str]] = (),
    strict: bool = False,
) -> CheckOutcome:
    """Check a node (``envcheck check``): a NodeReport (from :func:`probe`), a saved report
    (a path to ``probe -o``/``check --json`` JSON, or its parsed dict), a declared stack (a path
    ending in ``.toml``), or, with nothing given, this node probed now."""
    from envcheck.commands.check import check as run

    return run([_node(node)], _rules(severity, select, ignore, matrix, strict, name="severity"))


def preflight(
    fail_on: Level | Severity = "error",
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    *,
    matrix: Iterable[str | os.PathLike[str]] = (),
    timeout: float = 5.0,
    strict: bool = False,
    deep: Iterable[str] = (),
) -> CheckOutcome:
    """Check the running process's node and interpreter; raise :class:`PreflightError` carrying
    the findings at or above ``fail_on``, else return the outcome (warnings included).
    ``strict`` also fails on a skipped rule that matters for the node; ``deep`` as in
    :func:`probe`."""
    from envcheck.commands.check import check as run

    report = probe(timeout=timeout, deep=deep)
    outcome = run([report], _rules(fail_on, select, ignore, matrix, strict))
    if outcome.failing:
        raise PreflightError(outcome)
    return outcome


def triage(
    text: str | bytes,
    *,
    node: NodeReport | dict[str, Any] | str | os.PathLike[str] | None = None,
    matrix: Iterable[str | os.PathLike[str]] = (),
) -> TriageResult:
    """What a log's error lines mean (``envcheck triage``); with ``node``, which causes it
    confirms or rules out (unlike the CLI, this node is not probed unless given)."""
    from envcheck.commands.triage import triage_text

    def provide() -> tuple[NodeReport | None, str]:
        if node is None:
            return None, "not checked: no node given"
        report = _node(node)
        return report, f"checked against {report.node}"

    return triage_text(text, TriageOptions(matrix=tuple(map(str, matrix))), provide)


def check_cluster(options: ClusterOptions | None = None) -> ClusterOutcome:
    """Every node of the running Ray cluster, checked and compared (``envcheck cluster``)."""
    from envcheck.commands.cluster import run_cluster

    return run_cluster(options or ClusterOptions())
