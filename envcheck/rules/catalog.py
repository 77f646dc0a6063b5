"""Importing this module registers every code rule."""

from envcheck.rules import (  # noqa: F401
    cluster_network,
    cluster_rules,
    coverage,
    cuda_libs,
    driver,
    network,
    packages,
    ray_rules,
    simulators,
    system,
    torch_build,
)
