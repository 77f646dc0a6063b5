"""pyOpenSSL reading a symbol that the installed cryptography's OpenSSL bindings dropped (PY150).

pyOpenSSL's modules read OpenSSL's constants and functions from cryptography's cffi bindings
(``from cryptography.hazmat.bindings.openssl.binding import Binding``; ``_lib = binding.lib``),
a module named ``lib``: `module 'lib' has no attribute 'X509_V_FLAG_CB_ISSUER_CHECK'` is a
pyOpenSSL written for an older cryptography, which still had that symbol (pyOpenSSL 21.0 stopped
reading CB_ISSUER_CHECK; 22.1 pins cryptography's major version). Threads upgrade pyOpenSSL, or
pin cryptography back.
"""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install

LIB_SYMBOL_MISSING = lazy(r"module 'lib' has no attribute '(?P<name>[A-Za-z0-9_]+)'")


def lib_symbol_missing(facts: Facts, line: LogLine) -> Hit | None:
    """The finding for pyOpenSSL's `_lib.X` that cryptography's bindings do not have; None
    when the line is not that wording."""
    found = LIB_SYMBOL_MISSING.search(line.text)
    if found is None:
        return None
    name = found.group("name")
    pyopenssl, crypto = facts.known_version("pyopenssl"), facts.known_version("cryptography")
    have = " with ".join(
        f"{dist} {v}" for dist, v in (("pyopenssl", pyopenssl), ("cryptography", crypto)) if v
    )
    stated = f" ({have})" if have else ""
    return Hit(
        f"cryptography's OpenSSL bindings (the `lib` pyOpenSSL reads) have no {name} (line "
        f"{line.line}): the installed pyOpenSSL was written for an older cryptography{stated}",
        evidence={
            "line": line.line,
            "name": name,
            "pyopenssl": str(pyopenssl) if pyopenssl else None,
            "cryptography": str(crypto) if crypto else None,
        },
        fix=fix(
            "Upgrade pyOpenSSL to a release made for the installed cryptography: pip install -U "
            "pyopenssl (22.1 and later pin cryptography's major version, so pip keeps the two "
            "in step); or pin cryptography back to the release that pyOpenSSL was written for "
            "(`pip show pyopenssl` names its range)",
            "manual",
            pip_install("pyopenssl", flags=("--upgrade",)),
            manual(
                f'pip install "cryptography<{crypto.major}"  (instead: a cryptography before the '
                "installed one)"
                if crypto is not None
                else 'pip install "cryptography<N"  (instead: N, the installed cryptography\'s '
                "major: pip show cryptography)"
            ),
        ),
    )
