"""PY164: a package's release refuses the OpenSSL that the interpreter's ``ssl`` module was
built with.

urllib3 2 checks ``ssl.OPENSSL_VERSION_INFO`` at import and raises ``ImportError: urllib3 v2
only supports OpenSSL 1.1.1+, currently the 'ssl' module is compiled with 'OpenSSL 1.0.2k-fips
26 Jan 2017'`` (2.0.0-2.0.2: also for LibreSSL; 2.0.3 on only warns, NotOpenSSLWarning, for a
library that is not OpenSSL). urllib3 is the one library here with such a check, and every
requests, boto3, openai or huggingface_hub import goes through it, so the rule names it: a
CentOS 7 / Amazon Linux 2 Python (OpenSSL 1.0.2) with a fresh `pip install` gets urllib3 2.
Threads pin urllib3 1.26 (`pip install 'urllib3<2'`); the lasting fix is a Python whose ssl
module is built against OpenSSL 1.1.1 or newer.
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

# the version urllib3 prints: repr(ssl.OPENSSL_VERSION) from 2.0.3 on, bare before
_BUILT_WITH = lazy(r"compiled with '?(?P<ssl>(?:OpenSSL|LibreSSL) [0-9][0-9A-Za-z.\-]*)")


@rule("PY164", "ssl-openssl-floor", Severity.ERROR)
def ssl_openssl_floor(facts: Facts) -> Iterable[Hit]:
    """urllib3 2 refuses an interpreter whose ssl module is built with OpenSSL < 1.1.1

    ## What it checks
    urllib3 2's import-time check, `urllib3 v2 only supports OpenSSL 1.1.1+, currently the
    'ssl' module is compiled with 'OpenSSL 1.0.2k-fips ...'`: the interpreter's `ssl` module
    is linked against an OpenSSL older than 1.1.1 (CentOS 7, Amazon Linux 2, RHEL 7's system
    Python or a Python built there). Only a log states it.

    ## Why it matters
    urllib3 is imported by requests, boto3, huggingface_hub and every HTTP client built on
    them: the job fails at its first import, before any GPU work.

    ## Example
    `ImportError: urllib3 v2 only supports OpenSSL 1.1.1+, currently the 'ssl' module is
    compiled with 'OpenSSL 1.0.2k-fips  26 Jan 2017'` after `pip install requests` on CentOS 7.

    ## Fix
    Pin urllib3 1.26, the release line without the check: `pip install 'urllib3<2'`. To keep
    urllib3 2, run a Python whose ssl module uses OpenSSL 1.1.1 or newer (conda's or uv's
    Python, or an OS release that ships OpenSSL 1.1.1+).

    ## References
    - urllib3/urllib3 src/urllib3/__init__.py (ImportError 'urllib3 v2 only supports OpenSSL
      1.1.1+'; NotOpenSSLWarning for LibreSSL from 2.0.3 on)
    - https://github.com/urllib3/urllib3/issues/2168
    - https://github.com/ML-GSAI/EGSDE/issues/12 (pip install urllib3==1.26.6)
    """
    raise Skip("only a log line states urllib3's OpenSSL check", "log.imports")


@from_log("PY164")
def ssl_openssl_floor_in_log(facts: Facts, line: LogLine) -> Hit:
    found = _BUILT_WITH.search(line.text)
    built = found.group("ssl") if found else None
    have = f"{built}" if built else "an OpenSSL older than 1.1.1"
    version = facts.known_version("urllib3")
    urllib3 = f"urllib3 {version}" if version is not None else "urllib3 2"
    return Hit(
        f"{urllib3} refuses this interpreter: its ssl module is built with {have} (line "
        f"{line.line}); urllib3 2 needs OpenSSL 1.1.1+",
        evidence={"line": line.line, "ssl": built},
        fix=fix(
            "Pin urllib3 1.26, which does not check the OpenSSL: pip install 'urllib3<2'; or "
            "run a Python whose ssl module uses OpenSSL 1.1.1 or newer (conda's or uv's "
            "Python, or a newer OS release) to keep urllib3 2",
            "manual",
            pip_install("urllib3<2"),
            manual("python -c 'import ssl; print(ssl.OPENSSL_VERSION)'  (needs 1.1.1+)"),
        ),
    )
