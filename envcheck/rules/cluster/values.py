"""The facts nodes are compared on, each read from one node as text.

Each extractor takes a ``NodeView`` and returns the value, or raises Skip / returns None when the
node's report does not say. "not installed" and "(unset)" are values, not unknowns. The drift
table (cluster/diff.py) and the cluster rules read the same extractors.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from packaging.utils import canonicalize_name

from envcheck.facts.skip import Skip
from envcheck.model.report import Interface, NetworkInfo
from envcheck.rules.cluster.model import NOT_INSTALLED, Extractor, NodeView, reads
from envcheck.rules.node.network import nccl_selection, usable

UNSET = "(unset)"
NO_GPUS = "no GPUs"
SOCKET_VARS = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME")


@reads("python")
def python_version(node: NodeView) -> str:
    return str(node.facts.python_version())


def package(name: str) -> Extractor:
    @reads("packages")
    def extract(node: NodeView) -> str:
        dist = node.facts.dist(name)
        return dist.version if dist is not None else NOT_INSTALLED

    return extract


def wheel_family(prefix: str) -> Extractor:
    """Every installed ``prefix``, ``prefix-cuXY`` distribution: ``nvidia-nccl-cu12 2.21.5``."""
    key = canonicalize_name(prefix)

    @reads("packages")
    def extract(node: NodeView) -> str:
        found = [
            f"{d.name} {d.version}"
            for d in node.facts.packages().distributions
            if d.key == key or (d.key.startswith(key + "-cu") and d.key[len(key) + 3 :].isdigit())
        ]
        return ", ".join(sorted(dict.fromkeys(found))) or NOT_INSTALLED

    return extract


@reads("packages", "torch", "origin")
def torch_variant(node: NodeView) -> str:
    if node.facts.torch() is None:
        return NOT_INSTALLED
    return node.facts.torch_variant()


@reads("gpu")
def driver_version(node: NodeView) -> str:
    return str(node.facts.driver())


@reads("gpu")
def driver_branch(node: NodeView) -> str:
    return f"R{node.facts.driver().major}"


@reads("gpu")
def gpu_models(node: NodeView) -> str:
    return node.facts.gpu_summary() if node.facts.gpus() else NO_GPUS


@reads("gpu")
def gpu_model_names(node: NodeView) -> str:
    """The distinct GPU models, without counts."""
    gpus = node.facts.gpus()
    return ", ".join(sorted({g.name or "unknown GPU" for g in gpus})) if gpus else NO_GPUS


@reads("gpu")
def gpu_architectures(node: NodeView) -> str:
    """``sm_80 (Ampere)``; several when one node mixes GPUs."""
    facts = node.facts
    gpus = facts.gpus()
    if not gpus:
        return NO_GPUS
    seen: dict[str, None] = {}
    for gpu in gpus:
        cc = facts.compute_capability(gpu)
        model = facts.gpu_model(gpu)
        arch = f" ({model.architecture})" if model is not None else ""
        seen[f"sm_{cc.major}{cc.minor}{arch}"] = None
    return ", ".join(sorted(seen))


@reads("gpu")
def gpu_memory(node: NodeView) -> str:
    gpus = node.facts.gpus()
    if not gpus:
        return NO_GPUS
    sizes = sorted({g.memory_total_mib for g in gpus if g.memory_total_mib})
    if not sizes:
        raise Skip("GPU memory unknown")
    return ", ".join(f"{s / 1024:.0f} GiB" for s in sizes)


def env_var(name: str) -> Extractor:
    @reads("env")
    def extract(node: NodeView) -> str:
        return node.facts.env().get(name) or UNSET

    return extract


@reads("system")
def os_release(node: NodeView) -> str | None:
    info = node.facts.system()
    return info.os_pretty or (f"{info.os_id} {info.os_version}" if info.os_id else None)


@reads("system")
def glibc(node: NodeView) -> str | None:
    return node.facts.system().glibc


def envcheck_version(node: NodeView) -> str:
    return node.facts.report.envcheck_version


# --- the address a node is reached at ----------------------------------------------------------


@dataclass(frozen=True)
class Address:
    interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface
    how: str  # where the choice came from
    prefix_known: bool = True

    @property
    def ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        return self.interface.ip

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return self.interface.network


def _holding(net: NetworkInfo, ip: str) -> tuple[Interface | None, str | None]:
    for iface in net.interfaces:
        for text in iface.ipv4 + iface.ipv6:
            if text.split("/")[0] == ip:
                return iface, text
    return None, None


def _address(text: str, how: str) -> Address:
    try:
        return _parse_address(text, how)
    except ValueError:
        raise Skip(f"the node's address {text!r} is not an IP address (redacted?)") from None


def _parse_address(text: str, how: str) -> Address:
    if "/" in text:
        return Address(ipaddress.ip_interface(text), how)
    ip = ipaddress.ip_address(text)
    default = 24 if ip.version == 4 else 64
    return Address(ipaddress.ip_interface(f"{text}/{default}"), how, prefix_known=False)


def _from_interface(net: NetworkInfo, names: list[str], how: str) -> Address | None:
    for name in names:
        iface = net.interface(name)
        if iface is not None and usable(iface) and iface.ipv4:
            return _address(iface.ipv4[0], f"{how} ({iface.name})")
    return None


def chosen_address(node: NodeView) -> Address:
    """The address the node's peers will use: Ray's node address when known, else what
    Gloo/NCCL would pick (the *_SOCKET_IFNAME interface, else the hostname's address)."""
    net = node.facts.network()
    if node.member.address:
        _iface, text = _holding(net, node.member.address)
        return _address(text or node.member.address, "Ray's node address")
    try:
        env = node.facts.env()
    except Skip:
        env = {}
    gloo = env.get("GLOO_SOCKET_IFNAME", "")
    if gloo and not gloo.startswith(("^", "=")):
        found = _from_interface(net, gloo.split(","), "GLOO_SOCKET_IFNAME")
        if found is not None:
            return found
    nccl = env.get("NCCL_SOCKET_IFNAME", "")
    if nccl:
        chosen = [i.name for i in nccl_selection(nccl, net.interfaces)]
        found = _from_interface(net, chosen, "NCCL_SOCKET_IFNAME")
        if found is not None:
            return found
    for text in net.hostname_addresses:
        try:
            ip = ipaddress.ip_address(text.split("%")[0])
        except ValueError:
            continue  # redacted
        if not ip.is_loopback and ip.version == 4:
            _iface, held = _holding(net, str(ip))
            return _address(held or str(ip), f"the hostname {net.hostname}'s address")
    if net.hostname_addresses:
        return _address(net.hostname_addresses[0], f"the hostname {net.hostname}'s address")
    raise Skip("the node's address is unknown")


def subnet(node: NodeView) -> str:
    address = chosen_address(node)
    if address.ip.is_loopback:
        return f"{address.ip} (loopback)"
    kind = "public" if address.ip.is_global else "private"
    return f"{address.network} ({kind})"


@dataclass(frozen=True)
class FactSpec:
    fact: str
    label: str
    extract: Callable[[NodeView], str | None]


# The curated facts of the drift table, in display order. Other distributions that differ are
# added after these (see cluster/diff.py).
DRIFT_FACTS: tuple[FactSpec, ...] = (
    FactSpec("python", "Python", python_version),
    FactSpec("package:ray", "ray", package("ray")),
    FactSpec("package:torch", "torch", package("torch")),
    FactSpec("torch_variant", "torch CUDA variant", torch_variant),
    FactSpec("wheel:nvidia-nccl", "NCCL wheel", wheel_family("nvidia-nccl")),
    FactSpec("wheel:nvidia-cublas", "cuBLAS wheel", wheel_family("nvidia-cublas")),
    FactSpec("wheel:nvidia-cudnn", "cuDNN wheel", wheel_family("nvidia-cudnn")),
    FactSpec("package:vllm", "vllm", package("vllm")),
    FactSpec("package:flash-attn", "flash-attn", package("flash-attn")),
    FactSpec("package:numpy", "numpy", package("numpy")),
    FactSpec("driver", "NVIDIA driver", driver_version),
    FactSpec("gpu_models", "GPUs", gpu_models),
    FactSpec("gpu_arch", "GPU architecture", gpu_architectures),
    FactSpec("env:GLOO_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", env_var("GLOO_SOCKET_IFNAME")),
    FactSpec("env:NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", env_var("NCCL_SOCKET_IFNAME")),
    FactSpec("env:TP_SOCKET_IFNAME", "TP_SOCKET_IFNAME", env_var("TP_SOCKET_IFNAME")),
    FactSpec("subnet", "address subnet", subnet),
    FactSpec("os", "OS", os_release),
    FactSpec("glibc", "glibc", glibc),
    FactSpec("envcheck", "envcheck", envcheck_version),
)
CURATED_PACKAGES = frozenset(
    canonicalize_name(s.fact.split(":", 1)[1]) for s in DRIFT_FACTS if s.fact.startswith("package:")
)
