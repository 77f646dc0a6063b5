"""One rank of the collective test, run as a Ray actor on its node.

Shipped by value (it imports nothing from envcheck), so a node needs torch but not this
envcheck. torch is imported here, inside the worker process, never in the driver. Everything a
rank sees is returned as plain data; the driver classifies failures (cluster/collective.py).
"""

from __future__ import annotations

import importlib
import os
import socket
import time
from typing import Any

_TCP_LISTEN, _TCP_ESTABLISHED = "0A", "01"


def _socket_inodes() -> set[str]:
    found = set()
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                found.add(target[8:-1])
    except OSError:
        pass
    return found


def _hex_address(text: str) -> tuple[str, int]:
    host, port = text.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        ip = socket.inet_ntop(socket.AF_INET, raw[::-1])
    else:
        words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
        ip = socket.inet_ntop(socket.AF_INET6, words)
        if ip.startswith("::ffff:"):
            ip = ip[7:]
    return ip, int(port, 16)


def _tcp_table() -> list[tuple[str, tuple[str, int], tuple[str, int], str]]:
    """(inode, local, remote, state) of every TCP socket in this network namespace."""
    rows = []
    for name in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(name, encoding="ascii") as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 10:
                continue
            try:
                rows.append((parts[9], _hex_address(parts[1]), _hex_address(parts[2]), parts[3]))
            except ValueError:
                continue
    return rows


def _new_sockets(before: set[str], store_port: int) -> tuple[list[str], list[str]]:
    """Listening and connected addresses of the sockets opened since ``before``, leaving out
    the TCP store's (its port)."""
    new = _socket_inodes() - before
    bound: list[str] = []
    peers: list[str] = []
    for inode, local, remote, state in _tcp_table():
        if inode not in new or store_port in (local[1], remote[1]):
            continue
        if state == _TCP_LISTEN:
            bound.append(f"{local[0]}:{local[1]}")
        elif state == _TCP_ESTABLISHED:
            peers.append(f"{remote[0]}:{remote[1]}")
    return sorted(set(bound)), sorted(set(peers))


def _interface_address(name: str) -> str | None:
    import fcntl
    import struct

    siocgifaddr = 0x8915
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            packed = fcntl.ioctl(
                sock.fileno(), siocgifaddr, struct.pack("256s", name[:15].encode())
            )
        return socket.inet_ntoa(packed[20:24])
    except OSError:
        return None


def _expected(ifname: str | None) -> str | None:
    """The address Gloo should bind: the interface's, else the hostname's (Gloo's default)."""
    if ifname and not ifname.startswith(("^", "=")):
        return _interface_address(ifname.split(",")[0])
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return None
    return str(infos[0][4][0]) if infos else None


def _short(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return f"{type(exc).__name__}: {' | '.join(lines[:3]) or '(no message)'}"[:600]


class RankWorker:
    """Ray actor: ``prepare`` imports torch and reports what the node has; ``run`` joins the
    group, all-reduces and does its part of the send/recv ring."""

    def __init__(self) -> None:
        self.store: Any = None

    def prepare(self, backend: str, want_store: bool) -> dict[str, Any]:
        start = time.monotonic()
        info: dict[str, Any] = {"hostname": socket.gethostname(), "pid": os.getpid()}
        try:
            torch = importlib.import_module("torch")
            dist = importlib.import_module("torch.distributed")
        except Exception as exc:
            return {**info, "ok": False, "kind": "no-torch", "error": _short(exc)}
        info["torch"] = str(torch.__version__)
        info["import_s"] = round(time.monotonic() - start, 2)
        if not dist.is_available():
            return {
                **info,
                "ok": False,
                "kind": "error",
                "error": "torch.distributed is not available in this torch build",
            }
        if backend == "nccl":
            gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
            info["gpus"] = gpus
            if gpus == 0:
                return {
                    **info,
                    "ok": False,
                    "kind": "no-gpu",
                    "error": "torch sees no CUDA GPU (torch.cuda.device_count() == 0)",
                }
            if not dist.is_nccl_available():
                return {
                    **info,
                    "ok": False,
                    "kind": "error",
                    "error": "this torch build has no NCCL",
                }
        if want_store:
            try:
                self.store = dist.TCPStore("0.0.0.0", 0, is_master=True, wait_for_workers=False)
                info["store_port"] = int(self.store.port)
            except Exception as exc:
                return {
                    **info,
                    "ok": False,
                    "kind": "error",
                    "error": f"cannot start the TCP store: {_short(exc)}",
                }
        return {**info, "ok": True}

    def run(
        self,
        backend: str,
        store_host: str,
        store_port: int,
        rank: int,
        world: int,
        timeout: float,
        ifname: str | None,
    ) -> dict[str, Any]:
        import datetime

        torch = importlib.import_module("torch")
        dist = importlib.import_module("torch.distributed")

        var = "NCCL_SOCKET_IFNAME" if backend == "nccl" else "GLOO_SOCKET_IFNAME"
        if ifname:
            os.environ[var] = ifname
        log_file = None
        if backend == "nccl":
            log_dir = os.environ.get("TMPDIR", "/tmp")
            log_file = os.path.join(log_dir, f"envcheck-nccl-{os.getpid()}.log")
            os.environ["NCCL_DEBUG"] = "WARN"
            os.environ["NCCL_DEBUG_FILE"] = log_file
        effective = os.environ.get(var)
        result: dict[str, Any] = {
            "rank": rank,
            "ifname": effective,
            "expected": _expected(effective) if backend == "gloo" else None,
            "stage": "init",
            "ok": False,
        }
        start = time.monotonic()
        before = _socket_inodes()
        limit = datetime.timedelta(seconds=timeout)
        try:
            store = dist.TCPStore(store_host, store_port, world, is_master=False, timeout=limit)
            device = None
            if backend == "nccl":
                device = torch.device("cuda", 0)
                torch.cuda.set_device(device)
            dist.init_process_group(
                backend, store=store, rank=rank, world_size=world, timeout=limit
            )
            result["bound"], result["peers"] = _new_sockets(before, store_port)
            result["stage"] = "allreduce"
            tensor = torch.ones(1, device=device)
            dist.all_reduce(tensor)
            if backend == "nccl":
                torch.cuda.synchronize()
            result["allreduce"] = float(tensor.item())
            if int(tensor.item()) != world:
                raise RuntimeError(f"all-reduce gave {tensor.item()}, expected {world}")
            if world > 1:
                result["stage"] = "ring"
                nxt, prev = (rank + 1) % world, (rank - 1) % world
                out = torch.full((1,), float(rank + 1), device=device)
                got = torch.zeros(1, device=device)
                sends = [dist.isend(out, nxt), dist.irecv(got, prev)]
                for work in sends:
                    if backend == "gloo":
                        work.wait(limit)
                    else:
                        work.wait()
                if backend == "nccl":
                    torch.cuda.synchronize()
                result["received"] = float(got.item())
                if int(got.item()) != prev + 1:
                    raise RuntimeError(
                        f"received {got.item()} from rank {prev}, expected {prev + 1}"
                    )
            result["stage"] = "done"
            result["ok"] = True
        except Exception as exc:
            result["error"] = _short(exc)
            if "bound" not in result:
                result["bound"], result["peers"] = _new_sockets(before, store_port)
        finally:
            result["seconds"] = round(time.monotonic() - start, 2)
            if log_file is not None:
                try:
                    with open(log_file, encoding="utf-8", errors="replace") as handle:
                        result["log"] = handle.read()[-4000:]
                except OSError:
                    pass
            try:
                if dist.is_initialized():
                    dist.destroy_process_group()
            except Exception:
                pass
        return result
