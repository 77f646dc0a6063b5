"""Signature patterns: compiling them, the literal each must contain (for the scanner's
prefilter) and the matrix checks (``envcheck matrix validate``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import Signature

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_META = set(".^$*+?{}[]|()")
_ESCAPED_LITERAL = set(".^$*+?{}[]|()\\/-:'\"`#% _=<>!,;@&~")
MIN_LITERAL = 3
# a counted repetition, {m}, {m,}, {,n} or {m,n}: its digits are no text of the line
_QUANTIFIER = re.compile(r"\{[0-9]*(?:,[0-9]*)?\}")


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


def _sre_parse(pattern: str) -> Any:
    """The parse tree re compiles from (``re._parser``; ``sre_parse`` before Python 3.11)."""
    import importlib

    try:
        parser = importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python 3.10
        parser = importlib.import_module("sre_parse")
    return parser.parse(pattern)


_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


def super_linear(pattern: str) -> str | None:
    """Why matching ``pattern`` with a backtracking engine (Python's re) can take more than
    linear time, or None. Refused: a repeated group that holds a repetition (``(a+)+``,
    ``(\\w*\\s?)*``) and a repeated group whose alternatives can start alike (``(a|ab)+``,
    ``(a|a)+``, which re parses as ``a`` and two empty alternatives).
    These are the shapes behind catastrophic backtracking; grep and RE2 are linear anyway,
    but matched lines are named with re, which is not."""
    try:
        tree = _sre_parse(pattern)
    except Exception:  # re.error; the compile check reports it
        return None
    return _walk(list(tree), inside_repeat=False)


def _walk(items: list[Any], *, inside_repeat: bool) -> str | None:
    for op, arg in items:
        name = str(op)
        if name in _REPEATS:
            low, high, sub = arg
            repeats = high is None or high > 1 or str(high) == "MAXREPEAT"
            if inside_repeat and (repeats or low != high):
                # (a+)+ and (aa?)+ alike: the inner part can take more or fewer characters
                return "nests a repetition inside a repetition (catastrophic backtracking)"
            body = _unwrap(list(sub))
            if repeats and (_ambiguous_branch(body) or _same_alternatives(body)):
                return "repeats alternatives that can match alike (catastrophic backtracking)"
            # (\d+\.)+ is safe: every round ends at a '.' the inner part cannot take
            delimited = repeats and _delimited(body)
            found = _walk(body, inside_repeat=(inside_repeat or repeats) and not delimited)
            if found:
                return found
        elif name == "SUBPATTERN":
            found = _walk(list(arg[-1]), inside_repeat=inside_repeat)
            if found:
                return found
        elif name == "BRANCH":
            if inside_repeat and any(not list(b) for b in arg[1]):
                # (a|aa)+ is parsed as (a(?:|a))+: an optional part inside a repetition
                return "nests a repetition inside a repetition (catastrophic backtracking)"
            for branch in arg[1]:
                found = _walk(list(branch), inside_repeat=inside_repeat)
                if found:
                    return found
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _walk(list(arg[1]), inside_repeat=inside_repeat)
            if found:
                return found
    return None


def _unwrap(items: list[Any]) -> list[Any]:
    while len(items) == 1 and str(items[0][0]) == "SUBPATTERN":
        items = list(items[0][1][-1])
    return items


def _delimited(body: list[Any]) -> bool:
    """Whether a repeated body holds a plain character (outside any repetition) that nothing
    variable inside the body can match: each round must then stop at that character."""
    delimiters = [arg for op, arg in body if str(op) == "LITERAL"]
    variable = [(op, arg) for op, arg in body if str(op) != "LITERAL"]
    return any(
        all(not _can_match(op, arg, chr(code)) for op, arg in variable) for code in delimiters
    )


def _can_match(op: Any, arg: Any, ch: str) -> bool:
    """Whether the parsed item (op, arg) may consume ``ch``; True when unsure."""
    name = str(op)
    if name == "LITERAL":
        return bool(arg == ord(ch))
    if name == "NOT_LITERAL":
        return bool(arg != ord(ch))
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return False
    if name == "IN":
        return _in_set(list(arg), ch)
    if name in _REPEATS:
        return any(_can_match(o, a, ch) for o, a in list(arg[2]))
    if name == "SUBPATTERN":
        return any(_can_match(o, a, ch) for o, a in list(arg[-1]))
    if name == "BRANCH":
        return any(_can_match(o, a, ch) for b in arg[1] for o, a in list(b))
    return True  # ANY, categories outside a set, back references: assume the worst


_CATEGORIES: dict[str, Callable[[str], bool]] = {
    "CATEGORY_DIGIT": str.isdigit,
    "CATEGORY_NOT_DIGIT": lambda c: not c.isdigit(),
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
    "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
}


def _in_set(items: list[Any], ch: str) -> bool:
    negate = False
    hit = False
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            hit = hit or arg == ord(ch)
        elif name == "RANGE":
            hit = hit or arg[0] <= ord(ch) <= arg[1]
        elif name == "CATEGORY":
            test = _CATEGORIES.get(str(arg))
            hit = hit or (test(ch) if test else True)
        else:
            return True
    return hit != negate


def _ambiguous_branch(items: list[Any]) -> bool:
    """Whether ``items`` is (a group around) alternatives of which two may start with the
    same character: a first literal shared, or a first item that is not a plain literal."""
    items = _unwrap(items)
    if len(items) != 1 or str(items[0][0]) != "BRANCH":
        return False
    firsts: set[int] = set()
    for alternative in items[0][1][1]:
        branch = list(alternative)
        if not branch or str(branch[0][0]) != "LITERAL":
            return True
        if branch[0][1] in firsts:
            return True
        firsts.add(branch[0][1])
    return False


def _same_alternatives(items: list[Any]) -> bool:
    """Whether a repeated body holds alternatives that match alike once their common start
    is factored out: ``(a|a)+`` parses as ``a`` then a branch of two empty alternatives, and
    each round can take either, so a failing match tries 2^n ways. Two empty alternatives, or
    two starting with the same literal, are ambiguous."""
    for op, arg in items:
        if str(op) == "SUBPATTERN" and _same_alternatives(list(arg[-1])):
            return True
        if str(op) != "BRANCH":
            continue
        firsts: set[object] = set()
        for alternative in arg[1]:
            branch = list(alternative)
            first: object = (
                "" if not branch else (branch[0][1] if str(branch[0][0]) == "LITERAL" else None)
            )
            if first is None:
                continue  # not a plain literal: _ambiguous_branch judges whole branches
            if first in firsts:
                return True
            firsts.add(first)
    return False


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
        quantifier = _QUANTIFIER.match(branch, i) if ch == "{" else None
        if quantifier is not None:
            if current:
                current.pop()  # {0,n} may leave the character out; {m,n} is read the same
            runs.append("".join(current))
            current = []
            i = quantifier.end()
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
    from envcheck.rules import code_rules

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
    slow = super_linear(sig.pattern)
    if slow is not None:
        add(sig, "pattern", slow)
    if sig.pattern.startswith("(?"):
        add(sig, "pattern", "inline flags are not supported; spell the cases out ([Ee]rror)")
    # Python-only syntax is fine: the grep engine is handed a rewrite (triage/ere.py), and
    # matrix_validate refuses only a pattern it can give grep neither as such nor rewritten
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
    from envcheck.triage.extract import extractor_problem

    for pattern in sig.extract:
        problem = extractor_problem(pattern)
        if problem is not None:
            add(sig, "extract", f"{pattern!r} {problem}")
    if sig.context < 0 or sig.context > 20:
        add(sig, "context", "must be 0-20 lines")
    if sig.context and not sig.extract:
        add(sig, "context", "context lines are read only for extractors; add extract")
    for code in sig.confirms:
        if code not in sig.causes:
            add(sig, "confirms", f"{code} is not one of the signature's causes")
    for code in sig.decides:
        if code not in sig.causes:
            add(sig, "decides", f"{code} is not one of the signature's causes")
