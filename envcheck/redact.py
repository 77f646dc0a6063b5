"""Secrets never leave the node; hostnames and addresses leave it only without ``--redact``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from envcheck.patterns import lazy

REDACTED = "<redacted>"
_SECRET_WORDS = r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE"
_SECRET_NAME = lazy(_SECRET_WORDS, re.IGNORECASE)
_IPV4 = lazy(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")

# Every pattern below is linear in the text's length with Python's backtracking engine: each
# one can only start a match at the start of a token (a look-behind rejects the middle of a
# run in one step), and the repetitions inside a token stop at characters that end it.
#
# URL user information, with or without a scheme: ``http://bob:p@ss@proxy`` (the last '@'
# before the host ends it), ``alice:pw@proxy:3128``. A scheme-less one needs the ':' between
# user and password, so ``git@github.com`` and e-mail addresses stay as they are.
_TOKEN_START = r"(?<![^\s\"'=,;(\[{<|])"
_URL_USERINFO = lazy(
    r"(?P<scheme>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://)"
    r"(?P<userinfo>[^/\s\"'<>@][^/\s\"'<>]*)@(?=[^\s@/\"'<>]*(?:[/\s\"'<>]|$))"
)
_BARE_USERINFO = lazy(
    _TOKEN_START + r"(?P<userinfo>[A-Za-z0-9._%+\-~]+:[^/\s\"'<>]*)"
    r"@(?=[A-Za-z0-9][A-Za-z0-9.\-]*(?::\d+)?(?:[/\s\"'<>,;)\]}]|$))"
)
# NAME=value, NAME: value, "NAME": "value" and 'NAME': 'value' (a printed Python dict) for
# secret-looking names. The name is taken whole (a look-ahead capture and a back-reference: an
# atomic group that Python 3.10 lacks), and whether it looks secret is decided in Python, so no
# pattern backtracks through a name. ``NAME: value`` needs an environment-style name (HF_TOKEN,
# api_key) so that prose ("the key: ...") is kept.
_WHOLE_NAME = r"(?<![A-Za-z0-9_])(?=(?P<name>[A-Za-z_][A-Za-z0-9_]*))(?P=name)"
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
_ASSIGNED = lazy(
    _WHOLE_NAME + r"(?P<sep>\s?=\s?)(?P<value>" + _QUOTED + r"|(?:[^\s\"'\\,;&]|\\.)+)"
)
_QUOTED_PAIR = lazy(
    r"(?P<q>[\"'])" + _WHOLE_NAME + r"(?P=q)(?P<sep>\s*:\s*)(?P<value>" + _QUOTED + ")"
)
_COLON = lazy(_WHOLE_NAME + r"(?P<sep>: )(?P<value>[^\s\"'<>,;]+)")
_ENV_STYLE = lazy(r"[A-Z0-9_]+|.*_.*")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


_PARTS = lazy(r"[_\-.]+|(?<=[a-z0-9])(?=[A-Z])")
_WORD_PARTS = {"token", "tokens", "key", "keys", "apikey", "secret", "secrets", "password"}
_WORD_PARTS |= {"passwords", "passwd", "credential", "credentials", "private", "privatekey"}


def _assigns_a_secret(name: str) -> bool:
    """``NAME=value`` hides the value when NAME is secret-looking: an environment-style name
    in capitals anywhere (HF_TOKEN, APIKEY), else a name one of whose parts is a secret word
    (api_key, authToken): a requirement pin such as ``tokenizers==0.19.1`` or ``keyring=25``
    names a package, not a secret."""
    if not is_secret_name(name):
        return False
    if name == name.upper():
        return True
    return any(part.lower() in _WORD_PARTS for part in _PARTS.split(name))


def _hide_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if not _assigns_a_secret(match.group("name")) or value.strip("\"'") == REDACTED:
        return match.group(0)
    quote = value[0] if value[:1] in ('"', "'") and len(value) > 1 else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{REDACTED}{quote}"


# a dotted key path with an array index (``torch[0].bogus_key``): what envcheck's own JSON
# names under "key" (matrix validate's problems), never a secret (no token has brackets)
_KEY_PATH = lazy(r"[A-Za-z_][\w-]*\[\d+\](?:\.[A-Za-z_][\w-]*(?:\[\d+\])?)*")


def _hide_pair(match: re.Match[str]) -> str:
    if not is_secret_name(match.group("name")):
        return match.group(0)
    if match.group("name") == "key" and _KEY_PATH.fullmatch(match.group("value")[1:-1]):
        return match.group(0)
    q, value = match.group("q"), match.group("value")
    return f"{q}{match.group('name')}{q}{match.group('sep')}{value[0]}{REDACTED}{value[0]}"


def _hide_colon(match: re.Match[str]) -> str:
    if not _ENV_STYLE.fullmatch(match.group("name")):
        return match.group(0)
    return _hide_value(match)


_WORDS = ("token", "key", "secret", "password", "passwd", "credential", "private")


def _has_secret_word(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _WORDS)


def redact_urls(text: str) -> str:
    """Hide the user information of URLs (with or without a scheme)."""
    if "@" not in text:
        return text
    if "://" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    return _BARE_USERINFO.sub(
        lambda m: f"{REDACTED}@" if m.group("userinfo") != REDACTED else m.group(0), text
    )


def _redact_line(line: str, words: bool) -> str:
    line = redact_urls(line)
    if words:
        line = _QUOTED_PAIR.sub(_hide_pair, line)
        line = _ASSIGNED.sub(_hide_value, line)
        line = _COLON.sub(_hide_colon, line)
    return line


_WORD_HITS = lazy("|".join(_WORDS))  # run on lowered text: no IGNORECASE (slow)


def redact_text(text: str) -> str:
    """Hide secrets in free text: URL credentials, ``NAME=value``, ``NAME: value`` and
    ``"NAME": "value"`` for secret-looking names. Linear in the length of ``text``: only the
    lines holding an '@' or a secret-looking word go through the patterns."""
    if not text:
        return text
    at = "@" in text
    lowered = text.lower()
    words = any(word in lowered for word in _WORDS)
    if not at and not words:
        return text
    spans: dict[int, tuple[int, bool]] = {}  # line start -> (line end, has a word)
    hits = [(m.start(), True) for m in _WORD_HITS.finditer(lowered)] if words else []
    if at:
        pos = text.find("@")
        while pos != -1:
            hits.append((pos, False))
            pos = text.find("@", pos + 1)
    hits.sort()
    line_end = -1
    start = 0
    for pos, word in hits:  # in order: each line is found once, so this stays linear
        if pos < line_end:
            if word and not spans[start][1]:
                spans[start] = (line_end, True)
            continue
        start = text.rfind("\n", max(line_end, 0), pos) + 1
        end = text.find("\n", pos)
        line_end = len(text) if end == -1 else end
        spans[start] = (line_end, word)
    out: list[str] = []
    done = 0
    for start in sorted(spans):
        end, word = spans[start]
        out.append(text[done:start])
        out.append(_redact_line(text[start:end], word))
        done = end
    out.append(text[done:])
    return "".join(out)


def redact_data(data: Any) -> Any:
    """JSON-shaped data with every string (and every value under a secret-looking key)
    redacted; a new structure, the input is not changed."""
    if isinstance(data, str):
        return redact_text(data)
    if isinstance(data, Mapping):
        return {
            k: REDACTED
            if isinstance(k, str) and is_secret_name(k) and isinstance(v, str)
            else redact_data(v)
            for k, v in data.items()
        }
    if isinstance(data, (list, tuple)):
        return [redact_data(v) for v in data]
    return data


def redact_value(name: str, value: str) -> tuple[str, bool]:
    """(safe value, whether anything was hidden)."""
    if is_secret_name(name):
        return REDACTED, True
    cleaned = redact_text(value)
    return cleaned, cleaned != value


def redact_env(variables: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Redact secret-looking names and credentials inside URLs; returns (values, redacted names)."""
    safe: dict[str, str] = {}
    hidden: list[str] = []
    for name, value in variables.items():
        safe[name], was_hidden = redact_value(name, value)
        if was_hidden:
            hidden.append(name)
    return safe, tuple(sorted(hidden))


def pseudonym(text: str, prefix: str = "node") -> str:
    import hashlib  # here: only anonymised output needs it (loading OpenSSL costs ms)

    return f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


# an IPv6 candidate: a run of hex digits and colons with two colons at least, taken whole (the
# look-behind rejects the middle of a run), then checked by ``ipaddress``: compressed forms
# (fd00::2, ::ffff:10.0.0.1) included, times (10:30:45) and MAC addresses left alone
_IPV6_TOKEN = lazy(
    r"(?<![0-9A-Za-z:.])(?=[0-9A-Fa-f]*:[0-9A-Fa-f]*:)[0-9A-Fa-f:]+(?:\.\d{1,3}){0,3}(?![0-9A-Za-z:])"
)


def _keeps(address: str) -> bool:
    """Loopback, link-local and unspecified addresses name no machine: they stay readable
    (NET103's "resolves to 127.0.1.1: Gloo binds loopback" must say loopback)."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified


# A dotted quad is a version, not an address, when its context says so (a pasted report needs
# ``nvidia-cublas-cu12==12.1.3.1`` and ``CUDNN_VERSION=9.1.0.70`` as they are):
# - before it: a requirement operator (``==``, ``>=``, ``~=``), a name it is attached to
#   (``cu12-12.1.3.1``, ``libcublas.so.12.1.3.1``; not the end of an address range
#   ``10.0.0.1-10.0.0.9``), the word "version" (``Driver Version:``, ``"version": "``,
#   ``NV_CUDNN_VERSION=``), or a CUDA package or library name (``nvidia-cublas-cu12  12.1.3.1``,
#   ``cupy-cuda12x (13.0.0.1)``, ``cuBLAS 12.1.3.1``);
# - after it: a local label, a Debian revision or more parts (``+cu121``, ``-1``, ``.post1``,
#   ``.dist-info``, a fifth number);
# - the quad itself: an octet over 255 or with a leading zero (``535.104.05.01``), which no
#   address prints;
# - a quad the caller knows as a version (``versions``: the report's package versions, the quads
#   its fixes pin), so prose such as "torch pins 12.1.3.1" keeps it too.
# Everything else (``MASTER_ADDR=10.0.0.4``, ``tcp://192.168.1.2:29500``, ``eth0:10.0.0.4<0>``)
# is an address. The look-arounds read a bounded window, so masking stays linear.
_VERSION_BEFORE = lazy(
    r"(?:===?|[<>!~]=)\s*$"
    r"|[A-Za-z0-9][-_.]$"
    r"|(?i:version)[A-Za-z0-9_]*[\"']?\s*[:=]?\s*[\"'(]?\s*$"
    r"|(?:[-_]cu(?:da)?\d+[A-Za-z0-9]*|\bcu[A-Z]{2,}[A-Za-z]*)\s*(?:==|[:=(])?\s*[\"']?$"
)
_RANGE_BEFORE = lazy(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}-$")
_VERSION_AFTER = lazy(
    r"[+~]|-\d+(?![\d]|\.\d)|\.\d|\.(?:post|dev|rc|dist-info|egg-info|whl|tar|zip)"
)
_WINDOW = 64


def _valid_v4(found: str) -> bool:
    return all(len(o) == 1 or (o[0] != "0" and int(o) <= 255) for o in found.split("."))


def _is_version(text: str, start: int, end: int, versions: frozenset[str]) -> bool:
    found = text[start:end]
    if found in versions or not _valid_v4(found):
        return True
    if _VERSION_AFTER.match(text, end, end + _WINDOW):
        return True
    before = text[max(0, start - _WINDOW) : start]
    return bool(_VERSION_BEFORE.search(before)) and not _RANGE_BEFORE.search(before)


def version_quads(text: str) -> frozenset[str]:
    """The dotted quads ``text`` states as versions by their context (see ``_is_version``)."""
    return frozenset(
        m.group(0)
        for m in _IPV4.finditer(text)
        if _is_version(text, m.start(), m.end(), frozenset())
    )


def _mask_v4(match: re.Match[str], versions: frozenset[str] = frozenset()) -> str:
    found = match.group(0)
    if _keeps(found) or _is_version(match.string, match.start(), match.end(), versions):
        return found
    return pseudonym(found, "ip")


def _mask_v6(match: re.Match[str]) -> str:
    import ipaddress

    found = match.group(0)
    try:
        ipaddress.IPv6Address(found)
    except ValueError:
        return found
    return found if _keeps(found) else pseudonym(found, "ip6")


def mask_addresses(text: str, versions: frozenset[str] = frozenset()) -> str:
    """Replace IPv4 and IPv6 addresses in free text with stable pseudonyms (loopback and
    link-local ones stay as they are, and so do versions that look like addresses: see
    ``_is_version``; ``versions`` are quads known to be versions wherever they appear)."""
    text = _IPV4.sub(lambda m: _mask_v4(m, versions), text)
    if ":" not in text:
        return text
    return _IPV6_TOKEN.sub(_mask_v6, text)


_PROXY_HOST = lazy(r"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/\s]*@)?(?P<host>[^:/\s,@\[\]]+)")


def proxy_hosts(variables: Mapping[str, str]) -> tuple[str, ...]:
    """Host names in proxy settings (``https_proxy=http://proxy.corp:3128``, the domains of
    ``no_proxy``): names of the site's machines, hidden like the node's own under --redact."""
    import ipaddress

    hosts: list[str] = []
    for name, value in variables.items():
        lowered = name.lower()
        if not lowered.endswith("_proxy"):
            continue
        if lowered == "no_proxy":
            entries = [e.strip().split(":")[0] for e in value.split(",")]
        else:
            entries = [m.group("host") for m in _PROXY_HOST.finditer(value)]
        for entry in entries:
            if not entry or entry == "localhost" or "/" in entry or entry == REDACTED:
                continue
            try:
                ipaddress.ip_address(entry)
            except ValueError:
                hosts.append(entry)
    return tuple(dict.fromkeys(hosts))


def pseudonymize_text(
    text: str, hostnames: tuple[str, ...], versions: frozenset[str] = frozenset()
) -> str:
    """Free text (a finding's message, a skip reason) as ``anonymize`` shows its report."""
    for name in sorted({h for h in hostnames if h}, key=len, reverse=True):
        text = re.sub(
            rf"(?<![A-Za-z0-9.-]){re.escape(name)}(?![A-Za-z0-9-])", pseudonym(name), text
        )
    return mask_addresses(text, versions)


def redact_value_tree(
    value: Any, hostnames: tuple[str, ...], versions: frozenset[str] = frozenset()
) -> Any:
    if isinstance(value, str):
        return pseudonymize_text(value, hostnames, versions)
    if isinstance(value, dict):
        return {k: redact_value_tree(v, hostnames, versions) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value_tree(v, hostnames, versions) for v in value)
    return value


def strings_in(value: Any) -> Iterator[str]:
    """Every string in JSON-shaped data (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from strings_in(k)
            yield from strings_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings_in(v)
