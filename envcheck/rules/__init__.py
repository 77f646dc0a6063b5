"""The rule catalogue: code rules plus the matrix's data rules, and selection by code prefix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from envcheck.errors import MatrixError, UsageError
from envcheck.matrix.model import Matrix
from envcheck.rules.base import _FROM_LOG, _REGISTRY, LogHitFn, Rule


def all_rules(matrix: Matrix, scope: Literal["check", "node", "all"] = "all") -> list[Rule]:
    """Code rules and the matrix's data rules; ``scope="node"`` leaves the cluster rules out
    (and unimported), ``scope="check"`` too (see ``code_rules``). A data rule reusing a cluster rule's code is then not caught here, but
    the built-in matrix is tested for it and an overlay is refused at load by the same check
    (``envcheck matrix validate`` against every code rule)."""
    from envcheck.rules.data import data_rules

    rules = code_rules(scope)
    codes = {r.code for r in rules}
    for data_rule in data_rules(matrix.known_bad):
        if data_rule.code in codes:
            raise MatrixError(
                f"known_bad code {data_rule.code} is already a built-in rule", key="known_bad.code"
            )
        codes.add(data_rule.code)
        rules.append(data_rule)
    return sorted(rules, key=lambda r: (r.family, r.code))


def select(
    rules: Sequence[Rule], select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[Rule]:
    """Keep rules whose code starts with a --select prefix (all when none), minus --ignore."""
    for prefix in (*select, *ignore):
        if not any(r.code.startswith(prefix) for r in rules):
            raise UsageError(f"no rule code starts with {prefix!r} (see `envcheck rules`)")
    chosen = [r for r in rules if not select or any(r.code.startswith(p) for p in select)]
    return [r for r in chosen if not any(r.code.startswith(p) for p in ignore)]


def node_rules(
    matrix: Matrix, select_: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[Rule]:
    """``select(all_rules(matrix), ...)`` cut to the node rules, without importing the cluster
    rules unless a --select/--ignore prefix matches only one of them (it is a known prefix,
    as in `envcheck cluster`: it selects no node rule)."""
    rules = all_rules(matrix, "check")
    if any(not any(r.code.startswith(p) for r in rules) for p in (*select_, *ignore)):
        rules = all_rules(matrix)
    return [r for r in select(rules, select_, ignore) if r.scope == "node"]


def find(rules: Sequence[Rule], code: str) -> Rule | None:
    wanted = code.strip().upper()
    return next((r for r in rules if r.code == wanted or r.name == code.strip().lower()), None)


def code_rules(scope: Literal["check", "node", "all"] = "all") -> list[Rule]:
    """Every code rule, or (``scope="node"``) the node rules only: those leave the cluster rule
    modules (and the lock gate's, rules/lock.py) unimported, which node commands (`check`,
    `lock`) do not pay for. ``scope="check"``: the node rules too, those of the modules whose
    every rule only a log establishes (rules/log_catalog.py) as rules/log_only.py states them,
    without importing those modules (`check` reads no log: each one skips at once)."""
    from envcheck.rules import catalog  # noqa: F401 - importing registers every node rule

    if scope == "check":
        from envcheck.rules.base import log_only_rule
        from envcheck.rules.log_only import RULES

        rules = [r for r in _REGISTRY if r.scope == "node"]
        present = {r.code for r in rules}  # a module imported already: its own rules
        return rules + [log_only_rule(*entry) for entry in RULES if entry[0] not in present]
    from envcheck.rules import log_catalog  # noqa: F401 - and the rules only a log establishes

    if scope == "node":
        return [r for r in _REGISTRY if r.scope == "node"]
    from envcheck.rules import lock  # noqa: F401 - the lock gate's findings
    from envcheck.rules.cluster import catalog as cluster  # noqa: F401 - and every cluster rule

    return list(_REGISTRY)


def log_hit(code: str) -> LogHitFn | None:
    code_rules()  # importing the rule modules registers every @from_log

    return _FROM_LOG.get(code)
