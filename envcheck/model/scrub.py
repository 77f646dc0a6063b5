"""A report with its secrets hidden again, or its hostnames and addresses pseudonymised: the
structured side of :mod:`envcheck.redact` (which holds the text patterns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from envcheck.redact import (
    mask_addresses,
    proxy_hosts,
    pseudonym,
    pseudonymize_text,
    redact_env,
    version_quads,
)

if TYPE_CHECKING:
    from envcheck.model.report import EnvInfo, NodeReport
    from envcheck.model.section import Section


def scrub_env_section(section: Section[EnvInfo]) -> Section[EnvInfo]:
    """An env section read from a file, redacted again (it may come from an older envcheck,
    another tool or a hand)."""
    from dataclasses import replace

    data = section.data
    if data is None or not data.variables:
        return section
    values, hidden = redact_env(data.variables)
    if values == data.variables:
        return section
    names = tuple(sorted(set(data.redacted) | set(hidden)))
    return replace(section, data=replace(data, variables=values, redacted=names))


def scrub_report(report: NodeReport) -> NodeReport:
    """A report read from a file with its secrets hidden again."""
    from dataclasses import replace

    env = scrub_env_section(report.env)
    return report if env is report.env else replace(report, env=env)


def versions_of(report: NodeReport) -> frozenset[str]:
    """The versions a report states that look like IPv4 addresses (``nvidia-cublas-cu12``
    12.1.3.1, a driver's 4-part version): kept wherever ``--redact`` meets them in free text."""
    found: list[str] = []
    packages = report.packages
    if packages.is_ok and packages.data is not None:
        found += (d.version for d in packages.data.distributions)
    torch = report.torch
    if torch.is_ok and torch.data is not None:
        found += (torch.data.version, *torch.data.requires_cuda.values())
        found += torch.data.installed_cuda.values()
    gpu = report.gpu
    if gpu.is_ok and gpu.data is not None:
        found += (v for v in (gpu.data.driver_version, gpu.data.nvml_version) if v)
    quads: set[str] = set()
    for version in found:
        quads |= version_quads(f"version {version}")
    return frozenset(quads)


def anonymize(report: NodeReport) -> NodeReport:
    """Replace the hostname and every IP address in a report with stable pseudonyms (versions
    that look like addresses stay: see ``redact.mask_addresses``)."""
    from dataclasses import replace

    node = pseudonym(report.node)
    versions = versions_of(report)
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
        # proxy hosts are the site's machines: hidden like the node's own name
        hosts = proxy_hosts(env.data.variables)
        variables = {
            k: pseudonymize_text(v, hosts, versions | version_quads(f"{k}={v}"))
            for k, v in env.data.variables.items()
        }
        sections["env"] = replace(env, data=replace(env.data, variables=variables))
    deep = report.deep
    if deep.is_ok and deep.data is not None and deep.data.torch is not None:
        smoke = deep.data.torch

        def clean(text: str) -> str:
            # NCCL prefixes its lines with "<hostname>:<pid>:<tid>"
            return mask_addresses(
                text.replace(report.node, node) if report.node else text, versions
            )

        smoke = replace(
            smoke,
            nccl_warnings=tuple(map(clean, smoke.nccl_warnings)),
            allreduce_detail=clean(smoke.allreduce_detail) if smoke.allreduce_detail else None,
        )
        sections["deep"] = replace(deep, data=replace(deep.data, torch=smoke))
    return replace(report, node=node, redacted=True, **sections)


def hostnames_of(report: NodeReport) -> tuple[str, ...]:
    """The names ``--redact`` hides: the node's, and the proxy hosts its environment names."""
    names = [report.node]
    net = report.network
    if net.is_ok and net.data is not None and net.data.hostname:
        names.append(net.data.hostname)
    env = report.env
    if env.is_ok and env.data is not None:
        names += proxy_hosts(env.data.variables)
    return tuple(names)
