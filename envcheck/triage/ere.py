"""A signature pattern as GNU ``grep -E`` reads it, for the grep engine's prefilter.

The grep engine (grep_engine.py) hands every signature pattern to ``grep -E`` and matches only
the lines grep prints, with Python's own ``re`` (as bytes). So grep needs a pattern that
matches every line Python's would (a superset: a line it prints that no signature matches is
dropped by Python). A pattern inside the common subset of Python re and POSIX ERE
(patterns.ere_problem) is handed over as it is. Any other one (``(?:...)``, ``\\d``, ``\\s*$``,
lazy quantifiers, lookarounds) is rewritten from the parse tree Python compiles
(``re._parser``): the same bytes semantics (``LC_ALL=C``: ``\\d`` is ``[0-9]``, ``\\s`` the six
ASCII spaces, ``\\w`` ASCII word characters, as for a bytes pattern), a non-capturing group as a
group, a lazy or possessive repeat as a greedy one (the same lines have a match), a lookaround
or a back reference widened to what always matches. A pattern the rewrite cannot express falls
back to the literals every match must contain (patterns.required_literals). Either way the
verdicts are those of Python's patterns: grep only chooses which lines Python reads.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Set as AbstractSet
from typing import Any

from envcheck.triage.patterns import ere_problem, required_literals

_SPECIAL = set(".[]()*+?{}|^$\\")
_ESCAPED_ALNUM = re.compile(r"(?<!\\)(?:\\\\)*\\[A-Za-z0-9]")
_MAXREPEAT_TEXT = "MAXREPEAT"
_RE_DUP_MAX = 32767
_IGNORECASE = 2  # re.IGNORECASE
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = frozenset(b" \t\n\r\x0b\x0c")
_DIGIT = frozenset(b"0123456789")
_ALL = frozenset(range(256))
_CATEGORIES = {
    "CATEGORY_DIGIT": _DIGIT,
    "CATEGORY_NOT_DIGIT": _ALL - _DIGIT,
    "CATEGORY_SPACE": _SPACE,
    "CATEGORY_NOT_SPACE": _ALL - _SPACE,
    "CATEGORY_WORD": _WORD,
    "CATEGORY_NOT_WORD": _ALL - _WORD,
}


class _Unsupported(Exception):
    pass


def grep_pattern(pattern: str) -> bytes | None:
    """The line of grep's patterns file for ``pattern``: itself when grep -E reads it as
    Python does, else a rewrite that matches at least the same lines, else its required
    literals; None when none of these is sure (the engine is then not used)."""
    if reads_alike(pattern):
        return pattern.encode()
    try:
        return to_ere(pattern).encode("latin-1")
    except _Unsupported:
        pass
    literals = required_literals(pattern)
    if literals is None or _ignores_case(pattern):
        return None
    return "|".join(_escape(lit.encode()) for lit in literals).encode("latin-1")


def reads_alike(pattern: str) -> bool:
    """Whether grep -E reads ``pattern`` as Python does: inside the common subset
    (patterns.ere_problem), no escaped letter or digit (``\\x41``, ``\\t``: ERE has neither),
    and no backslash inside a bracket (``[^\\]]`` is a class and a ``]`` to grep)."""
    if ere_problem(pattern) is not None or _ESCAPED_ALNUM.search(pattern):
        return False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                if pattern[j] == "\\":
                    return False
                j += 1
            i = j + 1
            continue
        i += 1
    return True


def to_ere(pattern: str) -> str:
    """A POSIX ERE (GNU grep -E, C locale; bytes as latin-1 characters) matching every line
    that Python's bytes pattern ``pattern`` matches. Raises _Unsupported."""
    try:
        parser = importlib.import_module("re._parser")
        tree = parser.parse(pattern.encode())
    except Exception as exc:  # re.error, or a parser this Python does not have
        raise _Unsupported(str(exc)) from None
    text = _emit(list(tree), bool(tree.state.flags & _IGNORECASE))
    if not text:
        raise _Unsupported("matches every line")  # an empty pattern: no prefilter to give
    return text


def _ignores_case(pattern: str) -> bool:
    try:
        parser = importlib.import_module("re._parser")
        tree = parser.parse(pattern.encode())
    except Exception:
        return True
    return bool(tree.state.flags & _IGNORECASE) or "(?i" in pattern or "(?-i" in pattern


def _escape(data: bytes) -> str:
    return "".join(_literal(b) for b in data)


def _literal(code: int) -> str:
    if code in (0, 10):
        raise _Unsupported("a NUL or newline byte")
    ch = chr(code)
    return "\\" + ch if ch in _SPECIAL else ch


def _emit(items: list[Any], icase: bool) -> str:
    return "".join(_item(op, arg, icase) for op, arg in items)


def _item(op: Any, arg: Any, icase: bool) -> str:
    name = str(op)
    if name == "LITERAL":
        if icase and chr(arg).isascii() and chr(arg).isalpha():
            return _bracket({arg, ord(chr(arg).swapcase())})
        return _literal(arg)
    if name == "NOT_LITERAL":
        chars = {arg}
        if icase and chr(arg).isascii() and chr(arg).isalpha():
            chars.add(ord(chr(arg).swapcase()))
        return _bracket(_ALL - chars)
    if name == "ANY":
        return "."
    if name == "IN":
        return _bracket(_in_set(list(arg), icase))
    if name == "CATEGORY":
        return _bracket(set(_CATEGORIES[str(arg)]))
    if name == "AT":
        return _at(str(arg))
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, sub = arg
        body = _emit(list(sub), icase)
        if not body:
            return ""
        return _group(body, list(sub)) + _quantifier(low, high)
    if name == "SUBPATTERN":
        _group_id, add, remove, sub = arg
        inner = (icase or bool(add & _IGNORECASE)) and not remove & _IGNORECASE
        body = _emit(list(sub), inner)
        return f"({body})" if body else ""
    if name == "ATOMIC_GROUP":
        body = _emit(list(arg), icase)
        return f"({body})" if body else ""
    if name == "BRANCH":
        alternatives = [_emit(list(b), icase) for b in arg[1]]
        kept = [a for a in alternatives if a]
        if not kept:
            return ""
        joined = "(" + "|".join(kept) + ")"
        return joined + "?" if len(kept) < len(alternatives) else joined
    if name in ("ASSERT", "ASSERT_NOT"):
        return ""  # a lookaround only narrows a match: without it, a superset
    if name == "GROUPREF":
        return ".*"  # whatever the group held: any text, a superset
    raise _Unsupported(name)


def _at(where: str) -> str:
    if where in ("AT_BEGINNING", "AT_BEGINNING_STRING", "AT_BEGINNING_LINE"):
        return "^"
    if where in ("AT_END", "AT_END_STRING", "AT_END_LINE"):
        return "$"
    if where == "AT_BOUNDARY":
        return "\\b"
    if where == "AT_NON_BOUNDARY":
        return "\\B"
    raise _Unsupported(where)


def _group(body: str, sub: list[Any]) -> str:
    """``body`` ready for a quantifier: one atom as it is, anything longer in a group."""
    single = len(sub) == 1 and str(sub[0][0]) in ("LITERAL", "NOT_LITERAL", "ANY", "IN", "CATEGORY")
    return body if single else f"({body})"


def _quantifier(low: int, high: Any) -> str:
    unbounded = str(high) == _MAXREPEAT_TEXT or (isinstance(high, int) and high > _RE_DUP_MAX)
    if low > _RE_DUP_MAX:
        raise _Unsupported("a repeat count above RE_DUP_MAX")
    if unbounded:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _in_set(items: list[Any], icase: bool) -> set[int]:
    chars: set[int] = set()
    negate = False
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.add(arg)
        elif name == "RANGE":
            chars.update(range(arg[0], arg[1] + 1))
        elif name == "CATEGORY":
            chars.update(_CATEGORIES[str(arg)])
        else:
            raise _Unsupported(name)
    if icase:
        chars |= {ord(chr(c).swapcase()) for c in chars if chr(c).isascii() and chr(c).isalpha()}
    return set(_ALL - chars) if negate else chars


def _bracket(chars: AbstractSet[int]) -> str:
    """A bracket expression for exactly these bytes (a newline, which no line holds, left
    out; a complement written when shorter)."""
    chars = set(chars) - {10}
    if not chars:
        raise _Unsupported("a class that matches nothing")
    if len(chars) == 1:
        return _literal(next(iter(chars)))
    negated = len(chars) > 128
    members = (_ALL - chars - {10}) if negated else chars
    if negated and not members:
        return "."
    if 0 in members:
        raise _Unsupported("a NUL byte in a class")
    return "[" + ("^" if negated else "") + _members(members) + "]"


def _members(members: AbstractSet[int]) -> str:
    """The inside of a bracket: ']' first, '[' '^' '-' last, ranges of the rest."""
    tail = ""
    head = "]" if ord("]") in members else ""
    for special in "[^-":
        if ord(special) in members:
            tail += special
    rest = sorted(c for c in members if chr(c) not in "][^-")
    body = []
    i = 0
    while i < len(rest):
        j = i
        while j + 1 < len(rest) and rest[j + 1] == rest[j] + 1:
            j += 1
        if j - i >= 2:
            body.append(f"{chr(rest[i])}-{chr(rest[j])}")
        else:
            body.extend(chr(c) for c in rest[i : j + 1])
        i = j + 1
    text = head + "".join(body) + tail
    if tail.startswith("^") and not head and not body:
        text = tail[1:] + "^" if len(tail) > 1 else "\\^"  # a lone '^' must not come first
    return text
