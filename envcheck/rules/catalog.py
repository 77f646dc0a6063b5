"""Importing this module registers every code rule: node rules, then cluster rules."""

from envcheck.rules.cluster import drift, network  # noqa: F401
from envcheck.rules.node import (  # noqa: F401
    bounds,
    coverage,
    cuda_libs,
    driver,
    driver_arch,
    dtype,
    flash_attn,
    gpu_cuda,
    gpu_health,
    gpu_torch,
    packages,
    ray,
    sgl_kernel,
    sim_render,
    simulators,
    system,
    system_build,
    torch_build,
    torch_cpu,
    torch_stated,
)
from envcheck.rules.node import network as node_network  # noqa: F401
