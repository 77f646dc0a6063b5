"""What a probe may look at. Tests stage a root tree and an environment; production uses ``/``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# name -> (IPv4 "addr/prefix" list, IPv6 "addr/prefix" list)
AddressMap = dict[str, tuple[list[str], list[str]]]


def _default_addresses() -> AddressMap:
    from envcheck.probes.ifaddrs import interface_addresses

    return interface_addresses()


def idna_host(hostname: str) -> str | bytes:
    """What ``getaddrinfo`` looks up for ``hostname``: the bytes the "idna" codec gives for an
    ASCII name it accepts (the same bytes, so the lookup is the same), handed over as bytes so
    that the codec (and stringprep and unicodedata under it, a few ms) is not imported for
    them; any other name as given, for the codec to encode or refuse as before."""
    try:
        raw = hostname.encode("ascii")
    except UnicodeEncodeError:
        return hostname
    labels = raw.split(b".")
    if not raw or len(labels[-1]) >= 64 or not all(0 < len(x) < 64 for x in labels[:-1]):
        return hostname
    return raw


def _default_resolver(hostname: str) -> list[str]:
    import socket

    infos = socket.getaddrinfo(idna_host(hostname), None, proto=socket.IPPROTO_TCP)
    seen: list[str] = []
    for info in infos:
        addr = str(info[4][0])
        if addr not in seen:
            seen.append(addr)
    return seen


def _default_hostname() -> str:
    import socket

    return socket.gethostname()


@dataclass(frozen=True)
class ProbeContext:
    """Inputs of every probe.

    ``root`` prefixes every read of /proc, /sys, /etc and /dev; ``env`` replaces os.environ;
    ``python`` names another interpreter whose packages to inspect; ``timeout`` bounds every
    subprocess and name lookup (and each --deep step but the torch smoke test).
    """

    root: Path = Path("/")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str | None = None
    timeout: float = 5.0
    redact: bool = False
    # --deep: () off; ("gpu",) CUDA driver, NVML health and PCIe; ("gpu", "torch") adds the
    # torch smoke test in the node's interpreter, bounded by torch_timeout
    deep: tuple[str, ...] = ()
    torch_timeout: float = 120.0
    # read the installed packages' ELF files (envcheck/binaries/); ENVCHECK_NO_BINARIES=1 or
    # --no-binaries turns it off
    binaries: bool = True
    addresses: Callable[[], AddressMap] = _default_addresses
    resolver: Callable[[str], list[str]] = _default_resolver
    hostname: Callable[[], str] = _default_hostname

    def path(self, absolute: str) -> Path:
        """The staged location of an absolute system path such as ``/proc/meminfo``."""
        return self.root / absolute.lstrip("/")

    def read_text(self, absolute: str) -> str | None:
        """Contents of a system file, or None when it is absent or unreadable."""
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
