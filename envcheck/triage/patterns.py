"""Signature patterns: compiling them, the literal each must contain (for the scanner's
prefilter) and the matrix checks (``envcheck matrix validate``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import Signature

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_META = set(".^$*+?{}[]|()")
_ESCAPED_LITERAL = set(".^$*+?{}[]|()\\/-:'\"`#% _=<>!,;@&~")
MIN_LITERAL = 3


def re2_module() -> ModuleType | None:
    """google-re2 when installed (``envcheck-gpu[triage]``); None otherwise."""
    try:
        import re2
    except ImportError:
        return None
    module: ModuleType = re2
    return module


_NOT_ERE = (
    (re.compile(r"\(\?"), "(?...) groups and inline flags"),
    (re.compile(r"\\[dDsSbBAZ0-9]"), "escapes such as \\d, \\s, \\b or backreferences"),
    (re.compile(r"(?<!\\)[*+?}]\?"), "lazy quantifiers (*?, +?, ??)"),
)


def ere_problem(pattern: str) -> str | None:
    """Why ``pattern`` is outside the common subset of Python re, RE2 and POSIX ERE (GNU
    ``grep -E``, the fast triage engine), or None when it is inside it. Escapes inside a
    character class are not special in ERE, so escaped characters are scanned as pairs."""
    outside = re.sub(r"\\.", lambda m: m.group(0) if m.group(0)[1].isalnum() else "_", pattern)
    for probe, what in _NOT_ERE:
        if probe.search(outside):
            return f"uses {what}, which grep -E reads differently"
    return None


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern (``a|b(c|d)`` -> ``a``, ``b(c|d)``)."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def _literal(branch: str) -> str | None:
    """The longest run of plain characters every match of ``branch`` contains (outside
    groups and classes, and not made optional by a quantifier)."""
    runs: list[str] = []
    current: list[str] = []
    depth = 0
    i = 0
    while i < len(branch):
        ch = branch[i]
        if ch == "\\" and i + 1 < len(branch):
            nxt = branch[i + 1]
            if depth == 0 and nxt in _ESCAPED_LITERAL:
                current.append(nxt)
            else:
                runs.append("".join(current))
                current = []
            i += 2
            continue
        if ch == "[":
            close = branch.find("]", i + 2)
            runs.append("".join(current))
            current = []
            i = (close if close != -1 else len(branch)) + 1
            continue
        if ch in _META or depth > 0:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if ch in "*?{" and current:
                current.pop()  # the quantified character may be absent
            runs.append("".join(current))
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    runs.append("".join(current))
    best = max(runs, key=len)
    return best if len(best) >= MIN_LITERAL else None


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """One literal per top-level alternative: a line matches only if it contains one of
    them. None when an alternative has no plain run of MIN_LITERAL characters."""
    literals = []
    for branch in split_alternatives(pattern):
        literal = _literal(branch)
        if literal is None:
            return None
        literals.append(literal)
    return tuple(dict.fromkeys(literals))


def check_signatures(matrix: Matrix, add: Callable[[object, str, str], None]) -> None:
    """Report bad signature entries through ``add(entry, field, message)``."""
    from envcheck.rules.base import code_rules

    codes = {r.code for r in code_rules()} | {k.code for k in matrix.known_bad}
    re2 = re2_module()
    seen: set[str] = set()
    for sig in matrix.signatures:
        _check_one(sig, codes, re2, seen, add)


def _check_one(
    sig: Signature,
    codes: set[str],
    re2: ModuleType | None,
    seen: set[str],
    add: Callable[[object, str, str], None],
) -> None:
    if not _ID.match(sig.id):
        add(sig, "id", "must be lowercase letters, digits and dashes")
    if sig.id in seen:
        add(sig, "id", "is used twice")
    seen.add(sig.id)
    try:
        re.compile(sig.pattern)
    except re.error as exc:
        add(sig, "pattern", f"does not compile: {exc}")
        return
    if sig.pattern.startswith("(?"):
        add(sig, "pattern", "inline flags are not supported; spell the cases out ([Ee]rror)")
    problem = ere_problem(sig.pattern)
    if problem is not None:
        add(sig, "pattern", problem)
    if re2 is not None:
        try:
            re2.compile(sig.pattern)
        except Exception as exc:
            add(sig, "pattern", f"RE2 rejects it (no backreferences or lookaround): {exc}")
    if required_literals(sig.pattern) is None:
        add(
            sig,
            "pattern",
            f"needs a plain run of {MIN_LITERAL}+ characters outside groups in each alternative "
            "(the scanner's prefilter looks for it)",
        )
    for code in sig.causes:
        if code not in codes:
            add(sig, "causes", f"{code} is not a rule code (see `envcheck rules`)")
    if sig.noise and sig.causes:
        add(sig, "causes", "a noise signature has no causes")
