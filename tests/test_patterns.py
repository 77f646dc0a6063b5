"""envcheck.patterns: a lazily compiled pattern answers as ``re.compile`` of the same text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from envcheck.patterns import LazyPattern, lazy

LINE = "ImportError: libcudnn.so.8: cannot open shared object file; libcublas.so.12 too"
SONAME = r"(?P<lib>lib[a-z]+)\.so\.(?P<num>[0-9]+)"


def _seen(found: re.Match[str] | None) -> tuple[tuple[int, int], dict[str, str | None]] | None:
    return None if found is None else (found.span(), found.groupdict())


def test_compiles_on_first_use_only() -> None:
    pattern = lazy(r"lib(")  # invalid: an import that never uses it does not fail
    assert pattern.pattern == "lib("
    with pytest.raises(re.error):
        pattern.search("lib")


@pytest.mark.parametrize("flags", [0, re.IGNORECASE])
def test_answers_as_the_compiled_pattern(flags: int) -> None:
    lazy_one, compiled = lazy(SONAME, flags), re.compile(SONAME, flags)
    text = LINE.upper() if flags else LINE
    for name in ("search", "match", "fullmatch"):
        assert _seen(getattr(lazy_one, name)(text)) == _seen(getattr(compiled, name)(text)), name
    assert lazy_one.findall(text) == compiled.findall(text)
    assert lazy_one.split(text) == compiled.split(text)
    assert [m.span() for m in lazy_one.finditer(text)] == [
        m.span() for m in compiled.finditer(text)
    ]
    assert lazy_one.sub(r"\g<lib>", text) == compiled.sub(r"\g<lib>", text)
    assert lazy_one.subn("X", text, 1) == compiled.subn("X", text, 1)
    assert _seen(lazy_one.search(text, 20)) == _seen(compiled.search(text, 20))
    assert dict(lazy_one.groupindex) == dict(compiled.groupindex)
    assert lazy_one.flags == compiled.flags
    assert lazy_one.search(text) is not None


def test_rule_modules_compile_no_pattern_at_import() -> None:
    """The rule modules hold their module-level patterns lazily (a plain check reads no log)."""
    root = Path(__file__).resolve().parents[1] / "envcheck" / "rules"
    eager = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and "re.compile(" in ast.unparse(node):
                eager.append(f"{path.name}:{node.lineno}")
    assert eager == []
    assert isinstance(lazy("x"), LazyPattern)
