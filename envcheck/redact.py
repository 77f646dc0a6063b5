"""Secrets never leave the node; hostnames and addresses leave it only without ``--redact``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envcheck.model.report import NodeReport

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
_IPV6 = re.compile(r"\b(?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{0,4}\b")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_value(name: str, value: str) -> tuple[str, bool]:
    """(safe value, whether anything was hidden)."""
    if is_secret_name(name):
        return REDACTED, True
    cleaned = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", value)
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
    return f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def mask_addresses(text: str) -> str:
    """Replace IPv4 and IPv6 addresses in free text with stable pseudonyms."""
    text = _IPV4.sub(lambda m: pseudonym(m.group(0), "ip"), text)
    return _IPV6.sub(lambda m: pseudonym(m.group(0), "ip6"), text)


def anonymize(report: NodeReport) -> NodeReport:
    """Replace the hostname and every IP address in a report with stable pseudonyms."""
    from dataclasses import replace

    node = pseudonym(report.node)
    sections: dict[str, Any] = {}
    net = report.network
    if net.is_ok and net.data is not None:
        data = net.data
        interfaces = tuple(
            replace(
                i, ipv4=tuple(map(mask_addresses, i.ipv4)), ipv6=tuple(map(mask_addresses, i.ipv6))
            )
            for i in data.interfaces
        )
        sections["network"] = replace(
            net,
            data=replace(
                data,
                hostname=pseudonym(data.hostname) if data.hostname else None,
                hostname_addresses=tuple(map(mask_addresses, data.hostname_addresses)),
                resolve_error=mask_addresses(
                    data.resolve_error.replace(data.hostname or "\0", node)
                )
                if data.resolve_error
                else None,
                interfaces=interfaces,
            ),
        )
    env = report.env
    if env.is_ok and env.data is not None:
        variables = {k: mask_addresses(v) for k, v in env.data.variables.items()}
        sections["env"] = replace(env, data=replace(env.data, variables=variables))
    return replace(report, node=node, redacted=True, **sections)


def redact_text(text: str, hostnames: tuple[str, ...]) -> str:
    """Free text (a finding's message, a skip reason) as ``anonymize`` shows its report."""
    for name in sorted({h for h in hostnames if h}, key=len, reverse=True):
        text = re.sub(
            rf"(?<![A-Za-z0-9.-]){re.escape(name)}(?![A-Za-z0-9-])", pseudonym(name), text
        )
    return mask_addresses(text)


def redact_value_tree(value: Any, hostnames: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact_text(value, hostnames)
    if isinstance(value, dict):
        return {k: redact_value_tree(v, hostnames) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value_tree(v, hostnames) for v in value)
    return value


def hostnames_of(report: NodeReport) -> tuple[str, ...]:
    names = [report.node]
    net = report.network
    if net.is_ok and net.data is not None and net.data.hostname:
        names.append(net.data.hostname)
    return tuple(names)
