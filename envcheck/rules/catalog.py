"""Importing this module registers every code rule."""

from envcheck.rules import (  # noqa: F401
    bounds,
    cluster_network,
    cluster_rules,
    coverage,
    cuda_libs,
    driver,
    driver_arch,
    gpu_cuda,
    gpu_health,
    gpu_torch,
    network,
    packages,
    ray_rules,
    simulators,
    system,
    torch_build,
    torch_cpu,
)
