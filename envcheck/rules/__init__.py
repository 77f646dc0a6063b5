"""The rule catalogue: code rules plus the matrix's data rules, and selection by code prefix."""

from __future__ import annotations

from collections.abc import Sequence

from envcheck.errors import MatrixError, UsageError
from envcheck.matrix.model import Matrix
from envcheck.rules.base import Rule, code_rules


def all_rules(matrix: Matrix) -> list[Rule]:
    from envcheck.rules.data import data_rules

    rules = code_rules()
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


def find(rules: Sequence[Rule], code: str) -> Rule | None:
    wanted = code.strip().upper()
    return next((r for r in rules if r.code == wanted or r.name == code.strip().lower()), None)
