"""Interfaces, their addresses, what the hostname resolves to, and InfiniBand ports."""

from __future__ import annotations

import threading

from envcheck.model.report import IbDevice, IbPort, Interface, NetworkInfo
from envcheck.model.section import Section
from envcheck.probes.context import AddressMap, ProbeContext

_ARPHRD_LOOPBACK = 772
_ARPHRD_INFINIBAND = 32
_IFF_UP = 0x1


def _read(ctx: ProbeContext, path: str) -> str | None:
    text = ctx.read_text(path)
    return text.strip() if text is not None else None


def _int(text: str | None, base: int = 10) -> int | None:
    try:
        return int(text, base) if text else None
    except ValueError:
        return None


def _kind(ctx: ProbeContext, name: str, arp_type: int | None) -> str:
    base = f"/sys/class/net/{name}"
    if arp_type == _ARPHRD_LOOPBACK or name == "lo":
        return "loopback"
    if arp_type == _ARPHRD_INFINIBAND:
        return "infiniband"
    if ctx.path(f"{base}/bridge").exists():
        return "bridge"
    if name.startswith("veth"):
        return "veth"
    if ctx.path(f"{base}/device").exists():
        return "ether"
    return "virtual"


def _state(operstate: str | None, flags: int | None) -> str | None:
    if operstate in (None, "unknown") and flags is not None:
        return "up" if flags & _IFF_UP else "down"
    return operstate


def _interfaces(ctx: ProbeContext, addresses: AddressMap) -> list[Interface]:
    net = ctx.path("/sys/class/net")
    names = sorted(p.name for p in net.iterdir()) if net.is_dir() else sorted(addresses)
    result = []
    for name in names:
        base = f"/sys/class/net/{name}"
        arp_type = _int(_read(ctx, f"{base}/type"))
        flags = _int(_read(ctx, f"{base}/flags"), 16)
        v4, v6 = addresses.get(name, ([], []))
        result.append(
            Interface(
                name=name,
                state=_state(_read(ctx, f"{base}/operstate"), flags),
                mtu=_int(_read(ctx, f"{base}/mtu")),
                ipv4=tuple(v4),
                ipv6=tuple(v6),
                kind=_kind(ctx, name, arp_type),
            )
        )
    return result


def _infiniband(ctx: ProbeContext) -> list[IbDevice]:
    root = ctx.path("/sys/class/infiniband")
    if not root.is_dir():
        return []
    devices = []
    for dev in sorted(root.iterdir()):
        ports = []
        ports_dir = dev / "ports"
        for port in sorted(ports_dir.iterdir()) if ports_dir.is_dir() else []:
            base = f"/sys/class/infiniband/{dev.name}/ports/{port.name}"
            state = _read(ctx, f"{base}/state")
            ports.append(
                IbPort(
                    port=_int(port.name) or 0,
                    state=state.split(":", 1)[-1].strip() if state else None,
                    rate=_read(ctx, f"{base}/rate"),
                    link_layer=_read(ctx, f"{base}/link_layer"),
                )
            )
        devices.append(IbDevice(name=dev.name, ports=tuple(ports)))
    return devices


def resolve_with_timeout(ctx: ProbeContext, hostname: str) -> tuple[list[str], str | None]:
    """Resolve like Gloo does (getaddrinfo), in a daemon thread so DNS cannot hang the probe."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = ctx.resolver(hostname)
        except OSError as exc:
            box["error"] = f"{hostname} does not resolve ({exc.strerror or exc})"

    thread = threading.Thread(target=target, name="envcheck-resolve", daemon=True)
    thread.start()
    thread.join(ctx.timeout)
    if thread.is_alive():
        return [], f"resolving {hostname} timed out after {ctx.timeout:g} s"
    if "error" in box:
        return [], str(box["error"])
    return list(box.get("result") or []), None  # type: ignore[call-overload]


def probe_network(ctx: ProbeContext) -> Section[NetworkInfo]:
    notes: tuple[str, ...] = ()
    try:
        addresses = ctx.addresses()
    except OSError as exc:
        addresses = {}
        notes = (f"interface addresses unavailable ({exc})",)
    hostname = ctx.hostname()
    resolved, error = resolve_with_timeout(ctx, hostname)
    info = NetworkInfo(
        hostname=hostname,
        hostname_addresses=tuple(resolved),
        resolve_error=error,
        interfaces=tuple(_interfaces(ctx, addresses)),
        infiniband=tuple(_infiniband(ctx)),
    )
    return Section.ok(info, source="/sys/class/net, getifaddrs, getaddrinfo", notes=notes)
