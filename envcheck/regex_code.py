"""The programs the ``re`` module compiles for the patterns an envcheck run compiles, made with
the package instead of at every run.

``re.compile`` parses a pattern and assembles its program (``re._parser`` and
``re._compiler``, pure Python) the first time a process asks for it: about 90 patterns in a
``check`` (packaging's requirement tokenizer and version and specifier patterns, the standard
library's logging, platform, argparse, gettext and json ones, envcheck's own), a tenth of its
instructions. The program depends only on the pattern, its flags and the interpreter, so
``scripts/gen_regex_programs.py`` writes the programs of the patterns a ``check`` compiles into
``envcheck/regex_programs.py``, a module of the package, compiled and trusted as every other.
Nothing is read from a cache or an input: no code from data (docs/security.md).

For the length of a CLI run (:func:`install`), each program is turned into the compiled pattern
(``_sre.compile``, which checks the program, with the same arguments ``re._compiler.compile``
passes it) and put in ``re``'s own cache of compiled patterns, where ``re.compile`` of that
pattern and those flags finds it: the same pattern object ``re.compile`` would have made. On
another interpreter (another Python release, implementation or program format) nothing is
installed, and a pattern the module does not hold is compiled as usual.
``tests/test_regex_code.py`` checks that each program is the one the interpreter assembles.
The library (``import envcheck`` in a user's process) never installs them.
"""

from __future__ import annotations

import sys
from typing import Any


def interpreter() -> tuple[Any, ...]:
    """What the programs are valid for: the implementation, the Python release, the format
    of ``re``'s programs (``MAGIC``) and the size of their code units."""
    import _sre  # type: ignore[import-not-found]
    import re

    return (
        sys.implementation.name,
        tuple(sys.version_info[:3]),
        re._constants.MAGIC,  # type: ignore[attr-defined]
        _sre.CODESIZE,
    )


def install() -> int:
    """Put the generated programs, as compiled patterns, in ``re``'s cache (for the rest of
    this process); the number put there. None on another interpreter."""
    import _sre
    import re

    from envcheck import regex_programs

    if tuple(regex_programs.INTERPRETER) != interpreter():
        return 0
    cache: dict[Any, Any] = re._cache  # type: ignore[attr-defined]
    room = re._MAXCACHE - len(cache)  # type: ignore[attr-defined]
    count = 0
    for pattern, flags, final, code, groups, groupindex, indexgroup in regex_programs.PROGRAMS:
        key = (type(pattern), pattern, flags)
        if key in cache:
            continue
        if count >= room:
            break
        # what re._compiler.compile returns for (pattern, flags)
        cache[key] = _sre.compile(pattern, final, list(code), groups, groupindex, indexgroup)
        count += 1
    return count


def program(pattern: str | bytes, flags: int) -> tuple[Any, ...]:
    """The entry ``scripts/gen_regex_programs.py`` writes for ``pattern`` and ``flags``: the
    arguments ``re._compiler.compile`` passes to ``_sre.compile``, with the key's flags."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        pattern,
        flags,
        flags | parsed.state.flags,
        tuple(int(c) for c in code),
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )
