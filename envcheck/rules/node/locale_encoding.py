"""Text in the locale's legacy encoding instead of UTF-8 (matrices/signatures/
locale_encoding.toml): a Windows code page or the C/POSIX locale's ASCII where a program reads
or writes UTF-8. Only a log states it; the codec and the direction on the line pick the fix."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, set_env

_CODEC = lazy(r"'([A-Za-z0-9_]+)' codec can't (encode|decode)")


@rule("SYS245", "locale-legacy-encoding", Severity.WARNING)
def locale_legacy_encoding(facts: Facts) -> Iterable[Hit]:
    """Text read or written in the locale's legacy encoding (a code page, ASCII), not UTF-8

    ## What it checks
    Only a log states it: a UnicodeDecodeError or UnicodeEncodeError whose codec is a Windows
    code page (`'charmap'`, `'gbk'`, `'cp932'`) or ASCII (`'ascii' codec can't encode
    character`), the encoding Python takes from the locale.

    ## Why it matters
    Python's default encoding for `open()` and for the console follows the locale: cp1252 or
    GBK on Windows, ASCII under the C/POSIX locale of a container that sets no LANG. A UTF-8
    file (a README a setup.py reads, a config, a dataset) or Unicode output (a progress bar,
    accented text) then fails although nothing is wrong with the data.

    ## Example
    `pip install` of a package whose setup.py reads its README on Windows: `UnicodeDecodeError:
    'charmap' codec can't decode byte 0x9d ... character maps to <undefined>`.

    ## Fix
    Python's UTF-8 mode, `PYTHONUTF8=1` (Python 3.7+; Windows: `set PYTHONUTF8=1`); for the
    console's output `PYTHONIOENCODING=utf-8`; in a container, a UTF-8 locale
    (`ENV LANG=C.UTF-8`). In the program: `open(path, encoding="utf-8")`.

    ## References
    - https://peps.python.org/pep-0540/
    - https://github.com/hscspring/hcgf/issues/12
    - https://github.com/docker-exec/dexec/issues/26
    - https://github.com/collective/mr.bob/issues/86
    """
    raise Skip("only a log states the codec a program used", "log.text_encoding")


def _posix_locale_fix() -> Fix:
    return fix(
        "The C/POSIX locale makes Python use ASCII: set a UTF-8 locale, export LANG=C.UTF-8 "
        "(a Dockerfile: ENV LANG=C.UTF-8), or Python's UTF-8 mode, PYTHONUTF8=1",
        "manual",
        set_env(LANG="C.UTF-8"),
        set_env(PYTHONUTF8="1"),
        manual('Dockerfile: ENV LANG=C.UTF-8 LC_ALL=C.UTF-8  (or open(path, encoding="utf-8"))'),
    )


def _console_fix(codec: str) -> Fix:
    return fix(
        f"Python wrote to a console or file in the code page {codec!r}: make its output UTF-8 "
        "with PYTHONIOENCODING=utf-8 (Windows: set PYTHONIOENCODING=utf-8), or Python's UTF-8 "
        "mode, PYTHONUTF8=1",
        "manual",
        set_env(PYTHONIOENCODING="utf-8"),
        set_env(PYTHONUTF8="1"),
        manual(
            "Windows cmd: set PYTHONIOENCODING=utf-8  (PowerShell: $env:PYTHONIOENCODING='utf-8')"
        ),
    )


def _file_fix(codec: str) -> Fix:
    return fix(
        f"Python read a UTF-8 file in the locale's code page {codec!r}: turn on Python's "
        "UTF-8 mode, PYTHONUTF8=1 (Windows cmd: set PYTHONUTF8=1; PowerShell: "
        '$env:PYTHONUTF8=1), or open the file with encoding="utf-8"',
        "manual",
        set_env(PYTHONUTF8="1"),
        manual("Windows cmd: set PYTHONUTF8=1  (or: python -X utf8 ...)"),
        manual('in the program: open(path, encoding="utf-8")'),
    )


@from_log("SYS245")
def locale_legacy_encoding_in_log(facts: Facts, line: LogLine) -> Hit:
    """ASCII: the POSIX locale's fix (LANG) first; a code page writing: the console's
    (PYTHONIOENCODING); a code page reading: UTF-8 mode (PYTHONUTF8)."""
    found = _CODEC.search(line.text)
    codec, direction = (found.group(1), found.group(2)) if found else ("", "decode")
    if codec == "ascii":
        chosen, where = _posix_locale_fix(), "the C/POSIX locale's ASCII"
    elif direction == "encode":
        chosen, where = _console_fix(codec), f"the code page {codec!r}"
    else:
        chosen, where = _file_fix(codec), f"the code page {codec!r}"
    return Hit(
        f"Python used {where} instead of UTF-8 to {direction} text (line {line.line}): the "
        "locale's legacy encoding",
        evidence={"line": line.line, "codec": codec},
        fix=chosen,
        severity=Severity.ERROR,
    )
