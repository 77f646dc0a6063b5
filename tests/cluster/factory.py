"""NodeReports built from the model's dataclasses, for comparing nodes without probing them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from envcheck.model.report import (
    Distribution,
    EnvInfo,
    Gpu,
    GpuInfo,
    Interface,
    NetworkInfo,
    NodeReport,
    PackagesInfo,
    PythonInfo,
    SystemInfo,
    TorchBuild,
)
from envcheck.model.section import Section

A100 = "NVIDIA A100-SXM4-80GB"
RTX4090 = "NVIDIA GeForce RTX 4090"

BASE_PACKAGES = {
    "ray": "2.9.3",
    "torch": "2.4.0+cu121",
    "numpy": "1.26.4",
    "vllm": "0.6.3",
    "nvidia-nccl-cu12": "2.20.5",
    "nvidia-cublas-cu12": "12.1.3.1",
    "transformers": "4.45.2",
}


def node(
    name: str,
    *,
    python: str = "3.10.12",
    packages: dict[str, str | None] | None = None,
    gpu: str | None = A100,
    gpus: int = 8,
    driver: str = "550.54.15",
    env: dict[str, str] | None = None,
    address: str = "10.0.0.5/24",
    iface: str = "eth0",
    hostname: str | None = None,
    extra_interfaces: tuple[Interface, ...] = (),
) -> NodeReport:
    """A GPU node of a typical RL cluster; ``packages`` overrides (None removes one)."""
    wanted: dict[str, str | None] = {**BASE_PACKAGES, **(packages or {})}
    dists = tuple(
        Distribution(name=k, version=v, location="/opt/venv/lib/python3.10/site-packages")
        for k, v in wanted.items()
        if v is not None
    )
    torch = wanted.get("torch")
    memory = 81920 if gpu == A100 else 24564
    cc = "8.0" if gpu and "A100" in gpu else "8.9"
    gpu_section: Section[Any] = Section.ok(
        GpuInfo(
            driver_version=driver,
            cuda_driver_version="12.4",
            gpus=tuple(
                Gpu(index=i, name=gpu, compute_capability=cc, memory_total_mib=memory)
                for i in range(gpus)
            )
            if gpu
            else (),
        )
    )
    variant = torch.split("+", 1)[1] if torch and "+" in torch else None
    return NodeReport(
        node=name,
        envcheck_version="0.1.0",
        created_at="2026-11-22T00:00:00Z",
        gpu=gpu_section,
        python=Section.ok(PythonInfo(version=python, markers={"python_full_version": python})),
        packages=Section.ok(PackagesInfo(distributions=dists)),
        torch=Section.ok(
            TorchBuild(
                version=torch,
                local_label=variant,
                variant=variant,
                cuda="12.1" if variant == "cu121" else None,
            )
        )
        if torch
        else Section.unavailable("torch is not installed"),
        system=Section.ok(SystemInfo(os_pretty="Ubuntu 22.04.4 LTS", glibc="2.35")),
        network=Section.ok(
            NetworkInfo(
                hostname=hostname or name,
                hostname_addresses=(address.split("/", maxsplit=1)[0],),
                interfaces=(
                    Interface(name="lo", state="up", ipv4=("127.0.0.1/8",), kind="loopback"),
                    Interface(name=iface, state="up", ipv4=(address,), kind="ether"),
                    *extra_interfaces,
                ),
            )
        ),
        env=Section.ok(EnvInfo(variables=dict(env or {}))),
    )


def cluster(count: int, **overrides: Any) -> list[NodeReport]:
    """``count`` identical nodes node-000, node-001, ... on 10.0.0.0/24."""
    return [
        node(f"node-{i:03d}", address=f"10.0.{i // 250}.{i % 250 + 2}/16", **overrides)
        for i in range(count)
    ]


def rename(report: NodeReport, name: str) -> NodeReport:
    return replace(report, node=name)
