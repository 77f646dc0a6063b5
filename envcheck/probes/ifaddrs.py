"""Interface addresses through libc's getifaddrs(3): every IPv4 and IPv6 address, no subprocess."""

from __future__ import annotations

import ctypes
import socket

AddressMap = dict[str, tuple[list[str], list[str]]]


class _SockAddr(ctypes.Structure):
    _fields_ = [("sa_family", ctypes.c_ushort), ("sa_data", ctypes.c_ubyte * 14)]


class _SockAddrIn(ctypes.Structure):
    _fields_ = [
        ("sin_family", ctypes.c_ushort),
        ("sin_port", ctypes.c_uint16),
        ("sin_addr", ctypes.c_ubyte * 4),
        ("sin_zero", ctypes.c_ubyte * 8),
    ]


class _SockAddrIn6(ctypes.Structure):
    _fields_ = [
        ("sin6_family", ctypes.c_ushort),
        ("sin6_port", ctypes.c_uint16),
        ("sin6_flowinfo", ctypes.c_uint32),
        ("sin6_addr", ctypes.c_ubyte * 16),
        ("sin6_scope_id", ctypes.c_uint32),
    ]


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = [
    ("ifa_next", ctypes.POINTER(_IfAddrs)),
    ("ifa_name", ctypes.c_char_p),
    ("ifa_flags", ctypes.c_uint),
    ("ifa_addr", ctypes.POINTER(_SockAddr)),
    ("ifa_netmask", ctypes.POINTER(_SockAddr)),
    ("ifa_ifu", ctypes.POINTER(_SockAddr)),
    ("ifa_data", ctypes.c_void_p),
]


def _raw(sa: ctypes._Pointer[_SockAddr], family: int) -> bytes:
    if family == socket.AF_INET:
        return bytes(ctypes.cast(sa, ctypes.POINTER(_SockAddrIn)).contents.sin_addr)
    return bytes(ctypes.cast(sa, ctypes.POINTER(_SockAddrIn6)).contents.sin6_addr)


def _prefix(mask: bytes) -> int:
    return sum(bin(b).count("1") for b in mask)


def _libc() -> ctypes.CDLL:
    """The C library: the one this interpreter is linked with (glibc or musl, already loaded),
    found without ``ctypes.util.find_library``, which runs ``ldconfig -p`` in a subprocess."""
    libc = ctypes.CDLL(None, use_errno=True)
    if hasattr(libc, "getifaddrs") and hasattr(libc, "freeifaddrs"):
        return libc
    from ctypes.util import find_library  # a statically linked interpreter: look it up

    return ctypes.CDLL(find_library("c") or "libc.so.6", use_errno=True)


def interface_addresses() -> AddressMap:
    """Map interface name to (IPv4, IPv6) lists of ``addr/prefix`` strings."""
    libc = _libc()
    head = ctypes.POINTER(_IfAddrs)()
    if libc.getifaddrs(ctypes.byref(head)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"getifaddrs failed: {errno}")
    result: AddressMap = {}
    try:
        node = head
        while node:
            entry = node.contents
            name = (entry.ifa_name or b"").decode("utf-8", "replace")
            v4, v6 = result.setdefault(name, ([], []))
            if entry.ifa_addr:
                family = entry.ifa_addr.contents.sa_family
                if family in (socket.AF_INET, socket.AF_INET6):
                    addr = socket.inet_ntop(family, _raw(entry.ifa_addr, family))
                    prefix = _prefix(_raw(entry.ifa_netmask, family)) if entry.ifa_netmask else None
                    text = f"{addr}/{prefix}" if prefix is not None else addr
                    (v4 if family == socket.AF_INET else v6).append(text)
            node = entry.ifa_next
    finally:
        libc.freeifaddrs(head)
    return result
