"""NCCL's external network plugin (NET123): aws-ofi-nccl, the libfabric plugin of AWS's EFA,
finding no usable libfabric provider, and NCCL_NET naming a network that no loaded plugin
provides (the signature in matrices/signatures/nccl_transports.toml)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# aws-ofi-nccl's own floor ('EFA provider requires at least libfabric version 1.22.0.')
_LIBFABRIC_FLOOR = lazy(r"requires at least libfabric version ([0-9]+(?:\.[0-9]+)+)")
# NCCL's init.cc: 'Error: network %s not found.' (the name NCCL_NET or the comm config gave)
_NET_NOT_FOUND = lazy(r"Error: network (.+?) not found")
# the plugin's provider search
_PROVIDER = lazy(r"NET/OFI|aws-ofi-nccl")

_EFA_STEPS = (
    "fi_info -p efa -t FI_EP_RDM   # must list the instance's EFA devices (libfabric's own tool, "
    "/opt/amazon/efa/bin)",
    "in a container: pass the EFA devices (docker run --device=/dev/infiniband/uverbs0 ..., one "
    "per EFA; on EKS request vpc.amazonaws.com/efa) and keep /opt/amazon/efa/lib and the "
    "plugin's lib directory on LD_LIBRARY_PATH",
    "export FI_PROVIDER=efa FI_EFA_USE_DEVICE_RDMA=1   # where the instance has EFA",
)
_NO_FABRIC = (
    "without EFA (one node, or an instance type without it): export NCCL_NET=Socket (NCCL's "
    "TCP transport; NCCL_NET=IB on InfiniBand) or take the plugin's directory off LD_LIBRARY_PATH"
)


@rule("NET123", "nccl-net-plugin-no-provider", Severity.WARNING)
def nccl_net_plugin(facts: Facts) -> Iterable[Hit]:
    """NCCL's network plugin (aws-ofi-nccl / libfabric) found no usable provider, or NCCL_NET names a network no plugin provides

    ## What it checks
    Only a log says it: aws-ofi-nccl's own lines, all prefixed `NET/OFI` (`Couldn't find any
    optimal provider`, `OFI fi_getinfo() call failed: No data available`, `Unable to find a
    protocol that worked`, `aws-ofi-nccl initialization failed`, `EFA provider requires at
    least libfabric version 1.22.0.`), and NCCL's `Error: network AWS Libfabric not found.` /
    `Failed to initialize any NET plugin` when NCCL_NET names a network no loaded plugin offers.

    ## Why it matters
    On AWS instances with EFA, multi-node NCCL runs over aws-ofi-nccl and libfabric's efa
    provider. Where the container was started without the EFA devices, libfabric lacks the efa
    provider (or is older than the plugin needs), or FI_PROVIDER names an absent provider, the
    plugin fails to initialise: with NCCL_NET set the job stops; without it NCCL falls back to
    TCP sockets, many times slower between nodes. The same images run on instances without EFA
    print these lines too, where the plugin is simply not needed.

    ## Example
    A p4d job in a container started without `--device=/dev/infiniband/uverbs0`:
    `NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available` then
    `NET/OFI aws-ofi-nccl initialization failed`.

    ## Fix
    With EFA: `fi_info -p efa -t FI_EP_RDM` must list the devices; pass them into the container
    (`--device=/dev/infiniband/uverbs0`, EKS's `vpc.amazonaws.com/efa`), install the EFA
    software (libfabric at the version the plugin asks for) and `export FI_PROVIDER=efa`.
    Without EFA: `export NCCL_NET=Socket` (or IB), or take the plugin off LD_LIBRARY_PATH.

    ## References
    - https://github.com/aws/aws-ofi-nccl/blob/master/src/nccl_ofi_net.cpp
    - https://github.com/NVIDIA/nccl/blob/master/src/plugin/net.cc
    - https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net
    """
    raise Skip("only a log line states what NCCL's network plugin found", "log.nccl_net_plugin")


@from_log("NET123")
def nccl_net_plugin_in_log(facts: Facts, line: LogLine) -> Hit:
    """The line's own words pick the fix: a libfabric older than the plugin's floor, NCCL_NET
    naming a network no plugin provides, or the provider search that found no EFA device."""
    if line.informational:  # 'NCCL INFO NET/OFI No eligible providers were found'
        raise NotStated(
            f"line {line.line} is the plugin's INFO about its provider search, which nodes "
            "without EFA print too; a WARN line says it failed"
        )
    floor = _LIBFABRIC_FLOOR.search(line.text)
    if floor is not None:
        return Hit(
            f"aws-ofi-nccl needs libfabric {floor.group(1)} or newer for the efa provider (line "
            f"{line.line}): the libfabric it loaded is older",
            evidence={"line": line.line, "libfabric_min": floor.group(1)},
            fix=fix(
                f"Install the EFA software with libfabric >= {floor.group(1)} (the current EFA "
                "installer, or an image built on it) and load it before any other libfabric",
                "manual",
                manual(
                    "fi_info --version   # the libfabric the job loads (/opt/amazon/efa/lib "
                    f"first on LD_LIBRARY_PATH); it must be >= {floor.group(1)}"
                ),
                manual(_EFA_STEPS[1]),
            ),
        )
    named = _NET_NOT_FOUND.search(line.text)
    env: dict[str, str] = {}
    with contextlib.suppress(Skip):
        env = dict(facts.env())
    chosen = env.get("NCCL_NET") or (named.group(1) if named else None)
    if named is not None or not _PROVIDER.search(line.text):
        what = f"NCCL_NET names '{chosen}'" if chosen else "NCCL_NET names a network"
        return Hit(
            f"{what}, which no loaded network plugin provides (line {line.line}): the plugin "
            "(libnccl-net*.so, aws-ofi-nccl for 'AWS Libfabric') did not load or did not "
            "initialise",
            evidence={"line": line.line, "nccl_net": chosen},
            fix=fix(
                "Make the plugin loadable (its lib directory on LD_LIBRARY_PATH, its provider "
                "present), or unset NCCL_NET so NCCL picks its own transport",
                "manual",
                manual("unset NCCL_NET   # NCCL then uses a plugin that loads, or IB / Socket"),
                manual(_EFA_STEPS[0]),
                manual(_EFA_STEPS[1]),
            ),
        )
    provider = env.get("FI_PROVIDER")
    also = f" (FI_PROVIDER={provider})" if provider else ""
    return Hit(
        f"NCCL's libfabric plugin (aws-ofi-nccl) found no usable provider{also} (line "
        f"{line.line}): no EFA device in the instance or container, or a libfabric without the "
        "efa provider; NCCL runs without it (TCP sockets) or fails where NCCL_NET asks for it",
        evidence={"line": line.line, "fi_provider": provider},
        fix=fix(
            "With EFA: pass the EFA devices into the container and check `fi_info -p efa`; "
            "without EFA: export NCCL_NET=Socket",
            "manual",
            manual(_EFA_STEPS[0]),
            manual(_EFA_STEPS[1]),
            manual(_EFA_STEPS[2]),
            manual(_NO_FABRIC),
        ),
    )
