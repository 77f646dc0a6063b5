"""envcheck/regex_programs.py (generated) holds exactly the programs ``re`` assembles for its
patterns on the interpreter it names; the CLI installs them in ``re``'s cache, the library
never."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from envcheck import regex_code, regex_programs
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import gen_regex_programs

same_interpreter = pytest.mark.skipif(
    tuple(regex_programs.INTERPRETER) != regex_code.interpreter(),
    reason=f"generated for {regex_programs.INTERPRETER}",
)


@same_interpreter
def test_the_module_is_current() -> None:
    assert (REPO / "envcheck" / "regex_programs.py").read_text(
        encoding="utf-8"
    ) == gen_regex_programs.render(gen_regex_programs.current()), (
        "run python scripts/gen_regex_programs.py"
    )


@same_interpreter
@pytest.mark.parametrize("entry", regex_programs.PROGRAMS, ids=lambda e: repr(e[0])[:40])
def test_each_program_is_what_re_assembles(entry: tuple[object, ...]) -> None:
    pattern, flags = entry[0], entry[1]
    assert regex_code.program(pattern, flags) == entry  # type: ignore[arg-type]


def test_each_pattern_once() -> None:
    keys = {(type(e[0]), e[0], e[1]) for e in regex_programs.PROGRAMS}
    assert len(keys) == len(regex_programs.PROGRAMS)


_INSTALLED = r"""
import re, sys
from envcheck import regex_code, regex_programs
before = dict(re._cache)
compiled = {}
for pattern, flags, *_ in regex_programs.PROGRAMS:
    p = re._compiler.compile(pattern, flags)  # as re.compile makes it, outside the cache
    compiled[(type(pattern), pattern, flags)] = p
count = regex_code.install()
made = 0
for (kind, pattern, flags), p in compiled.items():
    got = re.compile(pattern, flags)
    assert (got.pattern, got.flags, got.groups, dict(got.groupindex)) == (
        p.pattern, p.flags, p.groups, dict(p.groupindex)), pattern
    assert type(got) is type(p)
    made += (kind, pattern, flags) not in before
assert count == made, (count, made)
print(count)
"""


@same_interpreter
def test_installed_patterns_are_the_ones_re_compiles() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _INSTALLED], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert int(out) > 0


@same_interpreter
def test_installed_patterns_match_as_compiled_ones() -> None:
    """A sample of the patterns, each against a few texts, as re compiles it: same matches."""
    texts = [
        "torch==2.4.0; python_version >= '3.9'",
        "numpy (>=1.21, <2) ; extra == 'test'",
        "libnvidia-ml.so.1",
        "Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
        "release 12.4, V12.4.131",
        "",
        "x" * 50,
    ]
    for pattern, flags, *_ in regex_programs.PROGRAMS:
        if not isinstance(pattern, str):
            continue
        mine = regex_code.program(pattern, flags)
        import _sre  # type: ignore[import-not-found]

        made = _sre.compile(mine[0], mine[2], list(mine[3]), mine[4], mine[5], mine[6])
        theirs = re._compiler.compile(pattern, flags)  # type: ignore[attr-defined]
        for text in texts:
            a, b = made.search(text), theirs.search(text)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), pattern


def test_another_interpreter_installs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex_programs, "INTERPRETER", ("other", (0, 0, 0), 0, 0))
    before = dict(re._cache)  # type: ignore[attr-defined]
    assert regex_code.install() == 0
    assert dict(re._cache) == before  # type: ignore[attr-defined]


def test_the_library_does_not_install_them() -> None:
    code = (
        "import re\n"
        "import envcheck, envcheck.api\n"
        "from envcheck import regex_programs\n"
        "keys = {(type(p), p, f) for p, f, *_ in regex_programs.PROGRAMS}\n"
        "print(sum(1 for k in re._cache if k in keys) < len(keys))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "True"
