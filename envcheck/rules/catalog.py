"""Importing this module registers every code rule."""

from envcheck.rules import (  # noqa: F401
    cluster_network,
    cluster_rules,
    cuda_libs,
    driver,
    gpu_cuda,
    gpu_health,
    gpu_torch,
    network,
    packages,
    ray_rules,
    simulators,
    system,
    torch_build,
)
