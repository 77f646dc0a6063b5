"""What the environment a triage was given shows: the node rules on the facts it states.

A log often carries the node's state rather than an error: an ``nvidia-smi`` screen with a GPU's
memory full and no process listed, a ``collect_env`` whose torch needs a newer driver than the
one it lists; or the user passes that state beside the log (``--from``, ``--spec``,
``--report``). ``envcheck triage`` runs the node rules (``check``'s) on the facts the inputs
state and reports their errors and warnings as one more match, ``environment-shows``, after the
log's own: its causes are those rules (the ones no matched line already names), confirmed by the
stated facts. It is what a log that names no known failure is read for, and beside a failure
line it says what else the given environment shows. The live node probed by ``triage`` (no
``--no-probe`` and no input describing a node) is not read this way: what the user gave is, not
the machine triage happens to run on; nor are the log lines' own facts alone (a URL that names
a torch build is not an environment). Coverage notes (COV: the matrix does not know a GPU or
package) are envcheck's own gaps, not the node's, and are left out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import Signature
from envcheck.model.finding import Severity
from envcheck.model.report import NodeReport
from envcheck.rules.base import Rule
from envcheck.triage.scan import Occurrence, Tally
from envcheck.triage.verdict import CauseCheck, check_causes

SIGNATURE_ID = "environment-shows"
# rule families that describe envcheck's own knowledge, not the node
_NOT_THE_NODE = ("COV",)


def stated(node: NodeReport | None, pasted: NodeReport | None) -> bool:
    """Whether the user gave an environment: one pasted in the log, or a node its inputs
    describe (``--from``, ``--spec``, ``--report``), not this machine probed now. The log's
    lines alone (a URL naming a torch build, a banner) are not an environment."""
    if node is not None:
        return node.origin.kind != "probe"
    return pasted is not None


def environment_causes(
    report: NodeReport,
    rules: Sequence[Rule],
    matrix: Matrix,
    note: str,
    named: Collection[str] = (),
) -> tuple[tuple[str, ...], tuple[CauseCheck, ...]]:
    """The node rules' error and warning findings on ``report`` as confirmed causes, errors
    first; empty when the stated facts show no problem."""
    from envcheck.engine import evaluate

    node_rules = [r for r in rules if r.scope == "node" and not r.code.startswith(_NOT_THE_NODE)]
    result = evaluate(report, matrix, node_rules)
    shown = sorted(
        (f for f in result.findings if f.severity.at_least(Severity.WARNING)),
        key=lambda f: -f.severity.rank,
    )
    codes = tuple(dict.fromkeys(f.code for f in shown if f.code not in named))
    if not codes:
        return (), ()
    checks = check_causes(codes, rules, matrix, report, note)
    causes = tuple(checks[c] for c in codes if c in checks and checks[c].verdict == "confirmed")
    return tuple(c.code for c in causes), causes


def signature(codes: tuple[str, ...], where: str, besides: bool) -> Signature:
    lead = (
        "Besides what the log's lines name, the environment"
        if besides
        else "No line of the log is a failure envcheck knows; the environment"
    )
    return Signature(
        id=SIGNATURE_ID,
        pattern="",
        meaning=(
            f"{lead} the inputs state ({where}) shows these problems (the node rules of "
            "`envcheck check`)."
        ),
        source="envcheck's node rules on the stated facts (envcheck/triage/environment.py)",
        causes=codes,
    )


def tally(codes: tuple[str, ...], where: str, besides: bool) -> Tally:
    """A match of no line (count 0, line 0): the environment the inputs state."""
    return Tally(signature(codes, where, besides), 0, Occurrence(0, f"the environment: {where}"))
